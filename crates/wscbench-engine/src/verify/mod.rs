//! Protocol verification: named checks, each proving one rule of docs/protocol.md
//! against a running server with real WebSocket clients.
//!
//! The checks run one after another, each with its own users (and rooms), so a failure
//! names exactly one rule. The counters check, and the room checks that count malformed
//! input (`leave_one_room`, `room_names`), need a server that nobody else is using.
//!
//! Uses `net/` and `catalog/` (a local server's port); never `load/`, `judge/` nor `runner/`.

mod checks;
pub mod client;
pub mod conformance;
mod counters;
pub mod hostile;
mod raw;
mod rooms;

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use serde::Serialize;

pub use counters::read_stats;

/// Reads `/stats`, or `None` when the server does not answer with the protocol's counters.
pub async fn read_stats_quiet(target: &Target) -> Option<wscbench_results::ServerStats> {
    counters::read_stats(target).await.ok()
}

/// Where the server under verification listens.
#[derive(Debug, Clone)]
pub struct Target {
    /// `host:port`, for plain HTTP (`/health`, `/stats`).
    pub addr: String,
    /// `ws://host:port/ws`, or `wss://` with [`Target::tls`].
    pub ws_url: String,
    /// The TLS client configuration (trusting the run's certificate) of a wss server, whose
    /// `/health` and `/stats` are https too; `None` in cleartext.
    pub tls: Option<std::sync::Arc<rustls::ClientConfig>>,
    /// Offer permessage-deflate and require it ([`client::DEFLATE_OFFER`]).
    pub deflate: bool,
}

/// A URL that is not `ws://host:port[/path]`.
#[derive(Debug, thiserror::Error)]
#[error("{url:?} is not a ws:// URL with host and port (e.g. ws://127.0.0.1:8080/ws)")]
pub struct BadUrl {
    url: String,
}

impl Target {
    /// Parses `ws://host:port/ws`. Only plain `ws://` is supported: the servers speak no TLS.
    pub fn from_url(url: &str) -> Result<Self, BadUrl> {
        let bad = || BadUrl {
            url: url.to_string(),
        };
        let rest = url.strip_prefix("ws://").ok_or_else(bad)?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/ws"),
        };
        let (host, port) = authority.rsplit_once(':').ok_or_else(bad)?;
        if host.is_empty() || port.parse::<u16>().is_err() {
            return Err(bad());
        }
        let host = if host == "localhost" {
            "127.0.0.1"
        } else {
            host
        };
        Ok(Self {
            addr: format!("{host}:{port}"),
            ws_url: format!("ws://{host}:{port}{path}"),
            tls: None,
            deflate: false,
        })
    }

    /// The target of a server listening on `127.0.0.1:port`.
    pub fn loopback(port: u16) -> Self {
        Self {
            addr: format!("127.0.0.1:{port}"),
            ws_url: format!("ws://127.0.0.1:{port}/ws"),
            tls: None,
            deflate: false,
        }
    }

    /// The same server over TLS (`wss://`, `/health` and `/stats` over https), trusting the
    /// run's certificate.
    pub fn with_tls(self, tls: std::sync::Arc<rustls::ClientConfig>) -> Self {
        Self {
            ws_url: self.ws_url.replacen("ws://", "wss://", 1),
            tls: Some(tls),
            ..self
        }
    }
}

impl Target {
    /// The same server with permessage-deflate offered and required on every connection.
    pub fn with_deflate(self) -> Self {
        Self {
            deflate: true,
            ..self
        }
    }
}

/// The name of the check that opens a verification over deflate.
pub const DEFLATE_CHECK: &str = "deflate_negotiated";

/// The outcome of one named check.
#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    /// Stable name, e.g. `chat_broadcast`.
    pub name: &'static str,
    /// The rule it proves, in words.
    pub rule: &'static str,
    /// Whether the server kept the rule.
    pub passed: bool,
    /// What was seen: the evidence on pass, the first discrepancy on failure.
    pub detail: String,
    /// How long the check took, in milliseconds.
    pub duration_ms: u64,
}

