//! `wscbench run`'s command line, parsed and checked once and as a whole (ripgrep's `LowArgs`
//! → `HiArgs`): what clap parsed ([`RunArgs`]) and what is [`Known`] become a [`RunRequest`]
//! — the engine's `Plan`, which the runner executes and `run.json` records, and how the
//! binary stores and shows it — or one [`UsageError`]. Every refusal of `run` is raised here,
//! before the results folder, any build or any engine; clap refuses single values that do
//! not parse. [`check`] is the one function that reads [`RunArgs`].
//!
//! A new flag becomes a field of the plan (or of [`RunRequest`]) in [`check`], and adds its
//! refusals to [`refusals`] (a combination of flags) or a step of [`check`] (a check that
//! needs the servers, the scenarios or the plan's size).

use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::{Path, PathBuf};

use clap::Args;
use wscbench_engine::catalog::{self, Server};
use wscbench_engine::load::loadgen_capacity::Saved;
use wscbench_engine::load::sweep::Sweep;
use wscbench_engine::load::{host_limits, scenarios};
use wscbench_engine::runner::rounds::{self, Adaptive};
use wscbench_engine::runner::{
    External, Limits, LoadgenEngine, Plan, PlannedServer, Setup, VerifyLevel,
};
use wscbench_engine::verify::Target;
use wscbench_results::UsageSource;
use wscbench_results::{LoadPath, Mode, NotOffered, Scenario, Transport};

use crate::args::{SelectArgs, one_of, parse_bytes, parse_format, transports_asked};
use crate::errors::{ExpectedError, UsageError};

