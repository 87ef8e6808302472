//! The runner: every measured point of a plan (server × variant × scenario × load parameters
//! × repetition), each through
//! the same phases — start → ready → load → collect → write (see [`phases`]) — with one
//! cleanup path, writing each result the moment its point ends. It reports progress
//! through a callback and never prints.

mod derive;
mod phases;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::watch;
use wscbench_results::{
    Conditions, LoadPath, Mode, Outcome, Repetition, RunResult, Sample, Scenario,
};

use crate::catalog::Server;
use crate::images::Image;
use crate::scenarios;

pub use derive::cpuset_cores;

/// Resource limits and pinning, identical for every server.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// CPUs for the server container.
    pub cpus: f64,
    /// Memory for the server container, in bytes.
    pub memory_bytes: u64,
    /// Cores to pin the server to.
    pub cpuset_server: Option<String>,
    /// Cores to pin k6 to.
    pub cpuset_loadgen: Option<String>,
    /// Memory for the k6 container, in bytes; a k6 that reaches it is `loadgen_failed`.
    pub loadgen_memory_bytes: Option<u64>,
}

/// How much verification each fresh server container gets before it is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VerifyLevel {
    /// The sub-second checks ([`crate::verify::QUICK_CHECKS`]).
    #[default]
    Quick,
    /// Every check (adds about 12 s per run).
    Full,
    /// None: only `/health`.
    Off,
}

impl VerifyLevel {
    /// Every level, as `--verify` lists them.
    pub const ALL: &'static [VerifyLevel] =
        &[VerifyLevel::Quick, VerifyLevel::Full, VerifyLevel::Off];

    /// The name `--verify` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            VerifyLevel::Quick => "quick",
            VerifyLevel::Full => "full",
            VerifyLevel::Off => "off",
        }
    }
}

impl std::str::FromStr for VerifyLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        VerifyLevel::ALL
            .iter()
            .copied()
            .find(|level| level.as_str() == s)
            .ok_or_else(|| format!("unknown verify level {s:?}; the levels are quick, full, off"))
    }
}

/// An engine that runs a k6 instance of a split run (`--loadgen-engine`), as the runner
/// needs to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadgenEngine {
    /// The endpoint, as given (`unix:///run/wscbench-2.sock`, `tcp://10.0.0.2:2375`).
    pub endpoint: String,
    /// The address of its host as wscbench reaches it, for k6's REST API: `127.0.0.1` for a
    /// `unix://` engine, the URL's host for a `tcp://` one. k6 listens on it (host network).
    pub api_host: String,
}

/// A named variant of a server: extra arguments and environment for the same image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The name, as in `profile-b/go@gomaxprocs-1`.
    pub name: String,
    /// Extra arguments after the server's own.
    pub args: Vec<String>,
    /// Extra `KEY=value` environment.
    pub env: Vec<String>,
}

/// A server to run, with its image, as itself or as one of its variants.
#[derive(Debug, Clone)]
pub struct PlannedServer {
    /// From the manifest.
    pub server: Server,
    /// Built or reused.
    pub image: Image,
    /// The variant, if this row is one.
    pub variant: Option<Variant>,
}

impl PlannedServer {
    /// `profile-b/go`, or `profile-b/go@variant`.
    pub fn label(&self) -> String {
        wscbench_results::dimensions::server_label(
            &self.server.id,
            self.variant.as_ref().map(|v| v.name.as_str()),
        )
    }
}

/// Everything one `wscbench run` does.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The run id (also the results subdirectory).
    pub run_id: String,
    /// Servers (and variants), in order.
    pub servers: Vec<PlannedServer>,
    /// Scenarios, in order.
    pub scenarios: Vec<Scenario>,
    /// The load parameters of each point of a sweep ([`crate::sweep::Sweep::points`]); one
    /// empty set (or none) runs each shape with its own defaults.
    pub load_points: Vec<BTreeMap<String, f64>>,
    /// Timing mode.
    pub mode: Mode,
    /// Soak's length for the shapes that have one (`--duration`), in seconds.
    pub soak_seconds: Option<u64>,
    /// The capacity scenario's latency target (`--slo-p95-ms`), in ms.
    pub slo_p95_ms: f64,
    /// Which client loop k6 runs.
    pub load_path: LoadPath,
    /// Repetitions of every point, interleaved.
    pub repetitions: u32,
    /// Limits.
    pub limits: Limits,
    /// Verification per run.
    pub verify: VerifyLevel,
    /// Host directory of the k6 scripts (mounted read-only).
    pub scenarios_dir: PathBuf,
    /// `results/<run-id>`.
    pub results_dir: PathBuf,
    /// The k6 image tag.
    pub k6_image: String,
    /// Conditions common to every run (machine, kernel, engine, k6).
    pub conditions: Conditions,
    /// The engines of the load generators, one k6 each, in order; empty: one k6 on the
    /// server's engine. Two or more split the load with execution segments.
    pub loadgens: Vec<LoadgenEngine>,
    /// How the load generators reach the server (`--server-address`); `None`: loopback.
    /// With an address the server listens on every interface.
    pub server_address: Option<String>,
}

