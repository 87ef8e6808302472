//! The capacity and soak tables: one row per server, worded from the verdicts the engine
//! stored, as snapshots in every format.

mod common;

use common::{RUN, result};
use wscbench_report::{Format, Report};
use wscbench_results::{
    BoundReason, Capacity, CapacityStep, IdleCapacity, IdleLimit, KpiVerdict, Mode, RunResult,
    Scenario, SoakKpis, StepReason,
};

const MIB: u64 = 1 << 20;

fn step(clients: u64, p95_ms: f64, mem_mib: u64, reasons: Vec<StepReason>) -> CapacityStep {
    CapacityStep {
        clients,
        from_ms: 10_000,
        to_ms: 30_000,
        chat_sent: clients * 20,
        chat_received: clients * 20 * 49,
        latency_p50_ms: Some(p95_ms / 3.0),
        latency_p95_ms: Some(p95_ms),
        latency_p99_ms: Some(p95_ms * 2.0),
        deliveries: clients * 20 * 49,
        chat_in: clients * 20,
        server_peak_mem_bytes: mem_mib * MIB,
        held: reasons.is_empty(),
        reasons,
        ..CapacityStep::default()
    }
}

/// A capacity result whose steps held up to `held` and broke at the next for `why`.
fn capacity(server: &str, steps: Vec<CapacityStep>) -> RunResult {
    let mut r = result(RUN, server, "steady");
    r.scenario = Scenario::Capacity;
    let broke = steps.iter().find(|s| !s.held);
    r.capacity = Some(Capacity {
        slo_p95_ms: 50.0,
        room_size: 50,
        member_chats_per_s: 1.0,
        max_clients_held: steps
            .iter()
            .take_while(|s| s.held)
            .last()
            .map(|s| s.clients),
        broke_at_clients: broke.map(|s| s.clients),
        broke_because: broke.map(|s| s.reasons.clone()).unwrap_or_default(),
        // The engine's slope over the held steps (crates/wscbench-engine/src/judge/capacity.rs).
        server_bytes_per_client: (steps.iter().take_while(|s| s.held).count() >= 2)
            .then_some(20_971.52),
        steps,
    });
    r
}

fn idle(
    server: &str,
    clients_held: u64,
    bytes_per_client: f64,
    limited_by: IdleLimit,
) -> RunResult {
    let mut r = result(RUN, server, "steady");
    r.scenario = Scenario::IdleCapacity;
    r.idle = Some(IdleCapacity {
        clients_held,
        bytes_per_client: Some(bytes_per_client),
        peak_mem_bytes: 470 * MIB,
        memory_limit_bytes: 512 * MIB,
        limited_by,
        ..IdleCapacity::default()
    });
    r
}

fn capacity_run() -> Vec<RunResult> {
    vec![
        idle("profile-b/go", 15_000, 28_400.0, IdleLimit::MemoryNearLimit),
        idle("profile-a/rust", 30_000, 6_100.0, IdleLimit::AllHeld),
        capacity(
            "profile-b/go",
            vec![
                step(100, 1.2, 12, vec![]),
                step(200, 1.9, 14, vec![]),
                step(500, 7.5, 20, vec![]),
                step(
                    1000,
                    74.0,
                    31,
                    vec![StepReason::LatencyOverTarget {
                        p95_ms: 74.0,
                        target_ms: 50.0,
                    }],
                ),
            ],
        ),
        capacity(
            "profile-b/rust",
            vec![
                step(100, 0.8, 3, vec![]),
                step(200, 1.1, 4, vec![]),
                step(500, 2.0, 6, vec![]),
                step(
                    1000,
                    9.0,
                    9,
                    vec![StepReason::LoadgenLimit {
                        reasons: vec![BoundReason::LoadgenCpuSaturated {
                            busy_s: 18,
                            measured_s: 20,
                            ceiling_percent: 200.0,
                        }],
                    }],
                ),
            ],
        ),
        capacity(
            "profile-a/zig",
            vec![step(
                100,
                2.0,
                5,
                vec![StepReason::ServerDrops {
                    dropped_slow: 300,
                    dropped_ratelimit: 0,
                    drop_ratio: 0.003,
                }],
            )],
        ),
    ]
}

#[test]
fn the_capacity_table_in_every_format() {
    let report = Report::from_selected(&capacity_run());
    let table = report
        .tables
        .iter()
        .find(|t| t.title.starts_with("Capacity"))
        .expect("a capacity table");
    let single = Report {
        notes: Vec::new(),
        scorecards: Vec::new(),
        tables: vec![table.clone()],
    };
    insta::assert_snapshot!("capacity_terminal", Format::Terminal.render(&single));
    insta::assert_snapshot!("capacity_markdown", Format::Markdown.render(&single));
    insta::assert_snapshot!("capacity_json", Format::Json.render(&single));
}

#[test]
fn capacity_rows_rank_by_clients_held_and_name_the_load_generator_before_the_server() {
    let report = Report::from_selected(&capacity_run());
    let table = report
        .tables
        .iter()
        .find(|t| t.title.starts_with("Capacity"))
        .unwrap();
    let held: Vec<&str> = table
        .rows
        .iter()
        .map(|r| r.cells[1].text.as_str())
        .collect();
    // Ties (and servers without a capacity run) follow in label order.
    assert_eq!(held, ["500", "500", "—", "none"]);
    let idle_limit: Vec<&str> = table
        .rows
        .iter()
        .map(|r| r.cells[8].text.as_str())
        .collect();
    assert_eq!(
        idle_limit,
        [
            "memory at 90 % of 512.0 MiB",
            "—",
            "none: every step held (add steps)",
            "—"
        ]
    );
    assert!(
        table.rows[1].cells[4].text.starts_with("load generator"),
        "{:?}",
        table.rows[1].cells[4]
    );
    // Memory per client is the engine's figure, shown where it was measured.
    let memory: Vec<&str> = table
        .rows
        .iter()
        .map(|r| r.cells[5].text.as_str())
        .collect();
    assert_eq!(memory, ["20.5 KiB", "20.5 KiB", "—", "—"]);
}

