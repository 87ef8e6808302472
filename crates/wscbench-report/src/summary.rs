//! The overall summary: per dimension and profile, the best server, its margin over the
//! runner-up, or "tie" when the two are within noise. Load-generator bound rounds and failed
//! results never count. Each row is a [`Decision`], made here once: the summary table lays it
//! out with its margin and reasons, the scorecards with every server's figure. A dimension
//! added here (a [`DIMENSIONS`] entry, or rows like the load curve's) is in both.

use wscbench_results::{RunResult, Scenario};

use crate::curve::{
    Capacity, Curve, Side, other_params, profile_curves, short_rate, steps_all_delivered,
};
use crate::decision::{Beside, Decision, Figure, SummaryTexts, Verdict, Wording};
use crate::metrics::{self, Better, Metric};
use crate::rows::{Group, PROFILES, ordered, profile_title};
use crate::stats::Summary;
use crate::table::{Cell, Column, Row, Table};

/// One row of the summary: a metric measured under a scenario.
struct Dimension<'n> {
    name: &'n str,
    scenario: Option<Scenario>,
    metric: &'static Metric,
    /// How a sentence says the best's figure, `(verb, what follows the figure)`; `None`
    /// names the dimension instead.
    wording: Option<(&'static str, &'n str)>,
}

/// Binary size is read from the build, not from a scenario.
const BINARY_SIZE: Metric = Metric {
    key: "binary-size",
    name: "Binary size",
    better: Better::Lower,
    loadgen_sensitive: false,
    value: |r| r.server.binary_size_bytes.map(|b| b as f64),
    format: |v| crate::units::size(v.round() as u64),
};

/// What a chat team pays for, before everything else: each connected user's memory and CPU.
const USER_DIMENSIONS: [Dimension<'static>; 2] = [
    Dimension {
        name: "Memory per user (population)",
        scenario: Some(Scenario::Population),
        metric: &metrics::MEMORY_PER_USER,
        wording: Some(("held each connected user in", "of memory")),
    },
    Dimension {
        name: "CPU per 1,000 users (population)",
        scenario: Some(Scenario::Population),
        metric: &metrics::CPU_PER_1K_USERS,
        wording: Some(("spent", "of CPU per 1,000 connected users")),
    },
];

/// A curve's capacity is a step of offered deliveries per second, read from the curve.
const CAPACITY: Metric = Metric {
    key: "capacity",
    name: "Capacity",
    better: Better::Higher,
    loadgen_sensitive: false,
    value: |_| None,
    format: crate::units::rate,
};

const DIMENSIONS: [Dimension<'static>; 6] = [
    Dimension {
        name: "Saturation throughput (deliveries/s)",
        scenario: Some(Scenario::Saturation),
        metric: &metrics::DELIVERIES,
        wording: Some(("delivered", "deliveries/s under saturation")),
    },
    Dimension {
        name: "Memory efficiency (peak memory, steady)",
        scenario: Some(Scenario::Steady),
        metric: &metrics::PEAK_MEMORY,
        wording: Some(("peaked at", "of memory under steady load")),
    },
    Dimension {
        name: "Binary size",
        scenario: None,
        metric: &BINARY_SIZE,
        wording: Some(("ships", "of binary")),
    },
    Dimension {
        name: "Stability under churn (errors / connections)",
        scenario: Some(Scenario::Churn),
        metric: &metrics::ERRORS_PER_CONNECTION,
        wording: Some(("had", "errors per connection under churn")),
    },
    // Never alone: a server that drops is cheap per delivery, so the share it delivered
    // stands right above its efficiency.
    Dimension {
        name: "Delivered of asked (saturation)",
        scenario: Some(Scenario::Saturation),
        metric: &metrics::DELIVERED_SHARE,
        wording: Some(("delivered", "of what saturation asked")),
    },
    Dimension {
        name: "CPU efficiency (deliveries per CPU-second, saturation)",
        scenario: Some(Scenario::Saturation),
        metric: &metrics::CPU_EFFICIENCY,
        wording: Some(("made", "deliveries per CPU-second under saturation")),
    },
];

/// The summary table's title, by which the assembler finds it.
pub(crate) const SUMMARY_TITLE: &str = "Summary";

