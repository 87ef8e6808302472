//! The result schema: one [`RunResult`] per measured point (server, variant, scenario, load
//! parameters, repetition), written as JSON the moment that point ends, and the run
//! manifest that ties a run's points together. See [`dimensions`] for the file layout.
//!
//! This crate is all a reader of results needs: it has no Docker, no async and no
//! engine code. Every number carries its unit in its field name.

#![warn(missing_docs)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub mod capacity;
pub mod conformance;
pub mod curve;
pub mod dimensions;
pub mod manifest;
pub mod population;
pub mod rounds;
pub mod slow_consumers;
pub mod transport;
pub mod verdict;

pub use capacity::{
    Capacity, CapacityStep, FailedSide, HostLimits, IdleCapacity, IdleLimit, KpiVerdict, SoakKpis,
    StepReason,
};
pub use conformance::{CaseResult, CaseVerdict, Category, ServerConformance};
pub use curve::CurveStep;
pub use dimensions::{
    FANOUT_DEFAULT_ROOM_SIZE, HTML_REPORT_FILE, Language, LoadParam, LoadParams, LoadPath, Mode,
    PointKey, RAW_DIR, RUN_MANIFEST_FILE, Repetition, Scenario, Transport, UnknownName,
    raw_relative_dir, result_relative_path,
};
pub use manifest::{CurveSteps, RunManifest, RunStatus};
pub use population::{Population, PopulationLevel};
pub use rounds::{MachineSpeed, PointStop, Round, RoundRecord, StopReason};
pub use slow_consumers::SlowConsumers;
pub use transport::{DeflateParams, Negotiated, NotOffered};
pub use verdict::BoundReason;

/// Bumped whenever a field changes meaning or is removed. Readers reject newer versions and
/// migrate older ones (see [`RunResult::from_json`]).
///
/// - 1: the first schema.
/// - 2: scenario, mode and load path as enums; variant, load parameters, repetition and
///   load path as dimensions; load-generator reasons as data; CPU-seconds; latency source.
///   Added later without a bump, every field optional so that older files read unchanged:
///   the load-generator engines' conditions ([`Conditions::loadgen_engines`]), a split
///   run's instances ([`RunResult::distributed`]) and their per-second usage
///   ([`Sample::loadgen_instances`]).
///   Likewise `capacity`, `idle`, `soak` and the server's drop counters in each sample.
/// - 3: latency as response time from each chat's intended time, with service time and the
///   clients' schedule ([`ChatSchedule`]) beside it; rounds (the result's [`Round`]: its shuffled position and its round's machine
///   speed), the CPU model in the conditions, the transport, an external server's URL, and
///   the quick mode's shorter holds: a version-2 result's `quick` was the seed's lengths, so
///   it reads as [`Mode::Seed`]. Added later without a bump (older files read unchanged):
///   the `fanout` and `slow-consumers` scenarios and `slow_consumers`; the `load-curve`
///   scenario and `curve`.
pub const SCHEMA_VERSION: u32 = 3;