/// `wscbench run`'s command line as clap parses it: read once, by [`RunRequest::check`].
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Benchmark a server wscbench did not start, at this URL (ws://HOST:PORT/ws): every
    /// check of `verify --url` first (a failed one is named and nothing is benchmarked), then
    /// every scenario as usual. Its results are marked external and rank in a table of
    /// their own, never against the managed servers. Needs --name; see docs/external.md
    #[arg(
        long,
        value_name = "URL",
        requires = "name",
        conflicts_with_all = [
            "servers", "profiles", "langs", "groups", "variants", "cpus", "memory", "cpuset_server",
            "pause_server", "server_address", "rebuild",
        ]
    )]
    pub url: Option<String>,
    /// With --url: the server's name in results and tables, e.g. local-go (lower-case
    /// letters, digits, '-', '_' and '.', at most 40)
    #[arg(long, value_name = "NAME", requires = "url")]
    pub name: Option<String>,
    /// With --url: the server's CPU and memory from this container's stats, read through
    /// the engine as a managed server's (it is never stopped nor removed)
    #[arg(
        long,
        value_name = "NAME_OR_ID",
        requires = "url",
        conflicts_with = "pid"
    )]
    pub container: Option<String>,
    /// With --url: the server's CPU (/proc/PID/stat) and resident memory (VmRSS) from this
    /// process; one that exits during a load is recorded as a crash. Without --pid or
    /// --container the server's CPU and memory are absent from the results
    #[arg(long, value_name = "PID", requires = "url")]
    pub pid: Option<u32>,
    /// Only this scenario (repeatable) [default: population (users in rooms of 50 that ping
    /// every 25 s, chat once a minute and churn 1 % a minute, in three levels: memory and CPU
    /// per user), load-curve, burst, churn; steady, saturation, capacity,
    /// idle-capacity, fanout and slow-consumers run only when named: capacity steps chatting
    /// clients until latency p95 passes --slo-p95-ms, at most 4 min a server; idle-capacity
    /// steps idle clients until the server's memory nears its limit or connects fail;
    /// fanout splits the clients into rooms of room-size with the same deliveries asked for
    /// every size (sweep it: --sweep room-size=2,10,100,1000); slow-consumers stops a share
    /// of one room's clients from reading for a while and measures the healthy ones'
    /// latency, the recovery and the memory per slow client]
    #[arg(long = "scenario", value_name = "NAME", value_parser = one_of(Scenario::ALL, Scenario::as_str))]
    pub scenarios: Vec<Scenario>,
    /// Reach the servers over these transports, each a point of its own (comma list or
    /// repeated): ws, wss (TLS with a certificate made for the run), ws+deflate, wss+deflate
    /// (permessage-deflate). A server named with --server must offer every one; a server
    /// selected otherwise that does not gets a "not offered" cell with its manifest's reason
    /// (see list and docs/transports.md). Native load path only [default: ws]
    #[arg(long = "transport", value_name = "LIST", value_delimiter = ',', value_parser = one_of(Transport::ALL, Transport::as_str))]
    pub transports: Vec<Transport>,
    /// Run this variant of each selected server that declares it (server.toml
    /// [variants.NAME]: extra args and env, same image) as a row of its own, ID@NAME
    /// (repeatable); `default` is the plain server, `all` the plain server and every
    /// variant (see list --variants) [default: the plain server only]
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// Run each scenario once per value of a load parameter, each its own result:
    /// clients=100,200,500 (clients held), rate=1,2,5 (chats/s per client),
    /// room-size=2,10,100 (clients per fanout room, whole, at least 2, at most the clients)
    /// or slow-share=0.05,0.2 (share of slow-consumers' clients that are slow, between 0 and
    /// 1); two --sweep flags run their product. steady and saturation take clients and rate,
    /// burst and churn clients, fanout clients and room-size, slow-consumers clients and
    /// slow-share, load-curve deliveries (deliveries/s offered); population users (its full
    /// level; host limits permitting, about 19,000 here), room-size, ping-s and chat-s
    /// (seconds between one user's pings and chats) and churn (percent of users leaving and
    /// joining again a minute, 0 to 100)
    #[arg(long = "sweep", value_name = "KEY=V1,V2,...", value_parser = parse_sweep)]
    pub sweep: Vec<wscbench_engine::load::sweep::SweepKey>,
    /// Refuse, before building anything, a run whose estimated length (its scenarios plus
    /// about 5 s per point) exceeds this, e.g. 30m, 4h
    #[arg(long, default_value = "2h", value_name = "DURATION", value_parser = parse_duration)]
    pub max_duration: std::time::Duration,
    /// smoke: each scenario ≤10 s with a tenth of the clients; quick: the benchmark's timings
    /// (about 4 min per server); soak: steady 300 s and churn 180 s (or --duration), with
    /// soak KPIs (memory slope, throughput and latency drift, errors, drops)
    #[arg(long, default_value = "quick", value_parser = one_of(Mode::ALL, Mode::as_str))]
    pub mode: Mode,
    /// With --mode soak: how long steady and churn run, e.g. 30m, 1h, 600s
    #[arg(long, value_name = "DURATION", value_parser = parse_soak_duration)]
    pub duration: Option<u64>,
    /// The capacity scenario's latency target: a step holds while chat latency p95 stays
    /// under it, in ms
    #[arg(long = "slo-p95-ms", default_value_t = 50.0, value_name = "MS", value_parser = parse_slo)]
    pub slo_p95_ms: f64,
    /// The load curve's latency target: a step is carried while chat latency p99 (from each
    /// chat's intended time) stays within it and 99 % of the offered deliveries arrive; a
    /// server's capacity is its highest step carried, in ms
    #[arg(long = "slo-p99-ms", default_value_t = wscbench_results::curve::DEFAULT_SLO_P99_MS, value_name = "MS", value_parser = parse_slo)]
    pub slo_p99_ms: f64,
    /// The load generator's client loop: native (the k6/x/chat extension: Go clients,
    /// aggregated metrics, a full latency histogram) or js (k6/websockets, one JS callback and
    /// one metric sample per message, so k6 runs out of CPU far sooner; loadgen-capacity
    /// measures both)
    #[arg(long, default_value = "native", value_parser = one_of(LoadPath::ALL, LoadPath::as_str))]
    pub loadgen: LoadPath,
    /// The rounds every point gets at least: each round runs every server × scenario once,
    /// in an order shuffled from --seed, each its own result; where rounds are added
    /// (--max-rounds above --runs) the load curve's levels get at least 5 [default: 3 in
    /// quick mode, else 1]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: Option<u32>,
    /// After the first --runs rounds, add rounds only to points whose headline figures' 95 %
    /// interval is wider than PCT % of the mean (twice that for latency) and whose ranking
    /// against a neighbour is still undecided
    #[arg(long, default_value_t = 5.0, value_name = "PCT", value_parser = parse_precision)]
    pub precision: f64,
    /// The time the rounds may take; added rounds stop when the next point would not fit,
    /// and a budget too small for the first --runs rounds is refused [default: 30m in quick
    /// mode, else none]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub budget: Option<std::time::Duration>,
    /// The most rounds any point gets [default: 10 in quick mode, else --runs: no rounds
    /// added for precision]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_rounds: Option<u32>,
    /// The seed of every round's shuffled order, to repeat a run's order [default: from the
    /// clock, recorded in run.json]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Skip the machine-speed calibration (about 2 s) at the start of each round
    #[arg(long)]
    pub no_calibration: bool,
    /// Fault injection: freeze the server container (docker pause) for PAUSE at the end of
    /// every EVERY of each load, e.g. 1s/5s; recorded in every result's conditions
    #[arg(long, value_name = "PAUSE/EVERY")]
    pub pause_server: Option<wscbench_engine::runner::PauseServer>,
    /// CPU limit of each server container, in CPUs
    #[arg(long, default_value_t = 2.0, value_parser = parse_cpus)]
    pub cpus: f64,
    /// Memory limit of each server container, e.g. 512m, 1g (swap is disabled)
    #[arg(long, default_value = "512m", value_parser = parse_bytes)]
    pub memory: u64,
    /// Memory limit of the k6 container; a k6 that reaches it is recorded as loadgen_failed
    /// instead of pushing the machine into swap (the js path queues inbound frames without bound)
    #[arg(long, default_value = "6g", value_parser = parse_bytes)]
    pub loadgen_memory: u64,
    /// Pin each server container to these cores, e.g. 1 or 0-1
    #[arg(long, value_name = "CPUS")]
    pub cpuset_server: Option<String>,
    /// Pin the k6 container to these cores, e.g. 0
    #[arg(long, value_name = "CPUS")]
    pub cpuset_loadgen: Option<String>,
    /// Run a load generator on this Docker engine (repeatable), given as DOCKER_HOST is:
    /// unix:///path/to/docker.sock or tcp://host:port. Two or more split every scenario over
    /// one k6 each with execution segments, started together, their results merged
    /// [default: one k6 on the server's engine]
    #[arg(long = "loadgen-engine", value_name = "URL", value_parser = parse_engine_url)]
    pub loadgen_engines: Vec<String>,
    /// The server's address as the load generators reach it (its host's IP or name); the
    /// server then listens on every interface [default: 127.0.0.1, every engine on one host]
    #[arg(long, value_name = "HOST")]
    pub server_address: Option<String>,
    /// How much protocol verification each fresh server container gets before its load
    #[arg(long, default_value = "quick", value_parser = one_of(VerifyLevel::ALL, VerifyLevel::as_str))]
    pub verify: VerifyLevel,
    /// Where runs are stored (a run goes to DIR/<run-id>/)
    #[arg(long, default_value = "results", value_name = "DIR")]
    pub results: PathBuf,
    /// Rebuild images even when their sources have not changed
    #[arg(long)]
    pub rebuild: bool,
    /// Format of the tables printed at the end: terminal, markdown or json
    #[arg(long, default_value = "terminal", value_parser = parse_format)]
    pub format: wscbench_report::Format,
    /// Print every column of the terminal tables and the Summary table, however wide [default: headline columns and the scorecards, 120 wide]
    #[arg(long)]
    pub wide: bool,
}

