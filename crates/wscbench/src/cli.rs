//! The command line: clap definitions, buildable from any argument list so tests can drive it.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use wscbench_engine::runner::VerifyLevel;
use wscbench_results::{LoadPath, Mode, Scenario, Transport};

use crate::commands;
use crate::errors::{Doing, ExpectedError, UsageError};
use crate::exit::ExitCode;

/// Compare WebSocket public-chat server stacks fairly.
///
/// wscbench verifies that every server speaks the same chat protocol, builds each into a
/// FROM-scratch Docker image, runs it under identical limits while k6 drives it through each
/// load shape asked for (run --scenario lists them), samples docker stats, and stores every
/// run as JSON in results/.
#[derive(Debug, Parser)]
#[command(
    name = "wscbench",
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = crate::exit::ExitCode::help_section()
)]
pub struct Cli {
    /// The project directory holding servers/ and scenarios/ [default: found upwards from the current directory]
    #[arg(long, global = true, env = "WSCBENCH_ROOT", value_name = "DIR")]
    pub root: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the servers found through their server.toml manifests.
    List(ListArgs),
    /// Prove that a server speaks the chat protocol (docs/protocol.md), check by named check.
    ///
    /// With --url, checks a server that is already running. With --server/--profile/--lang/--all,
    /// builds each selected server from its manifest, runs it as a local process on a free
    /// loopback port, checks it (including its SIGTERM shutdown), and stops it.
    /// With --hostile, attacks it instead (see --hostile). Exits 1 if any check fails.
    Verify(VerifyArgs),
    /// Measure a server's resident memory with N idle joined clients, and after they leave.
    IdleMemory(IdleMemoryArgs),
    /// Build the FROM-scratch images of the selected servers and of k6 (run does this itself).
    ///
    /// Each server is built with its manifest's build command on the host, packed into an image
    /// tagged with the manifest's tag and labelled with a hash of its sources. An image whose
    /// sources have not changed is reused, so a second build takes seconds. Every toolchain
    /// the selected servers need is checked first, before the engine is asked.
    Build(BuildArgs),
    /// Benchmark: for each selected server × scenario, start the server under identical limits,
    /// verify it, drive it with k6, sample docker stats, and write results/<run-id>/...json.
    ///
    /// The first Ctrl-C stops and removes every container of the run, keeps the results already
    /// written, marks the run interrupted, and exits 130.
    Run(Box<RunArgs>),
    /// Render the comparison tables from stored results alone (no Docker needed).
    ///
    /// One table never mixes modes, load paths or server limits: by default the report shows
    /// those of the most recent run (--mode and --run choose) and names what it left out.
    /// Repetitions of a point (run --runs N) print as mean ± σ; a best value is named only
    /// when its 95 % interval clears the runner-up's. With --history, one metric of one
    /// server × scenario across every stored run instead.
    Report(ReportArgs),
    /// Measure the load generator's own limit: chats k6 receives per CPU-second on each load
    /// path (native and js), from the blaster on another core.
    ///
    /// The blaster (scenarios/k6-chat/cmd/blaster) sends prepared chat frames to every client;
    /// k6 runs scenarios/loadgen-capacity.js pinned to one core. The figure divides the chats
    /// received by the CPU time of the k6 process, so the sender need not saturate k6.
    LoadgenCapacity(LoadgenCapacityArgs),
    /// Compare two runs point by point: means, change, ratio ± uncertainty, and a verdict
    /// from Welch's t-test (both sides n ≥ 2) or "n=1: no test".
    ///
    /// Conditions that differ between A and B are listed first. Exits 1 with
    /// --fail-on-regression PCT when a headline metric got significantly worse by more than PCT %.
    Compare(CompareArgs),
    /// Merge the native reports (native.json) of k6 instances that split one run elsewhere,
    /// e.g. k6-operator's runners, and print the totals as JSON.
    ///
    /// Counters add; latency percentiles come from the histograms merged bucket by bucket,
    /// never from averaged percentiles; chats received from another instance are timed apart
    /// (their latency includes the clock offset between hosts). See docs/distributed.md.
    MergeNative(MergeNativeArgs),
    /// Check the Docker engine, its API version, the toolchains and k6.
    Doctor,
    /// Measure the machine-speed index that every round of a run records: a CPU-bound loop
    /// (SHA-256) and a syscall-bound one (64-byte round trips over loopback TCP), against
    /// this project's reference machine (100). Run it on a quiet machine.
    Calibrate(CalibrateArgs),
    /// Remove every container and image labelled by wscbench.
    Clean(CleanArgs),
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// How many calibrations, one after the other
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub times: u32,
    /// Seconds each of the two loops runs
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Also list each server's variants (run them with run --variant NAME or --variant all)
    #[arg(long)]
    pub variants: bool,
}

