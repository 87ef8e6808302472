//! The transport matrix: per profile, one row per server × transport (`ws`, `wss`,
//! `ws+deflate`, `wss+deflate`) with saturation deliveries/s, deliveries per CPU-second,
//! steady latency p95, memory per connection and bytes per delivery, each with its
//! interval and its cost relative to the same server over `ws`. A transport a server does
//! not offer is a row of "not offered" cells whose footnote gives the manifest's reason (as
//! the run's `run.json` recorded it). Like with like: only the plain server (no variant)
//! at the shapes' own load, so a row differs from its `ws` row in the transport alone.

use wscbench_results::{NotOffered, Scenario, Transport};

use crate::metrics::{self, Metric};
use crate::rows::{
    Group, PROFILES, capitalized, language_rank, metric_cell, ordered, profile_title,
};
use crate::table::{Cell, Column, LOADGEN_BOUND_MARK, Row, Table};

/// The matrix's figures: the scenario each is read from, and the metric.
pub const MATRIX: [(Scenario, &Metric); 5] = [
    (Scenario::Saturation, &metrics::DELIVERIES),
    (Scenario::Saturation, &metrics::CPU_EFFICIENCY),
    (Scenario::Steady, &metrics::LATENCY_P95),
    (Scenario::Steady, &metrics::MEMORY_PER_CONNECTION),
    (Scenario::Saturation, &metrics::BYTES_PER_DELIVERY),
];

/// What a cell of a transport the server does not offer reads.
pub const NOT_OFFERED: &str = "not offered";

/// The matrix of each profile, when the results hold a transport other than `ws` or the
/// run recorded a transport not offered; none otherwise.
pub(crate) fn transport_tables(all: &[Group], not_offered: &[NotOffered]) -> Vec<Table> {
    let plain: Vec<&Group> = all
        .iter()
        .filter(|g| g.first().variant.is_none() && g.first().load_params.is_empty())
        .collect();
    if plain.iter().all(|g| g.first().transport.is_ws()) && not_offered.is_empty() {
        return Vec::new();
    }
    let profiles = ordered(
        plain.iter().map(|g| g.first().server.profile.as_str()),
        &PROFILES,
    );
    profiles
        .into_iter()
        .map(|profile| matrix(&plain, profile, not_offered))
        .filter(|t| !t.rows.is_empty())
        .collect()
}

fn matrix(plain: &[&Group], profile: &str, not_offered: &[NotOffered]) -> Table {
    let in_profile: Vec<&Group> = plain
        .iter()
        .copied()
        .filter(|g| g.first().server.profile == profile)
        .collect();
    let mut servers: Vec<(String, String)> = in_profile
        .iter()
        .map(|g| {
            (
                g.first().server.id.clone(),
                g.first().server.language.clone(),
            )
        })
        .collect();
    servers.sort_by_key(|(_, language)| language_rank(language));
    servers.dedup();
    let mut columns = Column::unranked(&[("Language", false), ("Transport", false)]);
    columns.extend(MATRIX.iter().map(|(scenario, m)| Column {
        name: format!("{} ({scenario})", m.name),
        better: Some(m.better),
        numeric: true,
        detail: false,
    }));
    let mut rows = Vec::new();
    let mut footnotes = Vec::new();
    for (id, language) in &servers {
        for &transport in Transport::ALL {
            let found = |scenario: Scenario| {
                in_profile.iter().copied().find(|g| {
                    let r = g.first();
                    r.server.id == *id && r.transport == transport && r.scenario == scenario
                })
            };
            let reason = not_offered
                .iter()
                .find(|n| n.server == *id && n.transport == transport);
            let measured = MATRIX.iter().any(|(s, _)| found(*s).is_some());
            if !measured && reason.is_none() {
                continue;
            }
            let mut cells = vec![
                Cell::label(capitalized(language)),
                Cell::label(transport.as_str()),
            ];
            if let Some(reason) = reason.filter(|_| !measured) {
                footnotes.push(format!(
                    "[{}] {id} {transport}: {}",
                    footnotes.len() + 1,
                    reason.reason
                ));
                let mark = format!("{NOT_OFFERED} [{}]", footnotes.len());
                cells.extend(MATRIX.iter().map(|_| Cell::label(mark.clone())));
            } else {
                cells.extend(MATRIX.iter().map(|(scenario, metric)| {
                    let cell =
                        found(*scenario).map_or_else(Cell::absent, |g| metric_cell(metric, g));
                    let ws = (!transport.is_ws())
                        .then(|| {
                            in_profile.iter().copied().find(|g| {
                                let r = g.first();
                                r.server.id == *id && r.transport.is_ws() && r.scenario == *scenario
                            })
                        })
                        .flatten();
                    relative_to_ws(cell, ws.and_then(|g| g.summary(metric)).map(|s| s.mean))
                }));
            }
            rows.push(Row { cells });
        }
    }
    if !rows.is_empty() {
        footnotes.insert(0, COST_NOTE.to_string());
    }
    let bound = rows.iter().any(|r| r.cells.iter().any(|c| c.loadgen_bound));
    if bound {
        footnotes.push(format!(
            "{LOADGEN_BOUND_MARK} {}",
            crate::wording::BOUND_MEANING
        ));
    }
    Table {
        title: format!("{} — Transports", profile_title(profile)),
        columns,
        rows,
        scenario: None,
        axis: None,
        footnotes,
    }
}

/// The cost of a transport, said under every matrix.
const COST_NOTE: &str = "(+x %) is the figure relative to the same server over ws; each row differs from its ws row in the transport alone (docs/transports.md).";

/// The cell with its figure relative to `ws_mean` appended: `(+12 %)`, `(−38 %)`.
fn relative_to_ws(mut cell: Cell, ws_mean: Option<f64>) -> Cell {
    if let (Some(value), Some(ws)) = (cell.value, ws_mean.filter(|w| *w != 0.0)) {
        let pct = ((value / ws - 1.0) * 100.0).round();
        let sign = match pct {
            p if p < 0.0 => "−",
            p if p > 0.0 => "+",
            _ => "±",
        };
        cell.text = format!("{} ({sign}{:.0} %)", cell.text, pct.abs());
    }
    cell
}
