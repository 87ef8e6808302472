//! The transport matrix: one row per server × transport with its cost relative to ws,
//! "not offered" cells that carry the manifest's reason, and every other table left to ws.

mod common;

use common::{RUN, result};
use wscbench_report::{Format, Report, RunRecords, Table};
use wscbench_results::{NotOffered, RunResult, ServerStats, Transport};

/// A result over `transport` whose deliveries per second are `scale` times the ws one's,
/// writing `bytes` per delivery.
fn over(server: &str, scenario: &str, transport: Transport, scale: f64, bytes: f64) -> RunResult {
    let mut r = result(RUN, server, scenario);
    r.transport = transport;
    r.derived.deliveries_per_s *= scale;
    r.derived.bytes_written_per_delivery = Some(bytes);
    let stats = r.server_stats.get_or_insert_with(ServerStats::default);
    stats.bytes_written = Some((stats.deliveries as f64 * bytes) as u64);
    r
}

fn matrix_run() -> (Vec<RunResult>, Vec<NotOffered>) {
    let mut results = Vec::new();
    for server in ["profile-b/go", "profile-b/zig"] {
        for scenario in ["steady", "saturation"] {
            results.push(over(server, scenario, Transport::Ws, 1.0, 120.0));
            results.push(over(server, scenario, Transport::WsDeflate, 0.8, 60.0));
        }
    }
    for scenario in ["steady", "saturation"] {
        results.push(over("profile-b/go", scenario, Transport::Wss, 0.6, 142.0));
    }
    let not_offered = vec![
        NotOffered {
            server: "profile-b/zig".into(),
            transport: Transport::Wss,
            reason: "std.crypto.tls holds a client only (lib/std/crypto/tls/Client.zig)".into(),
        },
        NotOffered {
            server: "profile-b/zig".into(),
            transport: Transport::WssDeflate,
            reason: "no wss (see wss)".into(),
        },
    ];
    (results, not_offered)
}

fn matrix(report: &Report) -> &Table {
    report
        .tables
        .iter()
        .find(|t| t.title.ends_with("Transports"))
        .expect("a transport matrix")
}

#[test]
fn the_matrix_of_a_transport_run() {
    let (results, not_offered) = matrix_run();
    let report = Report::from_selected_with(
        &results,
        &RunRecords {
            not_offered: not_offered.clone(),
            ..Default::default()
        },
    );
    let only_matrix = Report {
        notes: report.notes.clone(),
        scorecards: Vec::new(),
        tables: vec![matrix(&report).clone()],
    };
    insta::assert_snapshot!(Format::Markdown.render(&only_matrix));
}

#[test]
fn each_transport_states_its_cost_relative_to_ws_for_the_same_server() {
    let (results, not_offered) = matrix_run();
    let report = Report::from_selected_with(
        &results,
        &RunRecords {
            not_offered: not_offered.clone(),
            ..Default::default()
        },
    );
    let table = matrix(&report);
    let row = |language: &str, transport: &str| {
        table
            .rows
            .iter()
            .find(|r| r.cells[0].text == language && r.cells[1].text == transport)
            .unwrap_or_else(|| panic!("no row {language} {transport}"))
    };
    assert!(
        row("Go", "wss").cells[2].text.ends_with("(−40 %)"),
        "{}",
        row("Go", "wss").cells[2].text
    );
    assert!(row("Go", "ws+deflate").cells[6].text.contains("(−50 %)"));
    assert!(
        !row("Go", "ws").cells[2].text.contains('%'),
        "ws is the reference"
    );
}

#[test]
fn a_transport_not_offered_shows_in_every_cell_with_its_reason() {
    let (results, not_offered) = matrix_run();
    let report = Report::from_selected_with(
        &results,
        &RunRecords {
            not_offered: not_offered.clone(),
            ..Default::default()
        },
    );
    let table = matrix(&report);
    let zig_wss = table
        .rows
        .iter()
        .find(|r| r.cells[0].text == "Zig" && r.cells[1].text == "wss")
        .expect("a not-offered row");
    for cell in &zig_wss.cells[2..] {
        assert!(cell.text.starts_with("not offered ["), "{}", cell.text);
    }
    let mark = zig_wss.cells[2].text.trim_start_matches("not offered ");
    assert!(
        table
            .footnotes
            .iter()
            .any(|f| f.starts_with(mark) && f.contains("lib/std/crypto/tls/Client.zig")),
        "{:?}",
        table.footnotes
    );
}

#[test]
fn every_other_table_shows_ws_only() {
    let (results, not_offered) = matrix_run();
    let report = Report::from_selected_with(
        &results,
        &RunRecords {
            not_offered: not_offered.clone(),
            ..Default::default()
        },
    );
    let ws_only: Vec<RunResult> = results
        .iter()
        .filter(|r| r.transport == Transport::Ws)
        .cloned()
        .collect();
    let plain = Report::from_selected(&ws_only);
    let others: Vec<&Table> = report
        .tables
        .iter()
        .filter(|t| !t.title.ends_with("Transports"))
        .collect();
    assert_eq!(others, plain.tables.iter().collect::<Vec<_>>());
    assert!(report.notes.iter().any(|n| n.contains("Transports matrix")));
}

#[test]
fn a_ws_only_run_has_no_matrix() {
    let results: Vec<RunResult> = matrix_run()
        .0
        .into_iter()
        .filter(|r| r.transport == Transport::Ws)
        .collect();
    let report = Report::from_selected(&results);
    assert!(
        report
            .tables
            .iter()
            .all(|t| !t.title.ends_with("Transports"))
    );
}

#[test]
fn a_load_generator_bound_point_is_marked_and_explained_in_the_matrix() {
    let (mut results, not_offered) = matrix_run();
    let wss = results
        .iter_mut()
        .find(|r| r.transport == Transport::Wss && r.scenario.as_str() == "saturation")
        .unwrap();
    wss.loadgen_bound = true;
    let report = Report::from_selected_with(
        &results,
        &RunRecords {
            not_offered: not_offered.clone(),
            ..Default::default()
        },
    );
    let table = matrix(&report);
    let row = table
        .rows
        .iter()
        .find(|r| r.cells[0].text == "Go" && r.cells[1].text == "wss")
        .unwrap();
    assert!(row.cells[2].text.contains('†'), "{}", row.cells[2].text);
    assert!(
        table.footnotes.iter().any(|f| f.starts_with('†')),
        "{:?}",
        table.footnotes
    );
}
