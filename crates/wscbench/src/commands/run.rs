//! `wscbench run`: build, then every server × scenario through the engine's runner, with
//! live progress, Ctrl-C handling, and the comparison tables at the end.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;
use wscbench_engine::docker::Engine;
use wscbench_engine::docker::daemon::DockerEngine;
use wscbench_engine::runner::{self, Limits, LoadgenEngine, Plan, Progress, Setup};
use wscbench_report::{Report, html};
use wscbench_results::dimensions::params_text;
use wscbench_results::{
    Conditions, EngineConditions, HTML_REPORT_FILE, LoadParam, Outcome, RUN_MANIFEST_FILE,
    RunManifest, RunResult, RunStatus, SCHEMA_VERSION,
};

use crate::commands::run_request::{self, Known, RunArgs, RunRequest};
use crate::errors::{Doing, Expected, ExpectedError};
use crate::exit::ExitCode;

/// Time a run spends outside its scenario (start, health, verification, stop, write): for the ETA.
const OVERHEAD_ESTIMATE: Duration = runner::POINT_OVERHEAD;

pub async fn run(root: &Path, args: RunArgs) -> Result<ExitCode, ExpectedError> {
    // Every check of the command line before the results folder, any build or any container;
    // from here on the checked request is all there is of the command line.
    let request = run_request::check(&args, &Known::read(root)?)?;
    drop(args);
    let curve_steps = request.plan.curve_steps.as_ref();
    if let Some(ceiling) = curve_steps.and_then(|c| c.loadgen_ceiling_per_s) {
        eprintln!(
            "load curve: steps of {} deliveries/s, placed up to the {ceiling:.0}/s k6 was measured to receive here (wscbench loadgen-capacity)",
            curve_steps
                .iter()
                .flat_map(|c| c.deliveries_per_s.iter().map(|d| format!("{d:.0}")))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    // An external server answers and keeps the protocol, or nothing of the run begins.
    if let Some(external) = request.plan.external() {
        super::external::preflight(external).await?;
    }
    for id in &request.left_out {
        eprintln!(
            "{id} declares none of the variants asked for ({}): left out",
            request.variants.join(", ")
        );
    }
    // The results folder first: a disk or permission problem shows before any build or container.
    let run_id = runner::new_run_id();
    let results_dir = results_root(root, &request.results).join(&run_id);
    let mut run_log = RunLog::open(&run_id, &results_dir, &request.plan)?;
    let judge = request.plan.precision_pct.map(PrecisionJudge);
    let format = (request.format, request.width);
    let RunRequest {
        mut plan, rebuild, ..
    } = request;
    let engines = match prepare(root, &mut plan, rebuild, &run_id, &results_dir).await {
        Ok(engines) => engines,
        Err(err) => return Err(run_log.failed(err)),
    };
    eprintln!(
        "run {run_id}: {} server row(s) × {} scenario(s) ({} point(s) a round, a sweep's values each one, a load curve's levels inside one) × {} round(s){}, {} mode, {} load path, about {} min; results in {}",
        plan.servers.len(),
        plan.scenarios.len(),
        plan.round_starts().len(),
        plan.repetitions,
        curve_rounds(&plan),
        plan.mode,
        plan.load_path,
        plan.estimate().as_secs().div_ceil(60),
        results_dir.display()
    );
    if let Some(judge) = &judge {
        eprintln!(
            "then rounds only for points not yet within ±{}% (latency ±{}%) nor decided against their neighbours, up to {} rounds{}; seed {}",
            judge.0,
            judge.0 * 2.0,
            plan.adaptive.max_rounds,
            plan.adaptive.budget.map_or(String::new(), |b| format!(
                ", within a budget of {}",
                humantime::format_duration(b)
            )),
            plan.adaptive.seed
        );
    }
    let (outcome, signal) = execute(
        &engines,
        &plan,
        judge.as_ref().map(|j| j as &dyn runner::rounds::Judge),
    )
    .await?;
    let output = match outcome {
        Ok(output) => output,
        Err(err) => {
            let err = err.while_doing("the run stopped: a result could not be written".into());
            return Err(run_log.failed(err));
        }
    };
    run_log.manifest.rounds = output.rounds;
    run_log.manifest.stops = output.stops;
    let results = output.results;
    // The report of the run, built once: the page beside run.json and the tables printed.
    // run.json, written when the run opened, already holds the transports not offered.
    let records = wscbench_report::records(&results_dir, &[&run_id]);
    for warning in &records.warnings {
        eprintln!("warning: {warning}");
    }
    let report = (!results.is_empty()).then(|| Report::from_results_with(&results, &records));
    run_log.close(&results, report.as_ref(), signal)?;
    Ok(finish(
        format,
        &results,
        report.as_ref(),
        &results_dir,
        &run_id,
        signal,
    ))
}

/// The load curve's least rounds where they differ from the others': ` (the load curve 5)`.
fn curve_rounds(plan: &Plan) -> String {
    let curve = wscbench_results::Scenario::LoadCurve;
    let rounds = plan.min_rounds(curve);
    if plan.scenarios.contains(&curve) && rounds != plan.repetitions.max(1) {
        format!(" (the load curve {rounds})")
    } else {
        String::new()
    }
}

/// The precision goal as the runner's judge: the report's verdicts on every round so far.
struct PrecisionJudge(f64);

impl runner::rounds::Judge for PrecisionJudge {
    fn judge(
        &self,
        results: &[RunResult],
    ) -> std::collections::BTreeMap<wscbench_results::PointKey, Option<wscbench_results::StopReason>>
    {
        wscbench_report::precision::verdicts(results, self.0)
    }
}

/// Runs the plan with the progress display and the signal handlers, and removes whatever
/// container of the run is left. Returns the runner's outcome and the exit code of the
/// signal that stopped it, if one did.
async fn execute(
    engines: &Engines,
    plan: &Plan,
    judge: Option<&dyn runner::rounds::Judge>,
) -> Result<
    (
        Result<runner::RoundsOutput, runner::WriteError>,
        Option<ExitCode>,
    ),
    ExpectedError,
> {
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let signalled = watch_signals(cancel_tx, engines.all(), plan.setup.run_id.clone())?;
    let mut display = Display::new(plan);
    let loadgens: Vec<&DockerEngine> = engines.loadgens.iter().collect();
    let outcome = runner::execute_rounds(
        &engines.server,
        &loadgens,
        plan,
        judge,
        cancel_rx,
        &mut |p| display.update(p),
    )
    .await;
    display.finish();
    let mut leftover = 0;
    for engine in engines.all() {
        leftover += engine.remove_run(&plan.setup.run_id).await.unwrap_or(0);
    }
    if leftover > 0 {
        eprintln!(
            "removed {leftover} leftover container(s) of run {}",
            plan.setup.run_id
        );
    }
    let signal = *signalled.borrow();
    Ok((outcome, signal))
}

/// The run's `run.json`: written when the run starts, rewritten however it ends.
struct RunLog {
    path: PathBuf,
    manifest: RunManifest,
}

impl RunLog {
    /// `run.json` as the run opens: its header, then the plan as it records itself (see
    /// [`Plan`]'s serialised fields), read back as the manifest that the run then updates.
    fn open(run_id: &str, results_dir: &Path, plan: &Plan) -> Result<RunLog, ExpectedError> {
        let opening = Opening {
            schema_version: SCHEMA_VERSION,
            run_id,
            status: RunStatus::Running,
            command: std::env::args().collect::<Vec<_>>().join(" "),
            wscbench_version: env!("CARGO_PKG_VERSION"),
            plan,
            planned_points: plan.len() as u32,
            written_points: 0,
            started_at: now(),
            written_at: now(),
        };
        let mut log = RunLog {
            path: results_dir.join(RUN_MANIFEST_FILE),
            manifest: opening.manifest(),
        };
        log.write().doing(|| {
            format!(
                "the results folder {} is not writable",
                results_dir.display()
            )
        })?;
        Ok(log)
    }

    fn write(&mut self) -> Result<(), runner::WriteError> {
        self.manifest.written_at = now();
        runner::write_atomically(&self.path, &self.manifest.to_json())
    }

    /// Marks the run failed (best effort) and hands the error back.
    fn failed(&mut self, err: ExpectedError) -> ExpectedError {
        self.manifest.status = RunStatus::Failed;
        self.manifest.status_detail = Some(err.one_line());
        let _ = self.write();
        err
    }

    /// Marks the run completed or interrupted and writes its HTML report (none when the run
    /// wrote no result) beside it.
    fn close(
        &mut self,
        results: &[RunResult],
        report: Option<&Report>,
        signal: Option<ExitCode>,
    ) -> Result<(), ExpectedError> {
        self.manifest.written_points = results.len() as u32;
        self.manifest.status =
            if signal.is_some() || results.iter().any(|r| r.outcome == Outcome::Interrupted) {
                RunStatus::Interrupted
            } else {
                RunStatus::Completed
            };
        self.write()
            .doing(|| format!("writing {}", self.path.display()))?;
        let Some(report) = report else {
            return Ok(());
        };
        let page = html::render_page(
            results,
            report,
            &html::PageContext {
                command: Some(self.manifest.command.clone()),
                manifest: Some(self.manifest.clone()),
            },
        );
        let path = self.path.with_file_name(HTML_REPORT_FILE);
        runner::write_atomically(&path, &page).doing(|| "writing the run's report")?;
        eprintln!("report: {}", path.display());
        Ok(())
    }
}

/// `run.json` as a run opens: the manifest's header and counts around the plan's own record.
#[derive(serde::Serialize)]
struct Opening<'p> {
    schema_version: u32,
    run_id: &'p str,
    status: RunStatus,
    command: String,
    wscbench_version: &'static str,
    #[serde(flatten)]
    plan: &'p Plan,
    planned_points: u32,
    written_points: u32,
    started_at: String,
    written_at: String,
}

impl Opening<'_> {
    /// The manifest this opening reads as: the plan's fields under the names the manifest
    /// reads, never copied one by one.
    fn manifest(&self) -> RunManifest {
        let json = serde_json::to_string(self).expect("a plan serialises");
        RunManifest::from_json(&json).expect("an opening reads as a manifest")
    }
}

