//! The runner: every measured point of a plan (server × variant × scenario × load parameters
//! × repetition), each through
//! the same phases — start → ready → load → collect → write (see [`phases`]) — with one
//! cleanup path, writing each result the moment its point ends. It reports progress
//! through a callback and never prints.
//!
//! The top folder: it may use every other.

mod collect;
mod derive;
#[cfg(test)]
mod fixtures;
mod levels;
mod phases;
pub mod rounds;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use wscbench_results::{
    Conditions, CurveSteps, LoadParam, LoadParams, LoadPath, MachineSpeed, Mode, NotOffered,
    Outcome, PointKey, PointStop, Repetition, Round, RoundRecord, RunResult, Sample, Scenario,
    StopReason, Transport, UsageSource,
};

use crate::catalog::images::Image;
use crate::catalog::{Server, Variant};
use crate::load::scenarios;
use crate::load::sweep::Sweep;

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

/// A server to run, as itself or as one of its variants, and where it comes from.
#[derive(Debug, Clone)]
pub struct PlannedServer {
    /// From the manifest (for an external server, its name as id and `external` as profile).
    pub server: Server,
    /// Started by wscbench from an image, or already running elsewhere.
    pub source: ServerSource,
    /// The variant, if this row is one (never for an external server).
    pub variant: Option<Variant>,
}

/// Where a planned server comes from: the one place the runner's phases tell a server it
/// starts from one it only reaches.
#[derive(Debug, Clone)]
pub enum ServerSource {
    /// A container wscbench starts, under the limits, from its image (built or reused when
    /// the run is prepared: [`Setup::images`]).
    Managed,
    /// A server wscbench did not start (`run --url`).
    External(External),
}

/// A server wscbench did not start: where it answers and what measures its CPU and memory.
#[derive(Debug, Clone, PartialEq)]
pub struct External {
    /// Its name as given (`--name`); results call it `external/NAME`.
    pub name: String,
    /// Its WebSocket URL, `ws://HOST:PORT/ws`, checked by [`crate::verify::Target::from_url`].
    pub url: String,
    /// Its container's stats, its process's `/proc`, or nothing
    /// ([`UsageSource::Managed`] is never used here).
    pub usage: UsageSource,
}

/// The profile an external server's results carry: its own group, never a profile's.
pub const EXTERNAL_PROFILE: &str = "external";

impl PlannedServer {
    /// An external server as a row of the plan: `external/NAME`, in the `external` profile,
    /// with no image, build nor variants.
    pub fn external_server(external: External) -> PlannedServer {
        let server = Server {
            id: format!("{EXTERNAL_PROFILE}/{}", external.name),
            // Names the k6 container: `wscbench-RUN-ext-NAME-steady-r1-k6`.
            tag: format!("ext-{}", external.name),
            language: String::new(),
            profile: EXTERNAL_PROFILE.into(),
            framework: String::new(),
            build: String::new(),
            binary: PathBuf::new(),
            test: String::new(),
            exclude: Vec::new(),
            shared: Vec::new(),
            variants: BTreeMap::new(),
            runtime: None,
            transports: vec![Transport::Ws],
            not_offered: BTreeMap::new(),
            dir: PathBuf::new(),
        };
        PlannedServer {
            server,
            source: ServerSource::External(external),
            variant: None,
        }
    }

    /// A row of the catalog, as itself or as one of its variants, started by wscbench.
    pub fn managed(server: Server, variant: Option<Variant>) -> PlannedServer {
        PlannedServer {
            server,
            source: ServerSource::Managed,
            variant,
        }
    }

    /// The external server, `None` for a managed one.
    pub fn as_external(&self) -> Option<&External> {
        match &self.source {
            ServerSource::External(external) => Some(external),
            ServerSource::Managed => None,
        }
    }
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

/// Fault injection: the server container frozen for `pause` at the end of every `every`
/// of the load, from the load's start (`--pause-server 1s/5s`: frozen from 4 s to 5 s, 9 s
/// to 10 s, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PauseServer {
    /// How long each pause lasts.
    pub pause: Duration,
    /// The period of the pauses.
    pub every: Duration,
}

impl std::str::FromStr for PauseServer {
    type Err = String;
    /// `PAUSE/EVERY`, e.g. `1s/5s` or `500ms/2s`; the pause shorter than its period.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!("{s:?} is not PAUSE/EVERY such as 1s/5s (the pause shorter than its period)")
        };
        let (pause, every) = s.split_once('/').ok_or_else(bad)?;
        let pause = humantime::parse_duration(pause.trim()).map_err(|_| bad())?;
        let every = humantime::parse_duration(every.trim()).map_err(|_| bad())?;
        if pause.is_zero() || pause >= every {
            return Err(bad());
        }
        Ok(PauseServer { pause, every })
    }
}

impl PauseServer {
    /// As the command line and the result's conditions write it: `1s/5s`.
    pub fn text(&self) -> String {
        format!(
            "{}/{}",
            humantime::format_duration(self.pause),
            humantime::format_duration(self.every)
        )
    }