/// One measured point of a plan.
#[derive(Debug, Clone, Copy)]
pub struct Point<'p> {
    /// The server (or variant).
    pub server: &'p PlannedServer,
    /// The load shape.
    pub scenario: Scenario,
    /// Load parameters that override the shape's defaults (a sweep's values), if any.
    pub params: &'p BTreeMap<String, f64>,
    /// Which repetition.
    pub repetition: Repetition,
}

/// What a point without a sweep takes: the shape's own defaults.
static NO_PARAMS: BTreeMap<String, f64> = BTreeMap::new();

/// Time a point spends outside its scenario (start, health, verification, stop, write): for
/// estimates.
pub const POINT_OVERHEAD: Duration = Duration::from_secs(5);

impl Point<'_> {
    /// Load parameters that override the shape's defaults (a sweep's values).
    pub fn load_params(&self) -> BTreeMap<String, f64> {
        self.params.clone()
    }

    /// Where this point's result goes under the run directory.
    pub fn result_path(&self, results_dir: &Path) -> PathBuf {
        results_dir.join(wscbench_results::result_relative_path(
            &self.server.server.id,
            self.server.variant.as_ref().map(|v| v.name.as_str()),
            self.scenario,
            &self.load_params(),
            self.repetition,
        ))
    }

    /// Where the load generator's raw output for this point goes.
    pub fn raw_dir(&self, results_dir: &Path) -> PathBuf {
        results_dir.join(wscbench_results::raw_relative_dir(
            &self.server.server.id,
            self.server.variant.as_ref().map(|v| v.name.as_str()),
            self.scenario,
            &self.load_params(),
            self.repetition,
        ))
    }
}

impl Plan {
    /// Every point in run order: repetitions outermost, so that the servers and scenarios
    /// take turns (A B C A B C) and drift on a shared machine spreads evenly over them; then
    /// a sweep's load parameters, so every server meets one value close in time.
    pub fn points(&self) -> Vec<Point<'_>> {
        let of = self.repetitions.max(1);
        let loads: Vec<&BTreeMap<String, f64>> = if self.load_points.is_empty() {
            vec![&NO_PARAMS]
        } else {
            self.load_points.iter().collect()
        };
        let mut points = Vec::new();
        for index in 1..=of {
            for params in &loads {
                for server in &self.servers {
                    for &scenario in &self.scenarios {
                        points.push(Point {
                            server,
                            scenario,
                            params,
                            repetition: Repetition { index, of },
                        });
                    }
                }
            }
        }
        points
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.servers.len()
            * self.scenarios.len()
            * self.load_points.len().max(1)
            * self.repetitions.max(1) as usize
    }

    /// How long the plan should take: every point's scenario and [`POINT_OVERHEAD`].
    pub fn estimate(&self) -> Duration {
        estimate(
            self.servers.len(),
            &self.scenarios,
            self.load_points.len(),
            self.repetitions,
            self.mode,
            self.soak_seconds,
        )
    }

    /// True when there is nothing to run.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The scenario time of the whole plan, without overheads.
    pub fn scenario_time(&self) -> Duration {
        self.points()
            .iter()
            .map(|p| self.scenario_seconds(p.scenario))
            .sum()
    }

    /// How long one scenario's load runs in this plan's mode.
    pub fn scenario_seconds(&self, scenario: Scenario) -> Duration {
        Duration::from_secs(scenarios::planned_seconds(
            scenario,
            self.mode,
            self.soak_seconds,
        ))
    }
}

/// How long a plan of these dimensions should take (its scenarios' lengths, which a sweep
/// does not change, a soak's `--duration` does, and [`POINT_OVERHEAD`] per point): known
/// before any image is built.
pub fn estimate(
    servers: usize,
    scenarios: &[Scenario],
    load_points: usize,
    repetitions: u32,
    mode: Mode,
    soak_seconds: Option<u64>,
) -> Duration {
    let per_round: Duration = scenarios
        .iter()
        .map(|&s| {
            Duration::from_secs(scenarios::planned_seconds(s, mode, soak_seconds)) + POINT_OVERHEAD
        })
        .sum();
    per_round * (servers * load_points.max(1) * repetitions.max(1) as usize) as u32
}