/// The server's engine and the load generators' (none: k6 runs on the server's).
struct Engines {
    server: DockerEngine,
    loadgens: Vec<DockerEngine>,
}

impl Engines {
    /// Every engine the run may leave a container on.
    fn all(&self) -> Vec<DockerEngine> {
        std::iter::once(self.server.clone())
            .chain(self.loadgens.iter().cloned())
            .collect()
    }
}

/// Connects to every `--loadgen-engine`, records its conditions and builds the k6 image on
/// it (FROM scratch: it builds on any engine).
async fn connect_loadgens(
    loadgens: &[LoadgenEngine],
    rebuild: bool,
) -> Result<(Vec<DockerEngine>, Vec<EngineConditions>), ExpectedError> {
    let (mut engines, mut conditions) = (Vec::new(), Vec::new());
    for LoadgenEngine { endpoint, .. } in loadgens {
        let engine = DockerEngine::connect_to(endpoint)
            .await
            .doing(|| format!("connecting to the load engine {endpoint}"))?;
        let info = engine
            .info()
            .await
            .doing(|| format!("asking the load engine {endpoint} for its version"))?;
        let clock = engine.clock_offset().await;
        eprint!("load engine {endpoint}: ");
        super::build_k6_image(&engine, rebuild)
            .await
            .doing(|| format!("building the k6 image on {endpoint}"))?;
        conditions.push(EngineConditions {
            endpoint: endpoint.clone(),
            host_name: info.host_name.clone(),
            machine_cores: info.cpus,
            kernel: info.kernel.clone(),
            docker_version: info.version.clone(),
            docker_api_version: info.api_version.clone(),
            clock_offset_ms: clock.map(|c| c.offset_ms),
            clock_rtt_ms: clock.map(|c| c.rtt_ms),
        });
        engines.push(engine);
    }
    Ok((engines, conditions))
}

