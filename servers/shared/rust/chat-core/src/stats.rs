//! The server's cumulative counters (docs/protocol.md, "/stats"). Each is an
//! atomic updated with relaxed ordering, never under the hub's lock; the JSON
//! is a snapshot, not a transaction across counters.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

#[derive(Debug)]
pub struct Stats {
    /// The image tag, reported as `server`.
    server: &'static str,
    started: Instant,
    pub connections_current: AtomicU64,
    pub connections_total: AtomicU64,
    pub joins: AtomicU64,
    pub frames_in: AtomicU64,
    pub chat_in: AtomicU64,
    pub chat_accepted: AtomicU64,
    pub deliveries: AtomicU64,
    pub dropped_ratelimit: AtomicU64,
    pub dropped_slow: AtomicU64,
    pub malformed: AtomicU64,
    /// WebSocket frame bytes written to clients, as handed to the socket or
    /// the TLS layer (before encryption).
    pub bytes_written: AtomicU64,
}

/// Adds `n` to a counter.
pub fn add(counter: &AtomicU64, n: u64) {
    if n > 0 {
        counter.fetch_add(n, Relaxed);
    }
}

/// The bytes of a server's (unmasked, uncompressed) WebSocket frame with a
/// payload of `payload` bytes: a 2-byte header, plus 2 or 8 bytes of
/// extended length past 125 and 65,535 bytes (RFC 6455, 5.2). For a stack
/// that hides its socket (axum), the writer counts `bytes_written` with it.
pub fn frame_bytes(payload: usize) -> u64 {
    let header = match payload {
        0..=125 => 2,
        126..=65_535 => 4,
        _ => 10,
    };
    (header + payload) as u64
}

impl Stats {
    /// Counters at zero and the uptime clock started; `server` is the image tag.
    pub fn new(server: &'static str) -> Self {
        Self {
            server,
            started: Instant::now(),
            connections_current: AtomicU64::new(0),
            connections_total: AtomicU64::new(0),
            joins: AtomicU64::new(0),
            frames_in: AtomicU64::new(0),
            chat_in: AtomicU64::new(0),
            chat_accepted: AtomicU64::new(0),
            deliveries: AtomicU64::new(0),
            dropped_ratelimit: AtomicU64::new(0),
            dropped_slow: AtomicU64::new(0),
            malformed: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
        }
    }

    /// The `/stats` body, also printed as the last stdout line on shutdown.
    pub fn to_json(&self) -> String {
        let uptime_ms = self.started.elapsed().as_millis();
        let get = |counter: &AtomicU64| counter.load(Relaxed);
        format!(
            concat!(
                r#"{{"server":"{}","uptime_ms":{},"connections_current":{},"connections_total":{},"#,
                r#""joins":{},"frames_in":{},"chat_in":{},"chat_accepted":{},"deliveries":{},"#,
                r#""dropped_ratelimit":{},"dropped_slow":{},"malformed":{},"bytes_written":{}}}"#
            ),
            self.server,
            uptime_ms,
            get(&self.connections_current),
            get(&self.connections_total),
            get(&self.joins),
            get(&self.frames_in),
            get(&self.chat_in),
            get(&self.chat_accepted),
            get(&self.deliveries),
            get(&self.dropped_ratelimit),
            get(&self.dropped_slow),
            get(&self.malformed),
            get(&self.bytes_written),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_its_payload_and_a_header_that_grows_with_it() {
        assert_eq!(frame_bytes(0), 2);
        assert_eq!(frame_bytes(125), 127);
        assert_eq!(frame_bytes(126), 130);
        assert_eq!(frame_bytes(65_535), 65_539);
        assert_eq!(frame_bytes(65_536), 65_546);
    }

    #[test]
    fn json_has_every_counter() {
        let stats = Stats::new("wsc-test");
        add(&stats.joins, 2);
        add(&stats.malformed, 1);
        add(&stats.bytes_written, 300);
        let value: serde_json::Value = serde_json::from_str(&stats.to_json()).unwrap();
        let object = value.as_object().unwrap();
        assert_eq!(object["server"], "wsc-test");
        assert_eq!(object["joins"], 2);
        assert_eq!(object["malformed"], 1);
        assert_eq!(object["deliveries"], 0);
        assert!(object["uptime_ms"].is_u64());
        assert_eq!(object["bytes_written"], 300);
        assert_eq!(object.len(), 13);
    }
}
