//! The format-neutral report: which tables there are, their rows and columns, each
//! cell's text, value and spread, which cell is best or tied, and the footnotes. Every
//! decision about content is made here, so the renderers only lay it out.
//!
//! A row is one point of one run: its rounds are summarized (mean ± the 95 % interval's
//! half-width, σ, CV) by [`crate::stats`], and a value is called best only when its interval clears
//! the runner-up's.

use std::collections::BTreeMap;

use serde::Serialize;
use wscbench_results::{RunResult, Scenario};

use crate::load::{Choice, select};
use crate::metrics::{self, Metric};
use crate::stats::{self, Summary};
use crate::units;

pub use crate::metrics::Better;

/// Said when results of other transports than ws are set apart in the transport matrix.
const TRANSPORT_NOTE: &str = "Tables show ws; wss and permessage-deflate are in each profile's Transports matrix, beside ws.";
/// Marks a number that measures the load generator rather than the server.
pub(crate) const LOADGEN_BOUND_MARK: &str = "†";
/// Marks a row whose run did not end `ok`.
const FAILED_MARK: &str = "‡";
/// Marks values tied within noise.
const TIED_MARK: &str = "=";
/// Marks a figure whose repetitions vary by more than 5 %.
const NOISY_MARK: &str = "~";
/// Marks a row from an earlier run than the table's newest.
const OLDER_RUN_MARK: &str = "°";
/// Shown where a figure was not measured.
const ABSENT: &str = "—";

/// Languages in the order rows appear; others follow alphabetically.
const LANGUAGES: [&str; 3] = ["go", "rust", "zig"];
/// Profiles in the order tables appear; others follow alphabetically.
pub(crate) const PROFILES: [&str; 2] = ["a", "b"];
/// Scenarios in the order the load-generator table lists them.
const SCENARIOS: [&str; 5] = ["steady", "burst", "churn", "saturation", "capacity"];

/// Every table made from a set of results, in reading order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Lines to print before the tables: what was left out, which conditions differ.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The tables, the overall summary first; one without rows is never included.
    pub tables: Vec<Table>,
}

/// One comparison table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    /// What the table compares, e.g. `Profile A (frameworks) — Steady`.
    pub title: String,
    /// The columns, left to right.
    pub columns: Vec<Column>,
    /// The rows, one cell per column.
    pub rows: Vec<Row>,
    /// Notes explaining the marks in the cells, each starting with its mark.
    pub footnotes: Vec<String>,
}

/// A column heading and how its values compare.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    /// The heading.
    pub name: String,
    /// Whether a lower or a higher value is better; `None` when values are not ranked.
    pub better: Option<Better>,
    /// True for figures (right-aligned), false for labels.
    pub numeric: bool,
}

impl Column {
    /// Unranked columns from `(heading, numeric)` pairs: for tables that name no best.
    pub fn unranked(columns: &[(&str, bool)]) -> Vec<Column> {
        columns
            .iter()
            .map(|&(name, numeric)| Column {
                name: name.into(),
                better: None,
                numeric,
            })
            .collect()
    }
}

/// One row of a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Row {
    /// One cell per column.
    pub cells: Vec<Cell>,
}

/// One cell: the text to show, the number behind it and, over repetitions, its spread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The text as shown, units and marks included: `mean ± h` over more than one round, h
    /// the half-width of the 95 % interval of the mean.
    pub text: String,
    /// The figure (the mean over repetitions) in the result's own unit (bytes, percent of
    /// one core, ms, per second, ratio, count); `None` for labels and for figures that were
    /// not measured.
    pub value: Option<f64>,
    /// True for the best value of its column (see [`Better`]): best by a margin its 95 %
    /// interval clears.
    pub best: bool,
    /// True when this value and the column's best are tied within noise (their 95 %
    /// intervals overlap), so no best is named.
    #[serde(default, skip_serializing_if = "is_false")]
    pub tied: bool,
    /// Repetitions behind the figure (0 for labels).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub n: usize,
    /// Sample standard deviation over the repetitions, in the figure's unit (n > 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub std_dev: Option<f64>,
    /// Coefficient of variation, σ ÷ |mean| (n > 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv: Option<f64>,
    /// The 95 % confidence interval of the mean, Student t (n > 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<(f64, f64)>,
    /// True when the CV exceeds 5 %: raise `--runs` or the duration.
    #[serde(default, skip_serializing_if = "is_false")]
    pub noisy: bool,
    /// False when the value must not compete for best: its run failed, or it measures
    /// the load generator.
    #[serde(skip)]
    pub comparable: bool,
}

