//! The capacity scenario's figures (steps of growing load in one k6 run, and which held at
//! the latency target) and the soak KPIs of a long run (memory slope, throughput and latency
//! drift, errors and drops), each with the verdict the engine computed once, as data.
//! Both were added to schema 2 as optional fields: results without them read as before.

use serde::{Deserialize, Serialize};

use crate::BoundReason;

/// What the capacity scenario found: per-step figures, the largest step that held, and the
/// step that broke and why. See docs/methodology.md ("Capacity").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// The latency target: a step holds only while its chat latency p95 is under it, in ms.
    pub slo_p95_ms: f64,
    /// Members per room the load stands for (each client receives what a member of a room
    /// of this size would).
    pub room_size: u32,
    /// Chats per second of each member of such a room.
    pub member_chats_per_s: f64,
    /// Every step the run reached, in order.
    pub steps: Vec<CapacityStep>,
    /// Clients of the largest step that held, every step before it having held too (absent
    /// when the first step broke).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_clients_held: Option<u64>,
    /// Clients of the first step that did not hold (absent: every planned step held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke_at_clients: Option<u64>,
    /// Why that step did not hold; empty when none broke.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broke_because: Vec<StepReason>,
    /// Server memory per chatting client: the least-squares slope of the server's peak memory
    /// against clients over the steps that held, in bytes (absent: fewer than two held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_bytes_per_client: Option<f64>,
}

/// One step of the capacity scenario, over its hold (the ramp that connects its new
/// clients is left out).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CapacityStep {
    /// Clients connected in this step.
    pub clients: u64,
    /// Start of the hold, in ms since the load started.
    pub from_ms: u64,
    /// End of the hold, in ms since the load started.
    pub to_ms: u64,
    /// Chats the clients sent during the hold.
    pub chat_sent: u64,
    /// Chats the clients received during the hold.
    pub chat_received: u64,
    /// Client errors during the hold: failed connects, abnormal closes, WebSocket errors.
    pub errors: u64,
    /// Chat latency p50 over the hold, in ms (absent: no chat was received).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_p50_ms: Option<f64>,
    /// Chat latency p95 over the hold, in ms (absent: no chat was received).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_p95_ms: Option<f64>,
    /// Chat latency p99 over the hold, in ms (absent: no chat was received).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_p99_ms: Option<f64>,
    /// The server's deliveries during the hold (its counters, interpolated to the hold's ends).
    pub deliveries: u64,
    /// The server's valid chats during the hold, before the rate limit.
    pub chat_in: u64,
    /// Messages the server dropped for slow consumers during the hold.
    pub dropped_slow: u64,
    /// Chats the server's rate limit dropped during the hold.
    pub dropped_ratelimit: u64,
    /// Mean server CPU over the hold, in percent of one core.
    pub server_mean_cpu_percent: f64,
    /// Mean load-generator CPU over the hold, in percent of one core.
    pub loadgen_mean_cpu_percent: f64,
    /// Highest server memory during the hold, in bytes.
    pub server_peak_mem_bytes: u64,
    /// True when the step held (no reasons).
    pub held: bool,
    /// Why it did not hold; empty when it held.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<StepReason>,
}

/// One reason a capacity step did not hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StepReason {
    /// Chat latency p95 reached the target.
    LatencyOverTarget {
        /// The step's p95, in ms.
        p95_ms: f64,
        /// The target, in ms.
        target_ms: f64,
    },
    /// No chat was received during the hold, so latency could not be measured.
    NoChatsReceived,
    /// The server dropped at least the allowed share of messages.
    ServerDrops {
        /// Dropped for slow consumers.
        dropped_slow: u64,
        /// Dropped by the rate limit.
        dropped_ratelimit: u64,
        /// The larger of the two drop shares (slow: of deliveries + drops; rate limit: of
        /// chats in), 0 to 1.
        drop_ratio: f64,
    },
    /// Clients saw errors (failed connects, abnormal closes, WebSocket errors).
    ClientErrors {
        /// How many.
        errors: u64,
    },
    /// The load generator, not the server, was the limit in this step (the same rule as a
    /// whole result's `loadgen_bound_reasons`).
    LoadgenLimit {
        /// Why.
        reasons: Vec<BoundReason>,
    },
    /// The server exited or was killed during the step.
    ServerDied {
        /// The result's outcome (`server_crashed`, `oom_killed`).
        outcome: String,
    },
}

impl StepReason {
    /// A short stable name: `latency`, `drops`, `errors`, `loadgen`, `died`, `no_chats`.
    pub fn kind(&self) -> &'static str {
        match self {
            StepReason::LatencyOverTarget { .. } => "latency",
            StepReason::NoChatsReceived => "no_chats",
            StepReason::ServerDrops { .. } => "drops",
            StepReason::ClientErrors { .. } => "errors",
            StepReason::LoadgenLimit { .. } => "loadgen",
            StepReason::ServerDied { .. } => "died",
        }
    }
}