    /// Whether the server is frozen at `elapsed` into the load, and when that next changes.
    pub fn at(&self, elapsed: Duration) -> (bool, Duration) {
        let every = self.every.as_nanos();
        let into = elapsed.as_nanos() % every;
        let frozen_from = every - self.pause.as_nanos();
        let start = elapsed.as_nanos() - into;
        let nanos = |n: u128| Duration::from_nanos(n as u64);
        if into >= frozen_from {
            (true, nanos(start + every))
        } else {
            (false, nanos(start + frozen_from))
        }
    }
}

/// Everything one `wscbench run` does: built once, from its checked command line (the
/// binary's `check`, where every refusal is), executed by the runner and recorded in
/// `run.json`, which serialises the fields marked for it (names as
/// `wscbench_results::RunManifest` reads them). What preparing the run makes — images, the
/// machine's conditions, the certificate — is its [`Setup`].
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// Timing mode.
    pub mode: Mode,
    /// Which client loop k6 runs.
    pub load_path: LoadPath,
    /// The rounds every point gets at least (`--runs`).
    pub repetitions: u32,
    /// The precision goal (`--precision`), in percent, when rounds are added for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision_pct: Option<f64>,
    /// How the run adds rounds beyond those, within its budget.
    #[serde(flatten)]
    pub adaptive: rounds::Adaptive,
    /// Servers (and variants), in order; recorded by their labels.
    #[serde(serialize_with = "labels")]
    pub servers: Vec<PlannedServer>,
    /// Scenarios, in order.
    pub scenarios: Vec<Scenario>,
    /// The transports, each a point of its own for every server that offers it (empty:
    /// `ws` only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transports: Vec<Transport>,
    /// The (server, transport) points left out because the server does not offer the
    /// transport, with its manifest's reason: the report's "not offered" cells.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_offered: Vec<NotOffered>,
    /// The sweep as given (`--sweep`), recorded key to values.
    #[serde(skip_serializing_if = "Sweep::is_empty")]
    pub sweep: Sweep,
    /// The load curve's steps as the run chose them; `None` without the curve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curve_steps: Option<CurveSteps>,
    /// The load parameters of each point of a sweep and of the load curve's steps
    /// ([`crate::load::sweep::run_points`]); one empty set (or none) runs each shape with its own
    /// defaults. A scenario runs once per distinct set of the parameters it takes
    /// ([`crate::load::sweep::loads_of`]).
    #[serde(skip)]
    pub load_points: Vec<LoadParams>,
    /// Soak's length for the shapes that have one (`--duration`), in seconds.
    #[serde(skip)]
    pub soak_seconds: Option<u64>,
    /// The capacity scenario's latency target (`--slo-p95-ms`), in ms.
    #[serde(skip)]
    pub slo_p95_ms: f64,
    /// The load curve's latency target (`--slo-p99-ms`), in ms: a step whose p99 passes it
    /// is not carried.
    #[serde(skip)]
    pub slo_p99_ms: f64,
    /// Fault injection: pause the server container for this long every so often during the
    /// load (`--pause-server 1s/5s`), recorded in each result's conditions.
    #[serde(skip)]
    pub pause_server: Option<PauseServer>,
    /// Limits.
    #[serde(skip)]
    pub limits: Limits,
    /// Verification per run.
    #[serde(skip)]
    pub verify: VerifyLevel,
    /// Record each row's RFC 6455 conformance over each transport: the conformance cases
    /// run once, before the load of the row's first point, into
    /// `conformance/<row>/<transport>.json` (about 2 s per row and transport).
    #[serde(skip)]
    pub conformance: bool,
    /// The engines of the load generators, one k6 each, in order; empty: one k6 on the
    /// server's engine. Two or more split the load with execution segments.
    #[serde(skip)]
    pub loadgens: Vec<LoadgenEngine>,
    /// How the load generators reach the server (`--server-address`); `None`: loopback.
    /// With an address the server listens on every interface.
    #[serde(skip)]
    pub server_address: Option<String>,
    /// What preparing the run made; empty until then.
    #[serde(skip)]
    pub setup: Setup,
}

/// What preparing a run makes for its [`Plan`] before the first container: where it writes,
/// the images, the machine's conditions and the certificate.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// The run id (also the results subdirectory).
    pub run_id: String,
    /// `results/<run-id>`.
    pub results_dir: PathBuf,
    /// Host directory of the k6 scripts (mounted read-only).
    pub scenarios_dir: PathBuf,
    /// The k6 image tag.
    pub k6_image: String,
    /// The managed rows' images, one per tag (a variant with a binary of its own has its own).
    pub images: Vec<Image>,
    /// Conditions common to every run (machine, kernel, engine, k6).
    pub conditions: Conditions,
    /// The run's certificate, for the wss transports (made once per run; see
    /// [`crate::net::tls`]).
    pub tls: Option<std::sync::Arc<crate::net::tls::RunCert>>,
}