fn is_false(b: &bool) -> bool {
    !b
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Cell {
    pub(crate) fn label(text: impl Into<String>) -> Self {
        Cell {
            text: text.into(),
            value: None,
            best: false,
            tied: false,
            n: 0,
            std_dev: None,
            cv: None,
            ci95: None,
            noisy: false,
            comparable: false,
        }
    }

    pub(crate) fn figure(text: String, value: f64) -> Self {
        Cell {
            value: Some(value),
            comparable: true,
            n: 1,
            ..Cell::label(text)
        }
    }

    /// A figure over rounds: `mean ± h` (h the 95 % interval's half-width) when there is more
    /// than one, marked when noisy.
    pub(crate) fn summary(s: &Summary, format: fn(f64) -> String) -> Self {
        let text = match s.ci95 {
            Some((lo, hi)) => format!("{} ± {}", format(s.mean), format((hi - lo) / 2.0)),
            None => format(s.mean),
        };
        let mut cell = Cell {
            n: s.n,
            std_dev: s.std_dev,
            cv: s.cv,
            ci95: s.ci95,
            noisy: s.is_noisy(),
            ..Cell::figure(text, s.mean)
        };
        if cell.noisy {
            cell.text = format!("{} {NOISY_MARK}", cell.text);
        }
        cell
    }

    pub(crate) fn absent() -> Self {
        Cell::label(ABSENT)
    }

    fn marked(mut self, mark: &str) -> Self {
        self.text = format!("{} {mark}", self.text);
        self.comparable = false;
        self
    }

    /// The figure as a summary again, for comparing intervals.
    fn as_summary(&self) -> Option<Summary> {
        let mean = self.value?;
        Some(Summary {
            n: self.n,
            mean,
            std_dev: self.std_dev,
            cv: self.cv,
            min: mean,
            max: mean,
            median: mean,
            ci95: self.ci95,
        })
    }
}

/// The repetitions of one point in one run: one row.
pub(crate) struct Group<'a> {
    /// Every repetition, failed ones included, oldest first.
    pub(crate) results: Vec<&'a RunResult>,
}

impl<'a> Group<'a> {
    pub(crate) fn first(&self) -> &'a RunResult {
        self.results[0]
    }

    pub(crate) fn ok(&self) -> Vec<&'a RunResult> {
        self.results.iter().copied().filter(|r| r.is_ok()).collect()
    }

    fn bound(&self) -> bool {
        self.ok().iter().any(|r| r.loadgen_bound)
    }

    /// A metric over the `ok` repetitions.
    pub(crate) fn summary(&self, metric: &Metric) -> Option<Summary> {
        let values: Vec<f64> = self.ok().iter().filter_map(|r| (metric.value)(r)).collect();
        Summary::of(&values)
    }
}

/// Groups results by point and run, in result order.
pub(crate) fn groups<'a>(results: &[&'a RunResult]) -> Vec<Group<'a>> {
    let mut map: BTreeMap<(wscbench_results::PointKey, &str), Vec<&'a RunResult>> = BTreeMap::new();
    for r in results {
        map.entry((r.point(), r.run_id.as_str()))
            .or_default()
            .push(r);
    }
    map.into_values()
        .map(|mut results| {
            results.sort_by_key(|r| r.repetition.index);
            Group { results }
        })
        .collect()
}

impl Report {
    /// Builds every table from results: those of the most recent run's mode and conditions
    /// (see [`select`]), repetitions of a point grouped, the latest run of each point.
    pub fn from_results(results: &[RunResult]) -> Report {
        Report::from_results_offering(results, &[])
    }

    /// [`Report::from_results`], with the transports the run recorded as not offered.
    pub fn from_results_offering(
        results: &[RunResult],
        not_offered: &[wscbench_results::NotOffered],
    ) -> Report {
        let selection = select(results, &Choice::default());
        let mut report = Report::from_selected_offering(&selection.results, not_offered);
        report.notes.extend(selection.left_out);
        report
    }

