//! The fan-out and slow-consumers tables: one per profile each, worded from the figures the
//! engine stored, as snapshots in the terminal and in Markdown.

mod common;

use common::{RUN, rooms_run, slow_consumers};
use wscbench_report::{Format, Report, Table};

fn table(report: &Report, ends_with: &str) -> Table {
    report
        .tables
        .iter()
        .find(|t| t.title.ends_with(ends_with))
        .unwrap_or_else(|| {
            panic!(
                "no table ending {ends_with:?} in {:?}",
                report.tables.iter().map(|t| &t.title).collect::<Vec<_>>()
            )
        })
        .clone()
}

fn alone(table: Table) -> Report {
    Report {
        notes: Vec::new(),
        scorecards: Vec::new(),
        tables: vec![table],
    }
}

#[test]
fn the_fanout_table_in_the_terminal_and_in_markdown() {
    let report = Report::from_selected(&rooms_run());
    let fanout = alone(table(&report, "Fan-out by room size"));
    insta::assert_snapshot!("fanout_terminal", Format::Terminal.render(&fanout));
    insta::assert_snapshot!("fanout_markdown", Format::Markdown.render(&fanout));
}

#[test]
fn the_slow_consumers_table_in_the_terminal_and_in_markdown() {
    let report = Report::from_selected(&rooms_run());
    let slow = alone(table(&report, "Slow consumers"));
    insta::assert_snapshot!("slow_consumers_terminal", Format::Terminal.render(&slow));
    insta::assert_snapshot!("slow_consumers_markdown", Format::Markdown.render(&slow));
}

#[test]
fn fanout_rows_go_by_server_then_room_size_in_numeric_order() {
    let report = Report::from_selected(&rooms_run());
    let fanout = table(&report, "Fan-out by room size");
    let rows: Vec<(String, String)> = fanout
        .rows
        .iter()
        .map(|r| (r.cells[0].text.clone(), r.cells[1].text.clone()))
        .collect();
    let expected: Vec<(String, String)> = ["Go", "Rust"]
        .iter()
        .flat_map(|s| ["2", "10", "100", "1,000"].map(|n| (s.to_string(), n.to_string())))
        .collect();
    assert_eq!(rows, expected);
    assert!(fanout.title.starts_with("Profile B (minimal / stdlib)"));
}

#[test]
fn a_server_that_never_recovered_says_so_and_the_best_recovery_is_named() {
    let report = Report::from_selected(&rooms_run());
    let slow = table(&report, "Slow consumers");
    let recovery: Vec<&str> = slow.rows.iter().map(|r| r.cells[5].text.as_str()).collect();
    assert_eq!(recovery, ["3 s", "0 s", "never"]);
    assert!(slow.rows[1].cells[5].best, "{:?}", slow.rows[1].cells[5]);
    let closed: Vec<&str> = slow.rows.iter().map(|r| r.cells[8].text.as_str()).collect();
    assert_eq!(closed, ["0", "0", "30 (first at +4.2 s)"]);
}

#[test]
fn rounds_that_recovered_and_one_that_did_not_are_told_apart() {
    let mut results = Vec::new();
    for (i, recovery) in [Some(2.0), Some(4.0), None].into_iter().enumerate() {
        let mut r = slow_consumers(RUN, "profile-b/go", 2.0, 9.0, recovery, 0);
        r.repetition = wscbench_results::Repetition {
            index: i as u32 + 1,
            of: 3,
        };
        results.push(r);
    }
    let report = Report::from_selected(&results);
    let slow = table(&report, "Slow consumers");
    let cell = &slow.rows[0].cells[5];
    assert!(cell.text.ends_with("(never in 1 of 3)"), "{}", cell.text);
    assert!(cell.text.starts_with("3 s"), "{}", cell.text);
}

#[test]
fn an_older_result_without_slow_consumer_figures_says_how_it_ended() {
    let mut r = slow_consumers(RUN, "profile-b/go", 2.0, 9.0, None, 0);
    r.slow_consumers = None;
    let report = Report::from_selected(&[r]);
    let slow = table(&report, "Slow consumers");
    assert_eq!(slow.rows[0].cells[1].text, "no slow-consumers figures");
}
