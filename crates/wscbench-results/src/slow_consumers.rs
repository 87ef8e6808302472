//! What the slow-consumers scenario found: the healthy clients' latency before and while a
//! share of the room stopped reading, how long it took to come back, and what the slow
//! readers cost the server in memory, drops and closed connections.
//! See docs/methodology.md ("Slow consumers").

use serde::{Deserialize, Serialize};

/// A slow-consumers result's figures. The phases are the shape's (`scenarios/lib/modes.js`):
/// join, baseline (everyone reads), slow (the slow clients do not read), recovery (they read
/// again). Latency is the healthy clients' response time; the slow clients' own chats
/// received and latencies are counted apart and left out of every other figure.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SlowConsumers {
    /// Clients that were slow.
    pub slow_clients: u64,
    /// Clients in all, slow ones included.
    #[serde(default)]
    pub clients: u64,
    /// The healthy clients' latency p99 over the baseline phase, in ms; absent without a
    /// sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy_p99_baseline_ms: Option<f64>,
    /// The healthy clients' latency p99 over the slow phase, in ms; absent without a sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy_p99_slow_ms: Option<f64>,
    /// Slow-phase p99 over baseline p99 (1 = the slow readers cost the healthy ones nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy_p99_ratio: Option<f64>,
    /// Seconds from the slow phase's end until the healthy per-second p99 was back within
    /// [`RECOVERY_FACTOR`] × the baseline p99 for [`RECOVERY_WINDOWS`] windows in a row (the
    /// first of them's start); absent when it never was before the chats stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_s: Option<f64>,
    /// The server's mean memory over the baseline phase, in bytes; absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_baseline_bytes: Option<u64>,
    /// The server's peak memory over the slow phase, in bytes; absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_peak_slow_bytes: Option<u64>,
    /// (Slow-phase peak − baseline) / slow clients, in bytes: what the server held for each
    /// client that did not read. Negative when memory fell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_per_slow_client_bytes: Option<f64>,
    /// Messages the server dropped for full queues over the load (`/stats` `dropped_slow`).
    pub dropped_slow: u64,
    /// Slow clients whose connection the server closed or dropped before their own leave.
    pub slow_closed_by_server: u64,
    /// Seconds from the slow phase's start to the first such close (negative: before it);
    /// absent when none was closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_first_closed_s: Option<f64>,
    /// Chats the slow clients received over the whole run.
    #[serde(default)]
    pub slow_received: u64,
    /// The slow phase, in seconds since the scenario's start, `[from, to)`.
    #[serde(default)]
    pub slow_phase_s: [f64; 2],
    /// When the first entry of [`SlowConsumers::healthy_p99_per_s_ms`] begins, in seconds
    /// since the scenario's start (the windows are whole seconds of the clock, so a fraction).
    #[serde(default)]
    pub per_s_start_s: f64,
    /// The healthy clients' latency p99 in each one-second window, in ms, one entry per second
    /// from [`SlowConsumers::per_s_start_s`] on; `null` for a second without a sample.
    #[serde(default)]
    pub healthy_p99_per_s_ms: Vec<Option<f64>>,
}

/// Recovered: the healthy per-second p99 within this factor of the baseline p99 ...
pub const RECOVERY_FACTOR: f64 = 1.5;
/// ... for this many one-second windows in a row.
pub const RECOVERY_WINDOWS: usize = 3;
