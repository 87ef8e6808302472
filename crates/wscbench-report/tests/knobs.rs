//! Tables and charts across a knob: a sweep's load parameter or a server's variants, one
//! table per metric with the knob's values as columns and one row per server, rendered as
//! text (snapshots) and as one line per server on the HTML page.

mod common;

use common::result;
use wscbench_report::html::{PageContext, render_page};
use wscbench_report::{Format, Report, Table, knobs};
use wscbench_results::{LoadParam, Outcome, RunResult};

/// A point of a sweep: the base result scaled as a server that bends at `knee` clients would.
fn swept(server: &str, clients: f64, knee: f64, rate: Option<f64>) -> RunResult {
    let mut r = result(common::RUN, server, "saturation");
    r.load_params.insert(LoadParam::Clients, clients);
    if let Some(rate) = rate {
        r.load_params.insert(LoadParam::Rate, rate);
    }
    let kept = clients.min(knee);
    r.derived.throughput_msgs_per_s = kept * 5.0;
    r.derived.deliveries_per_s = kept * 5.0 * (clients - 1.0);
    let server = r.derived.server.as_mut().unwrap();
    server.peak_cpu_percent = 40.0 + 150.0 * kept / knee;
    server.peak_mem_bytes = (4.0 * 1048576.0 + clients * 40_000.0) as u64;
    let k6 = r.k6.as_mut().unwrap();
    k6.latency.p95_ms = 1.0 + (clients / knee).powi(3) * 20.0;
    k6.latency.p99_ms = 2.0 + (clients / knee).powi(3) * 45.0;
    r.loadgen_bound = false;
    r
}

fn sweep() -> Vec<RunResult> {
    let mut results = Vec::new();
    for (server, knee) in [
        ("profile-b/go", 700.0),
        ("profile-b/rust", 900.0),
        ("profile-a/zig", 400.0),
    ] {
        for clients in [100.0, 1000.0, 200.0] {
            // profile-a/zig never ran at 1000.
            if server == "profile-a/zig" && clients == 1000.0 {
                continue;
            }
            results.push(swept(server, clients, knee, None));
        }
    }
    results
}

fn variants() -> Vec<RunResult> {
    let mut results = Vec::new();
    for (server, variant, factor) in [
        ("profile-b/go", None, 1.0),
        ("profile-b/go", Some("gomaxprocs-1"), 0.55),
        ("profile-b/go", Some("gomaxprocs-2"), 1.0),
        ("profile-b/rust", None, 1.1),
        ("profile-b/rust", Some("tokio-1-worker"), 0.7),
    ] {
        let mut r = result(common::RUN, server, "saturation");
        r.variant = variant.map(String::from);
        r.derived.deliveries_per_s *= factor;
        r.derived.throughput_msgs_per_s *= factor;
        r.derived.server.as_mut().unwrap().peak_cpu_percent = 100.0 * factor;
        results.push(r);
    }
    results
}

fn titles(report: &Report) -> Vec<&str> {
    report.tables.iter().map(|t| t.title.as_str()).collect()
}

fn table<'a>(report: &'a Report, title: &str) -> &'a Table {
    report
        .tables
        .iter()
        .find(|t| t.title == title)
        .unwrap_or_else(|| panic!("no table `{title}` in {:?}", titles(report)))
}

#[test]
fn a_sweep_adds_one_table_per_metric_across_its_values() {
    let report = Report::from_results(&sweep());
    let across: Vec<&str> = titles(&report)
        .into_iter()
        .filter(|t| t.contains(" across "))
        .collect();
    assert_eq!(
        across,
        [
            "Saturation — Throughput (msg/s) across clients",
            "Saturation — Deliveries/s across clients",
            "Saturation — Latency p95 across clients",
            "Saturation — Latency p99 across clients",
            "Saturation — Peak CPU across clients",
            "Saturation — Peak memory across clients",
        ]
    );
    let deliveries = table(&report, "Saturation — Deliveries/s across clients");
    let columns: Vec<&str> = deliveries.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        columns,
        ["Server", "clients=100", "clients=200", "clients=1000"]
    );
    let rows: Vec<&str> = deliveries
        .rows
        .iter()
        .map(|r| r.cells[0].text.as_str())
        .collect();
    assert_eq!(rows, ["profile-a/zig", "profile-b/go", "profile-b/rust"]);
    // Like with like: each value's points rank in a profile table of their own.
    let profile_b: Vec<&str> = titles(&report)
        .into_iter()
        .filter(|t| t.starts_with("Profile B (minimal / stdlib) — Saturation"))
        .collect();
    assert_eq!(
        profile_b,
        [
            "Profile B (minimal / stdlib) — Saturation (clients=100)",
            "Profile B (minimal / stdlib) — Saturation (clients=200)",
            "Profile B (minimal / stdlib) — Saturation (clients=1000)",
        ]
    );
    // The point that never ran is absent, not zero.
    assert_eq!(deliveries.rows[0].cells[3].text, "—");
    assert_eq!(deliveries.rows[0].cells[3].value, None);
}