/// The plan's servers as `run.json` records them: their labels.
fn labels<S: serde::Serializer>(servers: &[PlannedServer], to: S) -> Result<S::Ok, S::Error> {
    to.collect_seq(servers.iter().map(PlannedServer::label))
}

/// One measured point of a plan.
#[derive(Debug, Clone, Copy)]
pub struct Point<'p> {
    /// The server (or variant).
    pub server: &'p PlannedServer,
    /// The load shape.
    pub scenario: Scenario,
    /// The run's load point this point belongs to; the scenario takes those of its
    /// parameters [`Point::load_params`] gives.
    pub params: &'p LoadParams,
    /// Which repetition.
    pub repetition: Repetition,
    /// How the clients reach the server.
    pub transport: Transport,
}

/// What a point without a sweep takes: the shape's own defaults.
static NO_PARAMS: LoadParams = BTreeMap::new();

/// Time a point spends outside its scenario (start, health, verification, stop, write): for
/// estimates. Run 20261128-000835 measured 3.6 s a point (144 points in 3 rounds of 10 min
/// 22 s: 1.9 s of overhead, 1.2 s (steady, load curve) to 3.4 s (burst) of k6 start and
/// graceful stop beyond the scenario's length, and each round's calibration), so 4 s.
pub const POINT_OVERHEAD: Duration = Duration::from_secs(4);

impl Point<'_> {
    /// The point without its round, as results name it.
    pub fn key(&self) -> PointKey {
        PointKey {
            server: self.server.server.id.clone(),
            variant: self.server.variant.as_ref().map(|v| v.name.clone()),
            scenario: self.scenario,
            load_params: wscbench_results::dimensions::params_text(&self.load_params()),
            transport: self.transport,
        }
    }

    /// Load parameters that override the shape's defaults (a sweep's values, a curve's
    /// step): those of the load point that the scenario takes.
    pub fn load_params(&self) -> LoadParams {
        crate::load::sweep::taken(self.scenario, self.params)
    }

    /// Where this point's result goes under the run directory.
    pub fn result_path(&self, results_dir: &Path) -> PathBuf {
        results_dir.join(wscbench_results::result_relative_path(
            &self.server.server.id,
            self.server.variant.as_ref().map(|v| v.name.as_str()),
            self.scenario,
            &self.load_params(),
            self.transport,
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
            self.transport,
            self.repetition,
        ))
    }
}

impl Plan {
    /// Each row's label, `ID` or `ID@VARIANT`; `external/NAME` for a server by URL.
    pub fn labels(&self) -> Vec<String> {
        self.servers.iter().map(PlannedServer::label).collect()
    }

    /// The server by URL, when it is the plan's row.
    pub fn external(&self) -> Option<&External> {
        self.servers.iter().find_map(PlannedServer::as_external)
    }

    /// The managed rows' servers to build, in row order: one per image tag (a variant is
    /// not a rebuild, except a variant with a binary of its own, which has its own tag).
    pub fn servers_to_build(&self) -> Vec<Server> {
        let mut built: Vec<Server> = Vec::new();
        for row in self.servers.iter().filter(|s| s.as_external().is_none()) {
            if !built.iter().any(|b| b.tag == row.server.tag) {
                built.push(row.server.clone());
            }
        }
        built
    }

    /// The image a managed row runs, once the run is prepared; `None` for an external one.
    pub fn image_of(&self, row: &PlannedServer) -> Option<&Image> {
        match row.source {
            ServerSource::Managed => self.setup.images.iter().find(|i| i.tag == row.server.tag),
            ServerSource::External(_) => None,
        }
    }

    /// The plan's estimated length, refused when it exceeds `bound` (`--max-duration`).
    pub fn check_duration(&self, bound: Duration) -> Result<Duration, TooLong> {
        let estimate = self.estimate();
        if estimate > bound {
            return Err(TooLong {
                estimate,
                bound,
                points: self.len(),
            });
        }
        Ok(estimate)
    }