/// Refuses a plan whose [`estimate`] exceeds `bound`.
pub fn check_duration(
    servers: usize,
    scenarios: &[Scenario],
    load_points: usize,
    repetitions: u32,
    mode: Mode,
    soak_seconds: Option<u64>,
    bound: Duration,
) -> Result<Duration, crate::sweep::TooLong> {
    let estimate = estimate(
        servers,
        scenarios,
        load_points,
        repetitions,
        mode,
        soak_seconds,
    );
    if estimate > bound {
        return Err(crate::sweep::TooLong {
            estimate,
            bound,
            points: servers * scenarios.len() * load_points.max(1) * repetitions.max(1) as usize,
        });
    }
    Ok(estimate)
}

/// What the runner is doing, for a progress display.
#[derive(Debug)]
pub enum Progress<'a> {
    /// A point begins.
    Starting {
        /// 1-based position in the plan.
        index: usize,
        /// Points in the plan.
        total: usize,
        /// The point.
        point: Point<'a>,
        /// Its scenario's length.
        expected: Duration,
    },
    /// A phase within the point: "starting server", "verifying", "load", "stopping".
    Phase(&'static str),
    /// One second of load.
    Tick {
        /// Since the load started.
        elapsed: Duration,
        /// The scenario's length.
        expected: Duration,
        /// This second's sample.
        sample: &'a Sample,
        /// Deliveries per second over the last second, when the server answered.
        deliveries_per_s: Option<f64>,
    },
    /// A point ended and its result was written.
    Finished {
        /// The result.
        result: &'a RunResult,
        /// Where it was written.
        path: &'a Path,
    },
}

/// The runner could not write a result: the only error that stops a whole plan.
#[derive(Debug, thiserror::Error)]
#[error("writing {}: {source}", path.display())]
pub struct WriteError {
    path: PathBuf,
    #[source]
    source: std::io::Error,
}

impl WriteError {
    /// A result that cannot be written is a failure.
    pub fn class(&self) -> crate::ErrorClass {
        crate::ErrorClass::Failure
    }
}

/// Writes a result atomically (temporary file, then rename).
pub fn write_result(path: &Path, result: &RunResult) -> Result<(), WriteError> {
    write_atomically(path, &result.to_json())
}

/// Writes a file atomically (temporary file, then rename), creating its directory.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), WriteError> {
    let err = |source| WriteError {
        path: path.to_owned(),
        source,
    };
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).map_err(err)?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// Runs every point of the plan in order with the server and its one k6 on `engine`,
/// writing each result as it ends. Stops early (after cleaning up) when `cancel` turns true;
/// the interrupted point is recorded.
pub async fn execute<E: crate::engine::Engine>(
    engine: &E,
    plan: &Plan,
    cancel: watch::Receiver<bool>,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Result<Vec<RunResult>, WriteError> {
    execute_on(engine, &[], plan, cancel, on).await
}

/// [`execute`] with the server on `server_engine` and one k6 on each of `loadgen_engines`
/// (the engines of [`Plan::loadgens`], in the same order; none: one k6 on the server's).
pub async fn execute_on<E: crate::engine::Engine>(
    server_engine: &E,
    loadgen_engines: &[&E],
    plan: &Plan,
    cancel: watch::Receiver<bool>,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Result<Vec<RunResult>, WriteError> {
    let loadgens: Vec<&E> = if loadgen_engines.is_empty() {
        vec![server_engine]
    } else {
        loadgen_engines.to_vec()
    };
    let mut results = Vec::new();
    let points = plan.points();
    let total = points.len();
    for (i, point) in points.into_iter().enumerate() {
        if *cancel.borrow() {
            break;
        }
        on(Progress::Starting {
            index: i + 1,
            total,
            point,
            expected: plan.scenario_seconds(point.scenario),
        });
        let result =
            phases::run_point(server_engine, &loadgens, plan, point, cancel.clone(), on).await;
        let path = point.result_path(&plan.results_dir);
        write_result(&path, &result)?;
        on(Progress::Finished {
            result: &result,
            path: &path,
        });
        let interrupted = result.outcome == Outcome::Interrupted;
        results.push(result);
        if interrupted {
            break;
        }
    }
    Ok(results)
}

/// A duration as a progress line or an estimate shows it: `2h05m`, `12m30s`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// A run id from the current time, `YYYYMMDD-HHMMSS` (UTC).
pub fn new_run_id() -> String {
    let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    stamp
        .trim_end_matches('Z')
        .replace(['-', ':'], "")
        .replace('T', "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_sortable_timestamps() {
        let id = new_run_id();
        assert_eq!(id.len(), 15, "{id}");
        assert_eq!(&id[8..9], "-");
    }
}
