//! The one table of metrics that `report`, `compare`, the summary and the history share:
//! each metric's name, which way it improves, how to read it from a result and how to
//! print it. A direction is decided here once, so a table's "best" and compare's "worse"
//! can never disagree.

use serde::Serialize;
use wscbench_results::{RunResult, Scenario};

use crate::units;

/// Which way a metric's values improve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Less is better: memory, CPU, errors, latency, drop rate, sizes.
    Lower,
    /// More is better: throughput, deliveries, connections.
    Higher,
}

/// One figure of a result.
#[derive(Debug)]
pub struct Metric {
    /// Stable name for the command line and JSON, e.g. `throughput`.
    pub key: &'static str,
    /// Column heading, e.g. `Throughput (msg/s)`.
    pub name: &'static str,
    /// Which way it improves.
    pub better: Better,
    /// True when the figure measures the load generator once a run is load-generator bound:
    /// how much was sent, delivered or dropped, and how long a busy k6 took to read it.
    pub loadgen_sensitive: bool,
    /// The figure, in the result's own unit; `None` when it was not measured.
    pub value: fn(&RunResult) -> Option<f64>,
    /// The figure as table text, unit included.
    pub format: fn(f64) -> String,
}

/// A metric is one by its key.
impl PartialEq for Metric {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Metric {
    /// True when `b` is better than `a` in this metric's direction.
    pub fn improves(&self, a: f64, b: f64) -> bool {
        match self.better {
            Better::Higher => b > a,
            Better::Lower => b < a,
        }
    }