/// `unix:///path` or `tcp://host:port`, as DOCKER_HOST takes them.
fn parse_engine_url(text: &str) -> Result<String, String> {
    let ok = match text.split_once("://") {
        Some(("unix", path)) => path.starts_with('/'),
        Some(("tcp", address)) => address
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok()),
        _ => false,
    };
    if ok {
        Ok(text.to_string())
    } else {
        Err(format!(
            "{text:?} is not an engine address: give unix:///path/to/docker.sock or tcp://host:port"
        ))
    }
}

fn parse_sweep(s: &str) -> Result<wscbench_engine::load::sweep::SweepKey, String> {
    s.parse()
        .map_err(|e: wscbench_engine::load::sweep::SweepError| e.to_string())
}

fn parse_precision(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!("{s:?} is not a percentage above 0 and at most 100")),
    }
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    match humantime::parse_duration(s) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(format!("{s:?} is not a duration such as 90m or 4h")),
    }
}

/// A soak length such as `30m`, `1h` or `600s`, in whole seconds from 10 s to 24 h.
fn parse_soak_duration(s: &str) -> Result<u64, String> {
    let seconds = humantime::parse_duration(s.trim())
        .map_err(|_| format!("{s:?} is not a duration such as 30m, 1h or 600s"))?
        .as_secs();
    if (10..=86_400).contains(&seconds) {
        Ok(seconds)
    } else {
        Err(format!("{s:?}: a soak runs from 10s to 24h"))
    }
}

fn parse_slo(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(n) if n > 0.0 && n <= 60_000.0 => Ok(n),
        _ => Err(format!(
            "{s:?} is not a latency target in ms such as 50 or 12.5"
        )),
    }
}

fn parse_cpus(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(n) if n > 0.0 && n <= 1024.0 => Ok(n),
        _ => Err(format!("{s:?} is not a CPU count such as 2 or 1.5")),
    }
}

/// The rounds' time budget in quick mode when `--budget` is not given.
const DEFAULT_BUDGET: std::time::Duration = std::time::Duration::from_secs(30 * 60);
/// How long each of the two calibration loops runs at the start of a round.
const CALIBRATION_EACH: std::time::Duration = std::time::Duration::from_secs(1);