/// Everything one run of one server under one scenario measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Version of this schema; see [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The run this result belongs to (one `wscbench run` invocation), e.g. `20261121-143005`.
    pub run_id: String,
    /// Which server was measured.
    pub server: ServerIdentity,
    /// The named server variant (extra arguments and environment for the same image), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The load shape.
    pub scenario: Scenario,
    /// Load parameters that override the shape's defaults (a sweep's values), e.g. `clients`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub load_params: LoadParams,
    /// Which round of this point this is (`index` of `of` planned; rounds added for precision
    /// have an index past `of`).
    #[serde(default)]
    pub repetition: Repetition,
    /// Where this result stood in its round's shuffled order, and the machine's speed then;
    /// absent in results written before rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<Round>,
    /// How the clients reached the server.
    #[serde(default, skip_serializing_if = "Transport::is_ws")]
    pub transport: Transport,
    /// What the clients' handshakes negotiated (TLS version and cipher suite, the
    /// permessage-deflate parameters), one entry per distinct outcome with how many sessions
    /// had it, from the native load path's report; empty on the js path and in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub negotiated: Vec<Negotiated>,
    /// The URL of a server wscbench did not start (`wscbench run --url`); its results are
    /// never compared with the started servers' as like with like.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_url: Option<String>,
    /// Where the server's CPU and memory figures come from: the engine's stats of the
    /// container wscbench started (every managed server), or for an external server those of
    /// a named container, a process's `/proc`, or nothing (the figures are then absent).
    #[serde(default, skip_serializing_if = "UsageSource::is_managed")]
    pub server_usage_source: UsageSource,
    /// Timing mode.
    pub mode: Mode,
    /// Which client loop drove the server.
    #[serde(default)]
    pub load_path: LoadPath,
    /// The conditions the run ran under, so it can be reproduced and compared.
    pub conditions: Conditions,
    /// Wall-clock start of this server × scenario, RFC 3339 UTC.
    pub started_at: String,
    /// How long the load generator ran, in milliseconds.
    pub duration_ms: u64,
    /// Time spent outside the scenario itself (start, health, verification, stop, write), in milliseconds.
    pub overhead_ms: u64,
    /// How the run ended.
    pub outcome: Outcome,
    /// Human-readable detail for a non-`ok` outcome (which check failed, the exit code, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome_detail: Option<String>,
    /// The server's own `/stats` counters over the load window: the reading when k6 ended minus
    /// the reading when it started, so verification traffic is left out (`uptime_ms` and
    /// `connections_current` are the end values). Absent if the server was gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stats: Option<ServerStats>,
    /// What k6 measured, from its `handleSummary` output (absent if k6 produced none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k6: Option<K6Metrics>,
    /// Client-side errors, counted and classified.
    pub errors: ErrorCounts,
    /// Figures derived from the counters and the docker stats samples.
    pub derived: Derived,
    /// True when the load generator, not the server, was the limit (see
    /// [`RunResult::loadgen_bound_reasons`]).
    pub loadgen_bound: bool,
    /// Why the run was judged load-generator bound; empty when it was not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loadgen_bound_reasons: Vec<BoundReason>,
    /// The load split over several k6 instances (`wscbench run --loadgen-engine` given more
    /// than once); absent when one k6 drove the server. The counters and latency in
    /// [`RunResult::k6`] are then every instance's, added up and merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributed: Option<Distributed>,
    /// The capacity scenario's steps and verdict (capacity results only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// Idle clients held and bytes per client (idle-capacity results only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<IdleCapacity>,
    /// The soak KPIs (soak mode, and any run of at least five minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<SoakKpis>,
    /// The healthy clients' latency, the recovery and the slow readers' cost
    /// (slow-consumers results only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_consumers: Option<SlowConsumers>,
    /// The step's offered load and what of it arrived (load-curve results only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<CurveStep>,
    /// What a connected user costs, from the levels (population results only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub population: Option<Population>,
    /// One docker stats sample per second for both containers.
    #[serde(default)]
    pub series: Vec<Sample>,
}

/// The identity of the server under test, from its manifest and its build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerIdentity {
    /// Manifest id, e.g. `profile-b/go`.
    pub id: String,
    /// Image tag, e.g. `wsc-go`.
    pub image: String,
    /// The language by its name ([`Language`]), e.g. `go`; empty for a server by URL.
    pub language: String,
    /// `a` (frameworks) or `b` (minimal / stdlib).
    pub profile: String,
    /// The framework or library stack, e.g. `net/http + gorilla/websocket v1.5.3`.
    pub framework: String,
    /// Content hash of the server's sources that the image was built from.
    pub source_hash: String,
    /// Size of the server binary, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_size_bytes: Option<u64>,
    /// Size of the server image as the engine reports it, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_size_bytes: Option<u64>,
}

/// The conditions of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    /// CPU limit of the server container, in CPUs (`--cpus`); 0 for an external server
    /// (`run --url`), which wscbench does not limit.
    pub server_cpus: f64,
    /// Memory limit of the server container, in bytes (`--memory`); 0 for an external
    /// server.
    pub server_memory_bytes: u64,
    /// Cores the server container was pinned to (`--cpuset-server`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuset_server: Option<String>,
    /// Cores the k6 container was pinned to (`--cpuset-loadgen`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuset_loadgen: Option<String>,
    /// Logical cores of the machine.
    pub machine_cores: u32,
    /// The CPU model the machine reports (`/proc/cpuinfo`), if readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// The first core's frequency at the start of the run, in MHz, if readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_mhz: Option<f64>,
    /// Kernel release of the Docker host.
    pub kernel: String,
    /// Docker engine version.
    pub docker_version: String,
    /// Docker API version negotiated with the engine.
    pub docker_api_version: String,
    /// k6 version of the load-generator image.
    pub k6_version: String,
    /// Memory limit of the load-generator container, in bytes, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadgen_memory_bytes: Option<u64>,
    /// The hardening every container ran under, as docker CLI flags (`--read-only`,
    /// `--cap-drop ALL`, ...); empty in results written before containers were hardened.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container_hardening: Vec<String>,
    /// Extra server arguments of the variant, if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variant_args: Vec<String>,
    /// Extra server environment (`KEY=value`) of the variant, if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variant_env: Vec<String>,
    /// The engines that ran the load generators, when other than the server's alone
    /// (`--loadgen-engine`); the fields above describe the server's engine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loadgen_engines: Vec<EngineConditions>,
    /// How the load generators reached the server (`--server-address`), when not loopback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_address: Option<String>,
    /// Fault injection: the server container was frozen for PAUSE every EVERY of the load
    /// (`--pause-server PAUSE/EVERY`, e.g. `1s/5s`); absent: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_server: Option<String>,
    /// The host limits an idle-capacity run was planned with: source addresses, open files,
    /// the port range (absent for every other scenario).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_limits: Option<HostLimits>,
}