    /// True when `result`'s value of this figure measures the server: false for a figure a
    /// busy k6 moves in a round k6 bounded.
    pub fn reads_server(&self, result: &RunResult) -> bool {
        !(self.loadgen_sensitive && result.loadgen_bound)
    }
}

/// Accepted chats per second.
pub const THROUGHPUT: Metric = Metric {
    key: "throughput",
    name: "Throughput (msg/s)",
    better: Better::Higher,
    loadgen_sensitive: true,
    value: |r| Some(r.derived.throughput_msgs_per_s),
    format: units::rate,
};
/// Chat deliveries per second.
pub const DELIVERIES: Metric = Metric {
    key: "deliveries",
    name: "Deliveries/s",
    better: Better::Higher,
    loadgen_sensitive: true,
    value: |r| Some(r.derived.deliveries_per_s),
    format: units::rate,
};
/// Connections the server upgraded.
pub const CONNECTIONS: Metric = Metric {
    key: "connections",
    name: "Total connections",
    better: Better::Higher,
    loadgen_sensitive: true,
    value: |r| r.server_stats.as_ref().map(|s| s.connections_total as f64),
    format: |v| units::count(v.round() as u64),
};
/// The server's peak memory.
pub const PEAK_MEMORY: Metric = Metric {
    key: "peak-memory",
    name: "Peak memory",
    better: Better::Lower,
    loadgen_sensitive: false,
    value: |r| r.derived.server.as_ref().map(|u| u.peak_mem_bytes as f64),
    format: |v| units::mib(v.round() as u64),
};
/// The server's peak CPU.
pub const PEAK_CPU: Metric = Metric {
    key: "peak-cpu",
    name: "Peak CPU",
    better: Better::Lower,
    loadgen_sensitive: false,
    value: |r| r.derived.server.as_ref().map(|u| u.peak_cpu_percent),
    format: units::cpu,
};
/// Client-side errors.
pub const K6_ERRORS: Metric = Metric {
    key: "errors",
    name: "k6 errors",
    better: Better::Lower,
    loadgen_sensitive: false,
    value: |r| Some(r.errors.total() as f64),
    format: |v| {
        if v.fract() == 0.0 {
            units::count(v as u64)
        } else {
            format!("{v:.1}")
        }
    },
};
/// 95th percentile chat latency: the response time from each chat's intended time on the
/// native path since schema 3 (what a user feels), the time from the write before it and on
/// the js path.
pub const LATENCY_P95: Metric = Metric {
    key: "latency-p95",
    name: "Latency p95",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| match &r.k6 {
        // Without a received chat there is no latency sample, only k6's zero.
        Some(k6) if k6.chat_received > 0 => Some(k6.latency.p95_ms),
        _ => None,
    },
    format: units::ms,
};
/// 95th percentile service time: from the moment each chat was written (native results of
/// schema 3, beside the response time that [`LATENCY_P95`] reads).
pub const SERVICE_P95: Metric = Metric {
    key: "service-p95",
    name: "Service time p95",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| match &r.k6 {
        Some(k6) if k6.chat_received > 0 => k6.service_time.as_ref().map(|s| s.p95_ms),
        _ => None,
    },
    format: units::ms,
};
/// Chats sent ÷ chats the clients' schedule intended: below 100 % the server kept its clients
/// from sending (or the load generator's timers were late: see its verdict).
pub const SENT_PER_INTENDED: Metric = Metric {
    key: "sent-per-intended",
    name: "Sent / intended",
    better: Better::Higher,
    loadgen_sensitive: false,
    value: |r| r.k6.as_ref()?.chats?.sent_per_intended(),
    format: units::ratio_percent,
};
/// Share of the intended chats sent late or missed because of the server (a join not yet
/// acknowledged, a blocked write).
pub const SERVER_LATE: Metric = Metric {
    key: "server-late",
    name: "Late or missed (server)",
    better: Better::Lower,
    loadgen_sensitive: false,
    value: |r| {
        let chats = r.k6.as_ref()?.chats?;
        (chats.intended > 0).then(|| chats.server_late() as f64 / chats.intended as f64)
    },
    format: units::ratio_percent,
};
/// Median chat response time, from each chat's intended time.
pub const LATENCY_P50: Metric = Metric {
    key: "latency-p50",
    name: "Latency p50",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| match &r.k6 {
        Some(k6) if k6.chat_received > 0 => Some(k6.latency.p50_ms),
        _ => None,
    },
    format: units::ms,
};
/// The slowest chat's response time.
pub const LATENCY_MAX: Metric = Metric {
    key: "latency-max",
    name: "Latency max",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| match &r.k6 {
        Some(k6) if k6.chat_received > 0 => Some(k6.latency.max_ms),
        _ => None,
    },
    format: units::ms,
};
/// Chat response time p99, from each chat's intended time.
pub const LATENCY_P99: Metric = Metric {
    key: "latency-p99",
    name: "Latency p99",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| match &r.k6 {
        Some(k6) if k6.chat_received > 0 => Some(k6.latency.p99_ms),
        _ => None,
    },
    format: units::ms,
};
/// Server memory per connected user: the slope across the population's levels. A busy k6
/// moves it: its levels connect late and its pings and chats arrive late, and in run
/// 20261128-123613 three of the four population rounds k6 bounded read 2–7 % below the
/// same server's other rounds (profile-a/zig 8.6 KiB against 9.2, profile-b/zig 74.7
/// against 78.3–79.1, profile-b/rust 10.1 against 10.3–10.4), so it is read, like every
/// figure k6 moves, over the rounds free of it.
pub const MEMORY_PER_USER: Metric = Metric {
    key: "memory-per-user",
    name: "Memory per user",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| r.population.as_ref()?.mem_bytes_per_user,
    format: |v| units::size(v.max(0.0).round() as u64),
};
/// Of the memory per user, user space (the cgroup's anonymous memory).
pub const USER_MEMORY_PER_USER: Metric = Metric {
    key: "user-memory-per-user",
    name: "User space per user",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| r.population.as_ref()?.user_bytes_per_user,
    format: |v| units::size(v.max(0.0).round() as u64),
};
/// Of the memory per user, the kernel's share (sockets, slab, stacks).
pub const KERNEL_MEMORY_PER_USER: Metric = Metric {
    key: "kernel-memory-per-user",
    name: "Kernel per user",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| r.population.as_ref()?.kernel_bytes_per_user,
    format: |v| units::size(v.max(0.0).round() as u64),
};
/// Server CPU per 1,000 connected users at the population's full level. A busy k6 moves
/// it: a ramp k6 connects late runs into the hold, and the server's accepts with it (Zig
/// std in run 20261128-150553: 42.6–62.0 ms/s in its four rounds free of k6, 74.0–141.5
/// in its three bound ones).
pub const CPU_PER_1K_USERS: Metric = Metric {
    key: "cpu-per-1k-users",
    name: "CPU per 1,000 users",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| r.population.as_ref()?.cpu_ms_per_s_per_1k_users,
    format: |v| format!("{} /s", units::cpu_ms(v)),
};
/// The most users the server held at once in the population.
pub const USERS_HELD: Metric = Metric {
    key: "users-held",
    name: "Users held",
    better: Better::Higher,
    loadgen_sensitive: true,
    value: |r| r.population.as_ref().map(|p| p.users_held as f64),
    format: |v| units::count(v.round() as u64),
};
/// Latency p99 of the population's chats at its full level, from intended times.
pub const POPULATION_CHAT_P99: Metric = Metric {
    key: "population-chat-p99",
    name: "Chat p99",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| r.population.as_ref()?.chat_p99_ms,
    format: units::ms,
};
/// Latency p99 of the population's pongs at its full level, from intended times.
pub const PONG_P99: Metric = Metric {
    key: "pong-p99",
    name: "Pong p99",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| r.population.as_ref()?.pong_p99_ms,
    format: units::ms,
};
/// The load generator's memory per user: what k6 paid for each, so a reader sees it was not
/// the limit.
pub const LOADGEN_MEMORY_PER_USER: Metric = Metric {
    key: "k6-memory-per-user",
    name: "k6 memory per user",
    better: Better::Lower,
    loadgen_sensitive: false,
    value: |r| r.population.as_ref()?.loadgen_bytes_per_user,
    format: |v| units::size(v.max(0.0).round() as u64),
};
/// The load generator's CPU per 1,000 users at the full level.
pub const LOADGEN_CPU_PER_1K_USERS: Metric = Metric {
    key: "k6-cpu-per-1k-users",
    name: "k6 CPU per 1,000 users",
    better: Better::Lower,
    loadgen_sensitive: false,
    value: |r| r.population.as_ref()?.loadgen_cpu_ms_per_s_per_1k_users,
    format: |v| format!("{} /s", units::cpu_ms(v)),
};
/// Share of chats the rate limit dropped.
pub const DROP_RATE: Metric = Metric {
    key: "drop-rate",
    name: "Drop rate",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| Some(r.derived.drop_rate_ratio),
    format: units::ratio_percent,
};
/// Share of fan-out the server dropped because a recipient's queue was full (slow consumers):
/// `dropped_slow` ÷ (`deliveries` + `dropped_slow`).
pub const SLOW_DROPS: Metric = Metric {
    key: "slow-drops",
    name: "Dropped (slow clients)",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| {
        let stats = r.server_stats.as_ref()?;
        let offered = stats.deliveries + stats.dropped_slow;
        (offered > 0).then(|| stats.dropped_slow as f64 / offered as f64)
    },
    format: units::ratio_percent,
};
/// Deliveries ÷ what the accepted chats asked for: each chat asks for one delivery to every
/// other member of the room (see [`asked_deliveries`]). Shown beside deliveries per
/// CPU-second, which alone rewards a server for dropping: a dropped message costs nothing.
pub const DELIVERED_SHARE: Metric = Metric {
    key: "delivered-share",
    name: "Delivered of asked",
    better: Better::Higher,
    loadgen_sensitive: true,
    value: |r| {
        let asked = asked_deliveries(r)?;
        (asked > 0.0).then(|| r.server_stats.as_ref().map(|s| s.deliveries as f64 / asked))?
    },
    format: units::ratio_percent,
};
/// Deliveries per CPU-second the server used.
pub const CPU_EFFICIENCY: Metric = Metric {
    key: "deliveries-per-cpu-s",
    name: "Deliveries per CPU-second",
    better: Better::Higher,
    loadgen_sensitive: true,
    value: deliveries_per_cpu_s,
    format: units::rate,
};
/// Server CPU time per 1,000 deliveries, in ms: the inverse of [`CPU_EFFICIENCY`] (what
/// capacity planning multiplies by a load). A load-curve step's is that of its hold alone
/// (no join ramp), where its samples allow.
pub const CPU_PER_1K_DELIVERIES: Metric = Metric {
    key: "cpu-ms-per-1k-deliveries",
    name: "CPU per 1k deliveries",
    better: Better::Lower,
    loadgen_sensitive: true,
    value: |r| {
        r.curve
            .as_ref()
            .and_then(|c| c.hold_deliveries_per_server_cpu_s)
            .or_else(|| deliveries_per_cpu_s(r))
            .filter(|v| *v > 0.0)
            .map(|v| 1e6 / v)
    },
    format: units::cpu_ms,
};
/// The share of a load-curve step's offered deliveries that the clients received.
pub const DELIVERED_OF_OFFERED: Metric = Metric {
    key: "delivered-of-offered",
    name: "Delivered of offered",
    better: Better::Higher,
    loadgen_sensitive: true,
    value: RunResult::delivered_of_offered,
    format: units::ratio_percent,
};
/// The server's memory per open connection, at the second it held the most: memory
/// efficiency beside CPU efficiency (the process's fixed memory included, so it reads
/// high at low connection counts).
pub const MEMORY_PER_CONNECTION: Metric = Metric {
    key: "memory-per-connection",
    name: "Memory per connection",
    better: Better::Lower,
    loadgen_sensitive: false,
    value: memory_per_connection,
    format: |v| units::size(v.round() as u64),
};
/// Bytes the server wrote per delivery (frames after compression, TLS records' payload
/// included as handed to the TLS layer): compression's gain, beside its CPU cost.
pub const BYTES_PER_DELIVERY: Metric = Metric {
    key: "bytes-per-delivery",
    name: "Bytes per delivery",
    better: Better::Lower,
    loadgen_sensitive: false,
    value: |r| r.derived.bytes_written_per_delivery,
    format: |v| format!("{v:.1} B"),
};
/// Errors per connection: churn stability.
pub const ERRORS_PER_CONNECTION: Metric = Metric {
    key: "errors-per-connection",
    name: "Errors per connection",
    better: Better::Lower,
    loadgen_sensitive: false,
    value: |r| {
        let total = r.server_stats.as_ref()?.connections_total;
        (total > 0).then(|| r.errors.total() as f64 / total as f64)
    },
    format: units::ratio_percent,
};

/// Clients of the largest capacity step that held at the latency target.
pub const MAX_CLIENTS: Metric = Metric {
    key: "max-clients",
    name: "Max clients at target",
    better: Better::Higher,
    loadgen_sensitive: false,
    value: |r| {
        r.capacity
            .as_ref()
            .map(|c| c.max_clients_held.unwrap_or(0) as f64)
    },
    format: |v| units::count(v.round() as u64),
};

/// Idle joined clients the server held under its memory limit.
pub const IDLE_CLIENTS: Metric = Metric {
    key: "idle-clients",
    name: "Idle clients held",
    better: Better::Higher,
    loadgen_sensitive: false,
    value: |r| r.idle.as_ref().map(|i| i.clients_held as f64),
    format: |v| units::count(v.round() as u64),
};

/// Every metric, for lookups by key.
pub const ALL: [&Metric; 33] = [
    &THROUGHPUT,
    &DELIVERIES,
    &CONNECTIONS,
    &PEAK_MEMORY,
    &PEAK_CPU,
    &K6_ERRORS,
    &LATENCY_P95,
    &SERVICE_P95,
    &SENT_PER_INTENDED,
    &SERVER_LATE,
    &LATENCY_P99,
    &DROP_RATE,
    &SLOW_DROPS,
    &DELIVERED_SHARE,
    &CPU_EFFICIENCY,
    &MEMORY_PER_CONNECTION,
    &ERRORS_PER_CONNECTION,
    &MAX_CLIENTS,
    &IDLE_CLIENTS,
    &BYTES_PER_DELIVERY,
    &CPU_PER_1K_DELIVERIES,
    &DELIVERED_OF_OFFERED,
    &LATENCY_P50,
    &LATENCY_MAX,
    &MEMORY_PER_USER,
    &USER_MEMORY_PER_USER,
    &KERNEL_MEMORY_PER_USER,
    &CPU_PER_1K_USERS,
    &USERS_HELD,
    &POPULATION_CHAT_P99,
    &PONG_P99,
    &LOADGEN_MEMORY_PER_USER,
    &LOADGEN_CPU_PER_1K_USERS,
];

/// The metric of this key, if any.
pub fn find(key: &str) -> Option<&'static Metric> {
    ALL.iter().copied().find(|m| m.key == key)
}

