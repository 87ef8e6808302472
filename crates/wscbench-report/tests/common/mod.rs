//! Plausible results for tests: six servers, four scenarios, one failed server and one
//! load-generator bound run, plus a writer that lays them out as `wscbench run` does.

#![allow(dead_code)] // each test file uses a different part

use std::fs;
use std::path::Path;

use wscbench_results::{
    BoundReason, Conditions, Derived, ErrorCounts, K6Metrics, LatencyMs, LatencySource, LoadParam,
    LoadPath, Mode, Outcome, RunResult, SCHEMA_VERSION, ServerIdentity, ServerStats, Usage,
};

pub const RUN: &str = "20261121-143005";
const MIB: u64 = 1024 * 1024;

/// What sets one server apart from the others, before a scenario scales it.
struct Server {
    id: &'static str,
    framework: &'static str,
    /// Share of the offered load it sustains under saturation.
    capacity: f64,
    mem_mib: f64,
    cpu_percent: f64,
    p95_ms: f64,
    binary_bytes: u64,
    image_bytes: u64,
}

const SERVERS: [Server; 6] = [
    Server {
        id: "profile-a/go",
        framework: "GoFiber v2 + gofiber/contrib/websocket",
        capacity: 0.82,
        mem_mib: 38.2,
        cpu_percent: 143.2,
        p95_ms: 4.1,
        binary_bytes: 8_283_750,
        image_bytes: 8_420_000,
    },
    Server {
        id: "profile-a/rust",
        framework: "axum 0.8 (axum::extract::ws)",
        capacity: 0.97,
        mem_mib: 12.6,
        cpu_percent: 98.7,
        p95_ms: 2.3,
        binary_bytes: 3_145_728,
        image_bytes: 3_300_000,
    },
    Server {
        id: "profile-a/zig",
        framework: "Zig 0.17 over libwebsockets 4.1 (C)",
        capacity: 0.91,
        mem_mib: 6.4,
        cpu_percent: 112.5,
        p95_ms: 2.9,
        binary_bytes: 2_411_724,
        image_bytes: 2_500_000,
    },
    Server {
        id: "profile-b/go",
        framework: "net/http + gorilla/websocket v1.5.3",
        capacity: 0.74,
        mem_mib: 31.9,
        cpu_percent: 155.0,
        p95_ms: 5.6,
        binary_bytes: 6_920_000,
        image_bytes: 7_050_000,
    },
    Server {
        id: "profile-b/rust",
        framework: "tokio + tokio-tungstenite 0.30",
        capacity: 1.0,
        mem_mib: 4.1,
        cpu_percent: 61.0,
        p95_ms: 1.8,
        binary_bytes: 1_048_576,
        image_bytes: 1_150_000,
    },
    Server {
        id: "profile-b/zig",
        framework: "Zig 0.17.1 std only (std.http.Server WebSocket, std.Io.Threaded)",
        capacity: 0.88,
        mem_mib: 2.2,
        cpu_percent: 104.9,
        p95_ms: 3.2,
        binary_bytes: 655_360,
        image_bytes: 700_000,
    },
];

pub const SERVER_IDS: [&str; 6] = [
    "profile-a/go",
    "profile-a/rust",
    "profile-a/zig",
    "profile-b/go",
    "profile-b/rust",
    "profile-b/zig",
];
pub const SCENARIOS: [&str; 4] = ["steady", "burst", "churn", "saturation"];