fn soak(server: &str, slope: f64, drift: f64, errors: u64) -> RunResult {
    let mut r = result(RUN, server, "steady");
    r.mode = Mode::Soak;
    let verdict = |kpi: &str, pass: Option<bool>, threshold: &str| KpiVerdict {
        kpi: kpi.into(),
        pass,
        threshold: threshold.into(),
    };
    r.soak = Some(SoakKpis {
        warmup_s: 120.0,
        measured_s: 1680.0,
        memory_slope_mib_per_h: Some(slope),
        throughput_drift_ratio: Some(drift),
        latency_p95_first_ms: Some(0.61),
        latency_p95_last_ms: Some(0.66),
        errors,
        errors_last_tenth: errors / 2,
        dropped: 0,
        drop_ratio: 0.0,
        verdicts: vec![
            verdict("memory_slope", Some(slope <= 10.0), "≤ 10 MiB/h"),
            verdict("throughput_drift", Some(drift.abs() <= 0.05), "within ±5 %"),
            verdict("latency_drift", None, "p95 up ≤ 50 % or ≤ 1 ms"),
            verdict("errors", Some(errors == 0), "none"),
            verdict("drops", Some(true), "< 0.1 %"),
        ],
    });
    r
}

#[test]
fn the_soak_table_gives_each_kpi_and_a_verdict() {
    let results = vec![
        soak("profile-b/go", 0.4, -0.002, 0),
        soak("profile-b/rust", 14.2, 0.001, 0),
        soak("profile-b/zig", -0.1, -0.08, 6),
    ];
    let report = Report::from_selected(&results);
    let table = report
        .tables
        .iter()
        .find(|t| t.title == "Soak KPIs")
        .expect("a soak table");
    let single = Report {
        notes: Vec::new(),
        scorecards: Vec::new(),
        tables: vec![table.clone()],
    };
    insta::assert_snapshot!("soak_terminal", Format::Terminal.render(&single));
    insta::assert_snapshot!("soak_markdown", Format::Markdown.render(&single));
    let verdicts: Vec<&str> = table
        .rows
        .iter()
        .map(|r| r.cells[8].text.as_str())
        .collect();
    assert_eq!(
        verdicts,
        [
            "pass (1 not measured)",
            "fail: memory slope",
            "fail: throughput drift, errors"
        ]
    );
}

#[test]
fn the_html_page_shows_the_capacity_table_even_with_idle_results_alone() {
    let results = vec![idle(
        "profile-b/go",
        15_000,
        28_400.0,
        IdleLimit::MemoryNearLimit,
    )];
    let report = Report::from_selected(&results);
    let page = wscbench_report::html::render_page(
        &results,
        &report,
        &wscbench_report::html::PageContext {
            command: None,
            manifest: None,
        },
    );
    assert!(
        page.contains("Capacity — most clients held"),
        "no capacity table"
    );
    assert!(page.contains("memory at 90 % of 512.0 MiB"));
}

#[test]
fn results_without_capacity_or_soak_have_neither_table() {
    let report = Report::from_selected(&[result(RUN, "profile-b/go", "steady")]);
    assert!(
        report
            .tables
            .iter()
            .all(|t| !t.title.starts_with("Capacity") && t.title != "Soak KPIs")
    );
}

#[test]
fn the_idle_cost_table_splits_each_servers_cost_per_connection() {
    let mut cheap = idle("profile-a/rust", 30_000, 6_100.0, IdleLimit::AllHeld);
    let i = cheap.idle.as_mut().unwrap();
    i.user_bytes_per_client = Some(2_100.0);
    i.kernel_bytes_per_client = Some(4_000.0);
    i.loadgen_bytes_per_client = Some(9_000.0);
    cheap.conditions.host_limits = Some(wscbench_results::HostLimits {
        clients: 30_000,
        source_addresses: vec!["127.0.0.2".into(), "127.0.0.3".into()],
        ports_per_address: 28_232,
        ip_local_port_range: "32768 60999".into(),
        server_nofile: 31_024,
        loadgen_nofile: 31_024,
        nofile_ceiling: 1_048_576,
    });
    let dear = idle("profile-b/go", 15_000, 28_400.0, IdleLimit::MemoryNearLimit);
    let report = Report::from_selected(&[dear, cheap]);
    let table = report
        .tables
        .iter()
        .find(|t| t.title == "Capacity — what one idle connection costs")
        .expect("an idle-cost table");
    let text: Vec<Vec<&str>> = table
        .rows
        .iter()
        .map(|r| r.cells.iter().map(|c| c.text.as_str()).collect())
        .collect();
    assert_eq!(text[0][0], "profile-a/rust (Rust)", "cheapest total first");
    assert_eq!(
        &text[0][1..],
        [
            "30,000",
            "2.1 KiB",
            "3.9 KiB",
            "6.0 KiB",
            "8.8 KiB",
            "2 source address(es), nofile 31,024 / k6 31,024"
        ]
    );
    assert_eq!(text[1][2], "—", "no split measured: {:?}", text[1]);
}