    /// The points of one round, before shuffling: a sweep's load parameters, then servers,
    /// then scenarios; the repetition is set when a round runs them.
    pub fn round_points(&self) -> Vec<Point<'_>> {
        self.points()
            .into_iter()
            .filter(|p| p.repetition.index == 1)
            .collect()
    }

    /// The transports, `ws` when none was given.
    pub fn transports(&self) -> &[Transport] {
        if self.transports.is_empty() {
            &[Transport::Ws]
        } else {
            &self.transports
        }
    }

    /// Every point in run order: repetitions outermost, so that the servers and scenarios
    /// take turns (A B C A B C) and drift on a shared machine spreads evenly over them; then
    /// the load points, so every server meets one value close in time (a scenario meets only
    /// the load points that differ in a parameter it takes). A server gets a point only for
    /// the transports it offers.
    pub fn points(&self) -> Vec<Point<'_>> {
        let of = self.repetitions.max(1);
        let loads: Vec<&LoadParams> = if self.load_points.is_empty() {
            vec![&NO_PARAMS]
        } else {
            self.load_points.iter().collect()
        };
        let runs = |scenario: Scenario, params: &LoadParams| {
            self.load_points.is_empty()
                || crate::load::sweep::loads_of(scenario, &self.load_points)
                    .iter()
                    .any(|own| std::ptr::eq(*own, params))
        };
        let mut points = Vec::new();
        for index in 1..=of {
            for params in &loads {
                for server in &self.servers {
                    for &transport in self.transports() {
                        if server.server.offers(transport).is_err() {
                            continue;
                        }
                        for &scenario in &self.scenarios {
                            if !runs(scenario, params) {
                                continue;
                            }
                            points.push(Point {
                                server,
                                scenario,
                                params,
                                repetition: Repetition { index, of },
                                transport,
                            });
                        }
                    }
                }
            }
        }
        points
    }

    /// Each server row times the transports it offers (a server by URL speaks `ws` alone):
    /// the points of one round per scenario and load point.
    fn server_transports(&self) -> usize {
        self.servers
            .iter()
            .map(|s| {
                self.transports()
                    .iter()
                    .filter(|&&t| s.server.offers(t).is_ok())
                    .count()
            })
            .sum()
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.server_transports()
            * points_per_row(&self.scenarios, &self.load_points)
            * self.repetitions.max(1) as usize
    }

    /// The rounds a point of `scenario` gets at least: [`Plan::repetitions`]; a load curve's
    /// levels, in a run that adds rounds, [`rounds::CURVE_MIN_ROUNDS`] (its cost's spread is
    /// between rounds, and its levels share one start, so rounds are cheap there).
    pub fn min_rounds(&self, scenario: Scenario) -> u32 {
        rounds::min_rounds(scenario, self.repetitions, self.adaptive.max_rounds)
    }

    /// `scenario`'s place in the plan's list (the list's length for one not in it): a round
    /// adds points in this order, and an added round of a later scenario leaves room for
    /// every round an earlier one's undecided points may still take.
    pub fn scenario_rank(&self, scenario: Scenario) -> usize {
        self.scenarios
            .iter()
            .position(|&s| s == scenario)
            .unwrap_or(self.scenarios.len())
    }

    /// How long the plan's least rounds should take: every point's scenario and
    /// [`POINT_OVERHEAD`], each scenario for its [`Plan::min_rounds`].
    pub fn estimate(&self) -> Duration {
        let server_transports = self.server_transports();
        self.scenarios
            .iter()
            .map(|&scenario| {
                estimate(
                    server_transports,
                    &[scenario],
                    &self.load_points,
                    self.min_rounds(scenario),
                    self.mode,
                    self.soak_seconds,
                )
            })
            .sum()
    }

    /// True when there is nothing to run.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How long one scenario's load runs in this plan's mode.
    pub fn scenario_seconds(&self, scenario: Scenario) -> Duration {
        Duration::from_secs(scenarios::planned_seconds(
            scenario,
            self.mode,
            self.soak_seconds,
        ))
    }

    /// How long one point's load runs: its scenario's length with its load parameters (a
    /// population's users set how long its levels take to connect).
    pub fn point_seconds(&self, point: Point<'_>) -> Duration {
        Duration::from_secs(scenarios::point_seconds(
            point.scenario,
            self.mode,
            self.soak_seconds,
            point.params,
        ))
    }

    /// The starts of one round, before shuffling: each point of [`Plan::round_points`] alone,
    /// but a load curve's levels (its points that differ only in `deliveries`) together, in
    /// rising order, as the levels of one start.
    pub fn round_starts(&self) -> Vec<Start<'_>> {
        let points = self.round_points();
        starts_of(&points)
            .into_iter()
            .map(|group| Start {
                points: group.into_iter().map(|i| points[i]).collect(),
            })
            .collect()
    }

    /// How long a start's load runs: its point's, or a load curve's levels inside one point.
    pub fn start_seconds(&self, points: &[Point<'_>]) -> Duration {
        let levels: Vec<&LoadParams> = points.iter().map(|p| p.params).collect();
        let scenario = points.first().map_or(Scenario::Steady, |p| p.scenario);
        Duration::from_secs(started_seconds(
            scenario,
            self.mode,
            self.soak_seconds,
            &levels,
        ))
    }
}

/// What one start of a server measures: one point, or a load curve's levels inside one point
/// (one container, one k6, one join ramp; a result per level).
#[derive(Debug, Clone)]
pub struct Start<'p> {
    /// The point, or the curve's levels, rising.
    pub points: Vec<Point<'p>>,
}

impl Start<'_> {
    /// True for a load curve's levels, which run as one point and write one result each.
    pub fn is_curve(&self) -> bool {
        self.points
            .first()
            .is_some_and(|p| p.scenario == Scenario::LoadCurve)
    }
}