/// Every decision of the summary, in its rows' order: what a connected user costs first
/// (memory and CPU per user, each across the profiles), then each profile's load curve, then
/// each other dimension across the profiles. Only where
/// something was measured.
pub(crate) fn decisions(groups: &[Group]) -> Vec<Decision> {
    let profiles = ordered(
        groups.iter().map(|g| g.results[0].server.profile.as_str()),
        &PROFILES,
    );
    let by_dimension = |dimension: &'static Dimension<'static>| {
        profiles.iter().filter_map(move |profile| {
            let (candidates, bound) = candidates(groups, dimension, profile);
            decide(dimension, profile, candidates, bound)
        })
    };
    let mut decisions: Vec<Decision> = USER_DIMENSIONS.iter().flat_map(by_dimension).collect();
    decisions.extend(
        profiles
            .iter()
            .flat_map(|profile| curve_decisions(groups, profile)),
    );
    decisions.extend(DIMENSIONS.iter().flat_map(|dimension| {
        profiles.iter().filter_map(move |profile| {
            let (candidates, bound) = candidates(groups, dimension, profile);
            decide(dimension, profile, candidates, bound)
        })
    }));
    decisions
}

/// The summary table: one row per decision, with the best, its margin and the reasons. Every
/// column is a detail: a terminal shows the scorecards in its place, and this table with
/// `--wide`; Markdown, JSON and HTML show it below the scorecards.
pub(crate) fn summary_table(decisions: &[Decision]) -> Table {
    let columns = [
        ("Dimension", false),
        ("Profile", false),
        ("Best", false),
        ("Margin", true),
        ("Note", false),
    ]
    .iter()
    .map(|&(name, numeric)| Column {
        name: name.into(),
        better: None,
        numeric,
        detail: true,
    })
    .collect();
    let rows = decisions
        .iter()
        .map(|d| Row {
            cells: vec![
                Cell::label(&d.name),
                Cell::label(profile_title(&d.profile)),
                Cell::label(&d.summary.best),
                Cell::label(&d.summary.margin),
                Cell::label(&d.summary.note),
            ],
        })
        .collect();
    Table {
        title: SUMMARY_TITLE.into(),
        columns,
        rows,
        scenario: None,
        axis: None,
        footnotes: vec![
            "Margin: best ÷ runner-up ± σ (propagated). A best is named only where the 95 % intervals separate: \"tie\" where they overlap, \"undecided\" with one round; load-generator bound or failed never win.".into(),
        ],
    }
}

/// What the load generator cost a summary row: servers with no round free of it, and the
/// bound rounds left out of servers that still have free ones.
#[derive(Debug, Default, Clone)]
struct LeftOut {
    servers: usize,
    rounds: usize,
    /// Each server with no round free of the load generator, and its figure at k6's limit
    /// (the mean of its bound rounds).
    at_limit: Vec<(String, f64)>,
    /// Each server with no round that ended ok.
    failed: Vec<String>,
}