/// One Docker engine that ran load generators, and the host behind it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineConditions {
    /// How wscbench reached it, e.g. `unix:///run/wscbench-2.sock` or `tcp://10.0.0.2:2375`.
    pub endpoint: String,
    /// Host name the engine reports (two engines on one host report the same).
    #[serde(default)]
    pub host_name: String,
    /// Logical cores of its host.
    pub machine_cores: u32,
    /// Kernel release of its host.
    pub kernel: String,
    /// Docker engine version.
    pub docker_version: String,
    /// Docker API version negotiated with it.
    pub docker_api_version: String,
    /// Its host's clock minus wscbench's, in milliseconds, from the engine's `SystemTime`
    /// read halfway through one exchange (absent when the engine did not report it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ms: Option<f64>,
    /// The round trip of that exchange, in milliseconds: the offset is known to ± half of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_rtt_ms: Option<f64>,
}

/// A run whose load was split over several k6 instances with execution segments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Distributed {
    /// The `--execution-segment-sequence` every instance ran with, e.g. `0,1/2,1`.
    pub execution_segment_sequence: String,
    /// The spread of the instances' starts: last resume answered minus first, in
    /// milliseconds (they start paused and are resumed together through k6's REST API).
    pub start_skew_ms: f64,
    /// The spread of the load engines' clock offsets (largest minus smallest), in
    /// milliseconds: what a latency between two instances may be off by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_skew_ms: Option<f64>,
    /// How far [`Distributed::clock_skew_ms`] may be off, in milliseconds: half the round
    /// trips of the two readings it comes from. A skew below it is no measured skew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_skew_uncertainty_ms: Option<f64>,
    /// Latency of chats received by another instance than the sender's, merged over every
    /// instance; it includes their clock offset, so it is kept out of [`K6Metrics::latency`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_instance_latency: Option<LatencyMs>,
    /// Every instance, in segment order.
    pub instances: Vec<LoadgenInstance>,
}

/// One k6 instance of a split run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadgenInstance {
    /// Its number, 1 to N (also the `INSTANCE` it ran with and the chats' stamp).
    pub instance: u32,
    /// The endpoint of the engine it ran on (see [`Conditions::loadgen_engines`]).
    pub engine: String,
    /// Its `--execution-segment`, e.g. `1/2:1`.
    pub execution_segment: String,
    /// When its resume was answered, in milliseconds after the first instance's.
    pub resumed_after_ms: f64,
    /// How its container exited (absent when it was still running and was stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Sessions, chats sent and received by this instance alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_sent: Option<u64>,
    /// Chats this instance received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_received: Option<u64>,
    /// Resource use of its container (CPU in percent of one core of its host).
    pub usage: Usage,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The scenario ran to the end and the server survived it.
    Ok,
    /// The server failed protocol verification and was not benchmarked.
    VerifyFailed,
    /// The server container exited during the run.
    ServerCrashed,
    /// The server container was killed for exceeding its memory limit.
    OomKilled,
    /// k6 failed to run or produced no summary.
    LoadgenFailed,
    /// The user interrupted the run (Ctrl-C).
    Interrupted,
}

impl Outcome {
    /// The snake_case name used in JSON and in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::VerifyFailed => "verify_failed",
            Outcome::ServerCrashed => "server_crashed",
            Outcome::OomKilled => "oom_killed",
            Outcome::LoadgenFailed => "loadgen_failed",
            Outcome::Interrupted => "interrupted",
        }
    }
}

/// The server's `/stats` object (see docs/protocol.md). All counters are cumulative.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStats {
    /// The image tag the server reports.
    pub server: String,
    /// Milliseconds since the server started.
    pub uptime_ms: u64,
    /// WebSocket connections open now.
    pub connections_current: u64,
    /// WebSocket connections ever upgraded.
    pub connections_total: u64,
    /// Successful joins.
    pub joins: u64,
    /// Data frames received.
    pub frames_in: u64,
    /// Valid chats from joined members, before the rate limit.
    pub chat_in: u64,
    /// Chats that passed the rate limit and were broadcast.
    pub chat_accepted: u64,
    /// Chat messages written to recipients (one per recipient).
    pub deliveries: u64,
    /// Chats dropped by the rate limit.
    pub dropped_ratelimit: u64,
    /// Messages dropped because a recipient's queue was full.
    pub dropped_slow: u64,
    /// Invalid input ignored.
    pub malformed: u64,
    /// Frame bytes handed to the socket (or the TLS layer), after compression, headers
    /// included. Absent when the server does not count them (servers older than the
    /// transports): bytes per delivery is then absent too, never zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_written: Option<u64>,
}