/// Builds the images and the plan's setup: everything a run needs before its first
/// container. A server by URL, which wscbench does not limit, is judged against the
/// machine's cores ([`server_limits`]).
async fn prepare(
    root: &Path,
    plan: &mut Plan,
    rebuild: bool,
    run_id: &str,
    results_dir: &Path,
) -> Result<Engines, ExpectedError> {
    // One image per server, shared by its variants (a variant is not a rebuild), except a
    // variant with a binary of its own (server.toml `binary`), which has its own image.
    let built = plan.servers_to_build();
    super::check_toolchains(&built).await?;
    let engine = super::connect().await?;
    let info = engine
        .info()
        .await
        .doing(|| "asking the engine for its version")?;
    let k6_image = super::build_k6_image(&engine, rebuild)
        .await
        .doing(|| "building the k6 image")?;
    let images = super::build_images(&engine, &built, rebuild).await?;
    let (loadgen_engines, loadgen_conditions) = connect_loadgens(&plan.loadgens, rebuild).await?;
    let machine_cores = if info.cpus > 0 {
        info.cpus
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
    };
    let external = plan.external().is_some();
    plan.limits = server_limits(&plan.limits, external, machine_cores);
    let (cpu_model, cpu_mhz) = wscbench_engine::load::calibrate::cpu_model();
    let conditions = Conditions {
        // An external server ran under no limit of wscbench's: 0 says none was set.
        server_cpus: if external { 0.0 } else { plan.limits.cpus },
        server_memory_bytes: plan.limits.memory_bytes,
        cpuset_server: plan.limits.cpuset_server.clone(),
        cpuset_loadgen: plan.limits.cpuset_loadgen.clone(),
        machine_cores,
        cpu_model,
        cpu_mhz,
        kernel: info.kernel.clone(),
        docker_version: info.version.clone(),
        docker_api_version: info.api_version.clone(),
        k6_version: k6_image.version.clone().unwrap_or_default(),
        loadgen_memory_bytes: plan.limits.loadgen_memory_bytes,
        container_hardening: wscbench_engine::docker::Hardening::default().describe(),
        variant_args: Vec::new(),
        variant_env: Vec::new(),
        loadgen_engines: loadgen_conditions,
        server_address: plan.server_address.clone(),
        pause_server: plan.pause_server.map(|p| p.text()),
        host_limits: None,
    };
    plan.setup = Setup {
        run_id: run_id.to_string(),
        results_dir: results_dir.to_owned(),
        scenarios_dir: std::path::absolute(root.join("scenarios"))
            .doing(|| "finding the scenarios folder")?,
        k6_image: k6_image.tag.clone(),
        images,
        conditions,
        tls: run_cert(plan.transports())?,
    };
    Ok(Engines {
        server: engine,
        loadgens: loadgen_engines,
    })
}

