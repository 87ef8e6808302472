//! One point's phases: start the server under the limits → ready (health, verification,
//! baseline counters) → load (k6, one sample a second) → collect (the server's counters over
//! the window, k6's summary and the native report, the outcome). A failed phase maps to one
//! recorded outcome; whatever happened, [`Session::teardown`] stops and removes every
//! container of the point, on every engine. With several load engines the load is split
//! over one k6 each (see [`crate::load::split`]): they start paused and are resumed together, each
//! writes its own output folder, and their reports are merged.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt;
use tokio::sync::watch;
use wscbench_results::{
    Distributed, ErrorCounts, HostLimits, InstanceSample, LoadParam, LoadParams, LoadPath,
    LoadgenInstance, Outcome, RunResult, SCHEMA_VERSION, Sample, Scenario, ServerConformance,
    ServerIdentity, UsageSource,
};

use super::collect::{Context, K6_OVERRUN, LoadEnd, Outputs, Teardown, collect, died, last_lines};
use super::derive::{Long, derive, derive_long, window};
use super::{Plan, Point, Progress, ServerSource, VerifyLevel};
use crate::catalog::{local, process};
use crate::docker::{ContainerSpec, ContainerState, Engine, Hardening, Usage, UsageStream};
use crate::docker::{RUN_LABEL, nano_cpus};
use crate::load::native::{self, NativeReport};
use crate::load::{k6, scenarios, split};
use crate::verify::{self, Target};

/// How long a paused k6 of a split run may take to initialise before the point fails.
const K6_PAUSED_WAIT: Duration = Duration::from_secs(60);
/// The k6 summary and the native report, inside the k6 container.
const SUMMARY_FILE: &str = "summary.json";
const NATIVE_FILE: &str = "native.json";

/// A phase that failed: the outcome it is recorded as, and why.
struct Failure {
    outcome: Outcome,
    detail: String,
}

impl Failure {
    fn new(outcome: Outcome, detail: impl Into<String>) -> Self {
        Failure {
            outcome,
            detail: detail.into(),
        }
    }
}

/// One k6 container of a point, on its engine.
struct K6<'a, E: Engine> {
    engine: &'a E,
    id: String,
    /// 1-based; the `INSTANCE` of a split run.
    instance: usize,
    /// `host:port` of its REST API, in a split run.
    api: Option<String>,
    /// How it ended, once it did.
    exited: Option<ContainerState>,
}

/// The server of a point, once started or reached.
enum RunningServer {
    /// The container wscbench started: stopped and removed at teardown.
    Container(String),
    /// A server wscbench did not start: watched through its container or process, never
    /// stopped nor removed.
    External(UsageSource),
}

/// The containers of one point.
struct Session<'a, E: Engine> {
    engine: &'a E,
    loadgen_engines: &'a [&'a E],
    plan: &'a Plan,
    point: Point<'a>,
    server: Option<RunningServer>,
    k6: Vec<K6<'a, E>>,
    /// When each k6 of a split run was resumed, in ms after the first.
    resumed_after_ms: Vec<f64>,
    /// The k6 instance whose failure ended the load, 0-based.
    failed_instance: Option<usize>,
    /// Epoch ms at which the load started: the series' zero on the native report's clock.
    load_started_epoch_ms: u64,
    /// The open files and source addresses an idle-capacity point was planned with.
    host_limits: Option<HostLimits>,
    /// A load curve's levels inside this one point (deliveries per second, rising); empty
    /// for any other point.
    levels: Vec<f64>,
    /// How long the load should run.
    expected: Duration,
    /// The server's counters as read with each sample (`t_ms`, counters), kept for a load
    /// curve's levels, whose counters are taken between samples.
    stats: Vec<(u64, wscbench_results::ServerStats)>,
}

impl<E: Engine> Session<'_, E> {
    fn split(&self) -> bool {
        self.loadgen_engines.len() > 1
    }

    /// The load parameters the point runs with: a load curve's without its level, which the
    /// levels give.
    fn params(&self) -> LoadParams {
        let params = self.point.load_params();
        if self.levels.is_empty() {
            params
        } else {
            crate::load::sweep::without_level(&params)
        }
    }

    /// The point's raw output folder: a load curve's levels share their point's.
    fn raw_dir(&self) -> PathBuf {
        let p = self.point;
        self.plan
            .setup
            .results_dir
            .join(wscbench_results::dimensions::raw_relative_dir(
                &p.server.server.id,
                p.server.variant.as_ref().map(|v| v.name.as_str()),
                p.scenario,
                &self.params(),
                p.transport,
                p.repetition,
            ))
    }

    /// The container wscbench started for the point, if it started one.
    fn container(&self) -> Option<&str> {
        match self.server.as_ref()? {
            RunningServer::Container(id) => Some(id),
            RunningServer::External(_) => None,
        }
    }

    /// The server's state: its container's (ours or a watched one), its process's, or
    /// `None` when nothing tells (an external server without `--pid` nor `--container`).
    async fn server_state(&self) -> Option<ContainerState> {
        match self.server.as_ref()? {
            RunningServer::Container(id) => self.engine.state(id).await.ok(),
            RunningServer::External(UsageSource::Container { container }) => {
                self.engine.state(container).await.ok()
            }
            RunningServer::External(UsageSource::Process { pid }) => Some(process::state(*pid)),
            RunningServer::External(UsageSource::Managed | UsageSource::Absent) => None,
        }
    }

    /// The server's per-second usage, or `None` when nothing measures it.
    /// `usage` with the server's CPU read from its cgroup now, at `t_ms` of the load (the
    /// instant of its counters), where the engine can: Docker's reading lags its sample by
    /// about a second.
    fn with_cpu_now(&self, usage: Option<Usage>, t_ms: u64) -> Option<Usage> {
        let mut usage = usage?;
        if let Some(used) = self
            .usage_container()
            .and_then(|id| self.engine.cpu_used_ms_now(id))
        {
            usage.cpu_used_ms = Some(used);
            usage.read_epoch_ms = Some(self.load_started_epoch_ms + t_ms);
        }
        Some(usage)
    }

    /// The container whose usage is the server's: ours, or a watched one.
    fn usage_container(&self) -> Option<&str> {
        match self.server.as_ref()? {
            RunningServer::Container(id) => Some(id),
            RunningServer::External(UsageSource::Container { container }) => Some(container),
            RunningServer::External(_) => None,
        }
    }

    fn server_usage(&self) -> Option<UsageStream> {
        match self.server.as_ref()? {
            RunningServer::Container(id) => Some(self.engine.usage(id)),
            RunningServer::External(UsageSource::Container { container }) => {
                Some(self.engine.usage(container))
            }
            RunningServer::External(UsageSource::Process { pid }) => Some(process::usage(*pid)),
            RunningServer::External(UsageSource::Managed | UsageSource::Absent) => None,
        }
    }

    /// Idle-capacity's and the population's end: the server's memory (when measured) near
    /// its limit.
    fn near_memory_limit(&self, usage: Option<Usage>) -> bool {
        matches!(
            self.point.scenario,
            Scenario::IdleCapacity | Scenario::Population
        ) && usage.is_some_and(|u| {
            crate::judge::idle::near_limit(u.mem_bytes, self.plan.limits.memory_bytes)
        })
    }

    /// The last lines the server printed, when it runs in a container.
    async fn server_logs(&self, lines: usize) -> String {
        let id = match self.server.as_ref() {
            Some(RunningServer::Container(id)) => id,
            Some(RunningServer::External(UsageSource::Container { container })) => container,
            _ => return String::new(),
        };
        self.engine.logs(id, lines).await.unwrap_or_default()
    }
}