/// What k6 measured. Latencies are in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct K6Metrics {
    /// WebSocket sessions started (`ws_sessions`).
    pub sessions: u64,
    /// Sessions that ended on their own (`sessions_closed`); the rest were cut off by k6.
    #[serde(default)]
    pub sessions_closed: u64,
    /// 95th percentile of WebSocket connect time (`ws_connecting`), in ms.
    pub connect_p95_ms: f64,
    /// All WebSocket messages sent (`ws_msgs_sent`).
    pub ws_msgs_sent: u64,
    /// All WebSocket messages received (`ws_msgs_received`).
    pub ws_msgs_received: u64,
    /// Chats sent by the scenario (`chat_sent`).
    pub chat_sent: u64,
    /// Chats from other members received by the scenario (`chat_received`).
    pub chat_received: u64,
    /// Chat latency, receive time minus the chat's `ts`.
    pub latency: LatencyMs,
    /// Where [`K6Metrics::latency`] comes from.
    #[serde(default)]
    pub latency_source: LatencySource,
    /// [`K6Metrics::latency`] is that of one client in this many, the latency probes; the
    /// others counted what they received without timing it, reading it just as promptly.
    /// 1: every client (the js path, and native results written before probes).
    #[serde(default = "every_client")]
    pub latency_probe_every: u32,
    /// Frames the native client could not read as chat protocol (always 0 on the js path).
    #[serde(default)]
    pub malformed: u64,
    /// Service time, from the moment each chat was written, when [`K6Metrics::latency`] is
    /// the response time from its intended time (native results of schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_time: Option<LatencyMs>,
    /// The clients' schedule: chats intended, sent on time, sent late and missed by cause
    /// (native results of schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chats: Option<ChatSchedule>,
}

/// What became of the chats the clients' schedule intended: the load generator keeps an
/// explicit schedule, so a server that stops reading cannot lower its own offered load
/// unseen (coordinated omission). A cause is the largest part of a chat's delay: `join` (its
/// join not yet acknowledged) and `write` (a blocked write: the server not reading) are the
/// server's; `timer` (the client's timer fired late with the write path free) is the load
/// generator's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatSchedule {
    /// Chats the schedule intended: the sent ones and the missed ones.
    pub intended: u64,
    /// Sent within 10 ms of their intended time.
    pub sent_on_time: u64,
    /// Sent late because the join was not yet acknowledged.
    pub sent_late_join: u64,
    /// Sent late because an earlier write blocked.
    pub sent_late_write: u64,
    /// Sent late because the client's own timer fired late.
    pub sent_late_timer: u64,
    /// Given up (past the catch-up bound) while the join was not acknowledged.
    pub missed_join: u64,
    /// Given up while writes were blocked.
    pub missed_write: u64,
    /// Given up because the client's own timer was too late (or the session ended).
    pub missed_timer: u64,
}

impl ChatSchedule {
    /// Chats sent, on time or late.
    pub fn sent(&self) -> u64 {
        self.sent_on_time + self.sent_late_join + self.sent_late_write + self.sent_late_timer
    }

    /// Sent ÷ intended; `None` when nothing was intended.
    pub fn sent_per_intended(&self) -> Option<f64> {
        (self.intended > 0).then(|| self.sent() as f64 / self.intended as f64)
    }

    /// Chats late or missed by the server's causes (join, write).
    pub fn server_late(&self) -> u64 {
        self.sent_late_join + self.sent_late_write + self.missed_join + self.missed_write
    }

    /// Chats late or missed because of the load generator's timer.
    pub fn timer_late(&self) -> u64 {
        self.sent_late_timer + self.missed_timer
    }
}

fn every_client() -> u32 {
    1
}

/// Where latency percentiles come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencySource {
    /// k6's `chat_latency` Trend, which keeps every sample (the js path).
    #[default]
    K6Trend,
    /// The native client's full HDR histogram (3 significant figures), merged over instances:
    /// service time, from the moment each chat was written.
    Histogram,
    /// The native client's response-time histogram: from each chat's intended time, the
    /// chats the server kept from being sent included (schema 3). Service time is beside it.
    ResponseTime,
}

