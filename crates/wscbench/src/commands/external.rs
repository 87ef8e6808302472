//! `run --url`: before anything of a run, the external server proven to answer and to keep
//! the protocol (every check of `verify --url`), so that a server that does not is refused
//! with the failing check named and nothing benchmarked.

use std::time::Duration;

use wscbench_engine::runner::External;
use wscbench_engine::verify::{self, Target};

use crate::errors::{ExpectedError, UsageError};

/// How long the server may take to answer `/health` before it counts as not answering.
const ANSWER_WAIT: Duration = Duration::from_secs(3);

/// Refuses an external server that does not answer (exit 3) or fails a check of verify
/// (exit 1), printing each check as `verify` does.
pub async fn preflight(external: &External) -> Result<(), ExpectedError> {
    let target = Target::from_url(&external.url).map_err(|e| UsageError::new(e.to_string()))?;
    let unreachable = |reason: String| ExpectedError::Unreachable {
        url: external.url.clone(),
        reason,
    };
    match wscbench_engine::net::http::get(&target.addr, "/health", ANSWER_WAIT).await {
        Ok(response) if response.status == 200 => {}
        Ok(response) => {
            return Err(unreachable(format!(
                "GET /health answered {}, not 200",
                response.status
            )));
        }
        Err(e) => return Err(unreachable(format!("GET /health: {e}"))),
    }
    eprintln!("verify {} (every check, before any load)", target.ws_url);
    // On stderr: stdout carries the run's tables (or its JSON).
    let report = verify::verify(&target, &[], |c| {
        let mark = if c.passed { "PASS" } else { "FAIL" };
        eprintln!("  {mark} {:<20} {}", c.name, c.detail);
    })
    .await;
    if report.passed() {
        return Ok(());
    }
    Err(ExpectedError::Unverified {
        url: external.url.clone(),
        failed: report
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect(),
    })
}