    /// Builds every table from results already selected as like with like.
    pub fn from_selected(results: &[RunResult]) -> Report {
        Report::from_selected_offering(results, &[])
    }

    /// [`Report::from_selected`], with the transports the runs recorded as not offered (their
    /// `run.json`), for the transport matrix's "not offered" cells. Every table but the
    /// matrix shows `ws` only: transports are never mixed in one table.
    pub fn from_selected_offering(
        results: &[RunResult],
        not_offered: &[wscbench_results::NotOffered],
    ) -> Report {
        let every: Vec<&RunResult> = results.iter().collect();
        let matrix = crate::transports::transport_tables(&groups(&every), not_offered);
        let ws: Vec<RunResult> = results
            .iter()
            .filter(|r| r.transport.is_ws())
            .cloned()
            .collect();
        let mut report = Report::from_ws(&ws);
        if ws.len() < results.len() {
            report.notes.push(TRANSPORT_NOTE.to_string());
        }
        let at = report
            .tables
            .iter()
            .rposition(|t| t.title.ends_with("Load generator"))
            .map_or(report.tables.len(), |i| i + 1);
        report.tables.splice(at..at, matrix);
        report
    }

    fn from_ws(results: &[RunResult]) -> Report {
        let refs: Vec<&RunResult> = results.iter().collect();
        let all = groups(&refs);
        let mut tables = vec![
            crate::summary::summary_table(&all),
            crate::summary::rank_stability_table(&all),
            crate::rounds::machine_speed_table(results),
        ];
        let profiles = ordered(
            all.iter().map(|g| g.first().server.profile.as_str()),
            &PROFILES,
        );
        for profile in profiles {
            tables.extend(profile_tables(&all, profile));
        }
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
        Report { notes, tables }
    }

    /// True when there is nothing to show.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

impl Column {
    fn metric(metric: &Metric) -> Column {
        Column {
            name: metric.name.to_string(),
            better: Some(metric.better),
            numeric: true,
        }
    }
}

impl Table {
    /// Marks the best comparable value of each ranked column, when there are at least two
    /// and they are not all equal (a column of zero errors has no winner). When the best's
    /// 95 % interval overlaps the runner-up's, no best is named: the values within noise of
    /// it are marked tied instead.
    pub(crate) fn mark_best(&mut self) {
        let mut any_tied = false;
        for (index, column) in self.columns.iter().enumerate() {
            let Some(better) = column.better else {
                continue;
            };
            let mut ranked: Vec<(usize, Summary)> = self
                .rows
                .iter()
                .enumerate()
                .filter_map(|(row, r)| r.cells.get(index).map(|c| (row, c)))
                .filter(|(_, cell)| cell.comparable)
                .filter_map(|(row, cell)| cell.as_summary().map(|s| (row, s)))
                .collect();
            if ranked.len() < 2 {
                continue;
            }
            ranked.sort_by(|(_, a), (_, b)| match better {
                Better::Higher => b.mean.total_cmp(&a.mean),
                Better::Lower => a.mean.total_cmp(&b.mean),
            });
            let best = ranked[0].1.clone();
            if ranked.iter().all(|(_, s)| s.mean == best.mean) {
                continue;
            }
            let within_noise: Vec<usize> = ranked[1..]
                .iter()
                .filter(|(_, s)| s.mean == best.mean || s.overlaps(&best))
                .map(|(row, _)| *row)
                .collect();
            let exact_ties = ranked[1..]
                .iter()
                .all(|(_, s)| s.mean == best.mean || !s.overlaps(&best));
            if within_noise.is_empty() || exact_ties {
                for (row, s) in &ranked {
                    if s.mean == best.mean {
                        self.rows[*row].cells[index].best = true;
                    }
                }
            } else {
                any_tied = true;
                for row in std::iter::once(ranked[0].0).chain(within_noise) {
                    let cell = &mut self.rows[row].cells[index];
                    cell.tied = true;
                    cell.text = format!("{} {TIED_MARK}", cell.text);
                }
            }
        }
        if any_tied {
            self.footnotes.push(format!(
                "{TIED_MARK} tied within noise: the 95 % intervals of these values overlap the best one's, so none is named best."
            ));
        }
    }