impl CheckResult {
    /// The result of a check named `name` (proving `rule`) that ended with `outcome` (its
    /// evidence, or its first discrepancy) and started at `started`.
    pub fn of(
        name: &'static str,
        rule: &'static str,
        outcome: Result<String, String>,
        started: Instant,
    ) -> Self {
        let (passed, detail) = match outcome {
            Ok(detail) => (true, detail),
            Err(detail) => (false, detail),
        };
        CheckResult {
            name,
            rule,
            passed,
            detail,
            duration_ms: started.elapsed().as_millis() as u64,
        }
    }
}

/// All checks against one server.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    /// The URL verified.
    pub target: String,
    /// The checks, in the order they ran.
    pub checks: Vec<CheckResult>,
}

impl VerifyReport {
    /// True when every check passed.
    pub fn passed(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.passed)
    }

    /// Names of the failed checks.
    pub fn failed(&self) -> Vec<&'static str> {
        self.checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.name)
            .collect()
    }
}

type CheckFuture<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// One named rule and the code that proves it.
pub struct Check {
    /// Stable name.
    pub name: &'static str,
    /// The rule in words.
    pub rule: &'static str,
    run: for<'a> fn(&'a Context) -> CheckFuture<'a>,
}

/// What every check gets: the target and a nonce that keeps user names unique.
pub struct Context {
    pub target: Target,
    pub nonce: String,
}

impl Context {
    /// A user name unique to this verification, e.g. `v7f3a1-chat-alice` (at most 64 characters).
    pub fn user(&self, check: &str, role: &str) -> String {
        format!("v{}-{check}-{role}", self.nonce)
            .chars()
            .take(64)
            .collect()
    }

    /// A room name unique to this verification, e.g. `v7f3a1-isolated-r1` (at most 64
    /// characters), so that a check's counts start from an empty room.
    pub fn room(&self, check: &str, name: &str) -> String {
        format!("v{}-{check}-{name}", self.nonce)
            .chars()
            .take(64)
            .collect()
    }
}

/// Every check that `verify` runs, in order.
pub fn all_checks() -> &'static [Check] {
    checks::ALL
}

/// The checks a benchmark run makes on every fresh server container before loading it: every
/// rule that takes under a second to prove. `wscbench verify` runs them all.
pub const QUICK_CHECKS: &[&str] = &[
    "health",
    "stats_counters",
    "join_ack",
    "chat_broadcast",
    "ping_pong",
    "leave",
    "disconnect_is_leave",
    "close_answered",
    "chat_before_join",
    "invalid_input",
    "escaped_text",
    "size_limit",
    // The two sub-second room checks; leave_one_room, room_names and disconnect_all_rooms
    // wait out quiet periods (about 1 s together) and run in `wscbench verify`.
    "rooms_isolated",
    "online_per_room",
];

/// Longest any single check may take before it fails as hung.
const CHECK_TIMEOUT: Duration = Duration::from_secs(40);

