//! `wscbench report --history`: one metric of one server × scenario across every stored run,
//! in date order, marking where the server's sources changed.

use std::collections::BTreeMap;

use wscbench_results::{RunResult, Scenario};

use crate::metrics::{self, Metric};
use crate::stats::Summary;
use crate::table::{Cell, Column, Report, Row, Table};

/// Marks the first run built from changed sources.
const CHANGED_MARK: &str = "◆";

/// The ok results of a server × scenario grouped by run (its repetitions together), runs in
/// the order of their first start.
fn runs_in_order<'a>(
    results: &'a [RunResult],
    server: &str,
    scenario: Scenario,
) -> Vec<(String, String, Vec<&'a RunResult>)> {
    // One entry per run: its repetitions of the point, in start order.
    let mut runs: BTreeMap<(String, String), Vec<&RunResult>> = BTreeMap::new();
    for r in results
        .iter()
        .filter(|r| r.server.id == server && r.scenario == scenario && r.is_ok())
    {
        runs.entry((r.started_at.clone(), r.run_id.clone()))
            .or_default()
            .push(r);
    }
    // Repetitions of one run start at different times: key each run by its first start.
    let mut by_run: BTreeMap<String, (String, Vec<&RunResult>)> = BTreeMap::new();
    for ((started, run), rs) in runs {
        let entry = by_run
            .entry(run)
            .or_insert_with(|| (started.clone(), Vec::new()));
        entry.0 = entry.0.clone().min(started);
        entry.1.extend(rs);
    }
    let mut ordered: Vec<(String, String, Vec<&RunResult>)> = by_run
        .into_iter()
        .map(|(run, (started, rs))| (started, run, rs))
        .collect();
    ordered.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    ordered
}

/// The history table of `metric` (the scenario's lead metric when `None`).
pub fn history(
    results: &[RunResult],
    server: &str,
    scenario: Scenario,
    metric: Option<&'static Metric>,
) -> Report {
    let metric = metric.unwrap_or_else(|| metrics::lead(scenario));
    let ordered = runs_in_order(results, server, scenario);
    let columns = Column::unranked(&[
        ("Run", false),
        ("Started", false),
        ("Mode", false),
        ("Load path", false),
        ("n", true),
        (metric.name, true),
        ("Sources", false),
    ]);
    let mut rows = Vec::new();
    let mut previous_hash: Option<String> = None;
    let mut changed = false;
    for (started, run, rs) in &ordered {
        let values: Vec<f64> = rs.iter().filter_map(|r| (metric.value)(r)).collect();
        let value = match Summary::of(&values) {
            Some(s) => Cell::summary(&s, metric.format),
            None => Cell::absent(),
        };
        let hash = rs[0].server.source_hash.clone();
        let hash_text = match &previous_hash {
            Some(prev) if *prev != hash => {
                changed = true;
                format!("{hash} {CHANGED_MARK}")
            }
            _ => hash.clone(),
        };
        previous_hash = Some(hash);
        rows.push(Row {
            cells: vec![
                Cell::label(run.clone()),
                Cell::label(started.clone()),
                Cell::label(rs[0].mode.to_string()),
                Cell::label(rs[0].load_path.to_string()),
                Cell::figure(rs.len().to_string(), rs.len() as f64),
                value,
                Cell::label(hash_text),
            ],
        });
    }
    let mut footnotes = Vec::new();
    if changed {
        footnotes.push(format!(
            "{CHANGED_MARK} the server's sources changed since the run before."
        ));
    }
    if rows.iter().any(|r: &Row| r.cells.iter().any(|c| c.noisy)) {
        footnotes.push(format!("~ {}.", crate::stats::NOISY_HINT));
    }
    footnotes.push(
        "Runs of different modes, load paths or limits are listed together here: compare with care."
            .into(),
    );
    let mut tables = vec![Table {
        title: format!("History — {server} {scenario}: {}", metric.name),
        columns,
        rows,
        scenario: None,
        axis: None,
        footnotes,
    }];
    tables.retain(|t| !t.rows.is_empty());
    Report {
        notes: Vec::new(),
        scorecards: Vec::new(),
        tables,
    }
}