/// What [`check`] reads besides the command line: the servers with a manifest, and what k6
/// was measured to receive on this host (`wscbench loadgen-capacity`, kept in the cache)
/// with its cores, which place and bound the load curve's steps.
pub struct Known {
    /// The servers with a manifest.
    pub servers: Vec<Server>,
    /// The cached `loadgen-capacity` measurement, if there is one.
    pub loadgen_capacity: Option<Saved>,
    /// This host's cores.
    pub cores: f64,
}

impl Known {
    /// The project's servers and this host's measurement and cores.
    pub fn read(root: &Path) -> Result<Known, ExpectedError> {
        Ok(Known {
            servers: super::discover(root)?,
            loadgen_capacity: super::loadgen_capacity::read_cached(),
            cores: super::loadgen_capacity::host_cores(),
        })
    }
}

/// What `run` does, as its command line asks and as checked: the one value `run` reads after
/// [`check`]; nothing after it reads [`RunArgs`]. The plan is what the runner executes and
/// `run.json` records; the rest says how the binary builds, stores and shows it.
#[derive(Debug)]
pub struct RunRequest {
    /// The plan, with its setup still empty.
    pub plan: Plan,
    /// Selected servers that declare none of the variants asked for.
    pub left_out: Vec<String>,
    /// The variants asked for (`--variant`), as given: named when a server declares none.
    pub variants: Vec<String>,
    /// Where runs are stored, as given (`--results`; relative to the project root).
    pub results: PathBuf,
    /// Rebuild images even when their sources have not changed (`--rebuild`).
    pub rebuild: bool,
    /// The format of the tables printed at the end (`--format`).
    pub format: wscbench_report::Format,
    /// How wide the terminal tables may be (`--wide`: every column).
    pub width: wscbench_report::Width,
}

/// The longest `--name`.
const NAME_MAX: usize = 40;

/// Checks `args` against what is `known`, and builds the plan: the first refusal is the
/// error. Every refusal of `run` is here or in a function it calls.
pub fn check(args: &RunArgs, known: &Known) -> Result<RunRequest, UsageError> {
    let scenarios = scenarios_of(&args.scenarios, args.loadgen);
    let soak_length = args.duration.is_some();
    let loadgens = args.loadgen_engines.len();
    if let Some((_, why)) = refusals(args.mode, args.loadgen, loadgens, soak_length, &scenarios)
        .into_iter()
        .find(|(refused, _)| *refused)
    {
        return Err(UsageError::new(why));
    }
    // The catalog, the sweep and the duration check fail only on what was asked for.
    let external = external(
        args.url.as_deref(),
        args.name.as_deref(),
        args.pid,
        args.container.as_deref(),
    )?;
    let transports = transports_asked(&args.transports);
    let (servers, left_out, not_offered) = match external {
        Some(external) => (
            vec![PlannedServer::external_server(external)],
            Vec::new(),
            external_transports(&transports)?,
        ),
        None => {
            let selected = args
                .select
                .selection()
                .apply(&known.servers)
                .map_err(usage)?;
            let (rows, left_out) =
                catalog::with_variants(&selected, &args.variants).map_err(usage)?;
            let not_offered =
                check_transports(args.loadgen, &args.select.servers, &selected, &transports)?;
            let rows = rows
                .into_iter()
                .map(|(server, variant)| PlannedServer::managed(server, variant));
            (rows.collect(), left_out, not_offered)
        }
    };
    let sweep = Sweep::new(args.sweep.clone()).map_err(usage)?;
    sweep.check(&scenarios, args.mode).map_err(usage)?;
    let (repetitions, max_rounds) = rounds_of(args.mode, args.runs, args.max_rounds)?;
    let mut plan = Plan {
        mode: args.mode,
        load_path: args.loadgen,
        repetitions,
        precision_pct: (max_rounds > repetitions).then_some(args.precision),
        adaptive: Adaptive {
            max_rounds,
            budget: args
                .budget
                .or((args.mode == Mode::Quick).then_some(DEFAULT_BUDGET)),
            seed: args.seed.unwrap_or_else(rounds::fresh_seed),
            calibrate_each: (!args.no_calibration).then_some(CALIBRATION_EACH),
        },
        servers,
        load_points: wscbench_engine::load::sweep::run_points(&sweep, &scenarios, args.mode),
        scenarios,
        transports,
        not_offered,
        sweep,
        curve_steps: None,
        soak_seconds: args.duration,
        slo_p95_ms: args.slo_p95_ms,
        slo_p99_ms: args.slo_p99_ms,
        pause_server: args.pause_server,
        limits: Limits {
            cpus: args.cpus,
            memory_bytes: args.memory,
            cpuset_server: args.cpuset_server.clone(),
            cpuset_loadgen: args.cpuset_loadgen.clone(),
            loadgen_memory_bytes: Some(args.loadgen_memory),
        },
        verify: args.verify,
        // Every run records what RFC 6455 work each row does, unless checks are off.
        conformance: args.verify != VerifyLevel::Off,
        loadgens: args
            .loadgen_engines
            .iter()
            .map(|e| loadgen_engine(e))
            .collect(),
        server_address: args.server_address.clone(),
        setup: Setup::default(),
    };
    check_host_limits(&plan)?;
    check_length(&plan, args.max_duration)?;
    let capacity = known.loadgen_capacity.as_ref();
    plan.curve_steps = super::loadgen_capacity::place_curve_steps(&mut plan, capacity, known.cores);
    super::loadgen_capacity::refuse_unreachable(&plan, capacity, known.cores)?;
    Ok(RunRequest {
        plan,
        left_out,
        variants: args.variants.clone(),
        results: args.results.clone(),
        rebuild: args.rebuild,
        format: args.format,
        width: if args.wide {
            wscbench_report::Width::Wide
        } else {
            wscbench_report::Width::Fit
        },
    })
}