    /// Adds a "% of best" column after the named one: each comparable value as a share of
    /// the column's best (go-websocket-benchmark style).
    fn add_percent_of_best(&mut self, after: &str) {
        let Some(index) = self.columns.iter().position(|c| c.name == after) else {
            return;
        };
        let better = self.columns[index].better.unwrap_or(Better::Higher);
        let values = self
            .rows
            .iter()
            .filter_map(|r| r.cells.get(index))
            .filter(|c| c.comparable)
            .filter_map(|c| c.value);
        let best = match better {
            Better::Higher => values.fold(f64::NAN, f64::max),
            Better::Lower => values.fold(f64::NAN, f64::min),
        };
        self.columns.insert(
            index + 1,
            Column {
                name: "% of best".into(),
                better: None,
                numeric: true,
            },
        );
        for row in &mut self.rows {
            let cell = match row.cells.get(index) {
                Some(c) if c.comparable && best.is_finite() && best != 0.0 => {
                    let v = c.value.unwrap_or(0.0);
                    let share = match better {
                        Better::Higher => v / best,
                        Better::Lower if v != 0.0 => best / v,
                        Better::Lower => 1.0,
                    };
                    Cell {
                        comparable: false,
                        ..Cell::figure(format!("{:.0}%", share * 100.0), share * 100.0)
                    }
                }
                // A failed row shows its outcome here too.
                Some(c) if c.value.is_none() => Cell::label(c.text.clone()),
                _ => Cell::absent(),
            };
            row.cells.insert(index + 1, cell);
        }
    }
}

/// One profile's tables: each scenario's (a table per load of a sweep), then its load
/// generator's.
fn profile_tables(all: &[Group], profile: &str) -> Vec<Table> {
    let mut tables = Vec::new();
    let in_profile: Vec<&Group> = all
        .iter()
        .filter(|g| g.first().server.profile == profile)
        .collect();
    let title = profile_title(profile);
    // An external server's rows are named by --name, not by a language.
    let row_name = if profile == "external" {
        "Server"
    } else {
        "Language"
    };
    for scenario in &SCENARIO_TABLES {
        // Like with like: the points of a sweep's values rank in tables of their own
        // (the knob tables set them side by side).
        let mut loads: Vec<Vec<(String, String)>> = in_profile
            .iter()
            .filter(|g| g.first().scenario == scenario.scenario)
            .map(|g| g.first().point().load_params)
            .collect();
        // In the values' order, not their text's: 200 before 1000.
        loads.sort_by(|a, b| {
            let number = |l: &Vec<(String, String)>| -> Vec<(String, f64)> {
                l.iter()
                    .map(|(k, v)| (k.clone(), v.parse().unwrap_or(f64::NAN)))
                    .collect()
            };
            number(a)
                .partial_cmp(&number(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        loads.dedup();
        for load in loads {
            let rows = in_profile.iter().copied().filter(|g| {
                g.first().scenario == scenario.scenario && g.first().point().load_params == load
            });
            let rows = by_language(rows).map(|g| (vec![Cell::label(language(g.first()))], g));
            let params: Vec<String> = load.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let suffix = if params.is_empty() {
                String::new()
            } else {
                format!(" ({})", params.join(", "))
            };
            let mut table = metric_table(
                format!("{title} — {}{suffix}", scenario.title),
                &[row_name],
                &scenario
                    .metrics
                    .iter()
                    .map(|m| Column::metric(m))
                    .collect::<Vec<_>>(),
                rows,
                false,
                |g, i| metric_cell(scenario.metrics[i], g),
            );
            table.mark_best();
            if let Some(lead) = scenario.lead {
                table.add_percent_of_best(lead.name);
            }
            tables.push(table);
        }
    }
    let mut by_scenario: Vec<&Group> = by_language(in_profile.into_iter()).collect();
    by_scenario.sort_by_key(|g| rank(g.first().scenario.as_str(), &SCENARIOS));
    let rows = by_scenario.into_iter().map(|g| {
        (
            vec![
                Cell::label(capitalized(g.first().scenario.as_str())),
                Cell::label(language(g.first())),
            ],
            g,
        )
    });
    tables.push(metric_table(
        format!("{title} — Load generator"),
        &["Scenario", row_name],
        &LOADGEN_COLUMNS
            .iter()
            .map(|(name, numeric, _)| Column {
                name: name.to_string(),
                better: None,
                numeric: *numeric,
            })
            .collect::<Vec<_>>(),
        rows,
        true,
        |g, i| (LOADGEN_COLUMNS[i].2)(g.results[g.results.len() - 1]),
    ));
    tables
}

/// Columns that older results and the js path never measured: left out of a table where no
/// row has them, so a report of such results reads as before.
const OPTIONAL_COLUMNS: [&str; 4] = [
    SCHEDULE_COLUMN,
    metrics::SERVICE_P95.name,
    metrics::SENT_PER_INTENDED.name,
    metrics::SERVER_LATE.name,
];

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

/// A scenario's comparison table.
struct ScenarioTable {
    scenario: Scenario,
    title: &'static str,
    metrics: &'static [&'static Metric],
    /// The column "% of best" follows.
    lead: Option<&'static Metric>,
}

const STEADY_METRICS: [&Metric; 11] = [
    &metrics::THROUGHPUT,
    &metrics::PEAK_MEMORY,
    &metrics::PEAK_CPU,
    &metrics::K6_ERRORS,
    &metrics::LATENCY_P95,
    &metrics::SERVICE_P95,
    &metrics::SENT_PER_INTENDED,
    &metrics::DELIVERIES,
    // Efficiency: what each delivery and each connection cost the server, beside the
    // share it delivered (a dropped message costs nothing).
    &metrics::DELIVERED_SHARE,
    &metrics::CPU_EFFICIENCY,
    &metrics::MEMORY_PER_CONNECTION,
];
const SCENARIO_TABLES: [ScenarioTable; 4] = [
    ScenarioTable {
        scenario: Scenario::Steady,
        title: "Steady",
        metrics: &STEADY_METRICS,
        lead: Some(&metrics::THROUGHPUT),
    },
    ScenarioTable {
        scenario: Scenario::Burst,
        title: "Burst",
        metrics: &STEADY_METRICS,
        lead: Some(&metrics::THROUGHPUT),
    },
    ScenarioTable {
        scenario: Scenario::Churn,
        title: "Churn",
        metrics: &[
            &metrics::CONNECTIONS,
            &metrics::PEAK_MEMORY,
            &metrics::PEAK_CPU,
            &metrics::K6_ERRORS,
            &metrics::LATENCY_P95,
        ],
        lead: None,
    },
    ScenarioTable {
        scenario: Scenario::Saturation,
        title: "Saturation",
        // Every client chats at the same rate, so accepted chats/s is the same for every
        // server that keeps up: the fan-out it delivers is what tells them apart.
        metrics: &[
            &metrics::DELIVERIES,
            &metrics::SLOW_DROPS,
            &metrics::LATENCY_P95,
            &metrics::SERVICE_P95,
            &metrics::SENT_PER_INTENDED,
            &metrics::SERVER_LATE,
            &metrics::PEAK_MEMORY,
            &metrics::PEAK_CPU,
            &metrics::DELIVERED_SHARE,
            &metrics::CPU_EFFICIENCY,
            &metrics::MEMORY_PER_CONNECTION,
            &metrics::K6_ERRORS,
        ],
        lead: Some(&metrics::DELIVERIES),
    },
];

/// A metric over a group's repetitions; a load-generator bound group's figures never
/// compete, and its sensitive ones are marked.
pub(crate) fn metric_cell(metric: &Metric, group: &Group) -> Cell {
    let mut cell = match group.summary(metric) {
        Some(s) => Cell::summary(&s, metric.format),
        None => Cell::absent(),
    };
    let bound = group.bound();
    cell.comparable &= !bound;
    if bound && metric.loadgen_sensitive {
        cell = cell.marked(LOADGEN_BOUND_MARK);
    }
    cell
}

type LoadgenColumn = (&'static str, bool, fn(&RunResult) -> Cell);

/// The clients' schedule: chats sent of those intended, and the late and missed ones by
/// cause (join and write are the server's, timer the load generator's).
const SCHEDULE_COLUMN: &str = "Chats sent / intended; late and missed by cause";

/// Which side was the bottleneck: k6's own CPU, and whether it read every chat the
/// server says it delivered (of the last repetition).
const LOADGEN_COLUMNS: [LoadgenColumn; 6] = [
    ("Server mean CPU", true, |r| match &r.derived.server {
        Some(server) => Cell::figure(units::cpu(server.mean_cpu_percent), server.mean_cpu_percent),
        None => Cell::absent(),
    }),
    ("k6 peak CPU", true, |r| {
        Cell::figure(
            units::cpu(r.derived.loadgen.peak_cpu_percent),
            r.derived.loadgen.peak_cpu_percent,
        )
    }),
    ("k6 mean CPU", true, |r| {
        Cell::figure(
            units::cpu(r.derived.loadgen.mean_cpu_percent),
            r.derived.loadgen.mean_cpu_percent,
        )
    }),
    ("k6 chat received / server deliveries", true, |r| {
        match (&r.k6, &r.server_stats) {
            (Some(k6), Some(stats)) if stats.deliveries > 0 => {
                let ratio = k6.chat_received as f64 / stats.deliveries as f64;
                let text = format!(
                    "{} / {} ({:.1}%)",
                    units::count(k6.chat_received),
                    units::count(stats.deliveries),
                    ratio * 100.0
                );
                Cell::figure(text, ratio)
            }
            (Some(k6), Some(stats)) => Cell::label(format!(
                "{} / {}",
                units::count(k6.chat_received),
                units::count(stats.deliveries)
            )),
            _ => Cell::absent(),
        }
    }),
    (SCHEDULE_COLUMN, false, |r| {
        match r.k6.as_ref().and_then(|k| k.chats) {
            Some(c) if c.intended > 0 => {
                let share = c.sent() as f64 / c.intended as f64;
                let mut text = format!(
                    "{} / {} ({:.1}%)",
                    units::count(c.sent()),
                    units::count(c.intended),
                    share * 100.0
                );
                for (what, join, write, timer) in [
                    (
                        "late",
                        c.sent_late_join,
                        c.sent_late_write,
                        c.sent_late_timer,
                    ),
                    ("missed", c.missed_join, c.missed_write, c.missed_timer),
                ] {
                    if join + write + timer > 0 {
                        text.push_str(&format!(
                            "; {what}: join {} · write {} · timer {}",
                            units::count(join),
                            units::count(write),
                            units::count(timer)
                        ));
                    }
                }
                Cell::figure(text, share)
            }
            _ => Cell::absent(),
        }
    }),
    ("Load-generator bound?", false, |r| {
        if r.loadgen_bound {
            Cell::label(format!("yes {LOADGEN_BOUND_MARK}"))
        } else {
            Cell::label("no")
        }
    }),
];

/// A table of figures, one row per group. A group without an `ok` repetition shows its
/// outcome in place of every figure; a load-generator bound group has its sensitive
/// figures marked. Footnotes come once per reason, naming the rows. With `per_scenario`,
/// rows span scenarios and are named with their scenario in footnotes.
fn metric_table<'a, 'g>(
    title: String,
    labels: &[&str],
    metric_columns: &[Column],
    rows: impl Iterator<Item = (Vec<Cell>, &'g Group<'a>)>,
    per_scenario: bool,
    cell: impl Fn(&Group<'a>, usize) -> Cell,
) -> Table
where
    'a: 'g,
{
    let mut columns: Vec<Column> = labels
        .iter()
        .map(|name| Column {
            name: name.to_string(),
            better: None,
            numeric: false,
        })
        .collect();
    columns.extend(metric_columns.iter().cloned());

    let rows: Vec<(Vec<Cell>, &Group)> = rows.collect();
    let newest = rows
        .iter()
        .map(|(_, g)| (g.first().started_at.as_str(), g.first().run_id.as_str()))
        .max()
        .map(|(_, run)| run.to_string());
    let mut table = Table {
        title,
        columns,
        rows: Vec::new(),
        footnotes: Vec::new(),
    };
    let mut notes = Notes::default();
    for (mut cells, group) in rows {
        let first = group.first();
        let name = if per_scenario {
            format!("{} ({})", language(first), first.scenario)
        } else {
            language(first)
        };
        if newest.as_deref().is_some_and(|n| n != first.run_id) {
            if let Some(label) = cells.last_mut() {
                label.text = format!("{} {OLDER_RUN_MARK}", label.text);
            }
            notes.add(OLDER_RUN_MARK, format!("from run {}", first.run_id), &name);
        }
        let ok = group.ok();
        for failed in group.results.iter().filter(|r| !r.is_ok()) {
            let detail = failed
                .outcome_detail
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            let reps = if failed.repetition.of > 1 {
                format!(" repetition {}", failed.repetition.index)
            } else {
                String::new()
            };
            notes.add(
                FAILED_MARK,
                format!("ended `{}`{detail}", failed.outcome.as_str()),
                &format!("{name}{reps}"),
            );
        }
        if ok.is_empty() {
            let outcome = first.outcome.as_str();
            if let Some(last) = cells.pop() {
                cells.push(last.marked(FAILED_MARK));
            }
            cells.extend((0..metric_columns.len()).map(|_| Cell::label(outcome)));
        } else {
            cells.extend((0..metric_columns.len()).map(|i| cell(group, i)));
            for r in ok.iter().filter(|r| r.loadgen_bound) {
                if r.loadgen_bound_reasons.is_empty() {
                    notes.add(LOADGEN_BOUND_MARK, crate::wording::NO_REASON.into(), &name);
                }
                for reason in &r.loadgen_bound_reasons {
                    notes.add(
                        LOADGEN_BOUND_MARK,
                        crate::wording::reason_kind(reason).into(),
                        &name,
                    );
                }
            }
        }
        table.rows.push(Row { cells });
    }
    table.footnotes = notes.texts();
    if table.rows.iter().flat_map(|r| &r.cells).any(|c| c.noisy) {
        table
            .footnotes
            .push(format!("{NOISY_MARK} {}.", stats::NOISY_HINT));
    }
    table
}

/// Footnotes before they are written out: one per mark and reason, listing its rows.
#[derive(Default)]
struct Notes {
    notes: Vec<(&'static str, String, Vec<String>)>,
}

impl Notes {
    fn add(&mut self, mark: &'static str, reason: String, row: &str) {
        match self
            .notes
            .iter_mut()
            .find(|(m, r, _)| *m == mark && *r == reason)
        {
            Some((_, _, rows)) => {
                if !rows.iter().any(|r| r == row) {
                    rows.push(row.to_string());
                }
            }
            None => self.notes.push((mark, reason, vec![row.to_string()])),
        }
    }

    fn texts(&self) -> Vec<String> {
        let mut texts: Vec<String> = self
            .notes
            .iter()
            .map(|(mark, reason, rows)| format!("{mark} {reason}: {}.", rows.join("; ")))
            .collect();
        if self.notes.iter().any(|(m, _, _)| *m == LOADGEN_BOUND_MARK) {
            texts.push(format!(
                "{LOADGEN_BOUND_MARK} {}",
                crate::wording::BOUND_MEANING
            ));
        }
        if self.notes.iter().any(|(m, _, _)| *m == FAILED_MARK) {
            texts.push(format!("{FAILED_MARK} {}", crate::wording::FAILED_MEANING));
        }
        texts
    }
}

/// Binary (and image) sizes of every server: one row per language, one column per
/// profile. Sizes come from the build, so a failed run still has them; an external server
/// (`run --url`) was not built by wscbench and has none.
fn binary_sizes(results: &[&RunResult]) -> Table {
    let built: Vec<&RunResult> = results
        .iter()
        .copied()
        .filter(|r| r.external_url.is_none())
        .collect();
    let results = built.as_slice();
    let profiles = ordered(results.iter().map(|r| r.server.profile.as_str()), &PROFILES);
    let languages = ordered(
        results.iter().map(|r| r.server.language.as_str()),
        &LANGUAGES,
    );
    let mut columns = vec![Column {
        name: "Language".into(),
        better: None,
        numeric: false,
    }];
    columns.extend(profiles.iter().map(|profile| Column {
        name: match *profile {
            "extra" => "Extra".to_string(),
            other => format!("Profile {}", other.to_uppercase()),
        },
        better: Some(Better::Lower),
        numeric: true,
    }));

    let mut rows = Vec::new();
    for language in &languages {
        let mut cells = vec![Cell::label(capitalized(language))];
        let mut any = false;
        for profile in &profiles {
            let server = results
                .iter()
                .filter(|r| r.server.language == *language && r.server.profile == *profile)
                .max_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)))
                .map(|r| &r.server);
            let cell = match server.map(|s| (s.binary_size_bytes, s.image_size_bytes)) {
                Some((Some(binary), image)) => {
                    let image = image
                        .map(|i| format!(" (image {})", units::size(i)))
                        .unwrap_or_default();
                    Cell::figure(format!("{}{image}", units::size(binary)), binary as f64)
                }
                Some((None, Some(image))) => {
                    Cell::label(format!("{ABSENT} (image {})", units::size(image)))
                }
                _ => Cell::absent(),
            };
            any |= cell.text != ABSENT;
            cells.push(cell);
        }
        if any {
            rows.push(Row { cells });
        }
    }
    Table {
        title: "Binary sizes".into(),
        columns,
        rows,
        footnotes: Vec::new(),
    }
}

/// Groups in row order: go, rust, zig, then other languages, then by server id.
fn by_language<'a, 'g>(
    groups: impl Iterator<Item = &'g Group<'a>>,
) -> impl Iterator<Item = &'g Group<'a>>
where
    'a: 'g,
{
    let mut groups: Vec<&Group> = groups.collect();
    groups.sort_by(|a, b| {
        let key = |g: &Group<'a>| {
            let r = g.first();
            (
                rank(&r.server.language, &LANGUAGES),
                r.server.id.clone(),
                r.server_label(),
            )
        };
        key(a).cmp(&key(b))
    });
    groups.into_iter()
}

/// A language's place in the order rows appear.
pub(crate) fn language_rank(language: &str) -> (usize, String) {
    let (i, l) = rank(language, &LANGUAGES);
    (i, l.to_string())
}

/// A value's place in a known order; unknown values come after, alphabetically.
fn rank<'a>(value: &'a str, known: &[&str]) -> (usize, &'a str) {
    (
        known
            .iter()
            .position(|k| *k == value)
            .unwrap_or(known.len()),
        value,
    )
}

/// The distinct values, in their known order first.
pub(crate) fn ordered<'a>(values: impl Iterator<Item = &'a str>, known: &[&str]) -> Vec<&'a str> {
    let mut distinct: Vec<&str> = values.collect();
    distinct.sort_by_key(|value| rank(value, known));
    distinct.dedup();
    distinct
}

