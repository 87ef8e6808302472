//! The conformance a run recorded, in the report: its table beside the performance tables,
//! and a mark on a summary row won by a server that ignores a MUST of RFC 6455.

mod common;

use common::{RUN, result};
use wscbench_report::{Format, Report, RunRecords, Table};
use wscbench_results::conformance::CONFORMANCE_SCHEMA_VERSION;
use wscbench_results::{
    CaseResult, CaseVerdict, Category, RunResult, ServerConformance, Transport,
};

fn case(id: &str, category: Category, verdict: CaseVerdict, evidence: &str) -> CaseResult {
    CaseResult {
        id: id.into(),
        category,
        rfc_section: "8.1".into(),
        rule: "r".into(),
        verdict,
        evidence: evidence.into(),
        duration_ms: 2,
    }
}

fn conformance(server: &str, utf8: CaseVerdict) -> ServerConformance {
    ServerConformance {
        schema_version: CONFORMANCE_SCHEMA_VERSION,
        server: server.into(),
        transport: Transport::Ws,
        deflate_negotiated: false,
        cases: vec![
            case(
                "rsv2",
                Category::ReservedBits,
                CaseVerdict::Strict,
                "closed with 1002",
            ),
            case(
                "utf8_single_frame",
                Category::Utf8,
                utf8,
                "the chat was delivered",
            ),
        ],
    }
}

/// profile-b/zig's binary is the smaller by far (it wins binary size) and it ignores UTF-8.
fn run() -> (Vec<RunResult>, RunRecords) {
    let mut results = Vec::new();
    for (server, size) in [("profile-b/go", 7_000_000), ("profile-b/zig", 4_000_000)] {
        let mut r = result(RUN, server, "steady");
        r.server.binary_size_bytes = Some(size);
        results.push(r);
    }
    let records = RunRecords {
        conformance: vec![
            conformance("profile-b/go", CaseVerdict::Strict),
            conformance("profile-b/zig", CaseVerdict::Ignored),
        ],
        ..Default::default()
    };
    (results, records)
}

fn table<'a>(report: &'a Report, title: &str) -> &'a Table {
    report
        .tables
        .iter()
        .find(|t| t.title.starts_with(title))
        .unwrap_or_else(|| panic!("no table {title}"))
}

#[test]
fn a_recorded_conformance_is_a_table_with_the_evidence_of_every_ignored_case() {
    let (results, records) = run();
    let report = Report::from_selected_with(&results, &records);
    let mut only = report.clone();
    only.tables = vec![table(&report, "RFC 6455 conformance").clone()];
    only.notes.clear();
    only.scorecards.clear();
    insta::assert_snapshot!(Format::Markdown.render(&only));
}

#[test]
fn a_summary_row_won_by_a_server_that_ignores_a_must_says_so_and_others_do_not() {
    let (results, records) = run();
    let report = Report::from_selected_with(&results, &records);
    let summary = table(&report, "Summary");
    let marked: Vec<(&str, &str)> = summary
        .rows
        .iter()
        .map(|r| (r.cells[2].text.as_str(), r.cells[4].text.as_str()))
        .filter(|(_, note)| note.contains("ignores a MUST"))
        .collect();
    assert!(!marked.is_empty(), "no row marked: {summary:#?}");
    for (best, note) in &marked {
        assert_eq!(*best, "profile-b/zig");
        assert!(
            note.ends_with(
                "profile-b/zig ignores a MUST of RFC 6455 (UTF-8): see the conformance table"
            ),
            "{note}"
        );
    }
    let unmarked = summary
        .rows
        .iter()
        .filter(|r| r.cells[2].text == "profile-b/go");
    for row in unmarked {
        assert!(
            !row.cells[4].text.contains("ignores a MUST"),
            "{}",
            row.cells[4].text
        );
    }
}

#[test]
fn without_records_there_is_no_conformance_table() {
    let (results, _) = run();
    let report = Report::from_selected(&results);
    assert!(
        report
            .tables
            .iter()
            .all(|t| !t.title.starts_with("RFC 6455"))
    );
}
