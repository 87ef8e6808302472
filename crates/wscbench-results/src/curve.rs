//! One step of the load curve (the `load-curve` scenario): the load it offered, what of it
//! arrived, and the latency target the run judged it by. The report reads the steps of one
//! server together to find its capacity (the highest step it carried within the target).
//! See docs/methodology.md ("The load curve").

use serde::{Deserialize, Serialize};

/// What a delivered share must reach for a step to count as carried: 99 % of the offered
/// deliveries arrived. A level's window counts receipts by their arrival, so the broadcasts
/// in flight at its two edges move the share by a few tenths of a percent either way
/// (0.9974 to 1.0042 over 16 levels of two servers that dropped nothing, in a quick run made
/// while building this and not kept): at
/// 99.9 % a level would read "not carried" by that noise alone. A server that loses
/// deliveries loses far more than 1 %.
pub const CARRIED_RATIO: f64 = 0.99;

/// The latency target a step is judged by when `wscbench run --slo-p99-ms` sets none, in ms.
pub const DEFAULT_SLO_P99_MS: f64 = 50.0;

/// One load-curve step's offered load and what of it arrived.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CurveStep {
    /// Deliveries per second the step offered: clients × chats per second × (room size − 1).
    pub offered_deliveries_per_s: f64,
    /// Clients per room (each chat asks for a delivery to every other member).
    pub room_size: u64,
    /// Clients in all.
    pub clients: u64,
    /// Chats per second each client was scheduled to send.
    pub chats_per_s: f64,
    /// Deliveries the scheduled chats asked for: chats intended × (room size − 1); absent
    /// when the load generator reported no schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_deliveries: Option<u64>,
    /// The share of the offered deliveries the clients received, 0 to 1
    /// ([`crate::RunResult::delivered_of_offered`]: a join ramp's chats ask only for the
    /// members then in the room).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_ratio: Option<f64>,
    /// The latency target the run judged steps by (`--slo-p99-ms`), in ms.
    pub slo_p99_ms: f64,
    /// Deliveries per server CPU-second over the hold alone (every client joined, chats
    /// flowing), from the per-second samples; the step's cost without the join ramp's. Absent with fewer than two samples in the hold
    /// or without the server's counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_deliveries_per_server_cpu_s: Option<f64>,
    /// Why this level ended its point, the curve's levels above it not run in this round
    /// (docs/methodology.md, "The load curve"); absent when it did not, and in results made
    /// before the levels ran inside one point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_point: Option<String>,
}

impl CurveStep {
    /// True when this round carried the step: nearly everything offered arrived
    /// ([`CARRIED_RATIO`]) and latency p99 `p99_ms` stayed within the target.
    pub fn carried(&self, p99_ms: f64) -> bool {
        self.delivered_ratio.is_some_and(|r| r >= CARRIED_RATIO) && p99_ms <= self.slo_p99_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(delivered_ratio: Option<f64>) -> CurveStep {
        CurveStep {
            offered_deliveries_per_s: 100_000.0,
            room_size: 500,
            clients: 500,
            chats_per_s: 0.4,
            offered_deliveries: Some(1_000_000),
            delivered_ratio,
            slo_p99_ms: 50.0,
            hold_deliveries_per_server_cpu_s: None,
            ended_point: None,
        }
    }

    #[test]
    fn a_step_is_carried_when_nearly_all_arrived_within_the_latency_target() {
        assert!(step(Some(0.9995)).carried(12.0));
        assert!(
            step(Some(0.997)).carried(12.0),
            "within the windows' edge noise"
        );
        assert!(!step(Some(0.98)).carried(12.0), "too little arrived");
        assert!(!step(Some(1.0)).carried(50.1), "too late");
        assert!(!step(None).carried(1.0), "nothing known of what arrived");
    }
}
