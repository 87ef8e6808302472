//! Tables across a knob: when results of a scenario differ in a load parameter (a sweep's
//! `clients` or `rate`) or in the server's variant, one table per metric with the knob's
//! values as columns and one row per server, so "throughput rises, latency rises" reads
//! left to right. Like with like: a row holds every dimension but the knob equal (the
//! other load parameters for a parameter; the load parameters for variants), and each
//! column names the best server at that value.

use std::collections::BTreeMap;

use wscbench_results::dimensions::format_number;
use wscbench_results::{LoadParam, PointKey, Scenario};

use crate::metrics::{self, Metric};
use crate::rows::{Group, metric_cell, scenario_title, server_order};
use crate::table::{Axis, Cell, Column, Knob, LOADGEN_BOUND_MARK, Row, Table};

/// The metrics drawn across a knob.
pub const KNOB_METRICS: [&Metric; 6] = [
    &metrics::THROUGHPUT,
    &metrics::DELIVERIES,
    &metrics::LATENCY_P95,
    &metrics::LATENCY_P99,
    &metrics::PEAK_CPU,
    &metrics::PEAK_MEMORY,
];

/// The metrics drawn across a knob in `scenario`: [`KNOB_METRICS`], and for the load curve
/// its headline, the server's CPU per 1,000 deliveries (what a variant such as
/// `no-utf8-check` saves is read there).
pub fn knob_metrics(scenario: Scenario) -> Vec<&'static Metric> {
    let mut metrics = KNOB_METRICS.to_vec();
    if scenario == Scenario::LoadCurve {
        metrics.insert(2, &metrics::CPU_PER_1K_DELIVERIES);
    }
    metrics
}

/// The column of a variants table for the server without a variant.
pub const DEFAULT_COLUMN: &str = "default";
/// The first column of a knob table: the row's server, with its fixed load parameters.
pub const ROW_COLUMN: &str = "Server";
/// What joins a scenario, a metric and a knob in a knob table's title.
const ACROSS: &str = " across ";

/// Where one group goes in a knob table.
struct Placed<'g, 'a> {
    row: String,
    column: (f64, String),
    group: &'g Group<'a>,
}

/// Every knob table of these groups (already like with like in mode, load path and
/// conditions), scenario by scenario, each knob's tables in [`knob_metrics`] order.
pub(crate) fn knob_tables(groups: &[Group]) -> Vec<Table> {
    let mut tables = Vec::new();
    for &scenario in Scenario::ALL {
        let in_scenario: Vec<&Group> = groups
            .iter()
            .filter(|g| g.first().scenario == scenario)
            .collect();
        let keys: std::collections::BTreeSet<LoadParam> = in_scenario
            .iter()
            .flat_map(|g| g.first().load_params.keys().copied())
            // A load curve's steps are read across by the curve's own tables (curve.rs).
            .filter(|key| !(scenario == Scenario::LoadCurve && *key == LoadParam::Deliveries))
            .collect();
        for key in keys {
            let placed = in_scenario
                .iter()
                .filter_map(|g| {
                    let value = *g.first().load_params.get(&key)?;
                    let point = g.first().point();
                    Some(Placed {
                        row: row_label(&point, Some(key), true),
                        column: (value, format!("{key}={}", format_number(value))),
                        group: g,
                    })
                })
                .collect();
            tables.extend(tables_of(scenario, Knob::Param(key), placed));
        }
        if in_scenario.iter().any(|g| g.first().variant.is_some()) {
            let mut names: Vec<&str> = in_scenario
                .iter()
                .filter_map(|g| g.first().variant.as_deref())
                .collect();
            names.sort();
            names.dedup();
            let index = |v: Option<&str>| match v {
                None => 0.0,
                Some(v) => 1.0 + names.iter().position(|n| *n == v).unwrap_or(0) as f64,
            };
            let placed = in_scenario
                .iter()
                .map(|g| {
                    let variant = g.first().variant.as_deref();
                    Placed {
                        row: row_label(&g.first().point(), None, false),
                        column: (
                            index(variant),
                            variant.unwrap_or(DEFAULT_COLUMN).to_string(),
                        ),
                        group: g,
                    }
                })
                .collect();
            tables.extend(tables_of(scenario, Knob::Variant, placed));
        }
    }
    tables
}

