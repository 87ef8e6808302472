//! Why a result was judged load-generator bound: the reasons as data. The engine computes
//! them once (a pure function of the series and counters); renderers word them.

use serde::{Deserialize, Serialize};

/// One reason the load generator, not the server, was the limit. See docs/methodology.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BoundReason {
    /// The load generator received noticeably fewer chats than the server wrote.
    ReceivedShort {
        /// Chats the load generator received.
        received: u64,
        /// Deliveries the server wrote.
        delivered: u64,
    },
    /// k6 cut off sessions it could not finish before its graceful stop.
    SessionsCutOff {
        /// Sessions cut off.
        cut_off: u64,
        /// Sessions started.
        sessions: u64,
    },
    /// The server dropped messages for clients that did not read in time while the load
    /// generator was busy: every client is the load generator.
    SlowConsumerDrops {
        /// Messages dropped for slow consumers.
        dropped: u64,
        /// Deliveries written.
        delivered: u64,
    },
    /// The load generator's CPU sat at its ceiling.
    LoadgenCpuSaturated {
        /// Seconds at ≥90 % of its ceiling.
        busy_s: u64,
        /// Seconds measured.
        measured_s: u64,
        /// Its ceiling, in percent of one core.
        ceiling_percent: f64,
    },
    /// The machine's cores were saturated and the load generator took at least as much of
    /// them as the server: it competed with the server for CPU.
    MachineSaturated {
        /// Seconds at ≥90 % of all cores.
        busy_s: u64,
        /// Seconds measured.
        measured_s: u64,
        /// The machine's cores.
        cores: u32,
        /// The load generator's share of the CPU used in those seconds, 0 to 1.
        loadgen_share_ratio: f64,
    },
    /// The load generator hit its own memory limit.
    LoadgenOutOfMemory {
        /// Its limit, in bytes.
        limit_bytes: u64,
    },
    /// The load generator's own timers fired late (it was short of CPU) for a noticeable share
    /// of the chats it meant to send: its schedule, not the server, set their send times.
    TimerLate {
        /// Chats sent late or missed because the client's timer fired late.
        late: u64,
        /// Chats the schedule intended.
        intended: u64,
    },
    /// A reason written by schema version 1 as English text.
    Legacy {
        /// The text as written.
        text: String,
    },
}

impl BoundReason {
    /// A short stable name for grouping footnotes ("each reason once").
    pub fn kind(&self) -> &'static str {
        match self {
            BoundReason::ReceivedShort { .. } => "received_short",
            BoundReason::SessionsCutOff { .. } => "sessions_cut_off",
            BoundReason::SlowConsumerDrops { .. } => "slow_consumer_drops",
            BoundReason::LoadgenCpuSaturated { .. } => "loadgen_cpu_saturated",
            BoundReason::MachineSaturated { .. } => "machine_saturated",
            BoundReason::LoadgenOutOfMemory { .. } => "loadgen_out_of_memory",
            BoundReason::TimerLate { .. } => "timer_late",
            BoundReason::Legacy { .. } => "legacy",
        }
    }
}
