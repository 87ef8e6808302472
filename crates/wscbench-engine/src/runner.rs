//! The runner: one run per server × scenario. Start the server under limits, verify it,
//! drive k6, sample both containers every second, read the server's counters, stop,
//! and write the result file at once. It reports progress through a callback and never prints.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt;
use tokio::sync::watch;
use wscbench_results::{
    Conditions, Derived, ErrorCounts, Outcome, RunResult, SCHEMA_VERSION, Sample, ServerIdentity,
    ServerStats, Usage as UsageSummary,
};

use crate::catalog::{Mode, Server, scenario_seconds};
use crate::docker::{RUN_LABEL, nano_cpus};
use crate::engine::{ContainerSpec, Engine, Usage};
use crate::images::Image;
use crate::verify::{self, Target};
use crate::{k6, local};

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
}

/// How much verification each fresh server container gets before it is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VerifyLevel {
    /// The sub-second checks ([`verify::QUICK_CHECKS`]).
    #[default]
    Quick,
    /// Every check (adds about 12 s per run).
    Full,
    /// None: only `/health`.
    Off,
}

/// A server to run, with its image.
#[derive(Debug, Clone)]
pub struct PlannedServer {
    /// From the manifest.
    pub server: Server,
    /// Built or reused.
    pub image: Image,
}

/// Everything one `wscbench run` does.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The run id (also the results subdirectory).
    pub run_id: String,
    /// Servers, in order.
    pub servers: Vec<PlannedServer>,
    /// Scenario names, in order.
    pub scenarios: Vec<String>,
    /// Timing mode.
    pub mode: Mode,
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
}

impl Plan {
    /// Number of server × scenario runs.
    pub fn len(&self) -> usize {
        self.servers.len() * self.scenarios.len()
    }

    /// True when there is nothing to run.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The scenario time of the whole plan, without overheads.
    pub fn scenario_time(&self) -> Duration {
        Duration::from_secs(
            self.servers.len() as u64
                * self
                    .scenarios
                    .iter()
                    .map(|s| scenario_seconds(s, self.mode))
                    .sum::<u64>(),
        )
    }
}

/// What the runner is doing, for a progress display.
#[derive(Debug)]
pub enum Progress<'a> {
    /// A run begins.
    Starting {
        index: usize,
        total: usize,
        server: &'a str,
        scenario: &'a str,
        expected: Duration,
    },
    /// A phase within the run: "starting server", "verifying", "load", "stopping".
    Phase(&'static str),
    /// One second of load.
    Tick {
        elapsed: Duration,
        expected: Duration,
        sample: &'a Sample,
        deliveries_per_s: Option<f64>,
    },
    /// A run ended and its result was written.
    Finished {
        result: &'a RunResult,
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

/// Where a result of `server_id` × `scenario` is written under the run directory.
pub fn result_path(results_dir: &Path, server_id: &str, scenario: &str) -> PathBuf {
    results_dir.join(server_id).join(format!("{scenario}.json"))
}

/// Writes a result atomically (temporary file, then rename).
pub fn write_result(path: &Path, result: &RunResult) -> Result<(), WriteError> {
    let err = |source| WriteError {
        path: path.to_owned(),
        source,
    };
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).map_err(err)?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, result.to_json()).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// Runs every server × scenario of the plan in order, writing each result as it ends.
/// Stops early (after cleaning up) when `cancel` turns true; the interrupted run is recorded.
pub async fn execute<E: Engine>(
    engine: &E,
    plan: &Plan,
    cancel: watch::Receiver<bool>,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Result<Vec<RunResult>, WriteError> {
    let mut results = Vec::new();
    let total = plan.len();
    let mut index = 0;
    for planned in &plan.servers {
        for scenario in &plan.scenarios {
            if *cancel.borrow() {
                return Ok(results);
            }
            index += 1;
            let expected = Duration::from_secs(scenario_seconds(scenario, plan.mode));
            on(Progress::Starting {
                index,
                total,
                server: &planned.server.id,
                scenario,
                expected,
            });
            let result = run_one(engine, plan, planned, scenario, cancel.clone(), on).await;
            let path = result_path(&plan.results_dir, &planned.server.id, scenario);
            write_result(&path, &result)?;
            on(Progress::Finished {
                result: &result,
                path: &path,
            });
            let interrupted = result.outcome == Outcome::Interrupted;
            results.push(result);
            if interrupted {
                return Ok(results);
            }
        }
    }
    Ok(results)
}

/// The containers of one run; removed whatever happens.
struct Containers<'e, E: Engine> {
    engine: &'e E,
    ids: Vec<String>,
}

impl<E: Engine> Containers<'_, E> {
    async fn remove_all(&mut self) {
        for id in self.ids.drain(..) {
            let _ = self.engine.remove(&id).await;
        }
    }
}