/// An `ok` result of one server under one scenario, with figures that differ by
/// server and scale by scenario as a real run's would.
#[allow(clippy::too_many_lines)] // one literal result, field by field: splitting it would hide the shape
pub fn result(run_id: &str, server_id: &str, scenario: &str) -> RunResult {
    let server = SERVERS
        .iter()
        .find(|s| s.id == server_id)
        .expect("a known server id");
    let (profile, language) = server_id.split_once('/').expect("profile-x/language");
    let profile = profile.trim_start_matches("profile-");
    let scenario_index = SCENARIOS
        .iter()
        .position(|s| *s == scenario)
        .expect("a known scenario") as u64;

    // (members, offered chats per second, seconds)
    let (members, offered, seconds) = match scenario {
        "steady" => (100u64, 1_000.0, 60u64),
        "burst" => (200, 4_000.0, 30),
        "churn" => (50, 50.0, 60),
        _ => (500, 25_000.0, 60),
    };
    let accepted_per_s = if scenario == "saturation" {
        offered * server.capacity
    } else {
        offered
    };
    let chat_accepted = (accepted_per_s * seconds as f64) as u64;
    let chat_in = (offered * seconds as f64) as u64;
    let deliveries = chat_accepted * (members - 1);
    let connections_total = if scenario == "churn" {
        12_000 + (server.capacity * 1_000.0) as u64
    } else {
        members
    };
    let load = if scenario == "steady" { 1.0 } else { 1.4 };

    RunResult {
        schema_version: SCHEMA_VERSION,
        run_id: run_id.to_string(),
        server: ServerIdentity {
            id: server_id.to_string(),
            image: format!("wsc{}-{language}", if profile == "a" { "a" } else { "" }),
            language: language.to_string(),
            profile: profile.to_string(),
            framework: server.framework.to_string(),
            source_hash: "3f9a1c0d".to_string(),
            binary_size_bytes: Some(server.binary_bytes),
            image_size_bytes: Some(server.image_bytes),
        },
        variant: None,
        scenario: scenario.parse().expect("a known scenario"),
        load_params: Default::default(),
        repetition: Default::default(),
        round: None,
        transport: Default::default(),
        negotiated: Vec::new(),
        external_url: None,
        server_usage_source: Default::default(),
        mode: Mode::Quick,
        load_path: LoadPath::Js,
        conditions: Conditions {
            server_cpus: 2.0,
            server_memory_bytes: 512 * MIB,
            cpuset_server: None,
            cpuset_loadgen: None,
            machine_cores: 2,
            cpu_model: None,
            cpu_mhz: None,
            kernel: "6.1.0-28-amd64".to_string(),
            docker_version: "20.10.24".to_string(),
            docker_api_version: "1.41".to_string(),
            k6_version: "v1.8.1".to_string(),
            loadgen_memory_bytes: None,
            container_hardening: Vec::new(),
            variant_args: Vec::new(),
            variant_env: Vec::new(),
            loadgen_engines: Vec::new(),
            server_address: None,
            pause_server: None,
            host_limits: None,
        },
        started_at: started_at(run_id, scenario_index),
        duration_ms: seconds * 1_000,
        overhead_ms: 4_200,
        outcome: Outcome::Ok,
        outcome_detail: None,
        server_stats: Some(ServerStats {
            server: format!("wsc-{language}"),
            uptime_ms: seconds * 1_000 + 3_000,
            connections_current: members,
            connections_total,
            joins: connections_total,
            frames_in: chat_in + connections_total,
            chat_in,
            chat_accepted,
            deliveries,
            dropped_ratelimit: chat_in - chat_accepted,
            dropped_slow: 0,
            malformed: 0,
            bytes_written: None,
        }),
        k6: Some(K6Metrics {
            sessions: connections_total,
            sessions_closed: connections_total,
            connect_p95_ms: 1.7,
            ws_msgs_sent: chat_in + connections_total,
            ws_msgs_received: deliveries + connections_total,
            chat_sent: chat_in,
            chat_received: deliveries,
            latency: LatencyMs {
                avg_ms: server.p95_ms * load / 3.0,
                p50_ms: server.p95_ms * load / 2.5,
                p95_ms: server.p95_ms * load,
                p99_ms: server.p95_ms * load * 1.8,
                max_ms: server.p95_ms * load * 6.0,
                ..LatencyMs::default()
            },
            latency_source: LatencySource::K6Trend,
            latency_probe_every: 1,
            malformed: 0,
            service_time: None,
            chats: None,
        }),
        errors: ErrorCounts {
            failed_connects: 0,
            abnormal_closes: if scenario == "churn" && language == "go" {
                3
            } else {
                0
            },
            script_errors: 0,
            failed_connect_reasons: Default::default(),
        },
        derived: Derived {
            throughput_msgs_per_s: chat_accepted as f64 / seconds as f64,
            deliveries_per_s: deliveries as f64 / seconds as f64,
            drop_rate_ratio: (chat_in - chat_accepted) as f64 / chat_in as f64,
            received_ratio: None,
            deliveries_per_server_cpu_s: None,
            bytes_written_per_delivery: None,
            server: Some(Usage {
                peak_cpu_percent: (server.cpu_percent * load).min(200.0),
                mean_cpu_percent: server.cpu_percent * load * 0.8,
                peak_mem_bytes: (server.mem_mib * load * MIB as f64) as u64,
                cpu_limit_percent: 200.0,
                cpu_seconds: 0.0,
            }),
            loadgen: Usage {
                peak_cpu_percent: 88.0 * load,
                mean_cpu_percent: 71.5 * load,
                peak_mem_bytes: 180 * MIB,
                cpu_limit_percent: 200.0,
                cpu_seconds: 0.0,
            },
        },
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

/// The same start time for a given run id and scenario on every call.
fn started_at(run_id: &str, scenario_index: u64) -> String {
    // run ids are `YYYYMMDD-HHMMSS`
    let (date, time) = run_id.split_once('-').unwrap_or(("20261121", "143005"));
    let minute: u64 = time[2..4].parse().unwrap_or(0) + scenario_index * 5;
    format!(
        "{}-{}-{}T{}:{:02}:{}Z",
        &date[0..4],
        &date[4..6],
        &date[6..8],
        &time[0..2],
        minute % 60,
        &time[4..6]
    )
}

/// The run failed with this outcome: no stats, no k6 summary, no figures.
pub fn failed(mut result: RunResult, outcome: Outcome, detail: &str) -> RunResult {
    result.outcome = outcome;
    result.outcome_detail = Some(detail.to_string());
    result.server_stats = None;
    result.k6 = None;
    result.derived = Derived::default();
    result
}

/// The run was judged load-generator bound for this reason.
pub fn loadgen_bound(mut result: RunResult, reason: BoundReason) -> RunResult {
    result.loadgen_bound = true;
    result.loadgen_bound_reasons = vec![reason];
    result.derived.loadgen.peak_cpu_percent = 197.9;
    result.derived.loadgen.mean_cpu_percent = 184.3;
    // A saturated k6 falls behind reading what the server sent.
    let deliveries = result
        .server_stats
        .as_ref()
        .map_or(0, |stats| stats.deliveries);
    if let Some(k6) = result.k6.as_mut() {
        k6.chat_received = deliveries / 1000 * 962;
    }
    result
}

/// A full run of all six servers: profile-a/zig failed verification, profile-b/rust
/// was load-generator bound under saturation, and profile-a/rust has no churn result.
pub fn full_run() -> Vec<RunResult> {
    let mut results = Vec::new();
    for id in SERVER_IDS {
        for scenario in SCENARIOS {
            if id == "profile-a/rust" && scenario == "churn" {
                continue;
            }
            let mut r = result(RUN, id, scenario);
            if id == "profile-a/zig" {
                r = failed(
                    r,
                    Outcome::VerifyFailed,
                    "broadcast did not reach the joiner",
                );
            }
            if id == "profile-b/rust" && scenario == "saturation" {
                r = loadgen_bound(
                    r,
                    BoundReason::LoadgenCpuSaturated {
                        busy_s: 80,
                        measured_s: 99,
                        ceiling_percent: 200.0,
                    },
                );
            }
            results.push(r);
        }
    }
    results
}

/// Repetitions of one point: one result per throughput given, `repetition {index, of}`
/// set, and throughput and deliveries (×99 recipients) set to it.
pub fn repetitions(
    run_id: &str,
    server_id: &str,
    scenario: &str,
    throughputs: &[f64],
) -> Vec<RunResult> {
    throughputs
        .iter()
        .enumerate()
        .map(|(i, &throughput)| {
            let mut r = result(run_id, server_id, scenario);
            r.repetition = wscbench_results::Repetition {
                index: i as u32 + 1,
                of: throughputs.len() as u32,
            };
            r.derived.throughput_msgs_per_s = throughput;
            r.derived.deliveries_per_s = throughput * 99.0;
            r
        })
        .collect()
}

/// Writes results as `wscbench run` does:
/// `<dir>/<run-id>/<server-id>/<scenario>[.rep-N].json`.
pub fn write(dir: &Path, results: &[RunResult]) {
    for r in results {
        let path = dir.join(&r.run_id).join(r.relative_path());
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, r.to_json()).unwrap();
    }
}

/// A fan-out point of `server_id` at `room_size`: the deliveries asked are the same for every
/// size, the latency p99 grows with the room.
pub fn fanout(run_id: &str, server_id: &str, room_size: u64) -> RunResult {
    let mut r = result(run_id, server_id, "steady");
    r.scenario = wscbench_results::Scenario::Fanout;
    r.load_params.insert(LoadParam::RoomSize, room_size as f64);
    let scale = (room_size as f64).log10();
    r.derived.deliveries_per_s = 8_000.0 - 50.0 * scale;
    r.derived.deliveries_per_server_cpu_s = Some(40_000.0 / (1.0 + scale));
    if let Some(k6) = &mut r.k6 {
        k6.latency.p99_ms = 1.0 + scale;
    }
    if let Some(server) = &mut r.derived.server {
        server.peak_mem_bytes = (20 + room_size / 100) * MIB;
    }
    r
}

/// A slow-consumers result of `server_id`: healthy p99 `before_ms` then `while_ms`, recovered
/// after `recovery_s` (`None`: never), `closed` slow clients disconnected.
pub fn slow_consumers(
    run_id: &str,
    server_id: &str,
    before_ms: f64,
    while_ms: f64,
    recovery_s: Option<f64>,
    closed: u64,
) -> RunResult {
    let mut r = result(run_id, server_id, "steady");
    r.scenario = wscbench_results::Scenario::SlowConsumers;
    let per_s: Vec<Option<f64>> = (0..42)
        .map(|s| match s {
            0..=1 => None,
            12..=26 => Some(while_ms),
            27..=29 if recovery_s.is_none_or(|r| r > 0.0) => Some(while_ms / 2.0),
            _ => Some(before_ms),
        })
        .collect();
    r.slow_consumers = Some(wscbench_results::SlowConsumers {
        slow_clients: 30,
        clients: 300,
        healthy_p99_baseline_ms: Some(before_ms),
        healthy_p99_slow_ms: Some(while_ms),
        healthy_p99_ratio: Some(while_ms / before_ms),
        recovery_s,
        memory_baseline_bytes: Some(10 * MIB),
        memory_peak_slow_bytes: Some(10 * MIB + 30 * 70_000),
        memory_per_slow_client_bytes: Some(70_000.0),
        dropped_slow: 12_345,
        slow_closed_by_server: closed,
        slow_first_closed_s: (closed > 0).then_some(4.25),
        slow_received: 9_000,
        slow_phase_s: [12.0, 27.0],
        per_s_start_s: -0.4,
        healthy_p99_per_s_ms: per_s,
    });
    r
}

/// A run of the two room scenarios: fan-out at four room sizes for two servers, slow
/// consumers for three (one never recovered, one had slow clients closed).
pub fn rooms_run() -> Vec<RunResult> {
    let mut results = Vec::new();
    for server in ["profile-b/go", "profile-b/rust"] {
        for size in [2, 10, 100, 1000] {
            results.push(fanout(RUN, server, size));
        }
    }
    results.push(slow_consumers(RUN, "profile-b/go", 2.0, 9.0, Some(3.0), 0));
    results.push(slow_consumers(
        RUN,
        "profile-b/rust",
        1.5,
        2.0,
        Some(0.0),
        0,
    ));
    results.push(slow_consumers(RUN, "profile-b/zig", 1.8, 45.0, None, 30));
    results
}

/// One round of a load-curve step of `server_id` at `offered` deliveries per second: what
/// arrived (`delivered`, 0 to 1), latency p99 `p99_ms`, and `per_cpu_s` deliveries per server
/// CPU-second over the hold; round `round` of `of`.
pub fn curve_step(
    server_id: &str,
    offered: f64,
    (delivered, p99_ms, per_cpu_s): (f64, f64, f64),
    (round, of): (u32, u32),
) -> RunResult {
    let mut r = result(RUN, server_id, "steady");
    r.scenario = wscbench_results::Scenario::LoadCurve;
    r.mode = wscbench_results::Mode::Quick;
    r.load_params.insert(LoadParam::Deliveries, offered);
    r.repetition = wscbench_results::Repetition { index: round, of };
    r.derived.deliveries_per_s = offered * delivered;
    r.derived.deliveries_per_server_cpu_s = Some(per_cpu_s);
    // What arrived: `delivered` of what the accepted chats asked for, every intended chat
    // accepted.
    let asked = r.asked_deliveries().expect("the fixture's counters");
    let accepted = r.server_stats.as_ref().map_or(0, |s| s.chat_accepted);
    if let Some(k6) = &mut r.k6 {
        k6.latency.p99_ms = p99_ms;
        k6.chat_received = (asked * delivered).round() as u64;
        k6.chats = Some(wscbench_results::ChatSchedule {
            intended: accepted,
            sent_on_time: accepted,
            ..Default::default()
        });
    }
    r.curve = Some(wscbench_results::CurveStep {
        offered_deliveries_per_s: offered,
        room_size: 500,
        clients: 500,
        chats_per_s: offered / (500.0 * 499.0),
        offered_deliveries: Some((offered * 6.0) as u64),
        delivered_ratio: Some(delivered),
        slo_p99_ms: 50.0,
        hold_deliveries_per_server_cpu_s: Some(per_cpu_s),
        ended_point: None,
    });
    r
}

/// The load curve's steps: offered deliveries per second.
pub const STEPS: [f64; 4] = [50_000.0, 100_000.0, 200_000.0, 400_000.0];

/// A load curve: three rounds of every step of three profile-b servers: go stops carrying at the third
/// step (its p99 passes 50 ms), k6 caps rust from the third step on, zig carries them all.
pub fn curve_run() -> Vec<RunResult> {
    let mut results = Vec::new();
    for round in 1..=3u32 {
        let jitter = f64::from(round) * 0.002;
        for (i, &offered) in STEPS.iter().enumerate() {
            let go = if i >= 2 {
                (0.9995, 80.0, 600_000.0)
            } else {
                (1.0, 5.0, 600_000.0 * (1.0 + jitter))
            };
            results.push(curve_step("profile-b/go", offered, go, (round, 3)));
            let rust = curve_step(
                "profile-b/rust",
                offered,
                (1.0, 4.0, 650_000.0 * (1.0 + jitter)),
                (round, 3),
            );
            results.push(if i >= 2 {
                loadgen_bound(
                    rust,
                    BoundReason::MachineSaturated {
                        busy_s: 5,
                        measured_s: 7,
                        cores: 2,
                        loadgen_share_ratio: 0.5,
                    },
                )
            } else {
                rust
            });
            results.push(curve_step(
                "profile-b/zig",
                offered,
                (1.0, 3.0, 750_000.0 * (1.0 + jitter)),
                (round, 3),
            ));
        }
    }
    results
}
