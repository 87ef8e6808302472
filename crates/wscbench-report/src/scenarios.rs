//! The tables of one profile: each scenario's comparison table (one per load of a sweep),
//! then its load generator's table, with their footnotes (one per mark and reason).

use wscbench_results::{LoadParam, RunResult, Scenario};

use crate::metrics::{self, Metric};
use crate::rows::{
    Group, by_language, capitalized, language, metric_cell, profile_title, scenario_rank,
    scenario_title,
};
use crate::stats;
use crate::table::{
    Cell, Column, FAILED_MARK, LOADGEN_BOUND_MARK, NOISY_MARK, OLDER_RUN_MARK, Row, Table,
};
use crate::units;

/// One profile's tables: each scenario's (a table per load of a sweep), then its load
/// generator's.
pub(crate) fn profile_tables(all: &[Group], profile: &str) -> Vec<Table> {
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
        let mut loads: Vec<Vec<(LoadParam, String)>> = in_profile
            .iter()
            .filter(|g| g.first().scenario == scenario.scenario)
            .map(|g| g.first().point().load_params)
            .collect();
        // In the values' order, not their text's: 200 before 1000.
        loads.sort_by(|a, b| {
            let number = |l: &Vec<(LoadParam, String)>| -> Vec<(LoadParam, f64)> {
                l.iter()
                    .map(|(k, v)| (*k, v.parse().unwrap_or(f64::NAN)))
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
                format!("{title} — {}{suffix}", scenario_title(scenario.scenario)),
                &[row_name],
                &scenario
                    .metrics
                    .iter()
                    .map(|m| Column {
                        detail: !scenario.headline.iter().any(|h| h.name == m.name),
                        ..Column::metric(m)
                    })
                    .collect::<Vec<_>>(),
                rows,
                false,
                |g, i| metric_cell(scenario.metrics[i], g),
            );
            table.scenario = Some(scenario.scenario);
            table.mark_best();
            if let Some(lead) = scenario.lead {
                table.add_percent_of_best(lead.name);
            }
            tables.push(table);
        }
    }
    let mut by_scenario: Vec<&Group> = by_language(in_profile.into_iter()).collect();
    by_scenario.sort_by_key(|g| scenario_rank(g.first().scenario));
    let rows = by_scenario.into_iter().map(|g| {
        (
            vec![
                // The scenario's own name, as docs/results.md has always shown it (`Fanout`).
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
                detail: *name == SCHEDULE_COLUMN,
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
pub(crate) const OPTIONAL_COLUMNS: [&str; 4] = [
    SCHEDULE_COLUMN,
    metrics::SERVICE_P95.name,
    metrics::SENT_PER_INTENDED.name,
    metrics::SERVER_LATE.name,
];

/// A scenario's comparison table.
struct ScenarioTable {
    scenario: Scenario,
    metrics: &'static [&'static Metric],
    /// The column "% of best" follows.
    lead: Option<&'static Metric>,
    /// The columns a terminal shows by default (the lead and its "% of best" among them); the
    /// others are details, shown with `--wide` and always in Markdown, JSON and HTML.
    headline: &'static [&'static Metric],
}

/// What a steady or burst table is read for first: how much it carried, how fast, at what cost.
const STEADY_HEADLINE: [&Metric; 5] = [
    &metrics::THROUGHPUT,
    &metrics::PEAK_MEMORY,
    &metrics::PEAK_CPU,
    &metrics::K6_ERRORS,
    &metrics::LATENCY_P95,
];

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
const SCENARIO_TABLES: [ScenarioTable; 5] = [
    ScenarioTable {
        scenario: Scenario::Population,
        metrics: &[
            &metrics::MEMORY_PER_USER,
            &metrics::USER_MEMORY_PER_USER,
            &metrics::KERNEL_MEMORY_PER_USER,
            &metrics::CPU_PER_1K_USERS,
            &metrics::POPULATION_CHAT_P99,
            &metrics::PONG_P99,
            &metrics::USERS_HELD,
            &metrics::PEAK_MEMORY,
            &metrics::LOADGEN_MEMORY_PER_USER,
            &metrics::LOADGEN_CPU_PER_1K_USERS,
        ],
        lead: Some(&metrics::MEMORY_PER_USER),
        headline: &[
            &metrics::MEMORY_PER_USER,
            &metrics::USER_MEMORY_PER_USER,
            &metrics::KERNEL_MEMORY_PER_USER,
            &metrics::CPU_PER_1K_USERS,
            &metrics::PONG_P99,
        ],
    },
    ScenarioTable {
        scenario: Scenario::Steady,
        metrics: &STEADY_METRICS,
        lead: Some(&metrics::THROUGHPUT),
        headline: &STEADY_HEADLINE,
    },
    ScenarioTable {
        scenario: Scenario::Burst,
        metrics: &STEADY_METRICS,
        lead: Some(&metrics::THROUGHPUT),
        headline: &STEADY_HEADLINE,
    },
    ScenarioTable {
        scenario: Scenario::Churn,
        metrics: &[
            &metrics::CONNECTIONS,
            &metrics::PEAK_MEMORY,
            &metrics::PEAK_CPU,
            &metrics::K6_ERRORS,
            &metrics::LATENCY_P95,
        ],
        lead: None,
        headline: &[
            &metrics::CONNECTIONS,
            &metrics::PEAK_MEMORY,
            &metrics::PEAK_CPU,
            &metrics::K6_ERRORS,
            &metrics::LATENCY_P95,
        ],
    },
    ScenarioTable {
        scenario: Scenario::Saturation,
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
        headline: &[
            &metrics::DELIVERIES,
            &metrics::LATENCY_P95,
            &metrics::PEAK_MEMORY,
            &metrics::PEAK_CPU,
            &metrics::K6_ERRORS,
        ],
    },
];

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
            Cell::label("yes").bound()
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
            detail: false,
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
        scenario: None,
        axis: None,
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