/// The keys, for help texts and errors.
pub fn keys() -> String {
    ALL.iter().map(|m| m.key).collect::<Vec<_>>().join(", ")
}

/// The metrics `compare` and `--fail-on-regression` judge for a scenario.
pub fn headline(scenario: Scenario) -> &'static [&'static Metric] {
    match scenario {
        Scenario::Steady | Scenario::Burst => &[
            &THROUGHPUT,
            &DELIVERIES,
            &LATENCY_P95,
            &PEAK_MEMORY,
            &PEAK_CPU,
            &CPU_EFFICIENCY,
        ],
        Scenario::Churn => &[
            &CONNECTIONS,
            &ERRORS_PER_CONNECTION,
            &PEAK_MEMORY,
            &PEAK_CPU,
        ],
        Scenario::Saturation => &[
            &DELIVERIES,
            &SLOW_DROPS,
            &LATENCY_P95,
            &DROP_RATE,
            &PEAK_MEMORY,
            &CPU_EFFICIENCY,
        ],
        Scenario::Capacity => &[&MAX_CLIENTS, &PEAK_MEMORY],
        Scenario::IdleCapacity => &[&IDLE_CLIENTS, &PEAK_MEMORY],
        Scenario::Fanout => &[&DELIVERIES, &CPU_EFFICIENCY, &LATENCY_P99, &PEAK_MEMORY],
        Scenario::SlowConsumers => &[&LATENCY_P99, &SLOW_DROPS, &PEAK_MEMORY],
        Scenario::LoadCurve => &[
            &CPU_PER_1K_DELIVERIES,
            &LATENCY_P99,
            &DELIVERED_OF_OFFERED,
            &PEAK_MEMORY,
        ],
        Scenario::Population => &[&MEMORY_PER_USER, &CPU_PER_1K_USERS, &PONG_P99, &USERS_HELD],
    }
}