/// What one start of a server measured, before its figures are derived.
struct Measured {
    /// The point's result: its counters, series and k6 figures, outcome not yet set.
    result: RunResult,
    outcome: Outcome,
    detail: Option<String>,
    /// The merged native report, on the native load path.
    native: Option<Result<native::Merged, native::NativeError>>,
    teardown: Teardown,
    stopped_near_limit: bool,
    load_started_epoch_ms: u64,
    /// The server's counters with each sample (a load curve's levels only).
    stats: Vec<(u64, wscbench_results::ServerStats)>,
    /// When the start began, for its overhead.
    clock: Instant,
}

/// Start → ready → load → collect for `point` (with a load curve's `levels` inside it, when
/// given), whatever happens, with the one teardown.
async fn measure<E: Engine>(
    engine: &E,
    loadgen_engines: &[&E],
    plan: &Plan,
    (point, levels, expected): (Point<'_>, Vec<f64>, Duration),
    mut cancel: watch::Receiver<bool>,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Measured {
    let clock = Instant::now();
    let mut result = empty_result(plan, point, SystemTime::now());
    let host_limits = host_limits_of(plan, point, loadgen_engines.len());
    result.conditions.host_limits = host_limits.clone();
    let curve = !levels.is_empty();
    let mut session = Session {
        engine,
        loadgen_engines,
        plan,
        point,
        server: None,
        k6: Vec::new(),
        resumed_after_ms: Vec::new(),
        failed_instance: None,
        load_started_epoch_ms: 0,
        host_limits,
        levels,
        expected,
        stats: Vec::new(),
    };
    let ended = session.drive(&mut result, &mut cancel, on).await;
    let stopped_near_limit = matches!(ended, Ok(LoadEnd::MemoryNearLimit));
    on(Progress::Phase("stopping"));
    let teardown = session.teardown().await;
    if session.split() {
        result.distributed = Some(session.distributed());
    }
    let (outcome, detail, native) = match ended {
        Err(failure) => (failure.outcome, Some(failure.detail), None),
        Ok(end) => {
            let out_dirs = session.out_dirs();
            let outputs = Outputs {
                summary: read_summaries(&out_dirs),
                native: match plan.load_path {
                    LoadPath::Native => Some(read_native(&out_dirs)),
                    LoadPath::Js => None,
                },
            };
            let context = Context {
                loadgens: plan.loadgens.iter().map(|l| l.endpoint.as_str()).collect(),
                loadgen_memory_bytes: plan.limits.loadgen_memory_bytes,
                // A load curve's monitor stops it at the level that ended the point.
                stepped: curve
                    || matches!(
                        point.scenario,
                        Scenario::Capacity | Scenario::IdleCapacity | Scenario::Population
                    ),
            };
            let collected = collect(&mut result, outputs, end, &teardown, &context);
            (collected.outcome, collected.detail, collected.native)
        }
    };
    Measured {
        result,
        outcome,
        detail,
        native,
        teardown,
        stopped_near_limit,
        load_started_epoch_ms: session.load_started_epoch_ms,
        stats: std::mem::take(&mut session.stats),
        clock,
    }
}

/// Runs a load curve's `points` (its levels, rising) as one point: one container, one k6, one
/// join ramp, a window per level; returns one result per level run (not yet written), each
/// with its own figures ([`super::levels`]).
async fn run_levels<E: Engine>(
    engine: &E,
    loadgen_engines: &[&E],
    plan: &Plan,
    points: &[Point<'_>],
    cancel: watch::Receiver<bool>,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Vec<RunResult> {
    let Some(&first) = points.first() else {
        return Vec::new();
    };
    let deliveries: Vec<f64> = points
        .iter()
        .map(|p| {
            p.load_params()
                .get(&LoadParam::Deliveries)
                .copied()
                .unwrap_or(0.0)
        })
        .collect();
    let expected = plan.start_seconds(points);
    let m = measure(
        engine,
        loadgen_engines,
        plan,
        (first, deliveries.clone(), expected),
        cancel,
        on,
    )
    .await;
    let shape = scenarios::LoadCurveShape::with_params(plan.mode, first.params);
    let whole = super::levels::Whole {
        result: &m.result,
        outcome: m.outcome,
        detail: m.detail.clone(),
        merged: match &m.native {
            Some(Ok(merged)) => Some(merged),
            _ => None,
        },
        stats: &m.stats,
        load_started_epoch_ms: m.load_started_epoch_ms,
        settle_ms: shape.settle_seconds * 1000,
    };
    let params: Vec<_> = points.iter().map(|p| p.load_params()).collect();
    let overhead_ms = (m.clock.elapsed().as_millis() as u64).saturating_sub(m.result.duration_ms);
    let mut results = Vec::new();
    for level in super::levels::split(&whole, &params) {
        let mut result = level.result;
        derive(&mut result, plan, m.teardown.loadgen_oom, level.hold);
        result.overhead_ms = overhead_ms;
        results.push(result);
    }
    super::levels::end_at_first_ended(&mut results, deliveries.len(), plan.slo_p99_ms);
    results
}

/// Runs one start of a server: a load curve's levels inside one point ([`run_levels`]), or
/// its one point ([`run_point`]); the results are not yet written.
pub(super) async fn run_start<E: Engine>(
    engine: &E,
    loadgen_engines: &[&E],
    plan: &Plan,
    points: &[Point<'_>],
    cancel: watch::Receiver<bool>,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Vec<RunResult> {
    match points {
        [point] if point.scenario != Scenario::LoadCurve => {
            vec![run_point(engine, loadgen_engines, plan, *point, cancel, on).await]
        }
        _ => run_levels(engine, loadgen_engines, plan, points, cancel, on).await,
    }
}

/// Runs one point through every phase and returns its result (not yet written).
async fn run_point<E: Engine>(
    engine: &E,
    loadgen_engines: &[&E],
    plan: &Plan,
    point: Point<'_>,
    cancel: watch::Receiver<bool>,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> RunResult {
    let expected = plan.point_seconds(point);
    let Measured {
        mut result,
        outcome,
        detail,
        native,
        teardown,
        stopped_near_limit,
        load_started_epoch_ms,
        clock,
        ..
    } = measure(
        engine,
        loadgen_engines,
        plan,
        (point, Vec::new(), expected),
        cancel,
        on,
    )
    .await;
    // The long figures first: the verdict counts the slow consumers' chats as received.
    if let Some(Ok(merged)) = &native {
        let long = Long {
            merged,
            load_started_epoch_ms,
            shape: read_shape(&point.raw_dir(&plan.setup.results_dir)),
            outcome,
        };
        derive_long(&mut result, plan, &long);
    }
    derive(&mut result, plan, teardown.loadgen_oom, None);
    let judged = matches!(
        point.scenario,
        Scenario::IdleCapacity | Scenario::Population
    ) && !matches!(outcome, Outcome::VerifyFailed | Outcome::Interrupted);
    if judged {
        let errors = result.errors.clone();
        let ending = crate::judge::idle::Ending {
            stopped_near_limit,
            errors: Some(&errors),
            died: matches!(outcome, Outcome::ServerCrashed | Outcome::OomKilled).then_some(outcome),
            loadgen_failed: (outcome == Outcome::LoadgenFailed)
                .then(|| detail.clone().unwrap_or_default()),
        };
        let merged = match &native {
            Some(Ok(merged)) => Some(merged),
            _ => None,
        };
        judge_levels(
            &mut result,
            plan,
            point,
            merged,
            load_started_epoch_ms,
            ending,
        );
    }
    result.outcome = outcome;
    result.outcome_detail = detail;
    result.overhead_ms = (clock.elapsed().as_millis() as u64).saturating_sub(result.duration_ms);
    result
}

/// Idle capacity's and the population's judgement of a point that ran: what its levels held
/// and what each client or user cost. `merged` is k6's report, when it wrote one.
fn judge_levels(
    result: &mut RunResult,
    plan: &Plan,
    point: Point<'_>,
    merged: Option<&crate::load::native::Merged>,
    load_started_epoch_ms: u64,
    ending: crate::judge::idle::Ending<'_>,
) {
    if point.scenario == Scenario::IdleCapacity {
        result.idle = Some(crate::judge::idle::idle_capacity(
            &result.series,
            plan.limits.memory_bytes,
            &ending,
        ));
        return;
    }
    let shape = crate::load::scenarios::PopulationShape::with_params(plan.mode, point.params);
    let levels = shape.levels();
    let (holds, periods) = merged.map_or((&[][..], &[][..]), |m| {
        (m.steps.as_slice(), m.periods.as_slice())
    });
    let during = crate::judge::population::errors_while_held(periods, holds, &result.errors);
    let ending = crate::judge::idle::Ending {
        errors: Some(&during),
        ..ending
    };
    result.population = Some(crate::judge::population::population(
        &crate::judge::population::Inputs {
            series: &result.series,
            holds,
            load_started_epoch_ms,
            levels: &levels,
            connects_per_s: shape.connects_per_s,
            memory_limit_bytes: plan.limits.memory_bytes,
        },
        &ending,
    ));
}

impl<E: Engine> Session<'_, E> {
    /// start → ready → load, and the server's counters over the load window.
    async fn drive(
        &mut self,
        result: &mut RunResult,
        cancel: &mut watch::Receiver<bool>,
        on: &mut (dyn FnMut(Progress<'_>) + Send),
    ) -> Result<LoadEnd, Failure> {
        on(Progress::Phase("starting server"));
        let target = self.start_server().await?;
        self.ready(&target, cancel, on).await?;
        let baseline = verify::read_stats_quiet(&target).await;
        on(Progress::Phase("load"));
        let load_started = Instant::now();
        self.load_started_epoch_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.start_loadgen(&target, cancel).await?;
        // Only a container wscbench started is ever paused (`run` refuses --pause-server
        // with --url).
        let paused = self
            .plan
            .pause_server
            .zip(self.container().map(str::to_owned));
        let end = match paused {
            None => self.sample(result, &target, load_started, cancel, on).await,
            Some((schedule, server)) => {
                let engine = self.engine;
                let pauser = pause_server(engine, &server, schedule, load_started);
                let end = tokio::select! {
                    end = self.sample(result, &target, load_started, cancel, on) => end,
                    () = pauser => unreachable!("the pauser runs until the load ends"),
                };
                // Never leave the server frozen: a paused container cannot be stopped.
                let _ = engine.unpause(&server).await;
                end
            }
        };
        result.duration_ms = load_started.elapsed().as_millis() as u64;
        if let (Some(end), Some(base)) = (verify::read_stats_quiet(&target).await, &baseline) {
            result.server_stats = Some(window(base, &end));
        }
        Ok(end)
    }

    fn labels(&self, role: &str) -> HashMap<String, String> {
        HashMap::from([
            (RUN_LABEL.to_string(), self.plan.setup.run_id.clone()),
            ("wscbench.role".to_string(), role.to_string()),
            ("wscbench.server".to_string(), self.point.server.label()),
            (
                "wscbench.scenario".to_string(),
                self.point.scenario.to_string(),
            ),
        ])
    }

    fn container_name(&self, suffix: &str) -> String {
        let server = self.point.server;
        let variant = server
            .variant
            .as_ref()
            .map(|v| format!("-{}", v.name))
            .unwrap_or_default();
        // A sweep's points differ only in their parameters: `-clients100-rate2.5`.
        let params: String = wscbench_results::dimensions::params_text(&self.params())
            .into_iter()
            .map(|(k, v)| format!("-{k}{v}"))
            .collect();
        // `-wss`, `-ws+deflate` → `-ws-deflate` (container names take no `+`); nothing for ws.
        let transport = match self.point.transport {
            t if t.is_ws() => String::new(),
            t => format!("-{}", t.as_str().replace('+', "-")),
        };
        format!(
            "wscbench-{}-{}{variant}-{}{params}{transport}-r{}{suffix}",
            self.plan.setup.run_id,
            server.server.tag,
            self.point.scenario,
            self.point.repetition.index
        )
    }

    /// Phase 1: the server container, under the limits; or the external server, reached.
    async fn start_server(&mut self) -> Result<Target, Failure> {
        let image = match &self.point.server.source {
            ServerSource::Managed => self.point.server.server.tag.clone(),
            ServerSource::External(external) => {
                let target = Target::from_url(&external.url)
                    .map_err(|e| Failure::new(Outcome::VerifyFailed, e.to_string()))?;
                self.server = Some(RunningServer::External(external.usage.clone()));
                if self.server_state().await.is_some_and(|s| !s.running) {
                    return Err(Failure::new(
                        Outcome::ServerCrashed,
                        format!("{} is not running", describe(&external.usage)),
                    ));
                }
                return Ok(target);
            }
        };
        let port =
            local::free_port().map_err(|e| Failure::new(Outcome::ServerCrashed, e.to_string()))?;
        let planned = self.point.server;
        let variant = planned.variant.clone().unwrap_or_else(|| super::Variant {
            name: String::new(),
            args: Vec::new(),
            env: Vec::new(),
        });
        // With an address for remote load generators, listen on every interface.
        let host = match self.plan.server_address {
            Some(_) => "0.0.0.0",
            None => "127.0.0.1",
        };
        let (transport_args, binds) = self.transport_args()?;
        let spec = ContainerSpec {
            name: self.container_name(""),
            image,
            cmd: ["--host", host, "--port", &port.to_string()]
                .map(String::from)
                .into_iter()
                .chain(transport_args)
                .chain(variant.args)
                .collect(),
            env: variant.env,
            binds,
            labels: self.labels("server"),
            nano_cpus: Some(nano_cpus(self.plan.limits.cpus)),
            memory_bytes: Some(self.plan.limits.memory_bytes as i64),
            cpuset: self.plan.limits.cpuset_server.clone(),
            hardening: self.hardening(|h| h.server_nofile),
        };
        let id =
            self.engine.start(&spec).await.map_err(|e| {
                Failure::new(Outcome::ServerCrashed, format!("could not start: {e}"))
            })?;
        self.server = Some(RunningServer::Container(id));
        let target = Target::loopback(port);
        Ok(
            match (&self.plan.setup.tls, self.point.transport.is_tls()) {
                (Some(cert), true) => target.with_tls(cert.client_config()),
                _ => target,
            },
        )
    }

    /// The server's arguments and bind mounts for the point's transport: the run's
    /// certificate (mounted read-only) for wss, `--deflate` for the deflate transports.
    fn transport_args(&self) -> Result<(Vec<String>, Vec<String>), Failure> {
        let transport = self.point.transport;
        let mut args = Vec::new();
        let mut binds = Vec::new();
        if transport.is_tls() {
            let cert = self.plan.setup.tls.as_ref().ok_or_else(|| {
                Failure::new(
                    Outcome::ServerCrashed,
                    "a wss point without the run's certificate (the plan has none)",
                )
            })?;
            args.extend(cert.server_args());
            binds.push(cert.bind());
        }
        if transport.is_deflate() {
            args.push("--deflate".into());
        }
        Ok((args, binds))
    }

    /// Phase 2: `/health`, then the protocol checks of the plan's verify level.
    async fn ready(
        &self,
        target: &Target,
        cancel: &mut watch::Receiver<bool>,
        on: &mut (dyn FnMut(Progress<'_>) + Send),
    ) -> Result<(), Failure> {
        let gone = async || {
            if *cancel.borrow() {
                return Some(Failure::new(
                    Outcome::Interrupted,
                    "interrupted by the user",
                ));
            }
            let state = self.server_state().await.filter(|s| !s.running)?;
            let logs = self.server_logs(5).await;
            Some(Failure::new(
                died(state),
                format!(
                    "exited with {:?} before answering /health: {}",
                    state.exit_code,
                    last_lines(&logs, 3)
                ),
            ))
        };
        crate::net::http::wait_healthy_over(
            &target.addr,
            target.tls.as_ref(),
            Duration::from_secs(10),
            gone,
        )
        .await
        .map_err(|not| match not {
            crate::net::http::NotHealthy::Gone(failure) => failure,
            crate::net::http::NotHealthy::TimedOut => Failure::new(
                Outcome::VerifyFailed,
                "health: /health did not answer 200 within 10 s",
            ),
        })?;
        if self.plan.conformance {
            self.record_conformance(target, on).await?;
        }
        if self.plan.verify == VerifyLevel::Off {
            return Ok(());
        }
        on(Progress::Phase("verifying"));
        let only: Vec<String> = match self.plan.verify {
            VerifyLevel::Quick => verify::QUICK_CHECKS.iter().map(|s| s.to_string()).collect(),
            _ => Vec::new(),
        };
        let report = verify::verify(target, &only, |_| {}).await;
        if report.passed() {
            return Ok(());
        }
        let detail = report
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect::<Vec<_>>()
            .join("; ");
        Err(Failure::new(Outcome::VerifyFailed, detail))
    }

    /// Phase 2a: the RFC 6455 conformance cases, once per row and transport in a run (at
    /// the row's first point), written beside the results. A case that kills the server
    /// shows at the point's load as a crash; a file that cannot be written stops the point.
    async fn record_conformance(
        &self,
        target: &Target,
        on: &mut (dyn FnMut(Progress<'_>) + Send),
    ) -> Result<(), Failure> {
        let server = self.point.server.label();
        let transport = self.point.transport;
        let path = self
            .plan
            .setup
            .results_dir
            .join(ServerConformance::relative_path_of(&server, transport));
        if path.exists() {
            return Ok(());
        }
        on(Progress::Phase("conformance"));
        let found = verify::conformance::conformance(target, &server, transport, &[], |_| {}).await;
        super::write_atomically(&path, &found.to_json())
            .map_err(|e| Failure::new(Outcome::VerifyFailed, e.to_string()))
    }

    /// The raw output folder of each k6: the point's own, or one subfolder per instance of
    /// a split run.
    fn out_dirs(&self) -> Vec<PathBuf> {
        let dir = self.raw_dir();
        if self.split() {
            (1..=self.loadgen_engines.len())
                .map(|i| dir.join(format!("k6-{i}")))
                .collect()
        } else {
            vec![dir]
        }
    }

    /// Phase 3a: the k6 container (or one per load engine, paused, then resumed together),
    /// with the scenario and its raw output folder.
    async fn start_loadgen(
        &mut self,
        target: &Target,
        cancel: &watch::Receiver<bool>,
    ) -> Result<(), Failure> {
        let out_dirs = self.out_dirs();
        let prepare = |dir: &Path| {
            prepare_out_dir(dir).map_err(|e| {
                Failure::new(
                    Outcome::LoadgenFailed,
                    format!("preparing {}: {e}", dir.display()),
                )
            })
        };
        prepare(&self.raw_dir())?;
        let scheme = if target.tls.is_some() { "wss" } else { "ws" };
        let ws_url = match &self.plan.server_address {
            Some(address) => format!("{scheme}://{address}:{}/ws", port_of(&target.addr)),
            None => target.ws_url.clone(),
        };
        let (sequence, segments) = split::segments(self.loadgen_engines.len());
        let split = self.split();
        let engines = self.loadgen_engines;
        for (i, (&engine, out_dir)) in engines.iter().zip(&out_dirs).enumerate() {
            if split {
                prepare(out_dir)?;
            }
            let instance = i + 1;
            // --no-usage-report: k6 otherwise reports usage to the internet after every run,
            // and every byte of a benchmark stays on loopback.
            let mut cmd: Vec<String> = ["run", "--quiet", "--no-color", "--no-usage-report"]
                .map(String::from)
                .into();
            let mut env = self.k6_env(&ws_url);
            let mut api = None;
            if split {
                let host = self
                    .plan
                    .loadgens
                    .get(i)
                    .map_or("127.0.0.1", |l| l.api_host.as_str());
                let port = local::free_port()
                    .map_err(|e| Failure::new(Outcome::LoadgenFailed, e.to_string()))?;
                let address = format!("{host}:{port}");
                cmd.extend([
                    "--paused".into(),
                    "--address".into(),
                    address.clone(),
                    "--execution-segment".into(),
                    segments[i].clone(),
                    "--execution-segment-sequence".into(),
                    sequence.clone(),
                ]);
                env.push(format!("INSTANCE={instance}"));
                api = Some(address);
            }
            cmd.push(format!("/scenarios/{}.js", self.point.scenario));
            let suffix = if split {
                format!("-k6-{instance}")
            } else {
                "-k6".to_string()
            };
            let spec = ContainerSpec {
                name: self.container_name(&suffix),
                image: self.plan.setup.k6_image.clone(),
                cmd,
                env,
                binds: [
                    format!("{}:/scenarios:ro", self.plan.setup.scenarios_dir.display()),
                    format!("{}:/out", absolute(out_dir).display()),
                ]
                .into_iter()
                .chain(self.tls_bind())
                .collect(),
                labels: self.labels("loadgen"),
                memory_bytes: self.plan.limits.loadgen_memory_bytes.map(|b| b as i64),
                cpuset: self.plan.limits.cpuset_loadgen.clone(),
                hardening: self.hardening(|h| h.loadgen_nofile),
                ..Default::default()
            };
            let id = engine.start(&spec).await.map_err(|e| {
                let on = match self.plan.loadgens.get(i) {
                    Some(l) if split => format!(" {instance} on {}", l.endpoint),
                    _ => String::new(),
                };
                Failure::new(
                    Outcome::LoadgenFailed,
                    format!("could not start k6{on}: {e}"),
                )
            })?;
            self.k6.push(K6 {
                engine,
                id,
                instance,
                api,
                exited: None,
            });
        }
        if split {
            self.start_together(cancel).await?;
        }
        Ok(())
    }

    /// k6's environment: where the server is, the mode and load path, where to write, and a
    /// sweep's values and a soak's length.
    fn k6_env(&self, ws_url: &str) -> Vec<String> {
        let mut env: Vec<String> = vec![
            "K6_NO_USAGE_REPORT=true".into(),
            // Never look an extension up on the network: ours is compiled in.
            "K6_AUTO_EXTENSION_RESOLUTION=false".into(),
            format!("WS_URL={ws_url}"),
            format!("MODE={}", self.plan.mode),
            format!("LOADGEN={}", self.plan.load_path),
            format!("SUMMARY_PATH=/out/{SUMMARY_FILE}"),
            format!("NATIVE_PATH=/out/{NATIVE_FILE}"),
            format!("SLO_P95_MS={}", self.plan.slo_p95_ms),
        ];
        // A sweep's values, next to MODE: CLIENTS=500, RATE=2.5 (scenarios/lib/config.js).
        env.extend(
            wscbench_results::dimensions::params_text(&self.params())
                .into_iter()
                .map(|(k, v)| format!("{}={v}", k.env_name())),
        );
        // A load curve's levels, every one inside this point: DELIVERIES=50000,100000,...
        if !self.levels.is_empty() {
            let levels: Vec<String> = self.levels.iter().map(f64::to_string).collect();
            env.push(format!(
                "{}={}",
                LoadParam::Deliveries.env_name(),
                levels.join(",")
            ));
            env.push(format!("SLO_P99_MS={}", self.plan.slo_p99_ms));
        }
        env.extend(self.plan.soak_seconds.map(|s| format!("DURATION={s}")));
        // The transport (scenarios/lib/config.js): the run's certificate to trust, deflate.
        if self.tls_bind().is_some() {
            env.push(format!(
                "TLS_CA_FILE={}/{}",
                crate::net::tls::CONTAINER_DIR,
                crate::net::tls::CERT_FILE
            ));
        }
        if self.point.transport.is_deflate() {
            env.push("DEFLATE=1".into());
        }
        if let Some(h) = &self.host_limits {
            env.push(format!("SOURCE_ADDRESSES={}", h.source_addresses.join(",")));
        }
        env
    }

    /// The hardened set, with the open files the host plan gives this side (`nofile`).
    fn hardening(&self, nofile: impl Fn(&HostLimits) -> u64) -> Hardening {
        Hardening {
            nofile: self
                .host_limits
                .as_ref()
                .map(nofile)
                .or(Hardening::default().nofile),
            ..Hardening::default()
        }
    }

    /// The run's certificate folder for k6, on a wss point.
    fn tls_bind(&self) -> Option<String> {
        let cert = self.plan.setup.tls.as_ref()?;
        self.point.transport.is_tls().then(|| cert.bind())
    }

    /// Waits until every k6 of a split run is paused and ready, then resumes them at once.
    async fn start_together(&mut self, cancel: &watch::Receiver<bool>) -> Result<(), Failure> {
        let failed = |detail: String| Failure::new(Outcome::LoadgenFailed, detail);
        for k6 in &self.k6 {
            let api = k6
                .api
                .as_deref()
                .expect("a split run's k6 has an API address");
            let gone = async || {
                if *cancel.borrow() {
                    return Some(Failure::new(
                        Outcome::Interrupted,
                        "interrupted by the user",
                    ));
                }
                let state = k6.engine.state(&k6.id).await.ok().filter(|s| !s.running)?;
                let logs = k6.engine.logs(&k6.id, 5).await.unwrap_or_default();
                Some(failed(format!(
                    "k6 {} exited with {:?} before its start: {}",
                    k6.instance,
                    state.exit_code,
                    last_lines(&logs, 3)
                )))
            };
            match split::wait_paused(api, K6_PAUSED_WAIT, gone).await {
                Ok(Ok(())) => {}
                Ok(Err(why)) => return Err(why),
                Err(e) => return Err(failed(format!("k6 {}: {e}", k6.instance))),
            }
        }
        let apis: Vec<String> = self.k6.iter().filter_map(|k| k.api.clone()).collect();
        self.resumed_after_ms = split::resume_all(&apis)
            .await
            .map_err(|e| failed(e.to_string()))?;
        Ok(())
    }

    /// What a split run records about its instances (their usage is filled in by derive).
    fn distributed(&self) -> Distributed {
        let (sequence, segments) = split::segments(self.loadgen_engines.len());
        let readings: Vec<(f64, f64)> = self
            .plan
            .setup
            .conditions
            .loadgen_engines
            .iter()
            .filter_map(|e| Some((e.clock_offset_ms?, e.clock_rtt_ms.unwrap_or(0.0))))
            .collect();
        let by_offset = |a: &&(f64, f64), b: &&(f64, f64)| a.0.total_cmp(&b.0);
        let (low, high) = (
            readings.iter().min_by(by_offset),
            readings.iter().max_by(by_offset),
        );
        let (clock_skew_ms, clock_skew_uncertainty_ms) = match (low, high) {
            (Some(low), Some(high)) if readings.len() > 1 => {
                (Some(high.0 - low.0), Some((high.1 + low.1) / 2.0))
            }
            _ => (None, None),
        };
        Distributed {
            execution_segment_sequence: sequence,
            start_skew_ms: self.resumed_after_ms.iter().copied().fold(0.0, f64::max),
            clock_skew_ms,
            clock_skew_uncertainty_ms,
            cross_instance_latency: None,
            instances: (0..self.loadgen_engines.len())
                .map(|i| LoadgenInstance {
                    instance: i as u32 + 1,
                    engine: self
                        .plan
                        .loadgens
                        .get(i)
                        .map(|l| l.endpoint.clone())
                        .unwrap_or_default(),
                    execution_segment: segments[i].clone(),
                    resumed_after_ms: self.resumed_after_ms.get(i).copied().unwrap_or(0.0),
                    exit_code: self
                        .k6
                        .get(i)
                        .and_then(|k| k.exited)
                        .and_then(|s| s.exit_code),
                    ..LoadgenInstance::default()
                })
                .collect(),
        }
    }

    /// One second's sample: the server's counters and both sides' usage as last read.
    fn one_sample(
        &self,
        t_ms: u64,
        stats: Option<&wscbench_results::ServerStats>,
        s: Option<Usage>,
        instances: Vec<InstanceSample>,
    ) -> Sample {
        Sample {
            t_ms,
            server_cpu_percent: s.map(|s| s.cpu_percent),
            server_cpu_read_ms: s
                .and_then(|s| s.read_epoch_ms)
                .map(|read| read as i64 - self.load_started_epoch_ms as i64),
            server_cpu_used_ms: s.and_then(|s| s.cpu_used_ms),
            server_mem_bytes: s.map(|s| s.mem_bytes),
            server_anon_bytes: s.and_then(|s| s.anon_bytes),
            server_kernel_bytes: s.and_then(|s| s.kernel_bytes),
            // Summed over the instances for the verdict; each kept below.
            loadgen_cpu_percent: instances.iter().map(|i| i.cpu_percent).sum(),
            loadgen_mem_bytes: instances.iter().map(|i| i.mem_bytes).sum(),
            connections: stats.map(|s| s.connections_current),
            deliveries: stats.map(|s| s.deliveries),
            loadgen_instances: if self.split() { instances } else { Vec::new() },
            chat_in: stats.map(|s| s.chat_in),
            dropped_slow: stats.map(|s| s.dropped_slow),
            dropped_ratelimit: stats.map(|s| s.dropped_ratelimit),
        }
    }

    /// Phase 3b: one sample of both containers and of the server's counters every second,
    /// until k6 ends, the server dies, the user cancels or k6 overruns.
    async fn sample(
        &mut self,
        result: &mut RunResult,
        target: &Target,
        load_started: Instant,
        cancel: &mut watch::Receiver<bool>,
        on: &mut (dyn FnMut(Progress<'_>) + Send),
    ) -> LoadEnd {
        let expected = self.expected;
        let (server_usage, _server_task) = self.server_usage().map(latest).unzip();
        let (loadgen_usage, _loadgen_tasks): (Vec<_>, Vec<_>) = self
            .k6
            .iter()
            .map(|k6| latest(k6.engine.usage(&k6.id)))
            .unzip();
        let split = self.split();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        let mut last_deliveries: Option<(u64, Instant)> = None;
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                // A dropped sender disables this branch rather than spinning the loop.
                Ok(()) = cancel.changed() => {}
            }
            if *cancel.borrow() {
                return LoadEnd::Cancelled;
            }
            let stats = verify::read_stats_quiet(target).await;
            let t_ms = load_started.elapsed().as_millis() as u64;
            let s = self.with_cpu_now(server_usage.as_ref().map(|u| *u.borrow()), t_ms);
            let instances: Vec<InstanceSample> = loadgen_usage
                .iter()
                .map(|usage| {
                    let u = *usage.borrow();
                    InstanceSample {
                        cpu_percent: u.cpu_percent,
                        mem_bytes: u.mem_bytes,
                    }
                })
                .collect();
            let sample = self.one_sample(t_ms, stats.as_ref(), s, instances);
            let now = Instant::now();
            let rate = match (stats.as_ref(), last_deliveries) {
                (Some(st), Some((prev, at))) => Some(
                    st.deliveries.saturating_sub(prev) as f64
                        / now.duration_since(at).as_secs_f64(),
                ),
                _ => None,
            };
            if let Some(st) = &stats {
                last_deliveries = Some((st.deliveries, now));
            }
            on(Progress::Tick {
                elapsed: load_started.elapsed(),
                expected,
                sample: &sample,
                deliveries_per_s: rate,
            });
            result.series.push(sample);
            if let Some(st) = stats.filter(|_| !self.levels.is_empty()) {
                self.stats.push((t_ms, st));
            }

            if let Some(state) = self.server_state().await
                && !state.running
            {
                return LoadEnd::ServerDied(state);
            }
            for (i, k6) in self.k6.iter_mut().enumerate() {
                if k6.exited.is_some() {
                    continue;
                }
                if let Ok(state) = k6.engine.state(&k6.id).await
                    && !state.running
                {
                    k6.exited = Some(state);
                    let ok = !state.oom_killed
                        && matches!(state.exit_code, Some(0) | Some(k6::THRESHOLDS_CROSSED));
                    if split && !ok {
                        self.failed_instance = Some(i);
                        return LoadEnd::InstanceFailed(i, state);
                    }
                }
            }
            if self.k6.iter().all(|k| k.exited.is_some()) {
                let last = self.k6.iter().filter_map(|k| k.exited).next_back();
                return LoadEnd::K6Exited(last.unwrap_or_default());
            }
            if self.near_memory_limit(s) {
                return LoadEnd::MemoryNearLimit;
            }
            if load_started.elapsed() > expected + K6_OVERRUN {
                return LoadEnd::TimedOut;
            }
        }
    }

    /// The one cleanup path: stop k6 and the server (SIGTERM, then SIGKILL), keep what they
    /// said, and remove both.
    async fn teardown(&mut self) -> Teardown {
        let mut teardown = Teardown::default();
        let noted = self.failed_instance.unwrap_or(0);
        for (i, k6) in self.k6.iter_mut().enumerate() {
            let _ = k6.engine.stop(&k6.id, Duration::from_secs(1)).await;
            if i == noted {
                teardown.k6_logs = k6.engine.logs(&k6.id, 15).await.unwrap_or_default();
            }
            let state = k6.engine.state(&k6.id).await.ok();
            teardown.loadgen_oom |= state.is_some_and(|state| state.oom_killed);
            if k6.exited.is_none() {
                k6.exited = state.filter(|s| !s.running);
            }
        }
        teardown.server_before_stop = self.server_state().await;
        if let Some(server) = self.container() {
            let _ = self.engine.stop(server, Duration::from_secs(2)).await;
        }
        for k6 in &self.k6 {
            let _ = k6.engine.remove(&k6.id).await;
        }
        if let Some(RunningServer::Container(id)) = self.server.take() {
            let _ = self.engine.remove(&id).await;
        }
        teardown
    }
}

/// Every instance's native report, and their merge.
fn read_native(
    out_dirs: &[PathBuf],
) -> Result<(native::Merged, Vec<NativeReport>), native::NativeError> {
    let reports = out_dirs
        .iter()
        .map(|dir| {
            let path = dir.join(NATIVE_FILE);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                native::NativeError::Malformed(serde_json::Error::io(std::io::Error::new(
                    e.kind(),
                    format!("{}: {e}", path.display()),
                )))
            })?;
            NativeReport::from_json(&text)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((native::merge(&reports)?, reports))
}

/// The k6 summary, or with several instances their summaries combined: counts added, and
/// the slowest instance's connect p95 (an upper bound; percentiles are never averaged). The
/// first missing or unreadable one stands for all.
fn read_summaries(out_dirs: &[PathBuf]) -> Option<Result<k6::Summary, k6::SummaryError>> {
    let mut combined: Option<k6::Summary> = None;
    for dir in out_dirs {
        let text = std::fs::read_to_string(dir.join(SUMMARY_FILE)).ok()?;
        let one = match k6::parse_summary(&text) {
            Ok(one) => one,
            Err(e) => return Some(Err(e)),
        };
        combined = Some(match combined {
            None => one,
            Some(mut all) => {
                let (m, n) = (&mut all.metrics, &one.metrics);
                m.sessions += n.sessions;
                m.sessions_closed += n.sessions_closed;
                m.connect_p95_ms = m.connect_p95_ms.max(n.connect_p95_ms);
                m.ws_msgs_sent += n.ws_msgs_sent;
                m.ws_msgs_received += n.ws_msgs_received;
                m.chat_sent += n.chat_sent;
                m.chat_received += n.chat_received;
                m.malformed += n.malformed;
                all.errors.failed_connects += one.errors.failed_connects;
                all.errors.abnormal_closes += one.errors.abnormal_closes;
                all.errors.script_errors += one.errors.script_errors;
                all
            }
        });
    }
    combined.map(Ok)
}

/// Freezes and thaws the server on `schedule` from `load_started`, for ever (the caller
/// drops it when the load ends). A pause or thaw the engine refuses is retried at the next
/// change.
async fn pause_server<E: Engine>(
    engine: &E,
    server: &str,
    schedule: super::PauseServer,
    load_started: Instant,
) {
    loop {
        let (frozen, next) = schedule.at(load_started.elapsed());
        let _ = if frozen {
            engine.pause(server).await
        } else {
            engine.unpause(server).await
        };
        tokio::time::sleep_until((load_started + next).into()).await;
    }
}

/// A fresh raw output folder that k6 can write to whatever user it runs as.
fn prepare_out_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777))
}

/// Follows a usage stream, keeping only its latest sample.
fn latest(mut stream: crate::docker::UsageStream) -> (watch::Receiver<Usage>, AbortOnDrop) {
    let (tx, rx) = watch::channel(Usage::default());
    let task = tokio::spawn(async move {
        while let Some(usage) = stream.next().await {
            if tx.send(usage).is_err() {
                break;
            }
        }
    });
    (rx, AbortOnDrop(task))
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An external server's watcher, as a detail names it.
fn describe(usage: &UsageSource) -> String {
    match usage {
        UsageSource::Container { container } => format!("container {container}"),
        UsageSource::Process { pid } => format!("process {pid}"),
        UsageSource::Managed | UsageSource::Absent => "the server".into(),
    }
}

/// The host limits of an idle-capacity point whose server wscbench starts on loopback (the
/// request was refused earlier when the machine cannot serve them); `None` for the rest.
fn host_limits_of(plan: &Plan, point: Point<'_>, loadgens: usize) -> Option<HostLimits> {
    let local = plan.server_address.is_none() && point.server.as_external().is_none();
    if !local {
        return None;
    }
    match point.scenario {
        Scenario::IdleCapacity => {
            crate::load::host_limits::for_idle_capacity(plan.mode, loadgens as u32).ok()?
        }
        Scenario::Population => {
            let users =
                crate::load::scenarios::PopulationShape::with_params(plan.mode, point.params).users;
            crate::load::host_limits::for_population(users, loadgens as u32).ok()?
        }
        _ => None,
    }
}

fn empty_result(plan: &Plan, point: Point<'_>, started_at: SystemTime) -> RunResult {
    let planned = point.server;
    let server = &planned.server;
    let image = plan.image_of(planned);
    let external = planned.as_external();
    let mut conditions = plan.setup.conditions.clone();
    // Fault injection is a condition of the result, never silent.
    conditions.pause_server = plan.pause_server.map(|p| p.text());
    if let Some(variant) = &planned.variant {
        conditions.variant_args = variant.args.clone();
        conditions.variant_env = variant.env.clone();
    }
    RunResult {
        schema_version: SCHEMA_VERSION,
        run_id: plan.setup.run_id.clone(),
        server: ServerIdentity {
            id: server.id.clone(),
            image: server.tag.clone(),
            language: server.language.clone(),
            profile: server.profile.clone(),
            framework: server.framework.clone(),
            source_hash: image.map(|i| i.source_hash.clone()).unwrap_or_default(),
            binary_size_bytes: image.map(|i| i.binary_size_bytes).filter(|n| *n > 0),
            image_size_bytes: image.map(|i| i.image_size_bytes).filter(|n| *n > 0),
        },
        variant: planned.variant.as_ref().map(|v| v.name.clone()),
        scenario: point.scenario,
        load_params: point.load_params(),
        repetition: point.repetition,
        round: None,
        transport: point.transport,
        negotiated: Vec::new(),
        external_url: external.map(|e| e.url.clone()),
        server_usage_source: external.map(|e| e.usage.clone()).unwrap_or_default(),
        mode: plan.mode,
        load_path: plan.load_path,
        conditions,
        started_at: humantime::format_rfc3339_millis(started_at).to_string(),
        duration_ms: 0,
        overhead_ms: 0,
        outcome: Outcome::Ok,
        outcome_detail: None,
        server_stats: None,
        k6: None,
        errors: ErrorCounts::default(),
        derived: Default::default(),
        loadgen_bound: false,
        loadgen_bound_reasons: Vec::new(),
        distributed: None,
        capacity: None,
        idle: None,
        population: None,
        soak: None,
        slow_consumers: None,
        curve: None,
        series: Vec::new(),
    }
}

/// The shape the scenario ran (its `setup()` data in k6's summary), if readable.
fn read_shape(out_dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(out_dir.join(SUMMARY_FILE)).ok()?;
    let summary: serde_json::Value = serde_json::from_str(&text).ok()?;
    summary.get("setup_data")?.get("shape").cloned()
}

/// The port of a `host:port`.
fn port_of(addr: &str) -> &str {
    addr.rsplit_once(':').map_or(addr, |(_, port)| port)
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}
