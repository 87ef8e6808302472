//! The capacity table (the most clients each server held at the latency target, what broke
//! it, and the server's memory per chatting client) and the soak table (each long run's KPIs against their
//! thresholds). Both read the verdicts the engine stored; here they are only worded.

use wscbench_results::{Capacity, IdleLimit, RunResult, Scenario, SoakKpis, StepReason};

use crate::rows::{Group, language, latest};
use crate::table::{Cell, Column, Row, Table};
use crate::units;

/// The capacity table: one row per server, with its capacity and idle-capacity results side
/// by side, most clients held first.
pub(crate) fn capacity_table(groups: &[Group]) -> Table {
    let chatting = latest(groups, Scenario::Capacity, |r| r.capacity.is_some());
    let idle = latest(groups, Scenario::IdleCapacity, |r| r.idle.is_some());
    let mut servers: Vec<(String, &RunResult)> = Vec::new();
    for r in chatting.iter().chain(&idle) {
        if !servers.iter().any(|(label, _)| *label == r.server_label()) {
            servers.push((r.server_label(), r));
        }
    }
    let held = |label: &str| {
        chatting
            .iter()
            .find(|r| r.server_label() == label)
            .and_then(|r| r.capacity.as_ref()?.max_clients_held)
            .unwrap_or(0)
    };
    servers.sort_by(|a, b| held(&b.0).cmp(&held(&a.0)).then(a.0.cmp(&b.0)));
    let target = chatting
        .iter()
        .find_map(|r| r.capacity.as_ref().map(|c| c.slo_p95_ms))
        .unwrap_or(50.0);
    let mut table = Table {
        title: format!(
            "Capacity — most clients held at latency p95 < {}",
            units::ms(target)
        ),
        columns: Column::unranked(&[
            ("Server", false),
            ("Max clients held", true),
            ("p95 there", true),
            ("Broke at", true),
            ("Limiting factor", false),
            ("Server memory per client", true),
            ("Idle clients held", true),
            ("Bytes per idle client", true),
            ("Idle limit", false),
        ]),
        rows: Vec::new(),
        scenario: Some(Scenario::Capacity),
        axis: None,
        footnotes: Vec::new(),
    };
    for (label, any) in &servers {
        let mut cells = vec![Cell::label(format!("{label} ({})", language(any)))];
        match chatting.iter().find(|r| r.server_label() == *label) {
            Some(r) => cells.extend(capacity_cells(r)),
            None => cells.extend((0..5).map(|_| Cell::absent())),
        }
        match idle.iter().find(|r| r.server_label() == *label) {
            Some(r) => cells.extend(idle_cells(r)),
            None => cells.extend((0..3).map(|_| Cell::absent())),
        }
        table.rows.push(Row { cells });
    }
    if !table.rows.is_empty() {
        table.footnotes.push(
            "A step holds while chat latency p95 stays under the target, the server drops under \
             0.1 %, clients see no errors and k6 is not the limit (docs/methodology.md, Capacity). \
             Memory per client: the slope of the server's peak memory against clients over the \
             steps that held. Idle: joined clients that never chat, stepped up until the server's \
             memory reached 90 % of its limit or connects failed; bytes per idle client is the \
             slope of its memory against its connections."
                .to_string(),
        );
    }
    table
}

fn outcome_text(r: &RunResult, what: &str) -> String {
    match &r.outcome_detail {
        Some(detail) => format!("{}: {detail}", r.outcome.as_str()),
        None => format!("{}: no {what} measured", r.outcome.as_str()),
    }
}

fn capacity_cells(r: &RunResult) -> Vec<Cell> {
    let Some(c) = &r.capacity else {
        return vec![
            Cell::absent(),
            Cell::absent(),
            Cell::absent(),
            Cell::label(outcome_text(r, "step")),
            Cell::absent(),
        ];
    };
    let held = c
        .max_clients_held
        .and_then(|n| c.steps.iter().find(|s| s.clients == n));
    vec![
        match c.max_clients_held {
            Some(n) => Cell::figure(units::count(n), n as f64),
            None => Cell::figure("none".to_string(), 0.0),
        },
        match held.and_then(|s| s.latency_p95_ms) {
            Some(ms) => Cell::figure(units::ms(ms), ms),
            None => Cell::absent(),
        },
        match c.broke_at_clients {
            Some(n) => Cell::figure(units::count(n), n as f64),
            None => Cell::label("—"),
        },
        Cell::label(limiting_factor(c)),
        match c.server_bytes_per_client {
            Some(bytes) => Cell::figure(units::size(bytes.max(0.0).round() as u64), bytes),
            None => Cell::absent(),
        },
    ]
}

fn idle_cells(r: &RunResult) -> Vec<Cell> {
    let Some(i) = &r.idle else {
        return vec![
            Cell::absent(),
            Cell::absent(),
            Cell::label(outcome_text(r, "idle client")),
        ];
    };
    vec![
        Cell::figure(units::count(i.clients_held), i.clients_held as f64),
        match i.bytes_per_client {
            Some(bytes) => Cell::figure(units::size(bytes.max(0.0).round() as u64), bytes),
            None => Cell::absent(),
        },
        Cell::label(match &i.limited_by {
            IdleLimit::MemoryNearLimit => {
                format!("memory at 90 % of {}", units::mib(i.memory_limit_bytes))
            }
            IdleLimit::ClientErrors {
                errors,
                side,
                evidence,
            } => {
                format!(
                    "{} client errors, {}: {evidence}",
                    units::count(*errors),
                    side.as_str()
                )
            }
            IdleLimit::LoadgenFailed { detail } => format!("load generator failed: {detail}"),
            IdleLimit::ServerDied { outcome } => format!("server {outcome}"),
            IdleLimit::AllHeld => "none: every step held (add steps)".to_string(),
        }),
    ]
}