/// A latency distribution, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    /// Mean, in ms.
    pub avg_ms: f64,
    /// Median, in ms.
    pub p50_ms: f64,
    /// 95th percentile, in ms.
    pub p95_ms: f64,
    /// 99th percentile, in ms.
    pub p99_ms: f64,
    /// Maximum, in ms.
    pub max_ms: f64,
    /// 99.9th percentile, in ms (only from a histogram).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p999_ms: Option<f64>,
    /// Samples behind the figures (only from a histogram).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// The percentile curve, `[percentile, ms]` pairs from 0 to 100 (only from a histogram).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curve: Vec<[f64; 2]>,
}

/// Client-side errors, classified.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// Connections that failed to open.
    pub failed_connects: u64,
    /// Connections closed with a code other than 1000/1001 (1006 included).
    pub abnormal_closes: u64,
    /// Script errors: WebSocket error events and k6's own failure to finish.
    pub script_errors: u64,
    /// Failed connects by reason (`tls`, `deflate-refused`, `refused`, `timeout`,
    /// `handshake`, `other`), from the native load path; empty on the js path and in older
    /// files. The reasons add up to [`ErrorCounts::failed_connects`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failed_connect_reasons: BTreeMap<String, u64>,
}

impl ErrorCounts {
    /// All client-side errors together: the "k6 errors" column.
    pub fn total(&self) -> u64 {
        self.failed_connects + self.abnormal_closes + self.script_errors
    }
}

/// Where a result's server CPU and memory come from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum UsageSource {
    /// The engine's stats of the container wscbench started for the point: CPU as the
    /// docker CLI computes it, memory without page cache.
    #[default]
    Managed,
    /// The engine's stats of a container wscbench did not start (`run --url --container`),
    /// read exactly as a managed container's. Never stopped nor removed by wscbench.
    Container {
        /// The container's name or id, as given.
        container: String,
    },
    /// A process's own counters (`run --url --pid`): CPU from `/proc/PID/stat` (user and
    /// system time, in clock ticks, over each second of wall time); memory from
    /// `/proc/PID/status` `VmRSS`, the process's resident set (anonymous, file-backed and
    /// shared pages it maps). Not its cgroup's memory: a process started by hand shares its
    /// cgroup (a login session, a service) with others. Children of the process are not
    /// counted. A process that exits during the load is recorded as a crash.
    Process {
        /// The process id, as given.
        pid: u32,
    },
    /// Neither was given: the server's CPU and memory are absent from the result (never 0).
    Absent,
}

impl UsageSource {
    /// True for a managed server's own container (the default, left out of the JSON).
    pub fn is_managed(&self) -> bool {
        *self == UsageSource::Managed
    }
}

/// Figures derived from counters and samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// Accepted chats per second: `chat_accepted` / duration.
    pub throughput_msgs_per_s: f64,
    /// Chat deliveries per second: `deliveries` / duration.
    pub deliveries_per_s: f64,
    /// Share of incoming chats dropped by the rate limit: `dropped_ratelimit` / `chat_in`, 0 to 1.
    pub drop_rate_ratio: f64,
    /// Chats the load generator received per delivery the server wrote, 0 to 1 (absent when
    /// the server wrote none or the load generator left no summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received_ratio: Option<f64>,
    /// Deliveries per CPU-second the server used (absent when no CPU time was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliveries_per_server_cpu_s: Option<f64>,
    /// Bytes the server wrote per delivery: `bytes_written` / `deliveries` over the load
    /// window, in bytes (absent when the server does not count bytes or delivered nothing).
    /// Compression's gain, beside its CPU cost in deliveries per CPU-second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_written_per_delivery: Option<f64>,
    /// Resource use of the server (its container, or an external server's container or
    /// process); absent when nothing measured it ([`UsageSource::Absent`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Usage>,
    /// Resource use of the load-generator (k6) container.
    pub loadgen: Usage,
}

/// Resource use of one container over a run, computed as the docker CLI does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Highest CPU use seen, in percent of one core (200 = two cores busy).
    pub peak_cpu_percent: f64,
    /// Mean CPU use over the samples, in percent of one core.
    pub mean_cpu_percent: f64,
    /// Highest memory use seen (page cache excluded), in bytes.
    pub peak_mem_bytes: u64,
    /// The CPU ceiling of the container, in percent of one core (its limit, or all cores).
    pub cpu_limit_percent: f64,
    /// CPU time the container used over the samples, in seconds (the per-second percentages
    /// integrated over time).
    #[serde(default)]
    pub cpu_seconds: f64,
}