/// How the load phase ended.
enum LoadEnd {
    K6Exited(Option<i64>),
    ServerDied { oom: bool, exit_code: Option<i64> },
    Cancelled,
    TimedOut,
}

async fn run_one<E: Engine>(
    engine: &E,
    plan: &Plan,
    planned: &PlannedServer,
    scenario: &str,
    mut cancel: watch::Receiver<bool>,
    on: &mut (dyn FnMut(Progress<'_>) + Send),
) -> RunResult {
    let started_at = SystemTime::now();
    let clock = Instant::now();
    let server = &planned.server;
    let mut result = empty_result(plan, planned, scenario, started_at);
    let mut containers = Containers {
        engine,
        ids: Vec::new(),
    };
    let labels = |role: &str| {
        HashMap::from([
            (RUN_LABEL.to_string(), plan.run_id.clone()),
            ("wscbench.role".to_string(), role.to_string()),
            ("wscbench.server".to_string(), server.id.clone()),
            ("wscbench.scenario".to_string(), scenario.to_string()),
        ])
    };
    let finish = |mut result: RunResult, outcome: Outcome, detail: Option<String>| {
        result.outcome = outcome;
        result.outcome_detail = detail;
        result
    };

    // 1. The server, under the limits.
    on(Progress::Phase("starting server"));
    let port = match local::free_port() {
        Ok(port) => port,
        Err(e) => return finish(result, Outcome::ServerCrashed, Some(e.to_string())),
    };
    let spec = ContainerSpec {
        name: format!("wscbench-{}-{}-{}", plan.run_id, server.tag, scenario),
        image: planned.image.tag.clone(),
        cmd: ["--host", "127.0.0.1", "--port", &port.to_string()]
            .map(String::from)
            .to_vec(),
        labels: labels("server"),
        nano_cpus: Some(nano_cpus(plan.limits.cpus)),
        memory_bytes: Some(plan.limits.memory_bytes as i64),
        cpuset: plan.limits.cpuset_server.clone(),
        ..Default::default()
    };
    let server_id = match engine.start(&spec).await {
        Ok(id) => id,
        Err(e) => {
            return finish(
                result,
                Outcome::ServerCrashed,
                Some(format!("could not start: {e}")),
            );
        }
    };
    containers.ids.push(server_id.clone());
    let target = Target::loopback(port);

    // 2. Health, then the protocol.
    if let Err((outcome, detail)) = wait_healthy(engine, &server_id, &target, &mut cancel).await {
        containers.remove_all().await;
        result.overhead_ms = clock.elapsed().as_millis() as u64;
        return finish(result, outcome, Some(detail));
    }
    if plan.verify != VerifyLevel::Off {
        on(Progress::Phase("verifying"));
        let only: Vec<String> = match plan.verify {
            VerifyLevel::Quick => verify::QUICK_CHECKS.iter().map(|s| s.to_string()).collect(),
            _ => Vec::new(),
        };
        let report = verify::verify(&target, &only, |_| {}).await;
        if !report.passed() {
            let detail = report
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| format!("{}: {}", c.name, c.detail))
                .collect::<Vec<_>>()
                .join("; ");
            containers.remove_all().await;
            result.overhead_ms = clock.elapsed().as_millis() as u64;
            return finish(result, Outcome::VerifyFailed, Some(detail));
        }
    }

    // 3. k6.
    let baseline = verify::read_stats_quiet(&target).await;
    let out_dir = plan.results_dir.join("raw").join(&server.id).join(scenario);
    let _ = std::fs::remove_dir_all(&out_dir);
    if let Err(e) = std::fs::create_dir_all(&out_dir) {
        containers.remove_all().await;
        return finish(
            result,
            Outcome::LoadgenFailed,
            Some(format!("creating {}: {e}", out_dir.display())),
        );
    }
    let k6_spec = ContainerSpec {
        name: format!("wscbench-{}-{}-{}-k6", plan.run_id, server.tag, scenario),
        image: plan.k6_image.clone(),
        // --no-usage-report: k6 otherwise reports usage to the internet after every run, and
        // every byte of a benchmark stays on loopback.
        cmd: ["run", "--quiet", "--no-color", "--no-usage-report"]
            .map(String::from)
            .into_iter()
            .chain([format!("/scenarios/{scenario}.js")])
            .collect(),
        env: vec![
            "K6_NO_USAGE_REPORT=true".into(),
            format!("WS_URL={}", target.ws_url),
            format!("MODE={}", plan.mode.as_str()),
            "SUMMARY_PATH=/out/summary.json".into(),
        ],
        binds: vec![
            format!("{}:/scenarios:ro", plan.scenarios_dir.display()),
            format!("{}:/out", absolute(&out_dir).display()),
        ],
        labels: labels("loadgen"),
        cpuset: plan.limits.cpuset_loadgen.clone(),
        ..Default::default()
    };
    on(Progress::Phase("load"));
    let load_started = Instant::now();
    let k6_id = match engine.start(&k6_spec).await {
        Ok(id) => id,
        Err(e) => {
            containers.remove_all().await;
            return finish(
                result,
                Outcome::LoadgenFailed,
                Some(format!("could not start k6: {e}")),
            );
        }
    };
    containers.ids.push(k6_id.clone());

    // 4. Sample both containers every second until k6 ends.
    let expected = Duration::from_secs(scenario_seconds(scenario, plan.mode));
    let (server_usage, _server_task) = latest(engine.usage(&server_id));
    let (loadgen_usage, _loadgen_task) = latest(engine.usage(&k6_id));
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    let mut last_deliveries: Option<(u64, Instant)> = None;
    let end = loop {
        tokio::select! {
            _ = tick.tick() => {}
            // A dropped sender disables this branch rather than spinning the loop.
            Ok(()) = cancel.changed() => {}
        }
        if *cancel.borrow() {
            break LoadEnd::Cancelled;
        }
        let stats = verify::read_stats_quiet(&target).await;
        let (s, l) = (*server_usage.borrow(), *loadgen_usage.borrow());
        let sample = Sample {
            t_ms: load_started.elapsed().as_millis() as u64,
            server_cpu_percent: s.cpu_percent,
            server_mem_bytes: s.mem_bytes,
            loadgen_cpu_percent: l.cpu_percent,
            loadgen_mem_bytes: l.mem_bytes,
            connections: stats.as_ref().map(|s| s.connections_current),
            deliveries: stats.as_ref().map(|s| s.deliveries),
        };
        let now = Instant::now();
        let rate = match (stats.as_ref(), last_deliveries) {
            (Some(st), Some((prev, at))) => Some(
                st.deliveries.saturating_sub(prev) as f64 / now.duration_since(at).as_secs_f64(),
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

        match engine.state(&server_id).await {
            Ok(state) if !state.running => {
                break LoadEnd::ServerDied {
                    oom: state.oom_killed,
                    exit_code: state.exit_code,
                };
            }
            _ => {}
        }
        match engine.state(&k6_id).await {
            Ok(state) if !state.running => break LoadEnd::K6Exited(state.exit_code),
            _ => {}
        }
        if load_started.elapsed() > expected + Duration::from_secs(90) {
            break LoadEnd::TimedOut;
        }
    };
    result.duration_ms = load_started.elapsed().as_millis() as u64;

    // 5. The server's counters over the load window.
    let end_stats = verify::read_stats_quiet(&target).await;
    if let (Some(end), Some(base)) = (&end_stats, &baseline) {
        result.server_stats = Some(window(base, end));
    }

    // 6. Stop (SIGTERM) and remove.
    on(Progress::Phase("stopping"));
    let _ = engine.stop(&k6_id, Duration::from_secs(1)).await;
    let server_state_before_stop = engine.state(&server_id).await.ok();
    let _ = engine.stop(&server_id, Duration::from_secs(2)).await;
    let k6_logs = engine.logs(&k6_id, 15).await.unwrap_or_default();
    containers.remove_all().await;

    let summary = std::fs::read_to_string(out_dir.join("summary.json"))
        .ok()
        .map(|text| k6::parse_summary(&text));
    if let Some(Ok(summary)) = &summary {
        result.k6 = Some(summary.metrics.clone());
        result.errors = summary.errors.clone();
    }
    let (outcome, detail) = match end {
        LoadEnd::Cancelled => (
            Outcome::Interrupted,
            Some("interrupted by the user".to_string()),
        ),
        LoadEnd::ServerDied { oom: true, .. } => (
            Outcome::OomKilled,
            Some("the server was killed for exceeding its memory limit".into()),
        ),
        LoadEnd::ServerDied { exit_code, .. } => (
            Outcome::ServerCrashed,
            Some(format!(
                "the server exited with {exit_code:?} during the load"
            )),
        ),
        LoadEnd::TimedOut => (
            Outcome::LoadgenFailed,
            Some(format!(
                "k6 did not finish within {} s",
                expected.as_secs() + 90
            )),
        ),
        LoadEnd::K6Exited(code) => match (&summary, code) {
            (Some(Ok(_)), Some(0) | Some(k6::THRESHOLDS_CROSSED)) => (Outcome::Ok, None),
            (Some(Ok(_)), code) => {
                result.errors.script_errors += 1;
                (
                    Outcome::LoadgenFailed,
                    Some(format!(
                        "k6 exited with {code:?}: {}",
                        last_lines(&k6_logs, 3)
                    )),
                )
            }
            (Some(Err(e)), _) => (Outcome::LoadgenFailed, Some(e.to_string())),
            (None, code) => (
                Outcome::LoadgenFailed,
                Some(format!(
                    "k6 exited with {code:?} and wrote no summary: {}",
                    last_lines(&k6_logs, 3)
                )),
            ),
        },
    };
    // A server that died after k6's last sample is still a dead server.
    let outcome = match (outcome, server_state_before_stop) {
        (Outcome::Ok, Some(state)) if !state.running && state.oom_killed => Outcome::OomKilled,
        (Outcome::Ok, Some(state)) if !state.running => Outcome::ServerCrashed,
        (outcome, _) => outcome,
    };
    derive(&mut result, plan);
    result.overhead_ms = (clock.elapsed().as_millis() as u64).saturating_sub(result.duration_ms);
    finish(result, outcome, detail)
}

async fn wait_healthy<E: Engine>(
    engine: &E,
    id: &str,
    target: &Target,
    cancel: &mut watch::Receiver<bool>,
) -> Result<(), (Outcome, String)> {
    let gone = async || {
        if *cancel.borrow() {
            return Some((Outcome::Interrupted, "interrupted by the user".to_string()));
        }
        let state = engine.state(id).await.ok().filter(|state| !state.running)?;
        let outcome = if state.oom_killed {
            Outcome::OomKilled
        } else {
            Outcome::ServerCrashed
        };
        let logs = engine.logs(id, 5).await.unwrap_or_default();
        let detail = format!(
            "exited with {:?} before answering /health: {}",
            state.exit_code,
            last_lines(&logs, 3)
        );
        Some((outcome, detail))
    };
    crate::http::wait_healthy(&target.addr, Duration::from_secs(10), gone)
        .await
        .map_err(|not| match not {
            crate::http::NotHealthy::Gone(why) => why,
            crate::http::NotHealthy::TimedOut => (
                Outcome::VerifyFailed,
                "health: /health did not answer 200 within 10 s".into(),
            ),
        })
}

/// Follows a usage stream, keeping only its latest sample.
fn latest(mut stream: crate::engine::UsageStream) -> (watch::Receiver<Usage>, AbortOnDrop) {
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

/// Counters over the load window: end minus start; uptime and current connections as at the end.
fn window(start: &ServerStats, end: &ServerStats) -> ServerStats {
    ServerStats {
        server: end.server.clone(),
        uptime_ms: end.uptime_ms,
        connections_current: end.connections_current,
        connections_total: end
            .connections_total
            .saturating_sub(start.connections_total),
        joins: end.joins.saturating_sub(start.joins),
        frames_in: end.frames_in.saturating_sub(start.frames_in),
        chat_in: end.chat_in.saturating_sub(start.chat_in),
        chat_accepted: end.chat_accepted.saturating_sub(start.chat_accepted),
        deliveries: end.deliveries.saturating_sub(start.deliveries),
        dropped_ratelimit: end
            .dropped_ratelimit
            .saturating_sub(start.dropped_ratelimit),
        dropped_slow: end.dropped_slow.saturating_sub(start.dropped_slow),
        malformed: end.malformed.saturating_sub(start.malformed),
    }
}

/// Share of the load generator's CPU ceiling above which it counts as saturated.
const SATURATED: f64 = 0.9;
/// k6 must receive at least this share of what the server delivered.
const RECEIVED_SHARE: f64 = 0.9;

/// Throughput, rates, resource peaks and means, and the load-generator verdict.
pub fn derive(result: &mut RunResult, plan: &Plan) {
    let seconds = (result.duration_ms as f64 / 1000.0).max(0.001);
    let cores = plan.conditions.machine_cores.max(1) as f64;
    let server_ceiling = cpuset_cores(plan.limits.cpuset_server.as_deref())
        .unwrap_or(cores)
        .min(plan.limits.cpus)
        * 100.0;
    let loadgen_ceiling =
        cpuset_cores(plan.limits.cpuset_loadgen.as_deref()).unwrap_or(cores) * 100.0;
    let usage = |cpu: &dyn Fn(&Sample) -> f64, mem: &dyn Fn(&Sample) -> u64, ceiling: f64| {
        // Docker's first stats sample has no previous CPU reading; leave it out of the mean.
        let measured: Vec<&Sample> = result.series.iter().skip(1).collect();
        UsageSummary {
            peak_cpu_percent: result.series.iter().map(cpu).fold(0.0, f64::max),
            mean_cpu_percent: if measured.is_empty() {
                0.0
            } else {
                measured.iter().map(|s| cpu(s)).sum::<f64>() / measured.len() as f64
            },
            peak_mem_bytes: result.series.iter().map(mem).max().unwrap_or(0),
            cpu_limit_percent: ceiling,
            cpu_seconds: cpu_seconds(&result.series, cpu),
        }
    };
    let server = usage(
        &|s| s.server_cpu_percent,
        &|s| s.server_mem_bytes,
        server_ceiling,
    );
    let loadgen = usage(
        &|s| s.loadgen_cpu_percent,
        &|s| s.loadgen_mem_bytes,
        loadgen_ceiling,
    );
    let stats = result.server_stats.clone().unwrap_or_default();
    result.derived = Derived {
        throughput_msgs_per_s: stats.chat_accepted as f64 / seconds,
        deliveries_per_s: stats.deliveries as f64 / seconds,
        drop_rate_ratio: if stats.chat_in == 0 {
            0.0
        } else {
            stats.dropped_ratelimit as f64 / stats.chat_in as f64
        },
        received_ratio: None,
        deliveries_per_server_cpu_s: None,
        server,
        loadgen,
    };

    let mut reasons = Vec::new();
    let received = result.k6.as_ref().map_or(0, |k| k.chat_received);
    if stats.deliveries >= 100 && (received as f64) < RECEIVED_SHARE * stats.deliveries as f64 {
        reasons.push(format!(
            "k6 received {received} chats of the {} the server wrote ({:.0}%)",
            stats.deliveries,
            100.0 * received as f64 / stats.deliveries as f64
        ));
    }
    if let Some(k6) = &result.k6 {
        let cut_off = k6.sessions.saturating_sub(k6.sessions_closed);
        if cut_off > 0 {
            reasons.push(format!(
                "k6 cut off {cut_off} of {} sessions it could not finish in time",
                k6.sessions
            ));
        }
    }
    if stats.dropped_slow > 0 && stats.dropped_slow * 100 >= stats.deliveries.max(1) {
        reasons.push(format!(
            "the server dropped {} messages for clients that did not read in time (every client is k6)",
            stats.dropped_slow
        ));
    }
    let busy = result
        .series
        .iter()
        .skip(1)
        .filter(|s| s.loadgen_cpu_percent >= SATURATED * loadgen_ceiling)
        .count();
    let machine_busy = result
        .series
        .iter()
        .skip(1)
        .filter(|s| s.loadgen_cpu_percent + s.server_cpu_percent >= SATURATED * cores * 100.0)
        .count();
    let measured = result.series.len().saturating_sub(1).max(1);
    if busy * 5 >= measured && busy >= 2 {
        reasons.push(format!(
            "k6 CPU at ≥{:.0}% of its {loadgen_ceiling:.0}% ceiling for {busy} of {measured} s",
            SATURATED * 100.0
        ));
    } else if machine_busy * 5 >= measured && machine_busy >= 2 {
        reasons.push(format!(
            "the machine's {cores:.0} cores were saturated (k6 + server ≥{:.0}%) for {machine_busy} of {measured} s: k6 competed with the server for CPU",
            SATURATED * cores * 100.0
        ));
    }
    result.loadgen_bound = !reasons.is_empty();
    result.loadgen_bound_reasons = reasons
        .into_iter()
        .map(|text| wscbench_results::BoundReason::Legacy { text })
        .collect();
}

/// CPU time over a series of per-second percentages: each sample's percentage times the
/// time since the previous sample.
fn cpu_seconds(series: &[Sample], cpu: &dyn Fn(&Sample) -> f64) -> f64 {
    series
        .windows(2)
        .map(|w| cpu(&w[1]) / 100.0 * (w[1].t_ms.saturating_sub(w[0].t_ms)) as f64 / 1000.0)
        .sum()
}

/// Number of cores in a cpuset such as `0-1,3`.
fn cpuset_cores(cpuset: Option<&str>) -> Option<f64> {
    let mut count = 0u32;
    for part in cpuset?.split(',').filter(|p| !p.trim().is_empty()) {
        match part.trim().split_once('-') {
            Some((a, b)) => {
                count += b.parse::<u32>().ok()?.checked_sub(a.parse::<u32>().ok()?)? + 1
            }
            None => {
                part.trim().parse::<u32>().ok()?;
                count += 1;
            }
        }
    }
    (count > 0).then_some(count as f64)
}

fn empty_result(
    plan: &Plan,
    planned: &PlannedServer,
    scenario: &str,
    started_at: SystemTime,
) -> RunResult {
    let server = &planned.server;
    RunResult {
        schema_version: SCHEMA_VERSION,
        run_id: plan.run_id.clone(),
        server: ServerIdentity {
            id: server.id.clone(),
            image: server.tag.clone(),
            language: server.language.clone(),
            profile: server.profile.clone(),
            framework: server.framework.clone(),
            source_hash: planned.image.source_hash.clone(),
            binary_size_bytes: Some(planned.image.binary_size_bytes).filter(|n| *n > 0),
            image_size_bytes: Some(planned.image.image_size_bytes).filter(|n| *n > 0),
        },
        scenario: scenario.parse().expect("planned scenarios are known"),
        mode: plan.mode.as_str().parse().expect("modes are known"),
        conditions: plan.conditions.clone(),
        started_at: humantime::format_rfc3339_millis(started_at).to_string(),
        duration_ms: 0,
        overhead_ms: 0,
        outcome: Outcome::Ok,
        outcome_detail: None,
        server_stats: None,
        k6: None,
        errors: ErrorCounts::default(),
        derived: Derived::default(),
        loadgen_bound: false,
        loadgen_bound_reasons: Vec::new(),
        variant: None,
        load_params: Default::default(),
        repetition: Default::default(),
        load_path: Default::default(),
        series: Vec::new(),
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// A run id from the current time, `YYYYMMDD-HHMMSS` (UTC).
pub fn new_run_id() -> String {
    let stamp = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    stamp
        .trim_end_matches('Z')
        .replace(['-', ':'], "")
        .replace('T', "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpusets_count_their_cores() {
        assert_eq!(cpuset_cores(Some("0")), Some(1.0));
        assert_eq!(cpuset_cores(Some("0-1")), Some(2.0));
        assert_eq!(cpuset_cores(Some("0-1,3")), Some(3.0));
        assert_eq!(cpuset_cores(Some("x")), None);
        assert_eq!(cpuset_cores(None), None);
    }

    #[test]
    fn run_ids_are_sortable_timestamps() {
        let id = new_run_id();
        assert_eq!(id.len(), 15, "{id}");
        assert_eq!(&id[8..9], "-");
    }
}
