//! The load curve's table: per profile, one row per server and step of offered load, with
//! what arrived, how late, what it cost the server and whether it carried the step, and
//! each server's capacity under it. Read from [`crate::curve`].

use wscbench_results::Scenario;

use crate::curve::{Carried, Step, profile_curves};
use crate::metrics::{self, Better, Metric};
use crate::rows::{Group, PROFILES, ordered, profile_title};
use crate::table::{Cell, Column, FAILED_MARK, LOADGEN_BOUND_MARK, Row, Table};

/// The columns of a curve table: the step, what arrived and how late, what it cost, and
/// the verdict; the rest are details a terminal shows with `--wide`.
fn curve_columns() -> Vec<Column> {
    let mut columns = Column::unranked(&[("Server", false), ("Offered/s", true)]);
    let detail = |metric: &Metric| Column {
        detail: true,
        ..Column::metric(metric)
    };
    columns.extend([
        Column::metric(&metrics::DELIVERED_OF_OFFERED),
        detail(&metrics::LATENCY_P50),
        Column::metric(&metrics::LATENCY_P99),
        detail(&metrics::LATENCY_MAX),
        Column::metric(&metrics::CPU_PER_1K_DELIVERIES),
        detail(&metrics::CPU_EFFICIENCY),
        detail(&metrics::PEAK_MEMORY),
        detail(&LOADGEN_CPU),
    ]);
    columns.extend(Column::unranked(&[("Carried", false)]));
    columns
}

/// k6's mean CPU over a step, in percent of one core: how close the load generator came to
/// its own limit.
const LOADGEN_CPU: Metric = Metric {
    key: "loadgen-cpu",
    name: "k6 CPU",
    better: Better::Lower,
    loadgen_sensitive: false,
    value: |r| Some(r.derived.loadgen.mean_cpu_percent),
    format: crate::units::cpu,
};

/// A step's figure: over its rounds free of the load generator, or marked † when every
/// round was bound (then it is the load generator's figure, a bound on the server's).
fn step_cell(metric: &Metric, step: &Step) -> Cell {
    let cell = match step.summary(metric) {
        Some(s) => Cell::summary(&s, metric.format),
        None => Cell::absent(),
    };
    if step.carried == Carried::LoadGenerator && metric.loadgen_sensitive {
        cell.bound()
    } else {
        cell
    }
}

/// What a step's verdict says in its row; a step k6 limited is marked as such.
fn carried_cell(step: &Step, slo_p99_ms: f64) -> Cell {
    match step.carried {
        Carried::LoadGenerator => Cell::label("k6").bound(),
        _ => Cell::label(carried_text(step, slo_p99_ms)),
    }
}

/// What a step's verdict says in words.
fn carried_text(step: &Step, slo_p99_ms: f64) -> String {
    match step.carried {
        Carried::Yes => "yes".to_string(),
        Carried::TooLate => format!("late (p99 > {})", crate::units::ms(slo_p99_ms)),
        Carried::No => "no (< 99 % arrived)".to_string(),
        Carried::LoadGenerator => format!("k6 {LOADGEN_BOUND_MARK}"),
        Carried::Failed => format!("failed {FAILED_MARK}"),
    }
}

/// Per profile, the load curve of every server: one row per server and step, lowest load
/// first; steps are compared across servers in the summary (only where all carried them).
pub(crate) fn curve_tables(groups: &[Group]) -> Vec<Table> {
    let profiles = ordered(
        groups.iter().map(|g| g.first().server.profile.as_str()),
        &PROFILES,
    );
    let mut tables = Vec::new();
    for profile in profiles {
        let curves = profile_curves(groups, profile);
        let Some(slo) = curves.first().map(|c| c.slo_p99_ms) else {
            continue;
        };
        let mut rows = Vec::new();
        for curve in &curves {
            for step in &curve.steps {
                let mut cells = vec![
                    Cell::label(curve.first.server_label()),
                    Cell::figure(crate::units::rate(step.offered), step.offered),
                ];
                cells.extend(
                    [
                        &metrics::DELIVERED_OF_OFFERED,
                        &metrics::LATENCY_P50,
                        &metrics::LATENCY_P99,
                        &metrics::LATENCY_MAX,
                        &metrics::CPU_PER_1K_DELIVERIES,
                        &metrics::CPU_EFFICIENCY,
                        &metrics::PEAK_MEMORY,
                        &LOADGEN_CPU,
                    ]
                    .into_iter()
                    .map(|m| step_cell(m, step)),
                );
                cells.push(carried_cell(step, curve.slo_p99_ms));
                rows.push(Row { cells });
            }
        }
        let capacities: Vec<String> = curves
            .iter()
            .map(|c| format!("{} {}", c.first.server_label(), c.capacity_text()))
            .collect();
        tables.push(Table {
            title: format!("{} — Load curve", profile_title(profile)),
            columns: curve_columns(),
            rows,
            footnotes: vec![
                format!(
                    "A step is carried when 99 % of its offered deliveries arrived and latency p99 (from each chat's intended time) stayed within {} (--slo-p99-ms), over the rounds free of the load generator; CPU per 1k deliveries is the server's over the step's hold (its join ramp left out).",
                    crate::units::ms(slo)
                ),
                format!("Capacity (per round, the load at which latency p99 crosses {} or the delivered share falls below 99 %, interpolated on the log of the load between the highest step carried and the next; the mean over rounds ± its 95 % interval, or a bound naming what stopped the curve first): {}.", crate::units::ms(slo), capacities.join("; ")),
            ],
            scenario: Some(Scenario::LoadCurve),
            axis: None,
        });
    }
    tables
}