/// A `--loadgen-engine` as the runner reaches it: k6's REST API on `127.0.0.1` for a
/// `unix://` engine, on the URL's host for a `tcp://` one.
fn loadgen_engine(endpoint: &str) -> LoadgenEngine {
    let api_host = endpoint
        .strip_prefix("tcp://")
        .and_then(|a| a.rsplit_once(':'))
        .map_or("127.0.0.1".to_string(), |(host, _)| host.to_string());
    LoadgenEngine {
        endpoint: endpoint.to_string(),
        api_host,
    }
}

/// Refuses a plan longer than `--max-duration`, or whose first rounds do not fit its budget.
fn check_length(plan: &Plan, max_duration: std::time::Duration) -> Result<(), UsageError> {
    let estimate = plan.check_duration(max_duration).map_err(usage)?;
    if let Some(budget) = plan.adaptive.budget.filter(|b| estimate > *b) {
        return Err(UsageError::new(format!(
            "--budget {} is too small for {} round(s) of this plan, which take about {} min; the smallest budget that works is {}m (or lower --runs, or narrow the plan)",
            humantime::format_duration(budget),
            plan.repetitions,
            estimate.as_secs().div_ceil(60),
            estimate.as_secs().div_ceil(60)
        )));
    }
    Ok(())
}

/// The rounds every point gets and the most any gets: `--runs` and `--max-rounds`, by mode
/// when not given (quick: 3, up to 10; else 1, none added).
fn rounds_of(mode: Mode, runs: Option<u32>, max: Option<u32>) -> Result<(u32, u32), UsageError> {
    let quick = mode == Mode::Quick;
    let min_rounds = runs.unwrap_or(if quick { 3 } else { 1 });
    let max_rounds = max.unwrap_or(if quick { 10 } else { min_rounds });
    if max_rounds < min_rounds {
        return Err(UsageError::new(format!(
            "--max-rounds {max_rounds} is fewer than --runs {min_rounds}"
        )));
    }
    Ok((min_rounds, max_rounds))
}

/// The scenarios asked for, or the default set; the js load path has no rooms, so its
/// default is the seed's four shapes.
fn scenarios_of(asked: &[Scenario], load_path: LoadPath) -> Vec<Scenario> {
    if asked.is_empty() {
        Scenario::DEFAULT
            .iter()
            .copied()
            .filter(|s| load_path == LoadPath::Native || !s.native_only())
            .collect()
    } else {
        asked.to_vec()
    }
}

/// Refuses an idle-capacity step or a population the machine cannot serve, before anything
/// is built or started.
fn check_host_limits(plan: &Plan) -> Result<(), UsageError> {
    let loadgens = plan.loadgens.len().max(1) as u32;
    if plan.scenarios.contains(&Scenario::Population) && plan.server_address.is_none() {
        let default = [BTreeMap::new()];
        let points = if plan.load_points.is_empty() {
            &default[..]
        } else {
            &plan.load_points
        };
        for params in points {
            let users = scenarios::PopulationShape::with_params(plan.mode, params).users;
            host_limits::for_population(users, loadgens).map_err(|e| {
                UsageError::new(format!(
                    "a population of {users} users cannot run on this machine: {e}"
                ))
            })?;
        }
    }
    if plan.scenarios.contains(&Scenario::IdleCapacity) && plan.server_address.is_none() {
        host_limits::for_idle_capacity(plan.mode, loadgens).map_err(|e| {
            UsageError::new(format!(
                "idle-capacity in {} mode cannot run on this machine: {e}",
                plan.mode
            ))
        })?;
    }
    Ok(())
}

