//! Rounds and the machine's speed: where a result stood in its run's shuffled order, the
//! calibration measured at the start of its round, and why each point stopped getting rounds.

use serde::{Deserialize, Serialize};

/// Where a result stood in its round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// 1-based position of this point in its round's shuffled order.
    pub position: u32,
    /// How many points the round ran.
    pub points: u32,
    /// The seed the round's order was shuffled from (the run's seed and the round number).
    pub seed: u64,
    /// The machine's speed, measured at the start of the round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_speed: Option<MachineSpeed>,
}

/// A short fixed calibration of the machine, run once per round with no container running.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MachineSpeed {
    /// CPU-bound work: SHA-256 blocks of 64 bytes hashed per second on one thread.
    pub cpu_blocks_per_s: f64,
    /// Syscall-bound work: 64-byte request/reply round trips per second over one loopback
    /// TCP connection served by one thread (two small writes and two reads each), as a
    /// per-frame server's sends cost.
    pub loopback_roundtrips_per_s: f64,
    /// Both against this project's reference machine (100 = as fast), as their geometric
    /// mean: two runs whose indexes differ by more than a change cannot show that change.
    pub index: f64,
}

/// Why a point got no more rounds (`wscbench run --precision` and `--budget`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Every headline figure's 95 % interval is within the precision goal.
    Precise,
    /// Its ranking against its neighbours in every headline figure is decided: the
    /// intervals separate, though they are wider than the goal.
    Decided,
    /// The time budget ran out before it was precise or decided.
    Budget,
    /// It reached the most rounds a point may get (`--max-rounds`).
    MaxRounds,
    /// It never produced a result to judge: every round of it failed.
    Failed,
    /// A load-curve step above one at which its server died: not run, since a server
    /// that cannot survive a lower load says nothing more at a higher one.
    DiedBelow,
    /// Every round of it so far (two or more) measured the load generator, not the server:
    /// another round could not decide anything, so the time goes to the points that can.
    LoadgenBound,
    /// A load-curve level above one that ended its point (not carried by far, or k6 could
    /// not drive it) in every round it was part of: never measured.
    EndedBelow,
}

impl StopReason {
    /// The word tables show.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Precise => "precise",
            StopReason::Decided => "decided",
            StopReason::Budget => "budget",
            StopReason::MaxRounds => "max-rounds",
            StopReason::Failed => "failed",
            StopReason::DiedBelow => "died-below",
            StopReason::LoadgenBound => "loadgen-bound",
            StopReason::EndedBelow => "ended-below",
        }
    }
}

/// One round of a run, as `run.json` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    /// 1-based round number.
    pub index: u32,
    /// When it started, RFC 3339 UTC.
    pub started_at: String,
    /// How many points it ran.
    pub points: u32,
    /// The machine's speed at its start, if calibrated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_speed: Option<MachineSpeed>,
}

/// How one point of a run ended its rounds, as `run.json` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointStop {
    /// `profile-b/go@variant steady clients=100`: the point's label.
    pub point: String,
    /// Rounds it ran (failed ones included).
    pub rounds: u32,
    /// Why it got no more.
    pub reason: StopReason,
}