#[test]
fn the_knob_tables_of_a_sweep_in_markdown() {
    let report = Report::from_results(&sweep());
    let only = Report {
        notes: Vec::new(),
        scorecards: Vec::new(),
        tables: report
            .tables
            .into_iter()
            .filter(|t| t.title.contains(" across "))
            .collect(),
    };
    insta::assert_snapshot!(Format::Markdown.render(&only));
}

#[test]
fn the_knob_tables_of_variants_in_the_terminal() {
    let report = Report::from_results(&variants());
    let only = Report {
        notes: Vec::new(),
        scorecards: Vec::new(),
        tables: report
            .tables
            .into_iter()
            .filter(|t| t.title.contains(" across variant"))
            .take(2)
            .collect(),
    };
    insta::assert_snapshot!(Format::Terminal.render(&only));
}

#[test]
fn variants_are_columns_and_each_server_a_row() {
    let report = Report::from_results(&variants());
    let t = table(&report, "Saturation — Deliveries/s across variant");
    let columns: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        columns,
        [
            "Server",
            "default",
            "gomaxprocs-1",
            "gomaxprocs-2",
            "tokio-1-worker"
        ]
    );
    let rows: Vec<Vec<&str>> = t
        .rows
        .iter()
        .map(|r| r.cells.iter().map(|c| c.text.as_str()).collect())
        .collect();
    assert_eq!(rows[0][0], "profile-b/go");
    assert_eq!((rows[0][4], rows[1][2], rows[1][3]), ("—", "—", "—"));
    // The profile tables name each variant's row.
    let profile = table(&report, "Profile B (minimal / stdlib) — Saturation");
    let names: Vec<&str> = profile
        .rows
        .iter()
        .map(|r| r.cells[0].text.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "Go",
            "Go@gomaxprocs-1",
            "Go@gomaxprocs-2",
            "Rust",
            "Rust@tokio-1-worker"
        ]
    );
}

#[test]
fn like_with_like_a_second_parameter_splits_the_rows_and_a_lone_value_makes_no_table() {
    let results = vec![
        swept("profile-b/go", 100.0, 700.0, Some(1.0)),
        swept("profile-b/go", 200.0, 700.0, Some(1.0)),
        swept("profile-b/go", 100.0, 700.0, Some(5.0)),
        swept("profile-b/go", 200.0, 700.0, Some(5.0)),
    ];
    let report = Report::from_results(&results);
    let t = table(&report, "Saturation — Throughput (msg/s) across clients");
    let rows: Vec<&str> = t.rows.iter().map(|r| r.cells[0].text.as_str()).collect();
    assert_eq!(rows, ["profile-b/go rate=1", "profile-b/go rate=5"]);
    let t = table(&report, "Saturation — Throughput (msg/s) across rate");
    let rows: Vec<&str> = t.rows.iter().map(|r| r.cells[0].text.as_str()).collect();
    assert_eq!(
        rows,
        ["profile-b/go clients=100", "profile-b/go clients=200"]
    );

    // One value of a knob compares nothing.
    let lone = Report::from_results(&[swept("profile-b/go", 100.0, 700.0, None)]);
    assert!(!titles(&lone).iter().any(|t| t.contains(" across ")));
    // Without sweep or variants, no knob table at all.
    let plain = Report::from_results(&common::full_run());
    assert!(!titles(&plain).iter().any(|t| t.contains(" across ")));
}

#[test]
fn a_failed_point_shows_its_outcome_in_its_knob_table() {
    let mut results = sweep();
    let at = results
        .iter()
        .position(|r| {
            r.server.id == "profile-b/rust" && r.load_params[&LoadParam::Clients] == 1000.0
        })
        .unwrap();
    results[at] = common::failed(results[at].clone(), Outcome::ServerCrashed, "exit 2");
    let report = Report::from_results(&results);
    let t = table(&report, "Saturation — Throughput (msg/s) across clients");
    let rust = t
        .rows
        .iter()
        .find(|r| r.cells[0].text == "profile-b/rust")
        .unwrap();
    assert_eq!(rust.cells[3].value, None);
    assert_eq!(rust.cells[3].text, "server_crashed");
}

#[test]
fn the_html_page_draws_each_knob_table_as_a_line_per_server() {
    let results = sweep();
    let report = Report::from_results(&results);
    let page = render_page(&results, &report, &PageContext::default());
    assert!(page.contains("<h3>Across clients</h3>"), "no knob section");
    let charts: Vec<&str> = page
        .split("<figure class=\"chart knob\"")
        .skip(1)
        .map(|rest| &rest[..rest.find("</figure>").unwrap()])
        .collect();
    assert_eq!(charts.len(), knobs::KNOB_METRICS.len());
    let deliveries = charts
        .iter()
        .find(|c| c.contains("Deliveries/s across clients"))
        .expect("a deliveries chart");
    // Three servers, three lines: one polyline in each server's colour, with a key entry each.
    let colours: Vec<&str> = deliveries
        .lines()
        .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"2\""))
        .collect();
    assert_eq!(colours.len(), 3, "{deliveries}");
    for server in ["profile-a/zig", "profile-b/go", "profile-b/rust"] {
        assert!(deliveries.contains(server), "{server}");
    }
    // And the exact tables follow, in the same section.
    assert!(page.contains("<caption>Saturation — Deliveries/s across clients</caption>"));
}