/// `points` grouped into starts, as indices: a load curve's points of one server, transport
/// and curve (the parameters besides `deliveries`) together, rising; every other point alone.
fn starts_of(points: &[Point<'_>]) -> Vec<Vec<usize>> {
    let curve = |p: &Point<'_>| {
        (
            p.server.label(),
            p.transport,
            crate::load::sweep::without_level(&p.load_params()),
        )
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let joins = |g: &Vec<usize>| {
            let first = &points[g[0]];
            p.scenario == Scenario::LoadCurve
                && first.scenario == Scenario::LoadCurve
                && curve(first) == curve(p)
        };
        match groups.iter_mut().find(|g| joins(g)) {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    for group in &mut groups {
        group.sort_by(|&a, &b| level_of(&points[a]).total_cmp(&level_of(&points[b])));
    }
    groups
}

/// A load-curve point's level: its offered deliveries per second (0 without one).
fn level_of(point: &Point<'_>) -> f64 {
    point
        .load_params()
        .get(&LoadParam::Deliveries)
        .copied()
        .unwrap_or(0.0)
}

/// The points one server row runs in one round: each scenario once per load point that
/// differs in a parameter it takes ([`crate::load::sweep::loads_of`]).
pub fn points_per_row(scenarios: &[Scenario], load_points: &[LoadParams]) -> usize {
    scenarios
        .iter()
        .map(|&s| crate::load::sweep::loads_of(s, load_points).len().max(1))
        .sum()
}

/// How long one start of a server runs its load: its point's scenario with its load
/// parameters, or a load curve's `levels` inside one point.
fn started_seconds(
    scenario: Scenario,
    mode: Mode,
    soak_seconds: Option<u64>,
    levels: &[&LoadParams],
) -> u64 {
    match (scenario, levels.first()) {
        (Scenario::LoadCurve, Some(first)) => {
            scenarios::LoadCurveShape::with_params(mode, first).seconds(levels.len())
        }
        (_, first) => scenarios::point_seconds(
            scenario,
            mode,
            soak_seconds,
            first.copied().unwrap_or(&NO_PARAMS),
        ),
    }
}

/// How long a plan of these dimensions should take (its scenarios' lengths, which a sweep
/// does not change, a soak's `--duration` does, and [`POINT_OVERHEAD`] per start of a server:
/// a load curve's levels share one): known before any image is built.
pub fn estimate(
    servers: usize,
    scenarios: &[Scenario],
    load_points: &[LoadParams],
    repetitions: u32,
    mode: Mode,
    soak_seconds: Option<u64>,
) -> Duration {
    let per_round: Duration = scenarios
        .iter()
        .map(|&s| {
            let no_sweep = BTreeMap::new();
            let mut started = crate::load::sweep::started_points(s, load_points);
            if started.is_empty() {
                started.push(vec![&no_sweep]);
            }
            started
                .into_iter()
                .map(|levels| {
                    Duration::from_secs(started_seconds(s, mode, soak_seconds, &levels))
                        + POINT_OVERHEAD
                })
                .sum::<Duration>()
        })
        .sum();
    per_round * (servers * repetitions.max(1) as usize) as u32
}

/// A plan that would run longer than `--max-duration`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "this run would take about {} ({points} points of load and set-up), more than --max-duration {}; narrow --server, --scenario, --variant, --sweep or --runs, or raise --max-duration",
    minutes(*estimate),
    minutes(*bound)
)]
pub struct TooLong {
    /// How long the plan would take.
    pub estimate: Duration,
    /// The bound it exceeds.
    pub bound: Duration,
    /// How many points it has.
    pub points: usize,
}

/// A duration in whole minutes (rounded up), as [`TooLong`] states it.
fn minutes(d: Duration) -> String {
    format!("{} min", d.as_secs().div_ceil(60))
}