/// The flag combinations `run` refuses: (refused, the line that says what to change), one
/// per rule, in the order they are reported.
fn refusals(
    mode: Mode,
    load_path: LoadPath,
    loadgens: usize,
    soak_length: bool,
    scenarios: &[Scenario],
) -> Vec<(bool, &'static str)> {
    vec![
        (
            loadgens > 1 && load_path == LoadPath::Js,
            "several --loadgen-engine need the native load path: only its histograms merge exactly (drop --loadgen js)",
        ),
        (
            soak_length && mode != Mode::Soak,
            "--duration sets how long a soak runs: add --mode soak",
        ),
        (
            soak_length && !scenarios.iter().any(|s| scenarios::has_soak_length(*s)),
            "--duration lengthens steady and churn only; none of them is selected",
        ),
        (
            scenarios.contains(&Scenario::Capacity) && load_path != LoadPath::Native,
            "the capacity scenario needs the native load path (its per-step histograms come from k6/x/chat): drop --loadgen js",
        ),
        (
            scenarios.iter().any(|s| {
                matches!(
                    s,
                    Scenario::Fanout | Scenario::SlowConsumers | Scenario::LoadCurve
                )
            }) && load_path != LoadPath::Native,
            "the fanout, load-curve and slow-consumers scenarios need the native load path (their rooms and slow readers are k6/x/chat's): drop --loadgen js",
        ),
    ]
}

/// The server of `--url`, checked: a `ws://` URL, a safe name, and a `--pid` that names a
/// running process. (clap has already refused `--url` beside server selection, variants or
/// limits, `--name` without it, and `--pid` with `--container`.)
fn external(
    url: Option<&str>,
    name: Option<&str>,
    pid: Option<u32>,
    container: Option<&str>,
) -> Result<Option<External>, UsageError> {
    let Some(url) = url else {
        return Ok(None);
    };
    Target::from_url(url).map_err(usage)?;
    let name = name.unwrap_or_default().to_string();
    if !is_safe_name(&name) {
        return Err(UsageError::new(format!(
            "--name {name:?} cannot name a server: use lower-case letters, digits, '-', '_' and '.', starting with a letter or digit, at most {NAME_MAX} (e.g. local-go)"
        )));
    }
    let usage_source = match (pid, container) {
        (Some(pid), _) => {
            let reading = wscbench_engine::catalog::process::read(pid)
                .map_err(|e| UsageError::new(format!("--pid {pid}: {e}")))?;
            if !reading.alive() {
                return Err(UsageError::new(format!(
                    "--pid {pid}: the process has exited"
                )));
            }
            UsageSource::Process { pid }
        }
        (None, Some(container)) => UsageSource::Container {
            container: container.to_string(),
        },
        (None, None) => UsageSource::Absent,
    };
    Ok(Some(External {
        name,
        url: url.to_string(),
        usage: usage_source,
    }))
}

/// A name that is safe in a path, a container name and a table: `[a-z0-9][a-z0-9._-]*`.
fn is_safe_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c))
        && name.len() <= NAME_MAX
}

/// A server by URL is reached over `ws://` only (docs/external.md): any other transport is
/// the caller's usage.
fn external_transports(transports: &[Transport]) -> Result<Vec<NotOffered>, UsageError> {
    match transports.iter().find(|t| !t.is_ws()) {
        Some(t) => Err(UsageError::new(format!(
            "--transport {t} with --url: a server by URL is reached over ws:// only"
        ))),
        None => Ok(Vec::new()),
    }
}

/// A server named with `--server` must offer every transport asked; servers selected by
/// profile, language or not at all leave a transport they do not offer out, as a "not
/// offered" cell, unless none of them offers it. The js load path speaks `ws` only.
fn check_transports(
    load_path: LoadPath,
    named: &[String],
    servers: &[Server],
    transports: &[Transport],
) -> Result<Vec<NotOffered>, UsageError> {
    if load_path == LoadPath::Js && transports.iter().any(|t| !t.is_ws()) {
        return Err(UsageError::new(
            "--transport other than ws needs the native load path (k6/x/chat speaks wss and permessage-deflate; k6/websockets does not): drop --loadgen js",
        ));
    }
    for server in servers.iter().filter(|s| named.contains(&s.id)) {
        server.check_transports(transports).map_err(usage)?;
    }
    let mut not_offered = Vec::new();
    for &transport in transports {
        let refusals: Vec<NotOffered> = servers
            .iter()
            .filter_map(|s| {
                s.offers(transport).err().map(|reason| NotOffered {
                    server: s.id.clone(),
                    transport,
                    reason,
                })
            })
            .collect();
        if refusals.len() == servers.len() {
            let why: Vec<String> = refusals
                .iter()
                .map(|n| format!("{} does not offer {transport}: {}", n.server, n.reason))
                .collect();
            return Err(UsageError::new(why.join("; ")));
        }
        not_offered.extend(refusals);
    }
    Ok(not_offered)
}