/// The server's limits as the runner applies and judges them: the flags' (`asked`) for a
/// managed server; for an external one, which wscbench does not limit, the machine's cores
/// as its CPU ceiling and no memory limit (0).
fn server_limits(asked: &Limits, external: bool, machine_cores: u32) -> Limits {
    if !external {
        return asked.clone();
    }
    Limits {
        cpus: f64::from(machine_cores),
        memory_bytes: 0,
        cpuset_server: None,
        ..asked.clone()
    }
}

/// The run's certificate when a transport is wss: made now, checked, removed when the run
/// ends (docs/transports.md).
fn run_cert(
    transports: &[wscbench_results::Transport],
) -> Result<Option<std::sync::Arc<wscbench_engine::net::tls::RunCert>>, ExpectedError> {
    if !transports.iter().any(|t| t.is_tls()) {
        return Ok(None);
    }
    let cert = wscbench_engine::net::tls::RunCert::make()
        .doing(|| "making the run's TLS certificate for wss")?;
    Ok(Some(std::sync::Arc::new(cert)))
}

/// The tables, the summary line and the exit code.
fn finish(
    (format, width): (wscbench_report::Format, wscbench_report::Width),
    results: &[RunResult],
    report: Option<&Report>,
    results_dir: &Path,
    run_id: &str,
    signal: Option<ExitCode>,
) -> ExitCode {
    if let Some(report) = report {
        print!("{}", format.render_at(report, width));
    }
    let failed = results
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::Ok | Outcome::Interrupted))
        .count();
    eprintln!(
        "{} result(s) written to {}{}",
        results.len(),
        results_dir.display(),
        if failed > 0 {
            format!("; {failed} run(s) failed (see the footnotes)")
        } else {
            String::new()
        }
    );
    if let Some(code) = signal {
        eprintln!("interrupted: the results above were kept; run {run_id} is marked interrupted");
        return code;
    }
    if results.iter().any(|r| r.outcome == Outcome::Interrupted) {
        return ExitCode::Interrupted;
    }
    ExitCode::from_failures(failed)
}