#[derive(Debug, Args)]
pub struct MergeNativeArgs {
    /// The native reports, one per k6 instance
    #[arg(required = true, value_name = "NATIVE_JSON")]
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Rebuild even when an image with the same source hash exists
    #[arg(long)]
    pub rebuild: bool,
}

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
    /// Only this scenario (repeatable) [default: steady, burst, churn, saturation; capacity,
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
    /// slow-share
    #[arg(long = "sweep", value_name = "KEY=V1,V2,...", value_parser = parse_sweep)]
    pub sweep: Vec<wscbench_engine::sweep::SweepKey>,
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
    /// The load generator's client loop: native (the k6/x/chat extension: Go clients,
    /// aggregated metrics, a full latency histogram) or js (k6/websockets, one JS callback and
    /// one metric sample per message, so k6 runs out of CPU far sooner; loadgen-capacity
    /// measures both)
    #[arg(long, default_value = "native", value_parser = one_of(LoadPath::ALL, LoadPath::as_str))]
    pub loadgen: LoadPath,
    /// The rounds every point gets at least: each round runs every server × scenario once,
    /// in an order shuffled from --seed, each its own result [default: 3 in quick mode, else 1]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: Option<u32>,
    /// After the first --runs rounds, add rounds only to points whose headline figures' 95 %
    /// interval is wider than PCT % of the mean (twice that for latency) and whose ranking
    /// against a neighbour is still undecided
    #[arg(long, default_value_t = 5.0, value_name = "PCT", value_parser = parse_precision)]
    pub precision: f64,
    /// The time the rounds may take; added rounds stop when the next point would not fit,
    /// and a budget too small for the first --runs rounds is refused [default: 40m in quick
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

/// A parser that accepts exactly the names of an enumerated dimension, listing them in `--help`.
fn one_of<T>(all: &'static [T], name: fn(T) -> &'static str) -> impl TypedValueParser<Value = T>
where
    T: Copy + Send + Sync + 'static + std::str::FromStr,
    T::Err: std::fmt::Debug,
{
    PossibleValuesParser::new(all.iter().map(move |v| name(*v)))
        .map(|s| s.parse::<T>().expect("one of the possible values"))
}