/// Runs every check (or those named in `only`) against `target`, reporting each as it finishes.
pub async fn verify(
    target: &Target,
    only: &[String],
    mut on_check: impl FnMut(&CheckResult),
) -> VerifyReport {
    let nonce = format!(
        "{:x}",
        std::process::id() ^ (Instant::now().elapsed().subsec_nanos() ^ rand_seed())
    );
    let ctx = Context {
        target: target.clone(),
        nonce: nonce.chars().take(6).collect(),
    };
    let mut results = Vec::new();
    if target.deflate {
        let started = Instant::now();
        let users = [ctx.user("deflate", "a"), ctx.user("deflate", "b")];
        let outcome = client::negotiate_deflate(target, users).await;
        let result = CheckResult::of(
            DEFLATE_CHECK,
            "the server accepts the permessage-deflate offer and uses it both ways",
            outcome,
            started,
        );
        on_check(&result);
        results.push(result);
    }
    for check in all_checks()
        .iter()
        .filter(|c| only.is_empty() || only.iter().any(|o| o == c.name))
    {
        let started = Instant::now();
        let outcome = match tokio::time::timeout(CHECK_TIMEOUT, (check.run)(&ctx)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!(
                "the check did not finish within {CHECK_TIMEOUT:?} (server hung?)"
            )),
        };
        let result = CheckResult::of(check.name, check.rule, outcome, started);
        on_check(&result);
        results.push(result);
        // Let the server finish tearing down this check's connections before the next one.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    VerifyReport {
        target: target.ws_url.clone(),
        checks: results,
    }
}

pub(crate) fn rand_seed() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
}

/// The name of the shutdown check, which runs only on a server `verify` started itself.
pub const SHUTDOWN_CHECK: &str = "graceful_shutdown";

/// Sends SIGTERM to a server we started, with a member joined, and checks the protocol's
/// shutdown rule: clients closed with 1001, final stats as the last stdout line, exit 0 within 2 s.
pub async fn verify_shutdown(server: crate::catalog::local::LocalServer) -> CheckResult {
    let started = Instant::now();
    let mut target = Target::loopback(server.port);
    if let Some(tls) = server.tls() {
        target = target.with_tls(tls.clone());
    }
    let outcome = async {
        let mut member = client::Member::join(&target, "v-shutdown").await?;
        let (stopped, closed) = tokio::join!(
            server.stop(Duration::from_secs(3)),
            member.expect_close(Duration::from_secs(3))
        );
        let took = stopped
            .exited_after
            .ok_or("the server did not exit within 3 s of SIGTERM")?;
        if took > Duration::from_secs(2) {
            return Err(format!(
                "the server took {took:?} to exit after SIGTERM (limit 2 s)"
            ));
        }
        if stopped.exit_code != Some(0) {
            return Err(format!(
                "the server exited with {:?} after SIGTERM, expected 0",
                stopped.exit_code
            ));
        }
        let code = closed?;
        if code != Some(1001) {
            return Err(format!(
                "the joined client was closed with {}, expected 1001",
                client::code_text(code)
            ));
        }
        let stats = stopped.final_stats().ok_or_else(|| {
            format!(
                "the last stdout line is not the final stats JSON: {:?}",
                stopped.last_line.unwrap_or_default()
            )
        })?;
        Ok(format!(
            "exit 0 after {} ms; client closed 1001; final stats report {} joins",
            took.as_millis(),
            stats.joins
        ))
    }
    .await;
    let (passed, detail) = match outcome {
        Ok(d) => (true, d),
        Err(d) => (false, d),
    };
    CheckResult {
        name: SHUTDOWN_CHECK,
        rule: "SIGTERM closes clients with 1001, prints final stats last, exits 0 within 2 s",
        passed,
        detail,
        duration_ms: started.elapsed().as_millis() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_from_ws_urls_only() {
        let t = Target::from_url("ws://localhost:8080/ws").unwrap();
        assert_eq!(
            (t.addr.as_str(), t.ws_url.as_str()),
            ("127.0.0.1:8080", "ws://127.0.0.1:8080/ws")
        );
        assert_eq!(
            Target::from_url("ws://127.0.0.1:9").unwrap().ws_url,
            "ws://127.0.0.1:9/ws"
        );
        for bad in [
            "http://127.0.0.1:80/ws",
            "ws://127.0.0.1/ws",
            "ws://:80/ws",
            "ws://h:99999/ws",
            "wss://h:1/ws",
        ] {
            assert!(Target::from_url(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn check_names_are_unique() {
        let mut names: Vec<_> = all_checks().iter().map(|c| c.name).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
    }
}