/// What the runner is doing, for a progress display.
#[derive(Debug)]
pub enum Progress<'a> {
    /// A round begins: its number, how many points it runs, and the machine's speed.
    Round {
        /// 1-based.
        index: u32,
        /// Points in this round.
        points: usize,
        /// The calibration at its start, if the plan calibrates.
        machine_speed: Option<MachineSpeed>,
    },
    /// A start of a server begins: a point, or a load curve's levels.
    Starting {
        /// 1-based position in the round.
        index: usize,
        /// Starts in the round.
        total: usize,
        /// The point (a load curve's: its first level).
        point: Point<'a>,
        /// The load curve's levels it runs (1 for any other point).
        levels: usize,
        /// Its load's length.
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
pub async fn execute<E: crate::docker::Engine>(
    engine: &E,
    plan: &Plan,
    cancel: watch::Receiver<bool>,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Result<Vec<RunResult>, WriteError> {
    execute_on(engine, &[], plan, cancel, on).await
}

/// [`execute`] with the server on `server_engine` and one k6 on each of `loadgen_engines`
/// (the engines of [`Plan::loadgens`], in the same order; none: one k6 on the server's).
/// Exactly [`Plan::repetitions`] rounds, in the plan's shuffled order.
pub async fn execute_on<E: crate::docker::Engine>(
    server_engine: &E,
    loadgen_engines: &[&E],
    plan: &Plan,
    cancel: watch::Receiver<bool>,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Result<Vec<RunResult>, WriteError> {
    Ok(
        execute_rounds(server_engine, loadgen_engines, plan, None, cancel, on)
            .await?
            .results,
    )
}

/// What a run of rounds produced.
#[derive(Debug, Default)]
pub struct RoundsOutput {
    /// Every result, in the order they ran.
    pub results: Vec<RunResult>,
    /// Every round started, with its calibration.
    pub rounds: Vec<RoundRecord>,
    /// Why each point got no more rounds (empty for points of an interrupted run).
    pub stops: Vec<PointStop>,
}

/// Runs the plan in rounds: every point once per round in an order shuffled from the plan's
/// seed, at least [`Plan::repetitions`] rounds; then, while `judge` finds points undecided,
/// another round of those only, until each is decided, reaches the most rounds, or the
/// budget leaves no room for it. Each round starts with the machine's calibration when the
/// plan asks for it. Results are written as each point ends; an interrupted run keeps them.
pub async fn execute_rounds<E: crate::docker::Engine>(
    server_engine: &E,
    loadgen_engines: &[&E],
    plan: &Plan,
    judge: Option<&dyn rounds::Judge>,
    cancel: watch::Receiver<bool>,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Result<RoundsOutput, WriteError> {
    let loadgens = Some(loadgen_engines.to_vec())
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| vec![server_engine]);
    let started = std::time::Instant::now();
    let min_rounds = plan.repetitions.max(1);
    let max_rounds = judge.map_or(min_rounds, |_| plan.adaptive.max_rounds.max(min_rounds));
    // Each scenario's least rounds: more for the curve only where a judge adds rounds.
    let least = |scenario: Scenario| judge.map_or(min_rounds, |_| plan.min_rounds(scenario));
    let base = plan.round_points();
    let keys: Vec<PointKey> = base.iter().map(|p| p.key()).collect();
    // What each start measures, as indices of `base`: a load curve's levels run as one.
    let starts = starts_of(&base);
    let start_least: Vec<u32> = starts.iter().map(|s| least(base[s[0]].scenario)).collect();
    let mut took = Took::default();
    let mut output = RoundsOutput::default();
    let mut stops: BTreeMap<PointKey, StopReason> = BTreeMap::new();
    let mut active: Vec<usize> = (0..base.len()).collect();
    let mut round = 0u32;
    let mut interrupted = false;
    'rounds: while !active.is_empty() && !interrupted {
        round += 1;
        // A start runs again while any of its points (a curve: any level) is undecided.
        let running = (0..starts.len()).filter(|&s| starts[s].iter().any(|i| active.contains(i)));
        let order = round_order(plan, running.collect(), round, |s| {
            (round > start_least[s]).then_some(base[starts[s][0]].scenario)
        });
        let machine_speed = start_round(plan, &cancel, round, order.len(), &mut output, on).await;
        for (position, &s) in order.iter().enumerate() {
            if *cancel.borrow() {
                interrupted = true;
                break 'rounds;
            }
            let points = start_points(
                &starts[s],
                (&base, &keys),
                round,
                start_least[s],
                &output.results,
                &mut stops,
            );
            let Some(&first) = points.first() else {
                continue;
            };
            let expected = plan.start_seconds(&points);
            let length = took.length(first.scenario, expected + mean_overhead(&output.results));
            // An added round runs only where it leaves room for every round still owed and
            // for every round an earlier scenario's undecided points may still take.
            let rank = plan.scenario_rank(first.scenario);
            let running =
                running_starts(plan, (&base, &starts, &start_least), &active, &took, length);
            let reserved = rounds::reserved(&running, round, max_rounds, rank);
            if round > start_least[s]
                && !rounds::fits(started.elapsed() + reserved, length, plan.adaptive.budget)
            {
                let budget = |&j: &usize| (keys[j].clone(), StopReason::Budget);
                stops.extend(starts[s].iter().map(budget));
                active.retain(|i| !starts[s].contains(i));
                continue;
            }
            let start_began = std::time::Instant::now();
            on(Progress::Starting {
                index: position + 1,
                total: order.len(),
                point: first,
                levels: points.len(),
                expected,
            });
            let results =
                phases::run_start(server_engine, &loadgens, plan, &points, cancel.clone(), on)
                    .await;
            let place = Round {
                position: position as u32 + 1,
                points: order.len() as u32,
                seed: rounds::round_seed(plan.adaptive.seed, round),
                machine_speed,
            };
            interrupted = record(plan, results, &place, &mut output, on)?;
            if interrupted {
                break 'rounds;
            }
            took.add(first.scenario, start_began.elapsed());
        }
        let active_keys: Vec<PointKey> = active.iter().map(|&i| keys[i].clone()).collect();
        let (again, stopped) = decide(
            judge,
            &output.results,
            &active_keys,
            round,
            (&|key: &PointKey| least(key.scenario), max_rounds),
        );
        stops.extend(stopped);
        active.retain(|&i| again.contains(&keys[i]) && !stops.contains_key(&keys[i]));
    }
    if !interrupted {
        let active: Vec<PointKey> = active.iter().map(|&i| keys[i].clone()).collect();
        final_stops(judge, &active, &mut stops, &output.results);
        output.stops = stop_list(&keys, &output.results, &stops);
    }
    Ok(output)
}

/// Points still active when the budget ended the rounds: what the judge says of them now,
/// or `budget` while they are still undecided.
fn final_stops(
    judge: Option<&dyn rounds::Judge>,
    active: &[PointKey],
    stops: &mut BTreeMap<PointKey, StopReason>,
    results: &[RunResult],
) {
    let verdicts = judge.map(|j| j.judge(results)).unwrap_or_default();
    for key in active {
        stops.entry(key.clone()).or_insert_with(|| {
            verdicts
                .get(key)
                .copied()
                .flatten()
                .unwrap_or(StopReason::Budget)
        });
    }
}

/// The points of one start (`start`, indices of `base`) in round `round`: a load curve's
/// levels but those above one where its server died, which are recorded as `died-below`.
fn start_points<'p>(
    start: &[usize],
    (base, keys): (&[Point<'p>], &[PointKey]),
    round: u32,
    min_rounds: u32,
    results: &[RunResult],
    stops: &mut BTreeMap<PointKey, StopReason>,
) -> Vec<Point<'p>> {
    let mut points = Vec::new();
    for &i in start {
        match round_point(&base[i], round, min_rounds, results) {
            Some(point) => points.push(point),
            None => {
                stops.insert(keys[i].clone(), StopReason::DiedBelow);
            }
        }
    }
    points
}

/// Writes the results of one start, each with its place in the round, announces each, and
/// keeps them; true when the start was interrupted.
fn record(
    plan: &Plan,
    results: Vec<RunResult>,
    place: &Round,
    output: &mut RoundsOutput,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Result<bool, WriteError> {
    let mut interrupted = false;
    for mut result in results {
        result.round = Some(place.clone());
        let path = plan.setup.results_dir.join(result.relative_path());
        write_result(&path, &result)?;
        on(Progress::Finished {
            result: &result,
            path: &path,
        });
        interrupted |= result.outcome == Outcome::Interrupted;
        output.results.push(result);
    }
    Ok(interrupted)
}

/// Point `base` in round `round`, or `None` for a load-curve level above one where its
/// server died ([`died_below`]): that level is not run.
fn round_point<'p>(
    base: &Point<'p>,
    round: u32,
    min_rounds: u32,
    results: &[RunResult],
) -> Option<Point<'p>> {
    let point = Point {
        repetition: Repetition {
            index: round,
            of: min_rounds,
        },
        ..*base
    };
    (!died_below(results, &point)).then_some(point)
}

/// True for a load-curve step whose server already died (crashed or was killed for memory)
/// at this step or a lower one of the same curve, in any round: its later steps are not run.
fn died_below(results: &[RunResult], point: &Point<'_>) -> bool {
    if point.scenario != Scenario::LoadCurve {
        return false;
    }
    let key = point.key();
    let step = |params: &[(LoadParam, String)]| -> Option<f64> {
        params
            .iter()
            .find(|(k, _)| *k == LoadParam::Deliveries)
            .and_then(|(_, v)| v.parse().ok())
    };
    let others = |params: &[(LoadParam, String)]| -> Vec<(LoadParam, String)> {
        params
            .iter()
            .filter(|(k, _)| *k != LoadParam::Deliveries)
            .cloned()
            .collect()
    };
    let Some(here) = step(&key.load_params) else {
        return false;
    };
    results.iter().any(|r| {
        let other = r.point();
        matches!(r.outcome, Outcome::ServerCrashed | Outcome::OomKilled)
            && other.scenario == Scenario::LoadCurve
            && other.server == key.server
            && other.variant == key.variant
            && other.transport == key.transport
            && others(&other.load_params) == others(&key.load_params)
            && step(&other.load_params).is_some_and(|died| died <= here)
    })
}

/// A round's start: the machine's calibration when the plan asks for it, recorded and
/// announced.
async fn start_round(
    plan: &Plan,
    cancel: &watch::Receiver<bool>,
    round: u32,
    points: usize,
    output: &mut RoundsOutput,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Option<MachineSpeed> {
    let machine_speed = match plan.adaptive.calibrate_each {
        Some(each) if !*cancel.borrow() => {
            tokio::task::spawn_blocking(move || crate::load::calibrate::measure(each))
                .await
                .ok()
                .and_then(Result::ok)
        }
        _ => None,
    };
    output.rounds.push(RoundRecord {
        index: round,
        started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        points: points as u32,
        machine_speed,
    });
    on(Progress::Round {
        index: round,
        points,
        machine_speed,
    });
    machine_speed
}

/// What each scenario's starts took so far, container to container.
#[derive(Default)]
struct Took(BTreeMap<Scenario, (Duration, u32)>);

impl Took {
    /// A start of `scenario` planned to take `planned`: that, or the mean its scenario's
    /// starts took where that was longer.
    fn length(&self, scenario: Scenario, planned: Duration) -> Duration {
        self.0
            .get(&scenario)
            .map_or(planned, |&(t, n)| planned.max(t / n))
    }

    fn add(&mut self, scenario: Scenario, took: Duration) {
        let entry = self.0.entry(scenario).or_default();
        entry.0 += took;
        entry.1 += 1;
    }
}

/// The starts with a point still `active`, as the budget sees them: each start's least
/// rounds (`least`), its scenario's rank and the length its scenario's starts took so far
/// (`planned` where that is longer).
fn running_starts(
    plan: &Plan,
    (base, starts, least): (&[Point<'_>], &[Vec<usize>], &[u32]),
    active: &[usize],
    took: &Took,
    planned: Duration,
) -> Vec<rounds::Running> {
    (0..starts.len())
        .filter(|&t| starts[t].iter().any(|i| active.contains(i)))
        .map(|t| {
            let scenario = base[starts[t][0]].scenario;
            rounds::Running {
                least: least[t],
                rank: plan.scenario_rank(scenario),
                length: took.length(scenario, planned),
            }
        })
        .collect()
}

/// The order of round `round`'s starts (`running`): those the round owes first, shuffled
/// from the plan's seed, then those it adds for precision (`added` names their scenario),
/// the plan's first scenarios first (the default bench lists its headline first), shuffled
/// within each, so a budget that runs out cuts the least important.
fn round_order(
    plan: &Plan,
    running: Vec<usize>,
    round: u32,
    added: impl Fn(usize) -> Option<Scenario>,
) -> Vec<usize> {
    rounds::owed_first(rounds::shuffled(running, plan.adaptive.seed, round), |&s| {
        added(s).map(|scenario| plan.scenario_rank(scenario))
    })
}

/// After round `round`: the points of `active` that get another, and why the others stop.
/// `min_rounds` says each point's least rounds.
fn decide(
    judge: Option<&dyn rounds::Judge>,
    results: &[RunResult],
    active: &[PointKey],
    round: u32,
    (min_rounds, max_rounds): (&dyn Fn(&PointKey) -> u32, u32),
) -> (Vec<PointKey>, BTreeMap<PointKey, StopReason>) {
    let verdicts = judge.map(|j| j.judge(results)).unwrap_or_default();
    let ran = |key: &PointKey| results.iter().any(|r| &r.point() == key);
    // A point with no result at all ran in no round: a load-curve level above one that
    // ended its point each time (the points of a run of its own always leave a result).
    let (ended_below, active): (Vec<PointKey>, Vec<PointKey>) =
        active.iter().cloned().partition(|key| {
            round >= min_rounds(key) && key.scenario == Scenario::LoadCurve && !ran(key)
        });
    let failed_only = |key: &PointKey| !results.iter().any(|r| r.is_ok() && &r.point() == key);
    let (again, mut stopped) = rounds::next_round(
        &active,
        &verdicts,
        &failed_only,
        round,
        min_rounds,
        max_rounds,
    );
    stopped.extend(
        ended_below
            .into_iter()
            .map(|key| (key, StopReason::EndedBelow)),
    );
    (again, stopped)
}

/// Every point's rounds and why it stopped, in plan order.
fn stop_list(
    keys: &[PointKey],
    results: &[RunResult],
    stops: &BTreeMap<PointKey, StopReason>,
) -> Vec<PointStop> {
    keys.iter()
        .map(|key| PointStop {
            point: point_text(key),
            rounds: results.iter().filter(|r| &r.point() == key).count() as u32,
            reason: stops.get(key).copied().unwrap_or(StopReason::MaxRounds),
        })
        .collect()
}

/// A point as `run.json` names it: `profile-b/go@variant steady clients=100`.
pub fn point_text(key: &PointKey) -> String {
    let mut text = format!("{} {}", key.server_label(), key.scenario);
    for (k, v) in &key.load_params {
        text.push_str(&format!(" {k}={v}"));
    }
    text
}

/// The mean time a point spent outside its scenario so far ([`POINT_OVERHEAD`] before any).
fn mean_overhead(results: &[RunResult]) -> Duration {
    if results.is_empty() {
        return POINT_OVERHEAD;
    }
    let total: u64 = results.iter().map(|r| r.overhead_ms).sum();
    Duration::from_millis(total / results.len() as u64)
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
    fn a_pause_schedule_freezes_the_end_of_every_period() {
        let schedule: PauseServer = "1s/5s".parse().unwrap();
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        assert_eq!(schedule.at(s(0)), (false, s(4)));
        assert_eq!(schedule.at(ms(3999)), (false, s(4)));
        assert_eq!(schedule.at(s(4)), (true, s(5)));
        assert_eq!(schedule.at(ms(4500)), (true, s(5)));
        assert_eq!(schedule.at(s(5)), (false, s(9)));
        assert_eq!(schedule.text(), "1s/5s");
        for bad in ["1s", "5s/1s", "1s/1s", "0s/5s", "x/5s"] {
            assert!(bad.parse::<PauseServer>().is_err(), "{bad}");
        }
    }

    #[test]
    fn run_ids_are_sortable_timestamps() {
        let id = new_run_id();
        assert_eq!(id.len(), 15, "{id}");
        assert_eq!(&id[8..9], "-");
    }
}