#[derive(Debug, Args)]
pub struct LoadgenCapacityArgs {
    /// Connections k6 holds
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=5000))]
    pub clients: u32,
    /// Seconds k6 receives on each path
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=600))]
    pub seconds: u32,
    /// How k6 reaches the blaster: wss (TLS with a certificate made for the measurement),
    /// ws+deflate or wss+deflate (compressed frames) measure the native path only, which
    /// alone speaks them; the figure is what a point of that transport is judged against
    #[arg(long, default_value = "ws", value_name = "TRANSPORT", value_parser = one_of(Transport::ALL, Transport::as_str))]
    pub transport: Transport,
    /// The blaster's total frames/s against the native path (0 = as fast as it can)
    #[arg(long, default_value_t = 0.0)]
    pub native_rate: f64,
    /// The blaster's total frames/s against the js path (0 = as fast as it can); bounded by
    /// default because k6's js path queues what it cannot handle without bound
    #[arg(long, default_value_t = 40_000.0)]
    pub js_rate: f64,
    /// Cores for the blaster
    #[arg(long, default_value = "1", value_name = "CPUS")]
    pub cpuset_blaster: String,
    /// Cores for k6
    #[arg(long, default_value = "0", value_name = "CPUS")]
    pub cpuset_loadgen: String,
    /// Memory limit of the k6 container
    #[arg(long, default_value = "4g", value_parser = parse_bytes)]
    pub loadgen_memory: u64,
    /// Print JSON instead of the table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A results directory, or one run's directory inside it
    #[arg(default_value = "results", value_name = "DIR")]
    pub dir: PathBuf,
    /// Only this run's results [default: the latest run of each point, in the mode and conditions of the most recent run]
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// Only results of this mode: smoke, quick or soak
    #[arg(long, value_name = "MODE")]
    pub mode: Option<wscbench_results::Mode>,
    /// terminal, markdown (best value of each column in bold), json, or html (one
    /// self-contained page with charts, written to --output, report.html by default)
    #[arg(long, default_value = "terminal", value_parser = parse_report_format)]
    pub format: ReportFormat,
    /// Write the report to this file instead of standard output
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// One metric of one server × scenario across every stored run, in date order
    #[arg(long, requires_all = ["server", "scenario"])]
    pub history: bool,
    /// The server of --history, e.g. profile-b/go
    #[arg(long, value_name = "ID", requires = "history")]
    pub server: Option<String>,
    /// The scenario of --history
    #[arg(long, value_name = "SCENARIO", requires = "history")]
    pub scenario: Option<wscbench_results::Scenario>,
    /// The metric of --history [default: the scenario's throughput, or connections for churn]
    #[arg(long, value_name = "NAME", requires = "history", value_parser = parse_metric)]
    pub metric: Option<&'static wscbench_report::Metric>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a run id (looked up in --results) or a run's folder
    #[arg(value_name = "A")]
    pub a: String,
    /// The candidate: a run id or a run's folder; may measure a subset of A's points
    #[arg(value_name = "B")]
    pub b: String,
    /// Where run ids are looked up
    #[arg(long, default_value = "results", value_name = "DIR")]
    pub results: PathBuf,
    /// Significance level of Welch's t-test
    #[arg(long, default_value_t = 0.05, value_parser = parse_level)]
    pub level: f64,
    /// terminal, markdown or json
    #[arg(long, default_value = "terminal", value_parser = parse_format)]
    pub format: wscbench_report::Format,
    /// Exit 1 when a headline metric got significantly worse by more than PCT %
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
}

fn parse_sweep(s: &str) -> Result<wscbench_engine::sweep::SweepKey, String> {
    s.parse()
        .map_err(|e: wscbench_engine::sweep::SweepError| e.to_string())
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

fn parse_metric(s: &str) -> Result<&'static wscbench_report::Metric, String> {
    wscbench_report::metrics::find(s).ok_or_else(|| {
        format!(
            "unknown metric {s:?}; the metrics are {}",
            wscbench_report::metrics::keys()
        )
    })
}

fn parse_level(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(level) if level > 0.0 && level < 1.0 => Ok(level),
        _ => Err(format!(
            "{s:?} is not a significance level between 0 and 1, such as 0.05"
        )),
    }
}

/// What `report` writes: one of the text formats, or the HTML page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// Terminal, Markdown or JSON text.
    Text(wscbench_report::Format),
    /// The self-contained HTML page (`wscbench_report::html`).
    Html,
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Keep the images; remove only containers
    #[arg(long)]
    pub keep_images: bool,
}

fn parse_format(s: &str) -> Result<wscbench_report::Format, String> {
    s.parse::<wscbench_report::Format>()
        .map_err(|e| e.to_string())
}

fn parse_report_format(s: &str) -> Result<ReportFormat, String> {
    if s.eq_ignore_ascii_case("html") {
        return Ok(ReportFormat::Html);
    }
    parse_format(s)
        .map(ReportFormat::Text)
        .map_err(|e| format!("{e}, html"))
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

/// Parses a size such as `512m`, `1g`, `256MiB` or a plain number of bytes.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let lower = s.trim().to_ascii_lowercase();
    let digits_end = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(lower.len());
    let (number, unit) = lower.split_at(digits_end);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a size such as 512m or 1g"))?;
    let factor: u64 = match unit.trim() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("{s:?}: unknown unit {unit:?}; use b, k, m or g")),
    };
    let bytes = (number * factor as f64).round() as u64;
    // Docker refuses limits under 6 MiB.
    if bytes < 6 << 20 {
        return Err(format!("{s:?} is below Docker's 6 MiB minimum"));
    }
    Ok(bytes)
}

