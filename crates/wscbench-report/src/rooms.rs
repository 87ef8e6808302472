//! The fan-out and slow-consumers tables, one each per profile: fan-out's figures by room
//! size (the deliveries asked are the same for every size), and what slow readers cost a
//! room's healthy clients (latency, recovery) and the server (memory, drops, closed
//! connections), from the figures the engine stored in each result.

use wscbench_results::{LoadParam, RunResult, Scenario, SlowConsumers};

use crate::metrics::Better;
use crate::metrics::{self, Metric};
use crate::rows::{
    Group, PROFILES, metric_cell, ordered, profile_title, room_size, server_name, server_order,
};
use crate::stats::Summary;
use crate::table::{Cell, Column, LOADGEN_BOUND_MARK, Row, Table};
use crate::units;

/// The load parameters of a group other than `except`, as a title's suffix.
fn other_params(result: &RunResult, except: Option<LoadParam>) -> String {
    let params: Vec<String> = wscbench_results::dimensions::params_text(&result.load_params)
        .into_iter()
        .filter(|(k, _)| Some(*k) != except)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if params.is_empty() {
        String::new()
    } else {
        format!(" ({})", params.join(", "))
    }
}

/// The groups of `scenario` in each profile, split by `key` (their load parameters other
/// than `except`), in the profiles' order.
fn by_profile_and_load<'g, 'a>(
    groups: &'g [Group<'a>],
    scenario: Scenario,
    except: Option<LoadParam>,
) -> Vec<(String, Vec<&'g Group<'a>>)> {
    let of: Vec<&Group> = groups
        .iter()
        .filter(|g| g.first().scenario == scenario)
        .collect();
    let mut out: Vec<(String, Vec<&Group>)> = Vec::new();
    for profile in ordered(
        of.iter().map(|g| g.first().server.profile.as_str()),
        &PROFILES,
    ) {
        for g in of.iter().filter(|g| g.first().server.profile == profile) {
            let title = format!(
                "{}{}",
                profile_title(profile),
                other_params(g.first(), except)
            );
            match out.iter_mut().find(|(t, _)| *t == title) {
                Some((_, list)) => list.push(g),
                None => out.push((title, vec![g])),
            }
        }
    }
    out
}

/// The fan-out figures, in their columns' order.
const FANOUT_METRICS: [&Metric; 4] = [
    &metrics::DELIVERIES,
    &metrics::CPU_EFFICIENCY,
    &metrics::LATENCY_P99,
    &metrics::PEAK_MEMORY,
];

/// One fan-out table per profile (and other load): a row per server and room size.
pub(crate) fn fanout_tables(groups: &[Group]) -> Vec<Table> {
    let mut tables = Vec::new();
    for (title, mut list) in
        by_profile_and_load(groups, Scenario::Fanout, Some(LoadParam::RoomSize))
    {
        list.sort_by_key(|g| {
            (
                server_order(g.first()),
                g.first().server_label(),
                room_size(g.first()),
            )
        });
        let mut columns = Column::unranked(&[("Server", false), ("Room size", true)]);
        columns.extend(
            FANOUT_METRICS
                .iter()
                .map(|m| Column::unranked(&[(m.name, true)]).remove(0)),
        );
        let rows = list
            .iter()
            .map(|g| {
                let size = room_size(g.first());
                let mut cells = vec![
                    Cell::label(server_name(g.first())),
                    Cell::figure(units::count(size), size as f64),
                ];
                cells.extend(FANOUT_METRICS.iter().map(|m| metric_cell(m, g)));
                Row { cells }
            })
            .collect();
        let mut footnotes = vec![
            "Every room size is asked for the same deliveries per second: each client chats \
             D ÷ (clients × (room size − 1)) times a second, so a row differs from the next only \
             in how a message fans out (docs/methodology.md, Fan-out). Rooms of 2 are bound by \
             the 10 chats/s rate limit: D ≤ 10 × clients."
                .to_string(),
        ];
        if list.iter().any(|g| g.ok().iter().any(|r| r.loadgen_bound)) {
            footnotes.push(format!(
                "{LOADGEN_BOUND_MARK} The load generator was the limit: the figure measures k6."
            ));
        }
        tables.push(Table {
            title: format!("{title} — Fan-out by room size"),
            columns,
            rows,
            scenario: Some(Scenario::Fanout),
            axis: None,
            footnotes,
        });
    }
    tables
}

/// One slow-consumers table per profile (and load): a row per server.
pub(crate) fn slow_consumers_tables(groups: &[Group]) -> Vec<Table> {
    let mut tables = Vec::new();
    for (title, mut list) in by_profile_and_load(groups, Scenario::SlowConsumers, None) {
        list.sort_by_key(|g| (server_order(g.first()), g.first().server_label()));
        let ranked = |name: &str| Column {
            name: name.to_string(),
            better: Some(Better::Lower),
            numeric: true,
            detail: false,
        };
        let columns = vec![
            Column::unranked(&[("Server", false)]).remove(0),
            Column::unranked(&[("Slow clients", true)]).remove(0),
            ranked("Healthy p99 before"),
            ranked("Healthy p99 while slow"),
            ranked("p99 ratio"),
            ranked("Recovery"),
            ranked("Memory per slow client"),
            Column::unranked(&[("Dropped (slow)", true)]).remove(0),
            Column::unranked(&[("Slow clients closed", true)]).remove(0),
        ];
        let rows = list
            .iter()
            .map(|g| Row {
                cells: slow_cells(g),
            })
            .collect();
        let mut table = Table {
            title: format!("{title} — Slow consumers"),
            columns,
            rows,
            scenario: Some(Scenario::SlowConsumers),
            axis: None,
            footnotes: vec![SLOW_NOTE.to_string()],
        };
        table.mark_best();
        tables.push(table);
    }
    tables
}