pub(crate) fn profile_title(profile: &str) -> String {
    match profile {
        "a" => "Profile A (frameworks)".into(),
        "b" => "Profile B (minimal / stdlib)".into(),
        "external" => "External servers (by URL)".into(),
        // servers/extra: its own group, never compared inside profile A's or B's tables.
        "extra" => "Extra (runtime servers, beside the profiles)".into(),
        other => format!("Profile {}", other.to_uppercase()),
    }
}

/// A row's name in a profile's tables: the language, with the variant and the load
/// parameters when the result has them (`Go@gomaxprocs-1 clients=100`).
pub(crate) fn language(result: &RunResult) -> String {
    let mut name = server_name(result);
    for (k, v) in wscbench_results::dimensions::params_text(&result.load_params) {
        name.push_str(&format!(" {k}={v}"));
    }
    name
}

/// A row's name without the load parameters: the language (an external server's name),
/// with the variant (`Go@gomaxprocs-1`).
pub(crate) fn server_name(result: &RunResult) -> String {
    // An external server has no language of record: its name (`external/NAME`) stands.
    let mut name = match &result.external_url {
        Some(_) => result
            .server
            .id
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string(),
        None => capitalized(&result.server.language),
    };
    if let Some(variant) = &result.variant {
        name.push_str(&format!("@{variant}"));
    }
    name
}

/// Where a server's rows go: profiles in order, then languages in order.
pub(crate) fn server_order(result: &RunResult) -> usize {
    let profile = rank(&result.server.profile, &PROFILES).0;
    let language = rank(&result.server.language, &LANGUAGES).0;
    profile * (LANGUAGES.len() + 1) + language
}

/// A scenario's name in table titles (`Steady`).
pub(crate) fn scenario_title(scenario: Scenario) -> &'static str {
    let own = match scenario {
        Scenario::Fanout => "Fan-out",
        Scenario::SlowConsumers => "Slow consumers",
        Scenario::Capacity => "Capacity",
        Scenario::IdleCapacity => "Idle capacity",
        _ => "",
    };
    SCENARIO_TABLES
        .iter()
        .find(|t| t.scenario == scenario)
        .map_or(own, |t| t.title)
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