/// One per-second sample of the server and the load generator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Milliseconds since the load started.
    pub t_ms: u64,
    /// Server CPU, in percent of one core; absent when nothing measured it
    /// ([`UsageSource::Absent`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_percent: Option<f64>,
    /// When `server_cpu_percent` was read, in milliseconds since the load started: it is the
    /// CPU of the interval ending then (since the previous reading). Docker's stats stream
    /// reads on its own clock, about a second behind `t_ms`, so a figure set against the
    /// counters of the same sample must use this time. Absent in results written before it
    /// was recorded (read as `t_ms`) and where the reading has no time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_read_ms: Option<i64>,
    /// The server's CPU time used since it started, in milliseconds, as read at
    /// `server_cpu_read_ms` (Docker's cumulative `total_usage`): the CPU between any two
    /// moments is the difference, whatever readings the sampler missed or repeated. Absent
    /// where the source gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_used_ms: Option<f64>,
    /// Server memory (page cache excluded; `VmRSS` for a process), in bytes; absent when
    /// nothing measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_mem_bytes: Option<u64>,
    /// Of the server's memory, the anonymous (user-space) part, in bytes: the cgroup's
    /// `rss` (v1) or `anon` (v2); absent where the cgroup does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_anon_bytes: Option<u64>,
    /// Of the server's memory, the kernel's part (slab, sockets, stacks, page tables), in
    /// bytes: the cgroup's `kernel` (v2), or its usage less anonymous memory and page cache
    /// (v1); absent where the cgroup does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_kernel_bytes: Option<u64>,
    /// Load-generator CPU, in percent of one core.
    pub loadgen_cpu_percent: f64,
    /// Load-generator memory (page cache excluded), in bytes.
    pub loadgen_mem_bytes: u64,
    /// The server's `connections_current` at this second, if read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
    /// The server's cumulative `deliveries` at this second, if read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliveries: Option<u64>,
    /// The server's cumulative `chat_in` at this second, if read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_in: Option<u64>,
    /// The server's cumulative `dropped_slow` at this second, if read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_slow: Option<u64>,
    /// The server's cumulative `dropped_ratelimit` at this second, if read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_ratelimit: Option<u64>,
    /// Each k6 instance of a split run at this second, in instance order (the
    /// `loadgen_*` fields above are their sums); empty with one load generator.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loadgen_instances: Vec<InstanceSample>,
}

/// One k6 instance's container at one second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct InstanceSample {
    /// CPU, in percent of one core of its host.
    pub cpu_percent: f64,
    /// Memory (page cache excluded), in bytes.
    pub mem_bytes: u64,
}

/// Why a result file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file is not valid JSON of this schema.
    #[error("not a wscbench result: {source}")]
    Malformed {
        /// The underlying parse error.
        #[source]
        source: serde_json::Error,
    },
    /// A version-1 file that could not be migrated.
    #[error("cannot migrate a schema_version 1 result: {detail}")]
    Migration {
        /// What was wrong.
        detail: String,
    },
    /// The file was written by a newer wscbench.
    #[error("schema_version {found} is newer than this wscbench understands ({SCHEMA_VERSION})")]
    TooNew {
        /// The version found in the file.
        found: u32,
    },
}

impl RunResult {
    /// The deliveries the accepted chats asked for: `chat_accepted` × (members − 1), the one
    /// room's members being the server's open connections. Where clients come and go (the
    /// saturation steps), the members are those of each second of the series, weighted by the
    /// chats accepted in that second; absent when the seconds with a member count saw fewer than
    /// half of the accepted chats (the server did not answer /stats in the others). A result
    /// without such a series (older files) takes the connections open at the end.
    pub fn asked_deliveries(&self) -> Option<f64> {
        let stats = self.server_stats.as_ref()?;
        let others = |members: u64| members.saturating_sub(1) as f64;
        let mut weighted = (0.0, 0.0);
        for pair in self.series.windows(2) {
            let accepted =
                |s: &Sample| Some(s.chat_in?.saturating_sub(s.dropped_ratelimit.unwrap_or(0)));
            let (Some(before), Some(after), Some(members)) =
                (accepted(&pair[0]), accepted(&pair[1]), pair[1].connections)
            else {
                continue;
            };
            let chats = after.saturating_sub(before) as f64;
            weighted.0 += chats * others(members);
            weighted.1 += chats;
        }
        if self.series.iter().any(|s| s.chat_in.is_some()) {
            // A series whose /stats reads went unanswered (a server too busy to answer) leaves
            // chats without a member count: an estimate from the seconds that answered would
            // weigh a different room, so the figure is absent, not guessed.
            let accepted = stats.chat_accepted as f64;
            if weighted.1 < 0.5 * accepted {
                return None;
            }
            return Some(accepted * weighted.0 / weighted.1);
        }
        Some(stats.chat_accepted as f64 * others(stats.connections_current))
    }