const SLOW_NOTE: &str = "Healthy p99: the latency p99 of the clients that kept reading, over the \
    baseline and over the slow phase (when the slow clients stopped reading). Recovery: seconds \
    from the slow phase's end until the healthy per-second p99 is back within 1.5 × the \
    baseline's for 3 seconds in a row; \"never\" when it was not before the chats stopped. Memory \
    per slow client: (the server's peak memory in the slow phase − its mean in the baseline) ÷ \
    slow clients. Dropped: messages the server dropped for full queues (/stats dropped_slow). \
    Closed: slow clients the server disconnected, and when the first was, after the slow phase \
    began (docs/methodology.md, Slow consumers).";

/// The figures of a group's `ok` rounds that have them.
fn slow_of<'a>(g: &Group<'a>) -> Vec<&'a SlowConsumers> {
    g.ok()
        .into_iter()
        .filter_map(|r| r.slow_consumers.as_ref())
        .collect()
}

/// A summary cell of `values`, or an absent one; not comparable when k6 was the limit.
fn summary_cell(values: &[f64], format: fn(f64) -> String, bound: bool) -> Cell {
    match Summary::of(values) {
        Some(s) => {
            let mut cell = Cell::summary(&s, format);
            cell.comparable &= !bound;
            cell
        }
        None => Cell::absent(),
    }
}

fn slow_cells(g: &Group) -> Vec<Cell> {
    let first = g.first();
    let mut cells = vec![Cell::label(server_name(first))];
    let slow = slow_of(g);
    let Some(last) = slow.last() else {
        let why = match &g.results.last().and_then(|r| r.outcome_detail.clone()) {
            Some(detail) => format!("{}: {detail}", g.results.last().unwrap().outcome.as_str()),
            None => "no slow-consumers figures".to_string(),
        };
        cells.push(Cell::label(why));
        cells.extend((0..7).map(|_| Cell::absent()));
        return cells;
    };
    let bound = g.ok().iter().any(|r| r.loadgen_bound);
    let values = |f: fn(&SlowConsumers) -> Option<f64>| -> Vec<f64> {
        slow.iter().filter_map(|s| f(s)).collect()
    };
    cells.push(Cell::label(format!(
        "{} of {}",
        units::count(last.slow_clients),
        units::count(last.clients)
    )));
    cells.push(summary_cell(
        &values(|s| s.healthy_p99_baseline_ms),
        units::ms,
        bound,
    ));
    cells.push(summary_cell(
        &values(|s| s.healthy_p99_slow_ms),
        units::ms,
        bound,
    ));
    cells.push(summary_cell(&values(|s| s.healthy_p99_ratio), times, bound));
    cells.push(recovery_cell(&slow, bound));
    cells.push(summary_cell(
        &values(|s| s.memory_per_slow_client_bytes),
        signed_size,
        bound,
    ));
    cells.push(summary_cell(
        &slow
            .iter()
            .map(|s| s.dropped_slow as f64)
            .collect::<Vec<_>>(),
        |v| units::count(v.round() as u64),
        true,
    ));
    cells.push(Cell::label(closed_text(last)));
    cells
}

/// `×2.40`.
fn times(ratio: f64) -> String {
    format!("×{ratio:.2}")
}

/// A size that may be negative (memory that fell): `-1.2 KiB`.
fn signed_size(bytes: f64) -> String {
    let text = units::size(bytes.abs().round() as u64);
    if bytes < 0.0 {
        format!("-{text}")
    } else {
        text
    }
}

/// The rounds' recovery: their mean when every one recovered, "never" when none did, and the
/// mean of those that did otherwise (not comparable: the others never did).
fn recovery_cell(slow: &[&SlowConsumers], bound: bool) -> Cell {
    let recovered: Vec<f64> = slow.iter().filter_map(|s| s.recovery_s).collect();
    let never = slow.len() - recovered.len();
    let seconds = |s: f64| format!("{s:.0} s");
    match (recovered.is_empty(), never) {
        (true, _) => Cell::label("never"),
        (false, 0) => summary_cell(&recovered, seconds, bound),
        (false, n) => {
            let mut cell = summary_cell(&recovered, seconds, true);
            cell.text = format!("{} (never in {n} of {})", cell.text, slow.len());
            cell.comparable = false;
            cell
        }
    }
}

/// `2 (first at +3.4 s)`, `0`.
fn closed_text(s: &SlowConsumers) -> String {
    match s.slow_first_closed_s {
        Some(first) if s.slow_closed_by_server > 0 => format!(
            "{} (first at {first:+.1} s)",
            units::count(s.slow_closed_by_server)
        ),
        _ => units::count(s.slow_closed_by_server),
    }
}