/// SIGINT and SIGTERM cancel the run (it cleans up and records the point as interrupted);
/// a second signal removes the run's containers at once and exits. The returned watch holds
/// the exit code of the first signal, once one came.
fn watch_signals(
    cancel: watch::Sender<bool>,
    engines: Vec<DockerEngine>,
    run_id: String,
) -> Result<watch::Receiver<Option<ExitCode>>, ExpectedError> {
    let mut interrupt = signal(SignalKind::interrupt()).doing(|| "listening for SIGINT")?;
    let mut terminate = signal(SignalKind::terminate()).doing(|| "listening for SIGTERM")?;
    let (code_tx, code_rx) = watch::channel(None);
    tokio::spawn(async move {
        let mut first = true;
        loop {
            let code = tokio::select! {
                Some(()) = interrupt.recv() => ExitCode::Interrupted,
                Some(()) = terminate.recv() => ExitCode::Terminated,
                else => return,
            };
            if first {
                first = false;
                let _ = code_tx.send(Some(code));
                let _ = cancel.send(true);
                eprintln!("\nstopping: removing this run's containers (signal again to stop now)");
            } else {
                for engine in &engines {
                    let _ = engine.remove_run(&run_id).await;
                }
                eprintln!("stopped at once; run {run_id} is incomplete");
                std::process::exit(code.code());
            }
        }
    });
    Ok(code_rx)
}

fn results_root(root: &Path, results: &Path) -> PathBuf {
    if results.is_relative() {
        root.join(results)
    } else {
        results.to_owned()
    }
}

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// The live progress line (or plain lines when stderr is not a terminal).
struct Display {
    bar: ProgressBar,
    started: Instant,
    remaining_after_current: Duration,
    /// One round's points' lengths, for the estimate of what is left.
    round_length: Duration,
    /// Rounds every point gets.
    min_rounds: u32,
    /// Rounds the load curve gets, where it gets more than the others.
    curve_rounds: u32,
    /// The round running.
    round: u32,
    current: String,
}