/// Which servers a command applies to.
#[derive(Debug, Clone, Args, Default)]
pub struct SelectArgs {
    /// A server id such as profile-b/go (repeatable)
    #[arg(long = "server", value_name = "ID")]
    pub servers: Vec<String>,
    /// Only servers of this profile: a (frameworks) or b (minimal / stdlib) (repeatable)
    #[arg(long = "profile", value_name = "a|b", value_parser = ["a", "b", "A", "B"])]
    pub profiles: Vec<String>,
    /// Only servers in this language: go, rust or zig; javascript or python for the extra
    /// group (repeatable)
    #[arg(long = "lang", value_name = "LANG", value_parser = ["go", "rust", "zig", "javascript", "python"])]
    pub langs: Vec<String>,
    /// Only servers of this group: extra (servers/extra: never run unless named here or by
    /// --server), a or b (repeatable)
    #[arg(long = "group", value_name = "extra|a|b", value_parser = ["extra", "a", "b"])]
    pub groups: Vec<String>,
}

impl SelectArgs {
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
            && self.profiles.is_empty()
            && self.langs.is_empty()
            && self.groups.is_empty()
    }

    pub fn selection(&self) -> wscbench_engine::catalog::Selection {
        wscbench_engine::catalog::Selection {
            ids: self.servers.clone(),
            profiles: self
                .profiles
                .iter()
                .map(|p| p.to_ascii_lowercase())
                .collect(),
            languages: self.langs.clone(),
            groups: self.groups.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Verify a running server at this URL, e.g. ws://127.0.0.1:8080/ws
    #[arg(long, value_name = "URL", conflicts_with_all = ["servers", "profiles", "langs", "groups", "all"])]
    pub url: Option<String>,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Verify every server that has a manifest
    #[arg(long)]
    pub all: bool,
    /// Run only this check (repeatable); see the check names in the output
    #[arg(long = "only", value_name = "CHECK")]
    pub only: Vec<String>,
    /// Run the hostile-client checks instead of the protocol checks: malformed floods, binary,
    /// oversize and fragmented frames, ping floods, slowloris, resets, clients that never read,
    /// a 2,000-connection flood; after each the server must serve two canary members within 1 s
    /// with its memory back within 64 MiB (127.0.0.1 only; about 1 min per server)
    #[arg(long)]
    pub hostile: bool,
    /// Also run the RFC 6455 conformance cases (Autobahn categories 1-7 on raw frames,
    /// through the chat protocol) over each transport, and print a server x category table
    /// of strict / non-strict / ignored; an ignored or failed case fails the verification
    #[arg(long)]
    pub conformance: bool,
    /// Use this binary instead of building the server (with exactly one --server)
    #[arg(long, value_name = "PATH", requires = "servers")]
    pub binary: Option<PathBuf>,
    /// Run the checks over each of these transports a server offers (comma list or
    /// repeated): ws, wss (a certificate made for the run, trusted by the checks' client),
    /// ws+deflate, wss+deflate (the server given --deflate; the checks' client offers
    /// permessage-deflate with no context takeover and requires it: a first check,
    /// deflate_negotiated, shows the server's answer and fails when it refuses). A
    /// transport a server does not offer is reported with its manifest's reason and
    /// skipped. --hostile runs over ws only [default: ws]
    #[arg(long = "transport", value_name = "LIST", value_delimiter = ',', value_parser = one_of(Transport::ALL, Transport::as_str), conflicts_with = "url")]
    pub transports: Vec<Transport>,
    /// Print machine-readable JSON instead of the check list
    #[arg(long)]
    pub json: bool,
    /// Pass the server's own log (stderr) through
    #[arg(long)]
    pub server_logs: bool,
}

#[derive(Debug, Args)]
pub struct IdleMemoryArgs {
    /// The server to measure, e.g. profile-b/rust
    #[arg(long = "server", value_name = "ID", required = true)]
    pub servers: Vec<String>,
    /// Idle joined clients to hold
    #[arg(long, default_value_t = 1000)]
    pub clients: usize,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

/// Parses `args` and runs the command; returns the process exit code.
pub fn run<I, T>(args: I) -> Result<ExitCode, ExpectedError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    let root = project_root(cli.root.clone())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .doing(|| "starting the async runtime")?;
    runtime.block_on(async move {
        match cli.command {
            Command::List(args) => commands::list::run(&root, args),
            Command::Verify(args) => commands::verify::run(&root, args).await,
            Command::IdleMemory(args) => commands::idle_memory::run(&root, args).await,
            Command::Build(args) => commands::build::run(&root, args).await,
            Command::Run(args) => commands::run::run(&root, *args).await,
            Command::Report(args) => commands::report::run(&root, args),
            Command::LoadgenCapacity(args) => commands::loadgen_capacity::run(&root, args).await,
            Command::Compare(args) => commands::compare::run(&root, args),
            Command::MergeNative(args) => commands::merge_native::run(args),
            Command::Calibrate(args) => commands::calibrate::run(args.times, args.seconds),
            Command::Doctor => commands::doctor::run(&root).await,
            Command::Clean(args) => commands::clean::run(args).await,
        }
    })
}

/// The directory holding `servers/`: the one given, or the nearest one upwards from here.
fn project_root(given: Option<PathBuf>) -> Result<PathBuf, ExpectedError> {
    if let Some(dir) = given {
        if !dir.join("servers").is_dir() {
            return Err(
                UsageError::new(format!("{} has no servers/ directory", dir.display())).into(),
            );
        }
        return Ok(dir);
    }
    let here = std::env::current_dir().doing(|| "reading the current directory")?;
    here.ancestors()
        .find(|dir| dir.join("servers").is_dir() && dir.join("scenarios").is_dir())
        .map(PathBuf::from)
        .ok_or_else(|| {
            UsageError::new(format!("no wscbench project (a directory with servers/ and scenarios/) at or above {}; pass --root", here.display())).into()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn sizes_parse_like_dockers_memory_flag() {
        assert_eq!(parse_bytes("512m"), Ok(512 << 20));
        assert_eq!(parse_bytes("1g"), Ok(1 << 30));
        assert_eq!(parse_bytes("256MiB"), Ok(256 << 20));
        assert_eq!(parse_bytes("1.5g"), Ok(3 << 29));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("512x").is_err());
        assert!(parse_bytes("1m").unwrap_err().contains("6 MiB"));
    }

    #[test]
    fn load_engines_are_given_as_docker_host_is() {
        let cli = Cli::try_parse_from([
            "wscbench",
            "run",
            "--loadgen-engine",
            "unix:///run/wscbench-2.sock",
            "--loadgen-engine",
            "tcp://10.0.0.2:2375",
            "--server-address",
            "10.0.0.1",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        assert_eq!(
            args.loadgen_engines,
            ["unix:///run/wscbench-2.sock", "tcp://10.0.0.2:2375"]
        );
        assert_eq!(args.server_address.as_deref(), Some("10.0.0.1"));
        for bad in [
            "/run/docker.sock",
            "tcp://host",
            "ssh://host",
            "unix://relative.sock",
        ] {
            let err =
                Cli::try_parse_from(["wscbench", "run", "--loadgen-engine", bad]).unwrap_err();
            assert!(
                err.to_string().contains("not an engine address"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn run_defaults_to_quick_mode_two_cpus_and_512_mib() {
        let cli = Cli::try_parse_from(["wscbench", "run", "--profile", "b"]).unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        assert_eq!(
            (args.mode, args.loadgen, args.runs, args.cpus, args.memory),
            (Mode::Quick, LoadPath::Native, None, 2.0, 512 << 20)
        );
        assert_eq!(args.select.profiles, ["b"]);
        assert!(args.scenarios.is_empty());
    }

    #[test]
    fn run_refuses_unknown_scenarios_modes_and_cpu_counts() {
        assert!(Cli::try_parse_from(["wscbench", "run", "--scenario", "storm"]).is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--mode", "forever"]).is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--cpus", "0"]).is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--format", "pdf"]).is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--loadgen", "wrk"]).is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--runs", "0"]).is_err());
        let cli = Cli::try_parse_from([
            "wscbench",
            "run",
            "--scenario",
            "saturation",
            "--lang",
            "zig",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        assert_eq!(
            (args.scenarios, args.select.langs),
            (vec![Scenario::Saturation], vec!["zig".to_string()])
        );
    }

    #[test]
    fn soak_durations_and_latency_targets_parse_with_their_units() {
        let cli = Cli::try_parse_from([
            "wscbench",
            "run",
            "--mode",
            "soak",
            "--duration",
            "30m",
            "--slo-p95-ms",
            "20",
        ])
        .unwrap();
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!((run.duration, run.slo_p95_ms), (Some(1800), 20.0));
        assert_eq!(parse_soak_duration("1h"), Ok(3600));
        assert!(
            parse_soak_duration("5s")
                .unwrap_err()
                .contains("10s to 24h")
        );
        assert!(parse_soak_duration("soon").is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--slo-p95-ms", "0"]).is_err());
        let cli = Cli::try_parse_from(["wscbench", "run"]).unwrap();
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!((run.duration, run.slo_p95_ms), (None, 50.0));
    }

    #[test]
    fn report_takes_html_and_an_output_file() {
        let cli = Cli::try_parse_from([
            "wscbench",
            "report",
            "results/",
            "--format",
            "html",
            "-o",
            "page.html",
        ])
        .unwrap();
        let Command::Report(args) = cli.command else {
            panic!("not report")
        };
        assert_eq!(args.format, ReportFormat::Html);
        assert_eq!(args.output, Some(PathBuf::from("page.html")));
        let err = Cli::try_parse_from(["wscbench", "report", "--format", "pdf"]).unwrap_err();
        assert!(err.to_string().contains("html"), "{err}");
    }

    #[test]
    fn verify_takes_a_url_or_a_selection_but_not_both() {
        assert!(
            Cli::try_parse_from(["wscbench", "verify", "--url", "ws://127.0.0.1:1/ws"]).is_ok()
        );
        assert!(
            Cli::try_parse_from([
                "wscbench",
                "verify",
                "--server",
                "profile-b/go",
                "--server",
                "profile-a/go"
            ])
            .is_ok()
        );
        assert!(
            Cli::try_parse_from([
                "wscbench",
                "verify",
                "--url",
                "ws://h:1/ws",
                "--server",
                "profile-b/go"
            ])
            .is_err()
        );
        assert!(Cli::try_parse_from(["wscbench", "verify", "--lang", "cobol"]).is_err());
    }

    fn run_args(extra: &[&str]) -> Result<RunArgs, clap::Error> {
        let args = ["wscbench", "run"].iter().chain(extra);
        Cli::try_parse_from(args).map(|cli| match cli.command {
            Command::Run(args) => *args,
            _ => panic!("not run"),
        })
    }

    #[test]
    fn run_takes_variants_sweeps_and_a_duration_bound() {
        let args = run_args(&[
            "--variant",
            "gomaxprocs-1",
            "--variant",
            "all",
            "--sweep",
            "clients=100,200",
            "--sweep",
            "rate=1,2.5",
            "--max-duration",
            "4h",
        ])
        .unwrap();
        assert_eq!(args.variants, ["gomaxprocs-1", "all"]);
        assert_eq!(
            args.sweep
                .iter()
                .map(|k| (k.key.as_str(), k.values.clone()))
                .collect::<Vec<_>>(),
            [("clients", vec![100.0, 200.0]), ("rate", vec![1.0, 2.5])]
        );
        assert_eq!(args.max_duration, std::time::Duration::from_secs(4 * 3600));
        let plain = run_args(&[]).unwrap();
        assert!(plain.variants.is_empty() && plain.sweep.is_empty());
        assert_eq!(plain.max_duration, std::time::Duration::from_secs(2 * 3600));
    }

    #[test]
    fn run_refuses_bad_sweeps_and_durations_with_one_clear_line() {
        for (flags, says) in [
            (["--sweep", "clients"], "expected KEY=V1,V2"),
            (
                ["--sweep", "speed=1"],
                "unknown load parameter; the parameters are clients, rate",
            ),
            (
                ["--sweep", "clients=100,lots"],
                "\"lots\" is not a positive whole number",
            ),
            (
                ["--sweep", "clients=-5"],
                "\"-5\" is not a positive whole number",
            ),
            (["--sweep", "rate=0"], "\"0\" is not a positive number"),
            (
                ["--max-duration", "forever"],
                "not a duration such as 90m or 4h",
            ),
            (["--max-duration", "0s"], "not a duration"),
        ] {
            let err = run_args(&flags).unwrap_err();
            assert_eq!(
                err.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{flags:?}"
            );
            assert!(err.to_string().contains(says), "{flags:?}: {err}");
        }
    }
}
