//! The words for data the engine records: load-generator reasons, in one place, so every
//! format says the same thing.

use wscbench_results::BoundReason;

/// One reason, as a clause: "k6 received 10 of 100 chats the server wrote (10%)".
pub fn reason(reason: &BoundReason) -> String {
    match reason {
        BoundReason::ReceivedShort {
            received,
            delivered,
        } => format!(
            "k6 received {received} of the {delivered} chats the server wrote ({:.0}%)",
            100.0 * *received as f64 / (*delivered).max(1) as f64
        ),
        BoundReason::SessionsCutOff { cut_off, sessions } => {
            format!("k6 cut off {cut_off} of {sessions} sessions it could not finish in time")
        }
        BoundReason::SlowConsumerDrops { dropped, delivered } => format!(
            "the server dropped {dropped} messages ({:.1}% of deliveries) for clients that did not read in time while k6 was busy (every client is k6)",
            100.0 * *dropped as f64 / (*delivered).max(1) as f64
        ),
        BoundReason::LoadgenCpuSaturated {
            busy_s,
            measured_s,
            ceiling_percent,
        } => format!(
            "k6 CPU at ≥90% of its {ceiling_percent:.0}% ceiling for {busy_s} of {measured_s} s"
        ),
        BoundReason::MachineSaturated {
            busy_s,
            measured_s,
            cores,
            loadgen_share_ratio,
        } => format!(
            "the machine's {cores} cores were saturated for {busy_s} of {measured_s} s and k6 used {:.0}% of the CPU in those seconds: it competed with the server",
            100.0 * loadgen_share_ratio
        ),
        BoundReason::LoadgenOutOfMemory { limit_bytes } => format!(
            "k6 reached its memory limit of {:.0} MiB",
            *limit_bytes as f64 / 1048576.0
        ),
        BoundReason::TimerLate { late, intended } => format!(
            "k6's own timers fired late for {late} of {intended} intended chats ({:.1} %)",
            *late as f64 * 100.0 / (*intended).max(1) as f64
        ),
        BoundReason::Legacy { text } => text.clone(),
    }
}

/// Every reason of a result, joined with "; ", or "no reason recorded".
pub fn reasons(reasons: &[BoundReason]) -> String {
    if reasons.is_empty() {
        return "no reason recorded".into();
    }
    reasons.iter().map(reason).collect::<Vec<_>>().join("; ")
}

/// Said once per table under the reasons' footnotes.
pub const BOUND_MEANING: &str = "load-generator bound: the marked figures measure the load generator, not the server, and none of these rows' figures compete for best.";

/// Said once per table under the failed outcomes' footnotes.
pub const FAILED_MEANING: &str =
    "the run did not end `ok`; a row without an `ok` repetition has no comparable figures.";

/// A bound result that recorded no reason.
pub const NO_REASON: &str = "load-generator bound, no reason recorded";

/// The kind of a reason ([`BoundReason::kind`]) as a footnote's heading: the same for every
/// result it applies to, so a table says it once.
pub fn reason_kind(reason: &BoundReason) -> &'static str {
    match reason {
        BoundReason::ReceivedShort { .. } => "k6 received fewer chats than the server wrote",
        BoundReason::SessionsCutOff { .. } => "k6 cut off sessions it could not finish in time",
        BoundReason::SlowConsumerDrops { .. } => {
            "the server dropped messages for clients (all k6) that did not read in time"
        }
        BoundReason::LoadgenCpuSaturated { .. } => "k6's CPU sat at its ceiling",
        BoundReason::MachineSaturated { .. } => {
            "the machine's cores were saturated and k6 competed with the server"
        }
        BoundReason::LoadgenOutOfMemory { .. } => "k6 reached its memory limit",
        BoundReason::TimerLate { .. } => "k6's own timers fired late (it was short of CPU)",
        BoundReason::Legacy { .. } => "load-generator bound (reason recorded as text by schema 1)",
    }
}
