//! The one assembler of the format-neutral [`Report`]: which tables there are and in which
//! order, the notes above them and the footnotes every table shares. Every decision about
//! content is made by it or by the builders it calls, so the renderers only lay it out.
//!
//! A row is one point of one run: its rounds are summarized (mean ± the 95 % interval's
//! half-width, σ, CV) by [`crate::stats`], and a value is called best only when its interval
//! clears the runner-up's ([`Table::mark_best`]).
//!
//! The summary's decisions are made once (`summary::decisions`) and laid out twice: as the
//! scorecards that open the report (`scorecard`) and as the summary table below them.
//!
//! This is the only module that imports the table builders (`summary`, `scorecard`, `rounds`,
//! `curve_table`, `scenarios`, `transports`, `knobs`, `rooms`, `capacity`, `sizes`); they import the
//! primitives of [`crate::table`] and the row helpers of [`crate::rows`], never this module
//! nor each other (crates/wscbench/tests/no_circles.rs holds them to it). To add a table (a load curve, a
//! conformance table):
//! 1. write a builder module, e.g. `curve.rs`, with
//!    `pub(crate) fn curve_tables(groups: &[Group]) -> Vec<Table>`, built from
//!    [`crate::rows`] ([`Group`](crate::rows::Group), `metric_cell`, the orders and names)
//!    and [`crate::table`];
//! 2. give each table its `scenario` when it compares one (the HTML page puts it in that
//!    scenario's section; `None` keeps it with the summary or after the scenarios), its
//!    `axis` when its columns are a knob's values (the page draws it as lines), and mark a
//!    column `detail` when a terminal need not show it by default; use
//!    [`Cell::bound`] for a figure that measures the load generator;
//! 3. declare the module in `lib.rs` and call the builder in [`Report::from_ws`] where
//!    the tables belong in reading order, adding it to `REPORT_BUILDERS` in crates/wscbench/tests/no_circles.rs.
//!
//! Tables without rows are dropped here, so a builder need not check.

use wscbench_results::{RunResult, ServerConformance};

use crate::load::{Choice, RunRecords, select};
use crate::metrics;
use crate::rows::{PROFILES, groups, ordered};
use crate::scenarios::{OPTIONAL_COLUMNS, profile_tables};
use crate::sizes::binary_sizes;
#[cfg(doc)]
use crate::table::Cell;
use crate::table::{Report, Table};

/// Said when results of other transports than ws are set apart in the transport matrix.
const TRANSPORT_NOTE: &str = "Tables show ws; wss and permessage-deflate are in each profile's Transports matrix, beside ws.";

impl Report {
    /// Builds every table from results: those of the most recent run's mode and conditions
    /// (see [`select`]), repetitions of a point grouped, the latest run of each point.
    pub fn from_results(results: &[RunResult]) -> Report {
        Report::from_results_with(results, &RunRecords::default())
    }

    /// [`Report::from_results`], with what the run recorded beside its results.
    pub fn from_results_with(results: &[RunResult], records: &RunRecords) -> Report {
        let selection = select(results, &Choice::default());
        let mut report = Report::from_selected_with(&selection.results, records);
        report.notes.extend(selection.left_out);
        report
    }

    /// Builds every table from results already selected as like with like.
    pub fn from_selected(results: &[RunResult]) -> Report {
        Report::from_selected_with(results, &RunRecords::default())
    }

    /// [`Report::from_selected`], with what the runs recorded beside their results: the
    /// transports not offered (the transport matrix's "not offered" cells) and each row's
    /// RFC 6455 conformance (its table, and a mark on a summary row won by a server that
    /// ignores a MUST). Every table but the matrix and the conformance table shows `ws`
    /// only: transports are never mixed in one table.
    pub fn from_selected_with(results: &[RunResult], records: &RunRecords) -> Report {
        let every: Vec<&RunResult> = results.iter().collect();
        let mut matrix = crate::transports::transport_tables(&groups(&every), &records.not_offered);
        let ws: Vec<RunResult> = results
            .iter()
            .filter(|r| r.transport.is_ws())
            .cloned()
            .collect();
        let (mut report, after_profiles) = Report::from_ws(&ws, &records.conformance);
        if ws.len() < results.len() {
            report.notes.push(TRANSPORT_NOTE.to_string());
        }
        let summary = (report.tables.iter_mut()).find(|t| t.title == crate::summary::SUMMARY_TITLE);
        if let Some(summary) = summary {
            crate::conformance::mark_ignoring(summary, &records.conformance);
        }
        matrix.extend(crate::conformance::conformance_table(&records.conformance));
        // Each profile's matrix, then the conformance table, follow the profiles' own tables.
        report.tables.splice(after_profiles..after_profiles, matrix);
        report
    }

