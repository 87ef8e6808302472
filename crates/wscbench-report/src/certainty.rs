//! How sure a run's headline figures are, counted from the run itself: for each headline
//! figure (memory and CPU per user, the load curve's cost and latency at its steps), how many
//! server points it has, their rounds, how many are within ±5 % and ±10 % at 95 %, and the
//! median half-width; and the machine-speed index the rounds ran at. The docs quote this
//! table (scripts/results-docs) instead of typing precision claims by hand.

use wscbench_results::{RunResult, Scenario};

use crate::metrics::{self, Metric};
use crate::precision::relative_half_width;
use crate::rows::Group;
use crate::table::{Cell, Column, Row, Table};

/// The table's title, by which scripts/results-docs finds it.
pub(crate) const CERTAINTY_TITLE: &str = "Certainty of the headline figures";

/// The headline figures counted, each under the scenario that measures it.
const FIGURES: [(&str, Scenario, &Metric); 4] = [
    (
        "Memory per user",
        Scenario::Population,
        &metrics::MEMORY_PER_USER,
    ),
    (
        "CPU per 1,000 users",
        Scenario::Population,
        &metrics::CPU_PER_1K_USERS,
    ),
    (
        "Cost per delivery (every curve step)",
        Scenario::LoadCurve,
        &metrics::CPU_PER_1K_DELIVERIES,
    ),
    (
        "Latency p99 (every curve step)",
        Scenario::LoadCurve,
        &metrics::LATENCY_P99,
    ),
];

/// One row per headline figure measured, then one for the machine-speed index.
pub(crate) fn certainty_table(groups: &[Group], results: &[RunResult]) -> Table {
    let mut table = Table {
        title: CERTAINTY_TITLE.to_string(),
        columns: Column::unranked(&[
            ("Figure", false),
            ("Server points", true),
            ("Rounds each", true),
            ("Within ±5 %", true),
            ("Within ±10 %", true),
            ("Median half-width", true),
        ]),
        rows: Vec::new(),
        footnotes: Vec::new(),
        scenario: None,
        axis: None,
    };
    for (name, scenario, metric) in FIGURES {
        let points: Vec<&Group> = groups
            .iter()
            .filter(|g| g.first().scenario == scenario && g.first().transport.is_ws())
            .collect();
        // Rounds the load generator bounded say nothing of the server: left out, as the
        // summary leaves them out.
        let summaries: Vec<crate::stats::Summary> = points
            .iter()
            .filter_map(|g| {
                let values: Vec<f64> = g
                    .ok()
                    .iter()
                    .filter(|r| metric.reads_server(r))
                    .filter_map(|r| (metric.value)(r))
                    .collect();
                crate::stats::Summary::of(&values)
            })
            .collect();
        if summaries.is_empty() {
            continue;
        }
        let widths: Vec<f64> = summaries.iter().filter_map(relative_half_width).collect();
        let within = |goal: f64| widths.iter().filter(|&&w| w <= goal).count();
        let rounds: Vec<usize> = summaries.iter().map(|s| s.n).collect();
        let (lo, hi) = (
            rounds.iter().min().copied().unwrap_or(0),
            rounds.iter().max().copied().unwrap_or(0),
        );
        let n = summaries.len();
        table.rows.push(Row {
            cells: vec![
                Cell::label(name),
                Cell::figure(n.to_string(), n as f64),
                Cell::label(if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}–{hi}")
                }),
                Cell::label(format!("{} of {n}", within(0.05))),
                Cell::label(format!("{} of {n}", within(0.10))),
                match median(&widths) {
                    Some(m) => Cell::figure(format!("±{:.1} %", m * 100.0), m),
                    None => Cell::absent(),
                },
            ],
        });
    }
    // Each round's calibration once (every result of a round carries the same).
    let mut rounds: std::collections::BTreeMap<(&str, u32), f64> = Default::default();
    for r in results {
        if let Some(speed) = r.round.as_ref().and_then(|round| round.machine_speed) {
            rounds.insert((r.run_id.as_str(), r.repetition.index), speed.index);
        }
    }
    let indexes: Vec<f64> = rounds.into_values().collect();
    if !table.rows.is_empty() && !indexes.is_empty() {
        let lo = indexes.iter().copied().fold(f64::MAX, f64::min);
        let hi = indexes.iter().copied().fold(f64::MIN, f64::max);
        table.footnotes.push(format!(
            "{} rounds ran at a machine-speed index of {lo:.1} to {hi:.1}. A server point's \
             figure is the mean over its rounds free of the load generator; within ±5 % means \
             its 95 % interval's half-width is at most 5 % of the mean.",
            indexes.len()
        ));
    }
    table
}

/// The median of `values`; `None` when empty.
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(&[0.04, 0.2, 0.06, 0.1]), Some(0.08));
        assert_eq!(median(&[0.3]), Some(0.3));
        assert_eq!(median(&[]), None);
    }
}