    /// The share of what a load-curve step offered that the clients received: what they
    /// received of the deliveries the accepted chats asked for ([`RunResult::asked_deliveries`],
    /// so a join ramp's chats, sent to a room still filling, ask only for its members), times
    /// the chats the server accepted of those the clients' schedule intended. 1 when every
    /// intended chat reached every member; absent without the load generator's counts or
    /// the server's.
    pub fn delivered_of_offered(&self) -> Option<f64> {
        let k6 = self.k6.as_ref()?;
        let intended = k6.chats?.intended;
        let accepted = self.server_stats.as_ref()?.chat_accepted;
        // Rooms smaller than the clients: each chat asks its room, not every connection.
        let asked = match &self.curve {
            Some(c) if c.room_size < c.clients => {
                accepted as f64 * c.room_size.saturating_sub(1) as f64
            }
            _ => self.asked_deliveries()?,
        };
        (intended > 0 && asked > 0.0)
            .then(|| k6.chat_received as f64 / asked * (accepted as f64 / intended as f64).min(1.0))
    }

    /// Parses a result file's contents, rejecting malformed JSON and newer schemas.
    pub fn from_json(text: &str) -> Result<Self, ReadError> {
        #[derive(Deserialize)]
        struct Version {
            schema_version: u32,
        }
        let version: Version =
            serde_json::from_str(text).map_err(|source| ReadError::Malformed { source })?;
        if version.schema_version > SCHEMA_VERSION {
            return Err(ReadError::TooNew {
                found: version.schema_version,
            });
        }
        if version.schema_version < SCHEMA_VERSION {
            let mut value: serde_json::Value =
                serde_json::from_str(text).map_err(|source| ReadError::Malformed { source })?;
            if version.schema_version < 2 {
                value = migrate_v1(value)?;
            }
            return serde_json::from_value(migrate_v2(value)?)
                .map_err(|source| ReadError::Malformed { source });
        }
        serde_json::from_str(text).map_err(|source| ReadError::Malformed { source })
    }

    /// The point this result measured, without its run.
    pub fn point(&self) -> PointKey {
        PointKey {
            server: self.server.id.clone(),
            variant: self.variant.clone(),
            scenario: self.scenario,
            load_params: dimensions::params_text(&self.load_params),
            transport: self.transport,
        }
    }

    /// `profile-b/go`, or `profile-b/go@variant`.
    pub fn server_label(&self) -> String {
        dimensions::server_label(&self.server.id, self.variant.as_deref())
    }

    /// Where this result lives inside its run directory.
    pub fn relative_path(&self) -> std::path::PathBuf {
        result_relative_path(
            &self.server.id,
            self.variant.as_deref(),
            self.scenario,
            &self.load_params,
            self.transport,
            self.repetition,
        )
    }

    /// The result as pretty JSON, as written to disk.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("RunResult always serializes")
    }

    /// True when the numbers of this result can be compared: the scenario ran to the end.
    pub fn is_ok(&self) -> bool {
        self.outcome == Outcome::Ok
    }
}

/// Version 1 → 2: the English load-generator reason becomes one `legacy` reason; every field
/// added in 2 has a default (load path `js`, the only one version 1 had).
fn migrate_v1(mut value: serde_json::Value) -> Result<serde_json::Value, ReadError> {
    let object = value.as_object_mut().ok_or_else(|| ReadError::Migration {
        detail: "not a JSON object".into(),
    })?;
    let reason = object.remove("loadgen_bound_reason");
    if let Some(serde_json::Value::String(text)) = reason {
        object.insert(
            "loadgen_bound_reasons".into(),
            serde_json::json!([{ "kind": "legacy", "text": text }]),
        );
    }
    object.insert("schema_version".into(), SCHEMA_VERSION.into());
    Ok(value)
}

