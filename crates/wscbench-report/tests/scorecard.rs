//! The scorecards: a profile's answer on one screen, made from the summary's decisions. Their
//! rendering as snapshots (a decided row, a tie, a bound, the load generator's cell, a failed
//! server), their sentences, and on every committed reference run: no figure the tables below
//! do not hold, one row per summary dimension, and a terminal that fits 120 columns and ends
//! with them.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{RUN, curve_run, failed, loadgen_bound, result};
use wscbench_report::{
    Choice, Format, Report, TERMINAL_COLUMNS, Width, load_results, records, select,
};
use wscbench_results::{BoundReason, Outcome, Repetition, RunResult};

/// Profile B: the load curve of `curve_run` (a decided cost, tied latencies, a capacity the
/// curve's top and k6 bound) and three rounds of steady, churn and saturation, in which zig
/// failed every churn round and k6 was the limit of every saturation round of rust.
fn scorecard_run() -> Vec<RunResult> {
    let mut results = curve_run();
    for round in 1..=3u32 {
        for id in ["profile-b/go", "profile-b/rust", "profile-b/zig"] {
            for scenario in ["steady", "churn", "saturation"] {
                let mut r = result(RUN, id, scenario);
                r.repetition = Repetition {
                    index: round,
                    of: 3,
                };
                // A little spread between rounds, so that the figures have intervals.
                if let Some(usage) = r.derived.server.as_mut() {
                    usage.peak_mem_bytes += u64::from(round) * 40_000;
                }
                r.derived.deliveries_per_s *= 1.0 + f64::from(round) * 0.01;
                if id == "profile-b/zig" && scenario == "churn" {
                    r = failed(r, Outcome::ServerCrashed, "the server exited with code 134");
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
    }
    results
}

/// The report with its scorecards alone.
fn scorecards_only(results: &[RunResult]) -> Report {
    let mut report = Report::from_results(results);
    report.tables.clear();
    report.notes.clear();
    report
}

#[test]
fn the_scorecard_of_a_profile_in_the_terminal() {
    insta::assert_snapshot!(Format::Terminal.render(&scorecards_only(&scorecard_run())));
}

#[test]
fn the_scorecard_of_a_profile_in_markdown() {
    insta::assert_snapshot!(Format::Markdown.render(&scorecards_only(&scorecard_run())));
}

#[test]
fn the_scorecard_marks_a_best_a_tie_a_bound_the_load_generator_and_a_failure_in_text() {
    let report = Report::from_results(&scorecard_run());
    assert_eq!(report.scorecards.len(), 1);
    let card = &report.scorecards[0];
    let cells: Vec<&str> = card
        .table
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().skip(1))
        .map(|c| c.text.as_str())
        .collect();
    for (what, found) in [
        ("a best", cells.iter().any(|c| c.ends_with("★ best"))),
        ("a tie", cells.iter().any(|c| c.ends_with("= tie"))),
        ("a bound", cells.iter().any(|c| c.starts_with("≥ "))),
        ("the load generator", cells.contains(&"k6")),
        ("a failed server", cells.contains(&"failed")),
    ] {
        assert!(found, "no cell shows {what}: {cells:?}");
    }
    // Colour is the renderer's; the marks are in the cells' own text and flags.
    for cell in card.table.rows.iter().flat_map(|r| &r.cells) {
        assert_eq!(cell.best, cell.text.ends_with("★ best"), "{}", cell.text);
        assert_eq!(cell.tied, cell.text.ends_with("= tie"), "{}", cell.text);
    }
    // One sentence per dimension, the decided ones hyperfine's way.
    assert_eq!(card.sentences.len(), card.table.rows.len());
    assert!(
        card.sentences
            .iter()
            .any(|s| s.starts_with("profile-b/zig spent ") && s.contains("× less than profile-b/")),
        "{:#?}",
        card.sentences
    );
    assert!(
        card.sentences
            .iter()
            .any(|s| s.contains("no best; ") && s.contains(" tie (")),
        "{:#?}",
        card.sentences
    );
}

#[test]
fn the_terminal_ends_with_the_scorecards_and_leaves_the_summary_to_wide() {
    let report = Report::from_results(&scorecard_run());
    let fit = Format::Terminal.render(&report);
    let last_sentence = report.scorecards[0].sentences.last().unwrap();
    let last_line = fit.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert!(
        last_sentence.ends_with(last_line.trim()),
        "the terminal ends with {last_line:?}"
    );
    assert!(!fit.contains("\nSummary\n"), "{fit}");
    assert!(fit.contains("With --wide (or --format markdown): Summary"));
    let wide = Format::Terminal.render_at(&report, Width::Wide);
    assert!(wide.contains("\nSummary\n"));
    // Markdown opens with them, the summary below.
    let markdown = Format::Markdown.render(&report);
    let first_heading = markdown.lines().find(|l| l.starts_with("### ")).unwrap();
    assert_eq!(
        first_heading,
        "### Scorecard — Profile B (minimal / stdlib)"
    );
    assert!(markdown.find("### Scorecard").unwrap() < markdown.find("### Summary").unwrap());
}

/// The project's `results/` directory.
fn results_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results")
}

/// Every run listed in `results/reference-runs`, with its report as `wscbench report
/// results/<run>` makes it.
fn reference_reports() -> Vec<(String, Report)> {
    std::fs::read_to_string(results_dir().join("reference-runs"))
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| line.split_whitespace().next().unwrap().to_string())
        .map(|run| {
            let dir = results_dir().join(&run);
            let loaded = load_results(&dir, None).unwrap();
            let selection = select(&loaded.results, &Choice::default());
            let runs: BTreeSet<&str> = selection
                .results
                .iter()
                .map(|r| r.run_id.as_str())
                .collect();
            let records = records(&dir, &runs.into_iter().collect::<Vec<_>>());
            let report = Report::from_selected_with(&selection.results, &records);
            (run, report)
        })
        .collect()
}