/// What broke the first step that did not hold, in words; the load generator first, since a
/// step k6 could not drive says nothing about the server.
pub fn limiting_factor(c: &Capacity) -> String {
    if c.steps.is_empty() {
        return "no step was measured (see k6's log in the raw folder)".to_string();
    }
    if c.broke_at_clients.is_none() {
        return "none: every step held (add steps)".to_string();
    }
    let why = &c.broke_because;
    let first = why
        .iter()
        .find(|r| matches!(r, StepReason::LoadgenLimit { .. }))
        .or(why.first());
    match first {
        Some(reason) => step_reason(reason),
        None => "unknown".to_string(),
    }
}

/// One step reason in words.
pub fn step_reason(reason: &StepReason) -> String {
    match reason {
        StepReason::LatencyOverTarget { p95_ms, target_ms } => {
            format!(
                "latency p95 {} ≥ {}",
                units::ms(*p95_ms),
                units::ms(*target_ms)
            )
        }
        StepReason::NoChatsReceived => "no chats received".to_string(),
        StepReason::ServerDrops {
            dropped_slow,
            dropped_ratelimit,
            drop_ratio,
        } => format!(
            "server drops {} ({} slow, {} rate limit)",
            units::ratio_percent(*drop_ratio),
            units::count(*dropped_slow),
            units::count(*dropped_ratelimit)
        ),
        StepReason::ClientErrors { errors } => format!("{} client errors", units::count(*errors)),
        StepReason::LoadgenLimit { reasons } => format!(
            "load generator (k6: {})",
            reasons
                .iter()
                .map(|r| r.kind())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        StepReason::ServerDied { outcome } => format!("server {outcome}"),
    }
}

/// The soak table: one row per long run (latest repetition of each point).
pub(crate) fn soak_table(groups: &[Group]) -> Table {
    let mut table = Table {
        title: "Soak KPIs".to_string(),
        columns: Column::unranked(&[
            ("Server", false),
            ("Scenario", false),
            ("Measured", true),
            ("Memory slope", true),
            ("Throughput drift", true),
            ("p95 first → last", false),
            ("Errors (last tenth)", true),
            ("Drops", true),
            ("Verdict", false),
        ]),
        rows: Vec::new(),
        scenario: None,
        axis: None,
        footnotes: Vec::new(),
    };
    for g in groups {
        let Some((r, k)) = g
            .results
            .iter()
            .rev()
            .find_map(|r| r.soak.as_ref().map(|k| (*r, k)))
        else {
            continue;
        };
        table.rows.push(Row {
            cells: soak_cells(r, k),
        });
    }
    if !table.rows.is_empty() {
        let thresholds: Vec<String> = table_thresholds(groups);
        table.footnotes.push(format!(
            "After a warm-up of a tenth of the run (at most 2 min); drift is the last tenth against the first. \
             Thresholds: {} (docs/methodology.md, Soak).",
            thresholds.join("; ")
        ));
    }
    table
}

fn table_thresholds(groups: &[Group]) -> Vec<String> {
    groups
        .iter()
        .flat_map(|g| g.results.iter())
        .find_map(|r| r.soak.as_ref())
        .map(|k| {
            k.verdicts
                .iter()
                .map(|v| format!("{} {}", v.kpi.replace('_', " "), v.threshold))
                .collect()
        })
        .unwrap_or_default()
}

fn soak_cells(r: &RunResult, k: &SoakKpis) -> Vec<Cell> {
    let optional = |v: Option<f64>, text: fn(f64) -> String| match v {
        Some(v) => Cell::figure(text(v), v),
        None => Cell::absent(),
    };
    let failed: Vec<&str> = k
        .verdicts
        .iter()
        .filter(|v| v.pass == Some(false))
        .map(|v| v.kpi.as_str())
        .collect();
    let unmeasured = k.verdicts.iter().filter(|v| v.pass.is_none()).count();
    let verdict = match (failed.is_empty(), unmeasured) {
        (true, 0) => "pass".to_string(),
        (true, n) => format!("pass ({n} not measured)"),
        (false, _) => format!("fail: {}", failed.join(", ").replace('_', " ")),
    };
    vec![
        Cell::label(format!("{} ({})", r.server_label(), language(r))),
        Cell::label(r.scenario.as_str()),
        Cell::figure(format!("{:.0} s", k.measured_s), k.measured_s),
        optional(k.memory_slope_mib_per_h, |v| format!("{v:+.2} MiB/h")),
        optional(k.throughput_drift_ratio, |v| format!("{:+.1} %", v * 100.0)),
        Cell::label(match (k.latency_p95_first_ms, k.latency_p95_last_ms) {
            (Some(a), Some(b)) => format!("{} → {}", units::ms(a), units::ms(b)),
            _ => "—".to_string(),
        }),
        Cell::figure(
            format!(
                "{} ({})",
                units::count(k.errors),
                units::count(k.errors_last_tenth)
            ),
            k.errors as f64,
        ),
        Cell::figure(units::ratio_percent(k.drop_ratio), k.drop_ratio),
        Cell::label(verdict),
    ]
}