/// What the idle-capacity scenario found: joined clients that never chat, stepped up until
/// the server's memory neared its limit or connects failed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleCapacity {
    /// The most clients the server held at once (its `connections_current`).
    pub clients_held: u64,
    /// Server memory per idle client: the least-squares slope of the server's memory against
    /// its connections over the run, in bytes (absent: fewer than two distinct counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_client: Option<f64>,
    /// Of that, the server's user-space (anonymous) memory per idle client: the same slope of
    /// [`Sample::server_anon_bytes`](crate::Sample::server_anon_bytes), in bytes (absent where
    /// the cgroup does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_bytes_per_client: Option<f64>,
    /// Of that, the kernel's memory per idle client charged to the server (sockets, slab): the
    /// same slope of [`Sample::server_kernel_bytes`](crate::Sample::server_kernel_bytes), in
    /// bytes (absent where the cgroup does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_bytes_per_client: Option<f64>,
    /// What one idle client costs the load generator: the slope of its memory (every k6
    /// summed) against the server's connections, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadgen_bytes_per_client: Option<f64>,
    /// The server's highest memory, in bytes.
    pub peak_mem_bytes: u64,
    /// The server's memory limit, in bytes.
    pub memory_limit_bytes: u64,
    /// What ended the ramp.
    pub limited_by: IdleLimit,
}

/// What ended an idle-capacity ramp.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IdleLimit {
    /// The server's memory reached 90 % of its limit and the run was stopped.
    MemoryNearLimit,
    /// Clients failed to connect or were closed abnormally.
    ClientErrors {
        /// How many errors.
        errors: u64,
        /// Which side failed, from the errors' reasons (absent in older files: unknown).
        #[serde(default)]
        side: FailedSide,
        /// What shows it, in words: the reasons counted and the connections held then.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        evidence: String,
    },
    /// The load generator failed (k6 exited, or was killed for memory).
    LoadgenFailed {
        /// Why, as the result's outcome detail says it.
        detail: String,
    },
    /// The server exited or was killed.
    ServerDied {
        /// The result's outcome.
        outcome: String,
    },
    /// Every planned step was held.
    #[default]
    AllHeld,
}

/// Which side an idle-capacity ramp's client errors came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailedSide {
    /// The server: it refused connects, left them without a handshake, or closed clients.
    Server,
    /// The load generator: k6 out of its own open files.
    LoadGenerator,
    /// The kernel: no local port left on a source address.
    Kernel,
    /// Nothing tells (script errors alone, or a file written before sides were told).
    #[default]
    Unknown,
}

impl FailedSide {
    /// As tables word it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Server => "server",
            Self::LoadGenerator => "load generator",
            Self::Kernel => "kernel limit",
            Self::Unknown => "unknown side",
        }
    }
}

/// The soak KPIs of a long run, each with its verdict. See docs/methodology.md ("Soak").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SoakKpis {
    /// Seconds at the start left out as warm-up.
    pub warmup_s: f64,
    /// Seconds measured after the warm-up.
    pub measured_s: f64,
    /// Least-squares slope of server memory over the measured part, in MiB per hour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_slope_mib_per_h: Option<f64>,
    /// Deliveries per second in the last tenth over the first tenth, minus 1 (0 = no drift).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_drift_ratio: Option<f64>,
    /// Chat latency p95 of the first tenth, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_p95_first_ms: Option<f64>,
    /// Chat latency p95 of the last tenth, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_p95_last_ms: Option<f64>,
    /// Client errors over the whole run.
    pub errors: u64,
    /// Client errors in the last tenth (errors that keep coming, not a start-up blip).
    pub errors_last_tenth: u64,
    /// Server drops (slow consumers and rate limit) over the whole run.
    pub dropped: u64,
    /// Server drops as a share of deliveries + drops, 0 to 1.
    pub drop_ratio: f64,
    /// One verdict per KPI.
    pub verdicts: Vec<KpiVerdict>,
}

/// One KPI against its documented threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KpiVerdict {
    /// `memory_slope`, `throughput_drift`, `latency_drift`, `errors` or `drops`.
    pub kpi: String,
    /// True when the KPI is within its threshold; absent when it could not be measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<bool>,
    /// The threshold, in words with its unit (e.g. `≤ 10 MiB/h`).
    pub threshold: String,
}

/// The host limits an idle-capacity run was planned with (`wscbench_engine::host_limits`):
/// where its clients connected from and the open files each side was given, for its largest
/// step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostLimits {
    /// Clients of the largest step the limits were planned for.
    pub clients: u64,
    /// The loopback addresses the clients connected from, in turn (`SOURCE_ADDRESSES`).
    pub source_addresses: Vec<String>,
    /// Ephemeral ports one source address has (the port range's width).
    pub ports_per_address: u64,
    /// `net.ipv4.ip_local_port_range` during the run, as the kernel writes it (`32768 60999`).
    pub ip_local_port_range: String,
    /// Open files the server's container was given (`--ulimit nofile=N:N`).
    pub server_nofile: u64,
    /// Open files each load generator's container was given.
    pub loadgen_nofile: u64,
    /// The most open files this machine gives one process.
    pub nofile_ceiling: u64,
}