/// Each server's summary of one dimension in one profile, from its rounds that the load
/// generator did not limit, and what was left out.
fn candidates(
    groups: &[Group],
    dimension: &Dimension,
    profile: &str,
) -> (Vec<(String, Summary)>, LeftOut) {
    let mut bound = LeftOut::default();
    let mut candidates: Vec<(String, Summary)> = Vec::new();
    for g in crate::rows::by_language(groups.iter().filter(|g| {
        let r = g.results[0];
        r.server.profile == profile
            && dimension.scenario.is_none_or(|s| r.scenario == s)
            && r.variant.is_none()
            && r.load_params.is_empty()
    })) {
        let label = g.results[0].server.id.clone();
        if candidates.iter().any(|(l, _)| *l == label) {
            continue; // binary size: one per server, not per scenario
        }
        let ok: Vec<_> = g.results.iter().filter(|r| r.is_ok()).collect();
        if ok.is_empty() && dimension.scenario.is_some() {
            bound.failed.push(label);
            continue;
        }
        let has_value = |r: &RunResult| (dimension.metric.value)(r).is_some();
        // A bound round measured the load generator, not the server, in the figures a busy
        // k6 moves: it is left out of those, and the server's other rounds still count. A
        // figure k6 cannot move (a binary's size, memory at a fixed load) keeps every round, as the
        // tables below do. Counted only where the figure exists, so "left out" means something.
        let (bound_rounds, free): (Vec<&&RunResult>, Vec<&&RunResult>) = ok
            .into_iter()
            .partition(|r| r.loadgen_bound && dimension.metric.loadgen_sensitive);
        if dimension.scenario.is_some() && !bound_rounds.is_empty() {
            if free.is_empty() {
                let values: Vec<f64> = bound_rounds
                    .iter()
                    .filter_map(|r| (dimension.metric.value)(r))
                    .collect();
                if let Some(s) = Summary::of(&values) {
                    bound.servers += 1;
                    bound.at_limit.push((label, s.mean));
                }
                continue;
            }
            bound.rounds += bound_rounds.iter().filter(|r| has_value(r)).count();
        }
        let source: Vec<_> = if dimension.scenario.is_some() {
            free
        } else {
            g.results.iter().collect()
        };
        let values: Vec<f64> = source
            .iter()
            .filter_map(|r| (dimension.metric.value)(r))
            .collect();
        if let Some(s) = Summary::of(&values) {
            candidates.push((label, s));
        }
    }
    (candidates, bound)
}

/// The decision over `candidates`: the best, its margin over the runner-up and the reasons;
/// `None` when nothing was measured.
fn decide(
    dimension: &Dimension,
    profile: &str,
    candidates: Vec<(String, Summary)>,
    bound: LeftOut,
) -> Option<Decision> {
    // Every server's figure, in row order, before the candidates are ranked.
    let mut figures: Vec<(String, Figure)> = candidates
        .iter()
        .map(|(label, s)| (label.clone(), Figure::Measured(s.clone())))
        .collect();
    figures.extend(
        bound
            .at_limit
            .iter()
            .map(|(label, _)| (label.clone(), Figure::LoadGenerator)),
    );
    figures.extend(bound.failed.iter().map(|l| (l.clone(), Figure::Failed)));
    let decision = |verdict: Verdict, best: String, margin: String, note: String| Decision {
        name: dimension.name.to_string(),
        profile: profile.to_string(),
        metric: dimension.metric,
        figures: figures.clone(),
        verdict,
        wording: dimension.wording.map(|(verb, after)| Wording {
            verb,
            after: after.to_string(),
        }),
        beside: None,
        summary: SummaryTexts { best, margin, note },
    };
    let (verdict, best_text, margin, note) = verdict(dimension, candidates, &bound)?;
    Some(decision(verdict, best_text, margin, note))
}

/// The verdict over `candidates` with the summary's best, margin and note; `None` when
/// nothing was measured.
fn verdict(
    dimension: &Dimension,
    mut candidates: Vec<(String, Summary)>,
    bound: &LeftOut,
) -> Option<(Verdict, String, String, String)> {
    if candidates.is_empty() {
        return (bound.servers > 0).then(|| {
            (
                Verdict::LoadGenerator,
                LOADGEN_LIMIT.to_string(),
                "k6 was the limit".to_string(),
                format!(
                    "k6 was the limit in every round ({} bound); at its limit: {}",
                    bound.servers,
                    at_limit_text(dimension.metric, &bound.at_limit)
                ),
            )
        });
    }
    candidates.sort_by(|(_, a), (_, b)| match dimension.metric.better {
        Better::Higher => b.mean.total_cmp(&a.mean),
        Better::Lower => a.mean.total_cmp(&b.mean),
    });
    let (best, best_s) = &candidates[0];
    let mut note = Vec::new();
    let (verdict, best_text, margin) = match candidates.get(1) {
        // The others measured k6: one server free of it ranks against nobody.
        None if bound.servers > 0 => {
            note.push(format!(
                "only {best} ran free of the load generator; k6 was the limit of the others"
            ));
            (
                Verdict::LoadGenerator,
                LOADGEN_LIMIT.to_string(),
                "k6 was the limit".to_string(),
            )
        }
        None => {
            note.push("only one server measured".to_string());
            (Verdict::Alone, best.clone(), "—".to_string())
        }
        Some(_) => against_runner_up(dimension, &candidates, bound, &mut note),
    };
    note.extend(closing_notes(dimension, best_s, bound));
    Some((verdict, best_text, margin, note.join("; ")))
}