impl Display {
    fn new(plan: &Plan) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix} {wide_msg}").expect("valid template"),
        );
        bar.enable_steady_tick(Duration::from_millis(250));
        let round_length = plan
            .round_starts()
            .iter()
            .map(|start| plan.start_seconds(&start.points) + OVERHEAD_ESTIMATE)
            .sum();
        Self {
            bar,
            started: Instant::now(),
            remaining_after_current: Duration::ZERO,
            round_length,
            min_rounds: plan.repetitions.max(1),
            curve_rounds: plan
                .scenarios
                .iter()
                .map(|&s| plan.min_rounds(s))
                .max()
                .unwrap_or(1),
            round: 1,
            current: String::new(),
        }
    }

    fn say(&self, line: String) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    fn update(&mut self, progress: Progress<'_>) {
        match progress {
            Progress::Starting {
                index,
                total,
                point,
                levels,
                expected,
            } => {
                let per_point = self.round_length / (total.max(1) as u32);
                self.remaining_after_current = per_point * (total - index) as u32
                    + self.round_length * self.min_rounds.saturating_sub(self.round);
                let repetition = if point.repetition.of > 1 || point.repetition.index > 1 {
                    format!(
                        " · {}",
                        round_name(point.repetition.index, point.repetition.of)
                    )
                } else {
                    String::new()
                };
                // A load curve's levels run inside one point: its first level and how many.
                let params: String = params_text(&point.load_params())
                    .into_iter()
                    .map(|(k, v)| match levels {
                        n if n > 1 && k == LoadParam::Deliveries => {
                            format!(" {k}={v} (+{} levels)", n - 1)
                        }
                        _ => format!(" {k}={v}"),
                    })
                    .collect();
                self.current = format!(
                    "[{index}/{total}] {} × {}{params}{repetition}",
                    point.server.label(),
                    point.scenario
                );
                self.bar.set_prefix(self.current.clone());
                self.bar.set_message(format!(
                    "starting · {} s of load · elapsed {}",
                    expected.as_secs(),
                    clock(self.started.elapsed())
                ));
                if self.bar.is_hidden() {
                    eprintln!("{} ...", self.current);
                }
            }
            Progress::Round {
                index,
                points,
                machine_speed,
            } => self.round_started(index, points, machine_speed),
            Progress::Phase(phase) => self.bar.set_message(format!(
                "{phase} · elapsed {}",
                clock(self.started.elapsed())
            )),
            Progress::Tick {
                elapsed,
                expected,
                sample,
                deliveries_per_s,
            } => {
                let left = expected.saturating_sub(elapsed)
                    + OVERHEAD_ESTIMATE / 2
                    + self.remaining_after_current;
                self.bar.set_message(format!(
                    "{}/{} s · {} conns · {} deliveries/s · server {}% {} MiB · k6 {:.0}% · elapsed {} · left ~{}",
                    elapsed.as_secs(),
                    expected.as_secs(),
                    sample.connections.map_or("?".into(), |c| c.to_string()),
                    deliveries_per_s.map_or("?".into(), |r| format!("{r:.0}")),
                    sample.server_cpu_percent.map_or("?".into(), |c| format!("{c:.0}")),
                    sample
                        .server_mem_bytes
                        .map_or("?".into(), |m| format!("{:.1}", m as f64 / 1048576.0)),
                    sample.loadgen_cpu_percent,
                    clock(self.started.elapsed()),
                    clock(left),
                ));
            }
            Progress::Finished { result, path } => self.finished(result, path),
        }
    }

    /// A round's line: its points and the machine's speed at its start.
    fn round_started(
        &mut self,
        index: u32,
        points: usize,
        machine_speed: Option<wscbench_results::MachineSpeed>,
    ) {
        self.round = index;
        let speed = machine_speed.map_or(String::new(), |m| {
            format!(
                " · machine speed index {:.1} (CPU {:.2} M blocks/s, loopback {:.0}k round trips/s)",
                m.index,
                m.cpu_blocks_per_s / 1e6,
                m.loopback_roundtrips_per_s / 1e3
            )
        });
        let added = if index > self.curve_rounds {
            " (added for precision)"
        } else if index > self.min_rounds {
            " (the load curve's, then points added for precision)"
        } else {
            ""
        };
        self.say(format!("round {index}{added}: {points} point(s){speed}"));
    }

    /// A point's line once its result is written.
    fn finished(&self, result: &RunResult, path: &Path) {
        let summary = if result.outcome == Outcome::Ok {
            format!(
                "ok · {:.0} msg/s · {:.0} deliveries/s · server peak {} · k6 peak {:.0}%{} · overhead {:.1} s",
                result.derived.throughput_msgs_per_s,
                result.derived.deliveries_per_s,
                result
                    .derived
                    .server
                    .as_ref()
                    .map_or("not measured".into(), |u| format!(
                        "{:.0}% {:.1} MiB",
                        u.peak_cpu_percent,
                        u.peak_mem_bytes as f64 / 1048576.0
                    )),
                result.derived.loadgen.peak_cpu_percent,
                if result.loadgen_bound {
                    " · load-generator bound"
                } else {
                    ""
                },
                result.overhead_ms as f64 / 1000.0,
            )
        } else {
            format!(
                "{}: {}",
                result.outcome.as_str(),
                result.outcome_detail.clone().unwrap_or_default()
            )
        };
        self.say(format!("{} {summary} → {}", self.current, path.display()));
        if let Some(split) = &result.distributed {
            self.say(split_line(split, result.k6.as_ref()));
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
/// One line on a split run: its instances, their start and clock skew, and the latency of
/// chats within and across instances.
fn split_line(
    split: &wscbench_results::Distributed,
    k6: Option<&wscbench_results::K6Metrics>,
) -> String {
    let instances = split
        .instances
        .iter()
        .map(|i| {
            format!(
                "{} on {} ({} received, peak CPU {:.0}%)",
                i.execution_segment,
                i.engine,
                i.chat_received.map_or("?".into(), |n| n.to_string()),
                i.usage.peak_cpu_percent
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let clock = match (split.clock_skew_ms, split.clock_skew_uncertainty_ms) {
        (Some(skew), Some(within)) => format!("{skew:.1} ± {within:.1} ms"),
        _ => "not measured".into(),
    };
    let p95 = |l: Option<&wscbench_results::LatencyMs>| {
        l.map_or("—".into(), |l| format!("{:.1} ms", l.p95_ms))
    };
    format!(
        "  split over {} k6: {instances}; start skew {:.1} ms; clock skew {clock}; latency p95 within an instance {}, across instances {}",
        split.instances.len(),
        split.start_skew_ms,
        p95(k6.map(|k| &k.latency)),
        p95(split.cross_instance_latency.as_ref()),
    )
}

/// A round as the progress lines name it: `round 2 of 3` while within the rounds every
/// point gets, `round 4 (added for precision)` past them.
fn round_name(index: u32, planned: u32) -> String {
    if index > planned {
        format!("round {index} (added for precision)")
    } else {
        format!("round {index} of {planned}")
    }
}

/// A duration as a progress line or an estimate shows it: `2h05m`, `12m30s`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use wscbench_results::{Mode, Scenario, Transport};

    use super::*;
    use crate::cli::{Cli, Command};

    #[test]
    fn run_json_records_the_plan_under_the_names_the_manifest_reads() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let known = Known {
            servers: crate::commands::discover(Path::new(root)).unwrap(),
            loadgen_capacity: None,
            cores: 2.0,
        };
        let flags = [
            "wscbench",
            "run",
            "--server",
            "profile-b/go",
            "--scenario",
            "steady",
            "--sweep",
            "clients=10,20",
            "--seed",
            "7",
            "--budget",
            "40m",
        ];
        let Command::Run(args) = Cli::try_parse_from(flags).unwrap().command else {
            panic!("not run")
        };
        let plan = run_request::check(&args, &known).unwrap().plan;
        let opening = Opening {
            schema_version: SCHEMA_VERSION,
            run_id: "20261128-000000",
            status: RunStatus::Running,
            command: "wscbench run".into(),
            wscbench_version: "0.1.0",
            plan: &plan,
            planned_points: plan.len() as u32,
            written_points: 0,
            started_at: "2026-11-28T00:00:00Z".into(),
            written_at: "2026-11-28T00:00:00Z".into(),
        };
        let manifest = opening.manifest();
        assert_eq!((manifest.mode, manifest.repetitions), (Mode::Quick, 3));
        assert_eq!(manifest.precision_pct, Some(5.0));
        assert_eq!((manifest.budget_s, manifest.seed), (Some(2400), Some(7)));
        assert_eq!(manifest.servers, ["profile-b/go"]);
        assert_eq!(manifest.scenarios, [Scenario::Steady]);
        assert_eq!(manifest.transports, [Transport::Ws]);
        assert_eq!(
            manifest.sweep,
            std::collections::BTreeMap::from([(LoadParam::Clients, vec![10.0, 20.0])])
        );
        // Two clients values × three rounds of one server's steady.
        assert_eq!(manifest.planned_points, 6);
        assert_eq!(manifest.curve_steps, None);
    }

    #[test]
    fn a_planned_round_reads_as_its_place_and_an_added_one_says_why_it_runs() {
        assert_eq!(round_name(2, 3), "round 2 of 3");
        assert_eq!(round_name(3, 3), "round 3 of 3");
        assert_eq!(round_name(4, 3), "round 4 (added for precision)");
    }
}
