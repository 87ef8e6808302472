//! The server's `/stats` as the checks read it: fetched over the target's transport, and
//! each counter by its protocol name.

use std::time::Duration;

use wscbench_results::ServerStats;

use super::Target;
use crate::net::http;

/// Reads `/stats` into the schema's type: a missing or mistyped counter fails here.
pub async fn read_stats(target: &Target) -> Result<ServerStats, String> {
    let response = http::get_over(
        &target.addr,
        target.tls.as_ref(),
        "/stats",
        Duration::from_secs(2),
    )
    .await
    .map_err(|e| e.to_string())?;
    if response.status != 200 {
        return Err(format!("/stats answered {}", response.status));
    }
    serde_json::from_slice(&response.body).map_err(|e| {
        format!(
            "/stats is not the protocol's counters object: {e}: {}",
            String::from_utf8_lossy(&response.body)
        )
    })
}

pub fn counter(s: &ServerStats, name: &str) -> u64 {
    match name {
        "connections_total" => s.connections_total,
        "joins" => s.joins,
        "frames_in" => s.frames_in,
        "chat_in" => s.chat_in,
        "chat_accepted" => s.chat_accepted,
        "deliveries" => s.deliveries,
        "dropped_ratelimit" => s.dropped_ratelimit,
        "dropped_slow" => s.dropped_slow,
        "malformed" => s.malformed,
        other => unreachable!("unknown counter {other}"),
    }
}