/// The verdict of ranked `candidates` (two or more, the best first) with the summary's best
/// and margin; the reasons go to `note`.
fn against_runner_up(
    dimension: &Dimension,
    candidates: &[(String, Summary)],
    bound: &LeftOut,
    note: &mut Vec<String>,
) -> (Verdict, String, String) {
    let (best, best_s) = &candidates[0];
    let (runner, runner_s) = &candidates[1];
    let factor = match dimension.metric.better {
        Better::Higher if runner_s.mean != 0.0 => Some(best_s.mean / runner_s.mean),
        Better::Lower if best_s.mean != 0.0 => Some(runner_s.mean / best_s.mean),
        _ => None,
    };
    let rounds = best_s.n.min(runner_s.n);
    if dimension.scenario.is_some() && rounds < 2 && best_s.mean != runner_s.mean {
        let (what, advice) = if bound.rounds > 0 {
            (
                "one round free of the load generator",
                "see the load-generator table",
            )
        } else {
            ("one round", "run --runs 3 or more")
        };
        note.push(format!(
            "{what}: no interval, so no winner ({best} ahead of {runner} by {}; {advice})",
            factor.map_or("?".into(), |f| format!("{f:.2}×"))
        ));
        if bound.rounds > 0 {
            // Its other rounds measured k6: that is the answer the row can give.
            (
                Verdict::LoadGenerator,
                LOADGEN_LIMIT.to_string(),
                "k6 was the limit".to_string(),
            )
        } else {
            (Verdict::Undecided, "undecided".to_string(), "—".to_string())
        }
    } else if best_s.mean == runner_s.mean || best_s.overlaps(runner_s) {
        let equal = best_s.mean == runner_s.mean;
        note.push(format!(
            "within noise of {runner}{}",
            if equal {
                " (equal)"
            } else {
                " (95 % intervals overlap)"
            }
        ));
        let tied: Vec<&(String, Summary)> = candidates
            .iter()
            .filter(|(_, s)| s.mean == best_s.mean || s.overlaps(best_s))
            .collect();
        let servers = tied.iter().map(|(label, _)| label.clone()).collect();
        let why = if tied.iter().all(|(_, s)| s.mean == best_s.mean) {
            "equal"
        } else {
            "their 95 % intervals overlap"
        };
        (
            Verdict::Tie {
                servers,
                why: why.to_string(),
            },
            "tie".to_string(),
            format!("{best} = {runner}"),
        )
    } else {
        if dimension.scenario.is_some() {
            note.push(format!("decided in {rounds} rounds"));
        }
        let (a, b) = match dimension.metric.better {
            Better::Higher => (runner_s, best_s),
            Better::Lower => (best_s, runner_s),
        };
        let ratio = crate::stats::ratio(a, b);
        let margin = match (factor, ratio) {
            (Some(_), Some((f, Some(spread)))) if spread > 0.0 => {
                format!("{f:.2} ± {spread:.2}× {runner}")
            }
            (Some(f), _) => format!("{f:.2}× {runner}"),
            (None, _) => format!("ahead of {runner}"),
        };
        let factor = factor.map(|f| match ratio {
            Some((_, Some(spread))) if spread > 0.0 => (f, Some(spread)),
            _ => (f, None),
        });
        (
            Verdict::Best {
                server: best.clone(),
                runner_up: runner.clone(),
                factor,
            },
            best.clone(),
            margin,
        )
    }
}