/// The numbers in a text: `12.0`, `1,208,261`, `0.93` (a sign, a unit or a mark around them
/// aside).
fn numbers(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (!current.is_empty() && (c == '.' || c == ',')) {
            current.push(c);
        } else if !current.is_empty() {
            found.push(current.trim_end_matches(['.', ',']).to_string());
            current.clear();
        }
    }
    found
}

#[test]
fn no_figure_of_a_scorecard_is_missing_from_the_tables_below() {
    let mut reports = reference_reports();
    reports.push((
        "scorecard_run".into(),
        Report::from_results(&scorecard_run()),
    ));
    let mut checked = 0;
    for (run, report) in &reports {
        let below: BTreeSet<String> = report
            .tables
            .iter()
            .flat_map(|t| {
                t.rows
                    .iter()
                    .flat_map(|r| r.cells.iter().map(|c| c.text.as_str()))
                    .chain(t.footnotes.iter().map(String::as_str))
            })
            .flat_map(numbers)
            .collect();
        for card in &report.scorecards {
            for row in &card.table.rows {
                for cell in row.cells.iter().skip(1) {
                    for number in numbers(&cell.text) {
                        checked += 1;
                        assert!(
                            below.contains(&number),
                            "{run}: {} shows {number} in {:?} ({}), which no table below holds",
                            card.table.title,
                            cell.text,
                            row.cells[0].text
                        );
                    }
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} figures checked");
}

#[test]
fn every_dimension_of_the_summary_is_a_row_of_its_profiles_scorecard() {
    for (run, report) in reference_reports() {
        let Some(summary) = report.tables.iter().find(|t| t.title == "Summary") else {
            assert!(report.scorecards.is_empty(), "{run}");
            continue;
        };
        let mut in_summary: Vec<(String, String)> = summary
            .rows
            .iter()
            .map(|r| (r.cells[1].text.clone(), r.cells[0].text.clone()))
            .collect();
        let mut in_scorecards: Vec<(String, String)> = report
            .scorecards
            .iter()
            .flat_map(|card| {
                let profile = card
                    .table
                    .title
                    .trim_start_matches("Scorecard — ")
                    .to_string();
                card.table
                    .rows
                    .iter()
                    .filter(|r| !r.cells[0].text.starts_with("RFC 6455"))
                    .map(move |r| (profile.clone(), r.cells[0].text.clone()))
            })
            .collect();
        in_summary.sort();
        in_scorecards.sort();
        assert_eq!(in_summary, in_scorecards, "{run}");
    }
}

#[test]
fn every_scorecard_of_every_reference_run_fits_120_columns_at_the_default_width() {
    let (mut cards, mut runs) = (0, 0);
    for (run, report) in reference_reports() {
        runs += 1;
        cards += report.scorecards.len();
        let only = Report {
            notes: Vec::new(),
            scorecards: report.scorecards.clone(),
            tables: Vec::new(),
        };
        for line in Format::Terminal.render(&only).lines() {
            assert!(
                line.chars().count() <= TERMINAL_COLUMNS,
                "{run}: {} columns: {line}",
                line.chars().count()
            );
        }
    }
    assert!(
        cards >= runs,
        "only {cards} scorecards in {runs} reference runs"
    );
}
