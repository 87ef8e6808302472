//! The terminal report at its default width fits [`TERMINAL_COLUMNS`]; `Width::Wide` prints
//! every column. Checked on the committed reference runs, as `wscbench report` reads them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use wscbench_report::{
    Choice, Format, Report, TERMINAL_COLUMNS, Width, load_results, records, select,
};

/// The project's `results/` directory.
fn results_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results")
}

/// Every run listed in `results/reference-runs`, newest first.
fn reference_runs() -> Vec<String> {
    let list = std::fs::read_to_string(results_dir().join("reference-runs")).unwrap();
    list.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| line.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// The report `wscbench report results/<run>` prints.
fn report_of(run: &str) -> Report {
    let dir = results_dir().join(run);
    let loaded = load_results(&dir, None).unwrap();
    let selection = select(&loaded.results, &Choice::default());
    let runs: BTreeSet<&str> = selection
        .results
        .iter()
        .map(|r| r.run_id.as_str())
        .collect();
    let records = records(&dir, &runs.into_iter().collect::<Vec<_>>());
    assert!(records.warnings.is_empty(), "{:?}", records.warnings);
    let mut report = Report::from_selected_with(&selection.results, &records);
    report.notes.extend(selection.left_out);
    report
}

fn columns(line: &str) -> usize {
    line.chars().count()
}

#[test]
fn every_terminal_line_of_every_reference_run_fits_120_columns() {
    let runs = reference_runs();
    assert!(!runs.is_empty());
    let mut too_wide = Vec::new();
    for run in &runs {
        let text = Format::Terminal.render(&report_of(run));
        for line in text.lines().filter(|l| columns(l) > TERMINAL_COLUMNS) {
            too_wide.push(format!("{run} ({} columns): {line}", columns(line)));
        }
    }
    assert_eq!(TERMINAL_COLUMNS, 120);
    assert!(
        too_wide.is_empty(),
        "{} lines wider than {TERMINAL_COLUMNS}:\n{}",
        too_wide.len(),
        too_wide.join("\n")
    );
}

#[test]
fn the_wide_terminal_report_prints_every_column_and_every_cell_in_place() {
    for run in reference_runs() {
        let report = report_of(&run);
        let wide = Format::Terminal.render_at(&report, Width::Wide);
        for table in &report.tables {
            for column in &table.columns {
                assert!(
                    wide.contains(&column.name),
                    "{run}: {} lacks the column {}",
                    table.title,
                    column.name
                );
            }
            for cell in table.rows.iter().flat_map(|r| &r.cells) {
                assert!(
                    wide.contains(&cell.text),
                    "{run}: {} lacks the cell {}",
                    table.title,
                    cell.text
                );
            }
        }
    }
}

#[test]
fn the_fitted_terminal_report_leaves_detail_columns_out_and_says_so() {
    let report = report_of("20261128-123613");
    let fit = Format::Terminal.render(&report);
    let wide = Format::Terminal.render_at(&report, Width::Wide);
    assert!(wide.contains("Service time p95"), "{wide}");
    assert!(!fit.contains("Service time p95"), "{fit}");
    assert!(fit.contains("more columns with --wide."), "{fit}");
    // A long note is a numbered footnote under its table.
    assert!(fit.contains("  [1] "), "{fit}");
}

#[test]
fn markdown_keeps_every_column_whatever_the_terminal_width() {
    let report = report_of("20261128-123613");
    assert_eq!(
        Format::Markdown.render(&report),
        Format::Markdown.render_at(&report, Width::Fit)
    );
    assert!(
        Format::Markdown
            .render(&report)
            .contains("Service time p95")
    );
}

#[test]
fn the_markdown_of_every_reference_run_is_what_docs_results_md_shows() {
    let page = std::fs::read_to_string(results_dir().join("../docs/results.md")).unwrap();
    for run in reference_runs() {
        // As scripts/results-docs writes it: the report's text, trimmed.
        let markdown = Format::Markdown.render(&report_of(&run));
        assert!(
            page.contains(markdown.trim()),
            "docs/results.md does not show the Markdown of {run} as rendered now (rerun scripts/results-docs if the change is meant)"
        );
    }
}