/// Version 2 → 3: `quick` then meant the seed's lengths, which are now [`Mode::Seed`]; every
/// field added in 3 is optional or defaults (transport `ws`).
fn migrate_v2(mut value: serde_json::Value) -> Result<serde_json::Value, ReadError> {
    let object = value.as_object_mut().ok_or_else(|| ReadError::Migration {
        detail: "not a JSON object".into(),
    })?;
    if object.get("mode").and_then(|m| m.as_str()) == Some("quick") {
        object.insert("mode".into(), "seed".into());
    }
    object.insert("schema_version".into(), SCHEMA_VERSION.into());
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_1_result_reads_as_the_current_version_with_its_reason_kept() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../results/20261122-005656/profile-a/go/burst.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains("\"schema_version\": 1"));
        let result = RunResult::from_json(&text).unwrap();
        assert_eq!(result.schema_version, SCHEMA_VERSION);
        assert_eq!(result.scenario, Scenario::Burst);
        assert_eq!(
            result.mode,
            Mode::Seed,
            "version 1's quick was the seed's lengths"
        );
        assert_eq!(result.transport, Transport::Ws);
        assert!(result.negotiated.is_empty());
        assert_eq!(
            result.server_stats.as_ref().unwrap().bytes_written,
            None,
            "a server that did not count bytes reads as not counting them, not as zero"
        );
        assert_eq!(result.derived.bytes_written_per_delivery, None);
        assert!(result.errors.failed_connect_reasons.is_empty());
        assert_eq!(result.round, None);
        assert_eq!(result.load_path, LoadPath::Js);
        assert!(result.loadgen_bound);
        match &result.loadgen_bound_reasons[..] {
            [BoundReason::Legacy { text }] => assert!(text.contains("k6 received"), "{text}"),
            other => panic!("expected one legacy reason, got {other:?}"),
        }
        assert_eq!(
            result.relative_path(),
            std::path::PathBuf::from("profile-a/go/burst.json")
        );
    }

    #[test]
    fn a_version_2_quick_result_reads_as_seed_mode_and_a_current_one_keeps_quick() {
        let v1 = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../results/20261122-005656/profile-a/go/burst.json"
        );
        let mut current = RunResult::from_json(&std::fs::read_to_string(v1).unwrap()).unwrap();
        current.mode = Mode::Quick;
        let text = current.to_json();
        assert_eq!(RunResult::from_json(&text).unwrap().mode, Mode::Quick);
        let v2 = text.replace("\"schema_version\": 3", "\"schema_version\": 2");
        assert_ne!(v2, text);
        let read = RunResult::from_json(&v2).unwrap();
        assert_eq!(read.mode, Mode::Seed);
        assert_eq!(read.schema_version, SCHEMA_VERSION);
    }

    #[test]
    fn absent_server_usage_is_left_out_and_an_older_sample_reads_as_measured() {
        let absent = Sample {
            t_ms: 1000,
            ..Sample::default()
        };
        let json = serde_json::to_string(&absent).unwrap();
        assert!(!json.contains("server_cpu_percent"), "{json}");
        assert!(!json.contains("server_mem_bytes"), "{json}");
        let older = r#"{"t_ms":1000,"server_cpu_percent":0.0,"server_mem_bytes":0,
            "loadgen_cpu_percent":1.0,"loadgen_mem_bytes":2}"#;
        let sample: Sample = serde_json::from_str(older).unwrap();
        assert_eq!(
            sample.server_cpu_percent,
            Some(0.0),
            "a measured 0 stays measured"
        );
        assert_eq!(sample.server_mem_bytes, Some(0));
        for (source, text) in [
            (UsageSource::Absent, r#"{"kind":"absent"}"#),
            (
                UsageSource::Process { pid: 42 },
                r#"{"kind":"process","pid":42}"#,
            ),
            (
                UsageSource::Container {
                    container: "c".into(),
                },
                r#"{"kind":"container","container":"c"}"#,
            ),
        ] {
            assert_eq!(serde_json::to_string(&source).unwrap(), text);
            assert_eq!(serde_json::from_str::<UsageSource>(text).unwrap(), source);
        }
    }

    #[test]
    fn a_transport_reads_and_writes_under_its_own_name() {
        let json = serde_json::to_string(&Transport::WssDeflate).unwrap();
        assert_eq!(json, "\"wss+deflate\"");
        assert_eq!(Transport::WssDeflate.as_str(), "wss+deflate");
        let back: Transport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, Transport::WssDeflate);
    }

    #[test]
    fn a_wss_result_with_its_negotiation_and_bytes_round_trips_under_its_own_path() {
        let v1 = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../results/20261122-005656/profile-a/go/burst.json"
        );
        let mut result = RunResult::from_json(&std::fs::read_to_string(v1).unwrap()).unwrap();
        result.transport = Transport::WssDeflate;
        result.negotiated = vec![Negotiated {
            tls_version: Some("TLS 1.3".into()),
            tls_cipher_suite: Some("TLS_AES_128_GCM_SHA256".into()),
            deflate: DeflateParams::parse("permessage-deflate; server_no_context_takeover"),
            sessions: 10,
        }];
        result.server_stats.as_mut().unwrap().bytes_written = Some(12_345);
        result.derived.bytes_written_per_delivery = Some(41.5);
        let text = result.to_json();
        assert!(text.contains("\"transport\": \"wss+deflate\""), "{text}");
        assert_eq!(RunResult::from_json(&text).unwrap(), result);
        assert_eq!(
            result.relative_path(),
            std::path::PathBuf::from("profile-a/go/burst.wss+deflate.json")
        );
    }

    #[test]
    fn a_newer_schema_is_refused_with_its_version() {
        let err = RunResult::from_json(r#"{"schema_version": 99}"#).unwrap_err();
        assert!(matches!(err, ReadError::TooNew { found: 99 }), "{err}");
    }
}