fn usage(err: impl Display) -> UsageError {
    UsageError::new(err.to_string())
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use wscbench_results::LoadParam;

    use super::*;
    use crate::cli::{Cli, Command};

    /// What clap itself says of a command line, when it refuses it.
    fn clap_refusal(flags: &[&str]) -> Option<String> {
        Cli::try_parse_from(["wscbench", "run"].iter().chain(flags))
            .err()
            .map(|e| e.to_string())
    }

    fn check(flags: &[&str]) -> Result<RunRequest, UsageError> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        // No measurement of k6: the load curve keeps its own steps.
        let known = Known {
            servers: crate::commands::discover(std::path::Path::new(root)).unwrap(),
            loadgen_capacity: None,
            cores: 2.0,
        };
        let cli = Cli::try_parse_from(["wscbench", "run"].iter().chain(flags)).unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        super::check(&args, &known)
    }

    #[test]
    fn a_plain_run_is_every_server_under_the_default_scenarios() {
        let request = check(&[]).unwrap();
        assert_eq!(request.plan.scenarios, Scenario::DEFAULT);
        assert_eq!(request.plan.servers.len(), 6);
        assert_eq!(request.plan.labels().len(), 6);
        assert_eq!(request.plan.servers_to_build().len(), 6);
    }

    #[test]
    fn debian_s_libwebsockets_is_a_row_with_its_own_image_beside_profile_a_zig() {
        let request = check(&[
            "--variant",
            "default",
            "--variant",
            "debian-lws",
            "--scenario",
            "saturation",
        ])
        .unwrap();
        assert!(
            request
                .plan
                .labels()
                .contains(&"profile-a/zig@debian-lws".to_string())
        );
        // Its own binary, so its own image: seven to build.
        assert_eq!(request.plan.servers_to_build().len(), 7);
        assert!(request.plan.load_points.is_empty() && request.left_out.is_empty());
    }

    #[test]
    fn variants_and_sweeps_shape_the_rows_and_points_and_each_server_is_built_once() {
        let request = check(&[
            "--server",
            "profile-b/go",
            "--server",
            "profile-b/zig",
            "--variant",
            "all",
            "--scenario",
            "steady",
            "--sweep",
            "clients=10,20",
        ])
        .unwrap();
        assert_eq!(request.plan.load_points.len(), 2);
        assert!(
            request
                .plan
                .labels()
                .contains(&"profile-b/go@gomaxprocs-1".to_string())
        );
        let built: Vec<String> = request
            .plan
            .servers_to_build()
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(built, ["profile-b/go", "profile-b/zig"]);
    }

    #[test]
    fn a_fanout_room_size_sweep_plans_one_point_per_size_and_the_room_scenarios_need_the_native_path()
     {
        let request = check(&[
            "--server",
            "profile-b/go",
            "--scenario",
            "fanout",
            "--sweep",
            "room-size=2,10,100,1000",
        ])
        .unwrap();
        assert_eq!(request.plan.scenarios, [Scenario::Fanout]);
        let sizes: Vec<f64> = request
            .plan
            .load_points
            .iter()
            .map(|p| p[&LoadParam::RoomSize])
            .collect();
        assert_eq!(sizes, [2.0, 10.0, 100.0, 1000.0]);
        // Smoke mode's 100 clients make no room of 1,000.
        let err = check(&[
            "--mode",
            "smoke",
            "--scenario",
            "fanout",
            "--sweep",
            "room-size=2,1000",
        ])
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("fanout in smoke mode has 100 clients"),
            "{err}"
        );
        let err = check(&["--loadgen", "js", "--scenario", "slow-consumers"]).unwrap_err();
        assert!(
            err.to_string().contains("need the native load path"),
            "{err}"
        );
    }

    #[test]
    fn transports_default_to_ws_and_repeat_once() {
        let request = check(&["--server", "profile-b/go"]).unwrap();
        assert_eq!(request.plan.transports, [Transport::Ws]);
        assert!(request.plan.not_offered.is_empty());
        let request = check(&[
            "--server",
            "profile-b/go",
            "--transport",
            "ws,ws",
            "--transport",
            "ws",
        ])
        .unwrap();
        assert_eq!(request.plan.transports, [Transport::Ws]);
    }

    #[test]
    fn a_transport_other_than_ws_needs_the_native_load_path() {
        let err = check(&["--loadgen", "js", "--transport", "ws,wss"]).unwrap_err();
        assert!(err.message.contains("drop --loadgen js"), "{}", err.message);
    }

    #[test]
    fn a_transport_a_named_server_does_not_offer_is_refused_with_its_reason() {
        let known = crate::commands::discover(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../.."
        )))
        .unwrap();
        // Whichever transport the first server does not offer (every server offers ws).
        let server = &known[0];
        let Some(&missing) = Transport::ALL.iter().find(|&&t| server.offers(t).is_err()) else {
            return; // it offers all four: nothing to refuse
        };
        let reason = server.offers(missing).unwrap_err();
        let err = check(&["--server", &server.id, "--transport", missing.as_str()]).unwrap_err();
        assert_eq!(
            err.message,
            format!("{} does not offer {missing}: {reason}", server.id)
        );
    }

    #[test]
    fn the_first_refused_combination_is_the_one_reported() {
        let err = check(&[
            "--loadgen",
            "js",
            "--scenario",
            "capacity",
            "--duration",
            "30m",
        ])
        .unwrap_err();
        assert_eq!(
            err.message,
            "--duration sets how long a soak runs: add --mode soak"
        );
    }

    #[test]
    fn a_url_with_a_name_is_one_external_row_with_its_usage_absent() {
        let request = check(&["--url", "ws://127.0.0.1:9/ws", "--name", "local-go"]).unwrap();
        let plan = request.plan;
        assert_eq!(plan.labels(), ["external/local-go"]);
        // One row over ws: each scenario starts once a round.
        assert_eq!(plan.round_starts().len(), plan.scenarios.len());
        let external = plan.external().unwrap();
        assert_eq!(external.name, "local-go");
        assert_eq!(external.usage, UsageSource::Absent);
        assert!(plan.servers_to_build().is_empty());
    }

    #[test]
    fn a_url_needs_a_name_and_refuses_server_selection_variants_and_limits() {
        let url = ["--url", "ws://127.0.0.1:9/ws"];
        let refused = |extra: &[&str]| {
            let flags: Vec<&str> = url.iter().chain(extra).copied().collect();
            clap_refusal(&flags).unwrap_or_else(|| panic!("{extra:?} was accepted"))
        };
        assert!(refused(&[]).contains("--name"), "{}", refused(&[]));
        for extra in [
            &["--name", "x", "--server", "profile-b/go"][..],
            &["--name", "x", "--profile", "b"],
            &["--name", "x", "--lang", "go"],
            &["--name", "x", "--variant", "all"],
            &["--name", "x", "--cpus", "1"],
            &["--name", "x", "--memory", "1g"],
            &["--name", "x", "--pause-server", "1s/5s"],
            &["--name", "x", "--pid", "1", "--container", "c"],
        ] {
            assert!(refused(extra).contains("cannot be used with"), "{extra:?}");
        }
        for without_url in [["--name", "x"], ["--pid", "1"], ["--container", "c"]] {
            assert!(clap_refusal(&without_url).is_some(), "{without_url:?}");
        }
    }

    #[test]
    fn refuses_a_name_that_is_not_safe_in_a_path() {
        for name in ["../up", "Local", "a b", "", "-x", &"x".repeat(41)] {
            // `--name=VALUE`, so that clap takes `-x` as the value it is.
            let flag = format!("--name={name}");
            let err = check(&["--url", "ws://127.0.0.1:9/ws", &flag]).unwrap_err();
            assert!(
                err.message.contains("cannot name a server"),
                "{name}: {err}"
            );
        }
        assert!(check(&["--url", "ws://127.0.0.1:9/ws", "--name", "node_ws.2"]).is_ok());
    }

    #[test]
    fn refuses_a_url_that_is_not_ws_and_a_pid_of_no_process() {
        let err = check(&["--url", "http://127.0.0.1:9/ws", "--name", "x"]).unwrap_err();
        assert!(err.message.contains("is not a ws:// URL"), "{err}");
        // Past the largest pid Linux gives (4,194,304): never a process.
        let err = check(&[
            "--url",
            "ws://127.0.0.1:9/ws",
            "--name",
            "x",
            "--pid",
            "9999999",
        ])
        .unwrap_err();
        assert!(
            err.message.starts_with("--pid 9999999: process 9999999"),
            "{err}"
        );
    }

    #[test]
    fn a_pid_that_runs_is_watched_and_a_container_is_read_through_the_engine() {
        let own = std::process::id().to_string();
        let request = check(&["--url", "ws://127.0.0.1:9/ws", "--name", "x", "--pid", &own]);
        assert_eq!(
            request.unwrap().plan.external().unwrap().usage,
            UsageSource::Process {
                pid: std::process::id()
            }
        );
        let request = check(&[
            "--url",
            "ws://127.0.0.1:9/ws",
            "--name",
            "x",
            "--container",
            "c",
        ]);
        assert_eq!(
            request.unwrap().plan.external().unwrap().usage,
            UsageSource::Container {
                container: "c".into()
            }
        );
    }
}