    /// Every table of ws results, in reading order: the one place that calls the builders.
    /// With it, where the profiles' tables end.
    fn from_ws(results: &[RunResult], conformance: &[ServerConformance]) -> (Report, usize) {
        let refs: Vec<&RunResult> = results.iter().collect();
        let all = groups(&refs);
        let decisions = crate::summary::decisions(&all);
        let scorecards = crate::scorecard::scorecards(&decisions, conformance);
        let mut tables = vec![
            crate::summary::summary_table(&decisions),
            crate::summary::rank_stability_table(&all),
            crate::rounds::machine_speed_table(results),
            crate::certainty::certainty_table(&all, results),
        ];
        // The headline: what a delivery costs at loads the machine can answer.
        tables.extend(crate::curve_table::curve_tables(&all));
        let profiles = ordered(
            all.iter().map(|g| g.first().server.profile.as_str()),
            &PROFILES,
        );
        for profile in profiles {
            tables.extend(profile_tables(&all, profile));
        }
        let after_profiles = tables.iter().filter(|t| !t.rows.is_empty()).count();
        tables.extend(crate::knobs::knob_tables(&all));
        tables.extend(crate::rooms::fanout_tables(&all));
        tables.extend(crate::rooms::slow_consumers_tables(&all));
        tables.push(crate::capacity::capacity_table(&all));
        tables.push(crate::idle_cost::idle_cost_table(&all));
        tables.push(crate::capacity::soak_table(&all));
        let mut sizes = binary_sizes(&refs);
        sizes.mark_best();
        tables.push(sizes);
        tables.retain(|table| !table.rows.is_empty());
        for table in &mut tables {
            drop_unmeasured(table, &OPTIONAL_COLUMNS);
            if table.rows.iter().any(|r| r.cells.iter().any(|c| c.n > 1)) {
                table.footnotes.push(INTERVAL_NOTE.into());
            }
        }
        let mut notes = Vec::new();
        if results
            .iter()
            .any(|r| r.load_path == wscbench_results::LoadPath::Js)
        {
            notes.push(JS_LATENCY_NOTE.to_string());
            // Said again under every table with a latency column, where it is read.
            for table in &mut tables {
                if table
                    .columns
                    .iter()
                    .any(|c| c.name == metrics::LATENCY_P95.name)
                {
                    table.footnotes.push(JS_LATENCY_NOTE.to_string());
                }
            }
        }
        (
            Report {
                notes,
                scorecards,
                tables,
            },
            after_profiles,
        )
    }

    /// True when there is nothing to show.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty() && self.scorecards.is_empty()
    }
}

/// Said above a report of js-path results: their latency is not the response time.
const JS_LATENCY_NOTE: &str = "js load path: latency is service time only (from each chat's write); it keeps no schedule of intended times, so a server that stops reading can hide its stall (coordinated omission). The native path measures response time.";

/// Said under every table with figures over several rounds.
const INTERVAL_NOTE: &str = "Over several rounds: mean ± the half-width of its 95 % interval (Student t); n is the number of rounds. Latency is the response time from each chat's intended time (native path, schema 3); service time, from the write, is beside it.";

/// Removes each of `names` from `table` where no row measured it.
fn drop_unmeasured(table: &mut Table, names: &[&str]) {
    let unmeasured: Vec<usize> = table
        .columns
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            names.contains(&c.name.as_str())
                && table
                    .rows
                    .iter()
                    .all(|r| r.cells.get(*i).is_none_or(|cell| cell.value.is_none()))
        })
        .map(|(i, _)| i)
        .collect();
    for &i in unmeasured.iter().rev() {
        table.columns.remove(i);
        for row in &mut table.rows {
            if i < row.cells.len() {
                row.cells.remove(i);
            }
        }
    }
}