/// The metric a scenario's table ranks servers by ("% of best").
pub fn lead(scenario: Scenario) -> &'static Metric {
    match scenario {
        Scenario::Churn => &CONNECTIONS,
        Scenario::Saturation => &DELIVERIES,
        Scenario::Capacity => &MAX_CLIENTS,
        Scenario::IdleCapacity => &IDLE_CLIENTS,
        Scenario::Fanout => &DELIVERIES,
        Scenario::SlowConsumers => &LATENCY_P99,
        Scenario::LoadCurve => &CPU_PER_1K_DELIVERIES,
        Scenario::Population => &MEMORY_PER_USER,
        _ => &THROUGHPUT,
    }
}

/// `derived.deliveries_per_server_cpu_s`, or deliveries ÷ the server's CPU-seconds.
fn deliveries_per_cpu_s(r: &RunResult) -> Option<f64> {
    if let Some(v) = r.derived.deliveries_per_server_cpu_s {
        return Some(v);
    }
    let cpu_s = r.derived.server.as_ref()?.cpu_seconds;
    let deliveries = r.server_stats.as_ref()?.deliveries;
    (cpu_s > 0.0).then(|| deliveries as f64 / cpu_s)
}

/// The deliveries the accepted chats asked for ([`RunResult::asked_deliveries`]).
pub fn asked_deliveries(r: &RunResult) -> Option<f64> {
    r.asked_deliveries()
}

/// Server memory ÷ open connections at the sample with the most connections.
fn memory_per_connection(r: &RunResult) -> Option<f64> {
    let busiest = r
        .series
        .iter()
        .filter(|s| s.connections.unwrap_or(0) > 0)
        .max_by_key(|s| s.connections)?;
    Some(busiest.server_mem_bytes? as f64 / busiest.connections? as f64)
}