/// One table per metric, when the knob takes at least two values.
fn tables_of(scenario: Scenario, knob: Knob, placed: Vec<Placed>) -> Vec<Table> {
    let mut columns: Vec<(f64, String)> = placed.iter().map(|p| p.column.clone()).collect();
    columns.sort_by(|a, b| a.0.total_cmp(&b.0));
    columns.dedup();
    if columns.len() < 2 {
        return Vec::new();
    }
    // Rows in the report's server order; the newest run's group where a point was run twice.
    let mut rows: BTreeMap<(usize, String), BTreeMap<String, &Group>> = BTreeMap::new();
    for p in &placed {
        let first = p.group.first();
        let order = server_order(first);
        let cells = rows.entry((order, p.row.clone())).or_default();
        let newer = cells.get(&p.column.1).is_none_or(|g| {
            (&g.first().started_at, &g.first().run_id) < (&first.started_at, &first.run_id)
        });
        if newer {
            cells.insert(p.column.1.clone(), p.group);
        }
    }
    let xs: Vec<f64> = columns
        .iter()
        .enumerate()
        .map(|(i, (value, _))| if knob.is_numeric() { *value } else { i as f64 })
        .collect();
    let languages: Vec<String> = rows
        .values()
        .map(|cells| {
            cells
                .values()
                .next()
                .map_or_else(String::new, |g| g.first().server.language.clone())
        })
        .collect();
    knob_metrics(scenario)
        .into_iter()
        .map(|metric| {
            let mut table_columns = Column::unranked(&[(ROW_COLUMN, false)]);
            table_columns.extend(columns.iter().map(|(_, name)| Column {
                name: name.clone(),
                better: Some(metric.better),
                numeric: true,
                detail: false,
            }));
            let mut table = Table {
                title: format!(
                    "{} — {}{ACROSS}{knob}",
                    scenario_title(scenario),
                    metric.name
                ),
                columns: table_columns,
                rows: rows
                    .iter()
                    .map(|((_, label), cells)| {
                        let mut row = vec![Cell::label(label.clone())];
                        row.extend(columns.iter().map(|(_, name)| match cells.get(name) {
                            // A point that never ended ok says how it ended.
                            Some(group) if group.ok().is_empty() => {
                                Cell::label(group.first().outcome.as_str())
                            }
                            Some(group) => metric_cell(metric, group),
                            None => Cell::absent(),
                        }));
                        Row { cells: row }
                    })
                    .collect(),
                scenario: Some(scenario),
                axis: Some(Axis {
                    knob,
                    metric,
                    xs: xs.clone(),
                    languages: languages.clone(),
                }),
                footnotes: Vec::new(),
            };
            table.mark_best();
            if table
                .rows
                .iter()
                .flat_map(|r| &r.cells)
                .any(|c| c.loadgen_bound)
            {
                table.footnotes.push(format!(
                    "{} {}",
                    LOADGEN_BOUND_MARK,
                    crate::wording::BOUND_MEANING
                ));
            }
            table
        })
        .collect()
}

/// A row's name: the server (with its variant unless the variant is the knob) and the load
/// parameters other than the knob, e.g. `profile-b/go@gomaxprocs-1 rate=2`.
fn row_label(point: &PointKey, knob: Option<LoadParam>, with_variant: bool) -> String {
    let mut label = if with_variant {
        point.server_label()
    } else {
        point.server.clone()
    };
    for (k, v) in &point.load_params {
        if Some(*k) != knob {
            label.push_str(&format!(" {k}={v}"));
        }
    }
    label
}