/// The best's figure with its interval, and what the load generator cost the row.
fn closing_notes(dimension: &Dimension, best_s: &Summary, bound: &LeftOut) -> Vec<String> {
    let mut note = Vec::new();
    note.push(match best_s.ci95.filter(|(lo, hi)| hi > lo) {
        Some((lo, hi)) => format!(
            "best {} ± {}",
            (dimension.metric.format)(best_s.mean),
            (dimension.metric.format)((hi - lo) / 2.0)
        ),
        None => format!("best {}", (dimension.metric.format)(best_s.mean)),
    });
    if bound.servers > 0 {
        note.push(format!(
            "{} load-generator bound left out (at k6's limit: {})",
            bound.servers,
            at_limit_text(dimension.metric, &bound.at_limit)
        ));
    }
    if bound.rounds > 0 {
        note.push(format!(
            "{} load-generator bound round{} left out",
            bound.rounds,
            if bound.rounds == 1 { "" } else { "s" }
        ));
    }
    note
}

/// What a row names as best when the load generator, not a server, was the limit.
const LOADGEN_LIMIT: &str = "load generator";

/// Each server's figure at k6's limit: `profile-b/rust ≥ 1.43M` for a figure that can
/// only have been higher without the limit (deliveries per second), the bare figure
/// otherwise.
fn at_limit_text(metric: &Metric, at_limit: &[(String, f64)]) -> String {
    let sign = if std::ptr::eq(metric, &metrics::DELIVERIES) {
        "≥ "
    } else {
        ""
    };
    at_limit
        .iter()
        .map(|(label, v)| format!("{label} {sign}{}", (metric.format)(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The load curve's decisions in one profile (the default variant of each server, the
/// curve's own shape): cost per delivery and latency p99 at every step all its servers
/// delivered free of the load generator, and each server's capacity within the latency target.
fn curve_decisions(groups: &[Group], profile: &str) -> Vec<Decision> {
    let curves: Vec<Curve> = profile_curves(groups, profile)
        .into_iter()
        .filter(|c| c.first.variant.is_none() && other_params(c.first).is_empty())
        .collect();
    if curves.is_empty() {
        return Vec::new();
    }
    let refs: Vec<&Curve> = curves.iter().collect();
    let mut decisions = Vec::new();
    for offered in steps_all_delivered(&refs) {
        let rate = short_rate(offered);
        // Each server's latency at the step, said beside its cost.
        let latency = Beside {
            what: "latency p99",
            figures: curves
                .iter()
                .filter_map(|c| {
                    let s = c.at(offered)?.summary(&metrics::LATENCY_P99)?;
                    Some((
                        c.first.server.id.clone(),
                        (metrics::LATENCY_P99.format)(s.mean),
                    ))
                })
                .collect(),
        };
        for (what, metric, wording, beside) in [
            (
                "Cost per delivery",
                &metrics::CPU_PER_1K_DELIVERIES,
                ("spent", format!("of CPU per 1,000 deliveries at {rate}/s")),
                Some(latency.clone()),
            ),
            (
                "Latency p99",
                &metrics::LATENCY_P99,
                ("delivered within", format!("(latency p99) at {rate}/s")),
                None,
            ),
        ] {
            let mut bound = LeftOut::default();
            let candidates: Vec<(String, Summary)> = curves
                .iter()
                .filter_map(|c| {
                    let step = c.at(offered)?;
                    if step.any_bound() {
                        bound.rounds += step
                            .results
                            .iter()
                            .filter(|r| r.is_ok() && r.loadgen_bound)
                            .count();
                    }
                    Some((c.first.server.id.clone(), step.summary(metric)?))
                })
                .collect();
            let name = format!("{what} at {rate}/s ({}, load curve)", metric.name);
            let dimension = Dimension {
                name: &name,
                scenario: Some(Scenario::LoadCurve),
                metric,
                wording: Some((wording.0, &wording.1)),
            };
            let bought = std::ptr::eq(metric, &metrics::CPU_PER_1K_DELIVERIES)
                .then(|| latency_bought(&curves, offered, &candidates))
                .flatten();
            decisions.extend(decide(&dimension, profile, candidates, bound).map(|mut d| {
                // Only where the row names that server best.
                if let Some((_, text)) = bought.filter(|(best, _)| d.summary.best == *best) {
                    d.summary.note = format!("{}; {text}", d.summary.note);
                }
                Decision {
                    beside: beside.clone(),
                    ..d
                }
            }));
        }
    }
    decisions.push(capacity_decision(&curves, profile));
    decisions
}

/// The latency a cost row's best bought its cost at, when it is significantly worse than
/// the runner-up's (their 95 % intervals apart): Zig std cheapest at 400k/s at p99 38 ms
/// against tokio-tungstenite's 14 ms. The best's label and the words; `None` otherwise.
fn latency_bought(
    curves: &[Curve],
    offered: f64,
    costs: &[(String, Summary)],
) -> Option<(String, String)> {
    let mut ranked: Vec<&(String, Summary)> = costs.iter().collect();
    ranked.sort_by(|(_, a), (_, b)| a.mean.total_cmp(&b.mean));
    let [(best, _), (runner, _), ..] = ranked[..] else {
        return None;
    };
    let p99 = |label: &str| {
        curves
            .iter()
            .find(|c| c.first.server.id == label)?
            .at(offered)?
            .summary(&metrics::LATENCY_P99)
    };
    let (best_p99, runner_p99) = (p99(best)?, p99(runner)?);
    (best_p99.ci95.is_some()
        && runner_p99.ci95.is_some()
        && !best_p99.overlaps(&runner_p99)
        && best_p99.mean > runner_p99.mean)
        .then(|| {
            (
                best.clone(),
                format!(
                    "bought at latency p99 {} against {} for {runner} (95 % intervals apart)",
                    crate::units::ms(best_p99.mean),
                    crate::units::ms(runner_p99.mean)
                ),
            )
        })
}

/// Each server's capacity on the curve, the best the highest, decided only where its
/// range lies above every other's: measured crossings whose 95 % intervals separate, or a
/// measured crossing below another's lower bound. Lower bounds against lower bounds are a
/// tie that says why; a curve k6 limited at every step ranks against nobody and is named
/// in the note.
fn capacity_decision(curves: &[Curve], profile: &str) -> Decision {
    let slo = curves[0].slo_p99_ms;
    let figures = curves
        .iter()
        .map(|c| {
            let figure = match c.capacity() {
                Capacity::Measured(s) => Figure::Measured(s),
                Capacity::AtLeast(v, _) => Figure::AtLeast(v),
                Capacity::AtMost { value, .. } => Figure::Below(value),
                Capacity::Unknown => Figure::LoadGenerator,
            };
            (c.first.server.id.clone(), figure)
        })
        .collect();
    let mut ranked: Vec<(&Curve, Capacity)> = curves
        .iter()
        .map(|c| (c, c.capacity()))
        .filter(|(_, cap)| *cap != Capacity::Unknown)
        .collect();
    let unknown: Vec<String> = curves
        .iter()
        .filter(|c| c.capacity() == Capacity::Unknown)
        .map(|c| format!("{} {}", c.first.server.id, Capacity::Unknown.text()))
        .collect();
    ranked.sort_by(|a, b| b.1.value().total_cmp(&a.1.value()));
    let decision = |verdict: Verdict, best: String, margin: String, note: String| Decision {
        name: format!(
            "Capacity at p99 ≤ {} (deliveries/s, load curve)",
            crate::units::ms(slo)
        ),
        profile: profile.to_string(),
        metric: &CAPACITY,
        figures,
        verdict,
        wording: Some(Wording {
            verb: "carried",
            after: format!(
                "deliveries/s within latency p99 ≤ {}",
                crate::units::ms(slo)
            ),
        }),
        beside: None,
        summary: SummaryTexts { best, margin, note },
    };
    let label = |c: &Curve| c.first.server.id.clone();
    if ranked.is_empty() {
        return decision(
            Verdict::LoadGenerator,
            LOADGEN_LIMIT.into(),
            "k6 was the limit".into(),
            unknown.join("; "),
        );
    }
    let (verdict, best_text, margin, why) = capacity_texts(&ranked);
    let note = why
        .into_iter()
        .chain(
            ranked
                .iter()
                .map(|(c, _)| format!("{} {}", label(c), c.capacity_text())),
        )
        .chain(unknown)
        .collect::<Vec<_>>()
        .join("; ");
    decision(verdict, best_text, margin, note)
}

/// A capacity row's verdict over `ranked` (at least one curve, the highest first), with the
/// summary's best and margin and why it is not decided, when it is not.
fn capacity_texts(ranked: &[(&Curve, Capacity)]) -> (Verdict, String, String, Option<String>) {
    let label = |c: &Curve| c.first.server.id.clone();
    let (best, best_cap) = &ranked[0];
    let others = &ranked[1..];
    match capacity_verdict(best_cap, others) {
        None => (
            Verdict::Alone,
            label(best),
            "only one server measured".to_string(),
            None,
        ),
        Some(CapacityVerdict::Decided(runner)) => {
            let (runner, runner_cap) = &others[runner];
            let factor = match (best_cap, runner_cap) {
                (Capacity::Measured(a), Capacity::Measured(b)) => crate::stats::ratio(b, a),
                _ => (runner_cap.value() > 0.0)
                    .then(|| (best_cap.value() / runner_cap.value(), None)),
            };
            (
                Verdict::Best {
                    server: label(best),
                    runner_up: label(runner),
                    factor,
                },
                label(best),
                capacity_margin(best_cap, runner_cap, &label(runner)),
                None,
            )
        }
        Some(CapacityVerdict::Undecided(runner)) => (
            Verdict::Undecided,
            "undecided".to_string(),
            "—".to_string(),
            Some(format!(
                "one round: no interval, so no winner ({} ahead of {})",
                label(best),
                label(others[runner].0)
            )),
        ),
        Some(CapacityVerdict::Tie(runner)) => {
            let (runner, runner_cap) = &others[runner];
            let why = tie_reason(
                ranked,
                (&label(best), best_cap),
                (&label(runner), runner_cap),
            );
            (
                Verdict::Tie {
                    servers: ranked.iter().map(|(c, _)| label(c)).collect(),
                    why: why.clone(),
                },
                "tie".to_string(),
                format!("{} = {}", label(best), label(runner)),
                Some(why),
            )
        }
    }
}

/// A decided capacity row's margin: the ratio with its spread between two measured
/// crossings, both figures where one is a bound.
fn capacity_margin(best: &Capacity, runner: &Capacity, runner_label: &str) -> String {
    match (best, runner) {
        (Capacity::Measured(a), Capacity::Measured(b)) => match crate::stats::ratio(b, a) {
            Some((f, Some(spread))) if spread > 0.0 => {
                format!("{f:.2} ± {spread:.2}× {runner_label}")
            }
            Some((f, _)) => format!("{f:.2}× {runner_label}"),
            None => format!("ahead of {runner_label}"),
        },
        _ => format!("{} vs {} {runner_label}", best.short(), runner.short()),
    }
}

/// Why a capacity row is a tie between the best and the runner whose range reaches it.
fn tie_reason(
    ranked: &[(&Curve, Capacity)],
    (best, best_cap): (&str, &Capacity),
    (runner, runner_cap): (&str, &Capacity),
) -> String {
    if ranked
        .iter()
        .all(|(_, c)| matches!(c, Capacity::AtLeast(..)))
    {
        let k6 = ranked
            .iter()
            .any(|(_, c)| matches!(c, Capacity::AtLeast(_, Side::LoadGenerator)));
        let floor = ranked
            .iter()
            .map(|(_, c)| c.value())
            .fold(f64::INFINITY, f64::min);
        return format!(
            "all carried every step {}; capacity ≥ {}: lower bounds, none known higher",
            if k6 { "k6 could drive" } else { "of the curve" },
            short_rate(floor)
        );
    }
    match (best_cap, runner_cap) {
        (Capacity::Measured(_), Capacity::Measured(_)) => {
            format!("within noise of {runner} (95 % intervals overlap)")
        }
        (Capacity::AtLeast(..), Capacity::AtLeast(..)) => {
            format!("{best} and {runner} are both lower bounds: neither is known higher")
        }
        (Capacity::AtLeast(..), _) => {
            format!("{best}'s lower bound does not clear {runner}'s range")
        }
        (_, Capacity::AtLeast(..)) => format!(
            "{runner} {}: a lower bound that may lie higher",
            runner_cap.short()
        ),
        _ => format!("ranges overlap with {runner}"),
    }
}

/// How the best capacity stands against the others (indices into them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CapacityVerdict {
    /// Its range lies above every other's; the one closest below.
    Decided(usize),
    /// It would be ahead, but one of the two has a single round and no interval.
    Undecided(usize),
    /// Some other's range reaches its own: the one that does, highest first.
    Tie(usize),
}

/// The best capacity against the others (ranked highest first); `None` without others.
fn capacity_verdict(best: &Capacity, others: &[(&Curve, Capacity)]) -> Option<CapacityVerdict> {
    if others.is_empty() {
        return None;
    }
    let Some((best_lo, _)) = best.range() else {
        return Some(CapacityVerdict::Undecided(0));
    };
    let mut closest: Option<(usize, f64)> = None;
    for (i, (_, other)) in others.iter().enumerate() {
        let Some((_, other_hi)) = other.range() else {
            return Some(CapacityVerdict::Undecided(i));
        };
        if other_hi >= best_lo {
            return Some(CapacityVerdict::Tie(i));
        }
        if closest.is_none_or(|(_, hi)| other_hi > hi) {
            closest = Some((i, other_hi));
        }
    }
    closest.map(|(i, _)| CapacityVerdict::Decided(i))
}

/// Rank stability: for each scenario's headline figures and each profile, the servers in
/// order of their mean and, for each adjacent pair, the share of rounds in which that order
/// held. A ranking that flips in a third of the rounds is not one to bet on.
pub(crate) fn rank_stability_table(groups: &[Group]) -> Table {
    let columns = Column::unranked(&[
        ("Scenario", false),
        ("Figure", false),
        ("Profile", false),
        ("Order (share of rounds each pair held)", false),
    ]);
    let profiles = ordered(
        groups.iter().map(|g| g.results[0].server.profile.as_str()),
        &PROFILES,
    );
    let mut rows = Vec::new();
    for scenario in Scenario::ALL {
        for headline in crate::precision::headlines(*scenario) {
            let metric = headline.metric;
            for profile in &profiles {
                let mut ranked: Vec<(&Group, f64)> = groups
                    .iter()
                    .filter(|g| {
                        let r = g.first();
                        r.scenario == *scenario
                            && r.server.profile == *profile
                            && r.variant.is_none()
                            && r.load_params.is_empty()
                    })
                    .filter_map(|g| g.summary(metric).filter(|s| s.n >= 2).map(|s| (g, s.mean)))
                    .collect();
                if ranked.len() < 2 {
                    continue;
                }
                ranked.sort_by(|a, b| match metric.better {
                    Better::Higher => b.1.total_cmp(&a.1),
                    Better::Lower => a.1.total_cmp(&b.1),
                });
                let mut text = ranked[0].0.first().server_label();
                for pair in ranked.windows(2) {
                    let (held, of) = held_rounds(pair[0].0, pair[1].0, metric);
                    text.push_str(&format!(
                        " > ({held}/{of}) {}",
                        pair[1].0.first().server_label()
                    ));
                }
                rows.push(Row {
                    cells: vec![
                        Cell::label(scenario.as_str()),
                        Cell::label(metric.name),
                        Cell::label(profile_title(profile)),
                        Cell::label(text),
                    ],
                });
            }
        }
    }
    Table {
        title: "Rank stability".into(),
        columns,
        rows,
        scenario: None,
        axis: None,
        footnotes: vec![
            "Each scenario's headline figures, servers best first by their mean; \"A > (3/4) B\": A was better than B in 3 of the 4 rounds both measured.".into(),
        ],
    }
}

/// In how many rounds both groups measured `metric`, and in how many of those the first
/// was at least as good as the second.
fn held_rounds(first: &Group, second: &Group, metric: &Metric) -> (usize, usize) {
    let by_round = |g: &Group| -> std::collections::BTreeMap<u32, f64> {
        g.ok()
            .iter()
            .filter_map(|r| (metric.value)(r).map(|v| (r.repetition.index, v)))
            .collect()
    };
    let (a, b) = (by_round(first), by_round(second));
    let mut held = 0;
    let mut of = 0;
    for (round, va) in &a {
        if let Some(vb) = b.get(round) {
            of += 1;
            if !metric.improves(*va, *vb) {
                held += 1;
            }
        }
    }
    (held, of)
}
