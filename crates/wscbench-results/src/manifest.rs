//! The run manifest (`run.json`): what one `wscbench run` set out to do and how it ended,
//! written when the run starts and rewritten when it ends.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{LoadPath, Mode, NotOffered, PointStop, RoundRecord, Scenario, Transport};

/// How a run as a whole ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still running, or the process died without a word (no later rewrite).
    Running,
    /// Every planned point ran (each may still have failed; see its result).
    Completed,
    /// The user stopped it (SIGINT or SIGTERM); the points already run are kept.
    Interrupted,
    /// The run itself could not go on (for example a result could not be written).
    Failed,
}

/// `results/<run-id>/run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    /// Schema version of this manifest (the same as the results'; 1 when absent).
    #[serde(default = "one")]
    pub schema_version: u32,
    /// The run id, also its directory name.
    pub run_id: String,
    /// How the run ended, or `running`.
    pub status: RunStatus,
    /// Why it failed or was interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_detail: Option<String>,
    /// The command line that started it.
    pub command: String,
    /// The wscbench version that ran it.
    #[serde(default)]
    pub wscbench_version: String,
    /// Timing mode.
    pub mode: Mode,
    /// Which client loop drove the servers.
    #[serde(default)]
    pub load_path: LoadPath,
    /// The rounds every point gets at least (`--runs`).
    #[serde(default = "one")]
    pub repetitions: u32,
    /// The precision goal: a headline figure's 95 % interval within this share of its mean
    /// (`--precision`), in percent; absent before rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_pct: Option<f64>,
    /// The time budget of the rounds (`--budget`), in seconds; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<u64>,
    /// The seed every round's shuffled order derives from (`--seed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Every round run so far, with the machine's speed at its start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<RoundRecord>,
    /// Why each point got no more rounds (written when the run ends).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stops: Vec<PointStop>,
    /// Server ids, with `@variant` where a variant was run.
    pub servers: Vec<String>,
    /// Scenarios, in order.
    pub scenarios: Vec<Scenario>,
    /// Transports asked (`--transport`), in order; absent in older runs, which were `ws`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transports: Vec<Transport>,
    /// The asked transports a server's manifest says it does not offer, with the reason:
    /// the report's "not offered" cells, without the catalog.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_offered: Vec<NotOffered>,
    /// The load sweep, key to values, if any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sweep: BTreeMap<crate::LoadParam, Vec<f64>>,
    /// The load curve's steps as the run chose them (absent without the curve, and in runs
    /// made before they were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve_steps: Option<CurveSteps>,
    /// How many result files the run planned.
    #[serde(default)]
    pub planned_points: u32,
    /// How many were written.
    #[serde(default)]
    pub written_points: u32,
    /// When the run started, RFC 3339 UTC.
    #[serde(default)]
    pub started_at: String,
    /// When this file was last written, RFC 3339 UTC.
    pub written_at: String,
}

/// The load curve's steps and where they came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveSteps {
    /// The offered deliveries per second of each step, rising.
    pub deliveries_per_s: Vec<f64>,
    /// What k6 was measured to receive on this host, in deliveries per second with every core
    /// of every load engine (`wscbench loadgen-capacity`), when the steps were placed
    /// geometrically up to it; absent when they are the mode's own or `--sweep deliveries=`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadgen_ceiling_per_s: Option<f64>,
    /// When that was measured (`YYYYMMDD-HHMMSS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadgen_measured_at: Option<String>,
}

fn one() -> u32 {
    1
}

impl RunManifest {
    /// Pretty JSON, as written to disk.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("RunManifest always serializes")
    }

    /// Parses `run.json`.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}
