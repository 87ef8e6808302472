//! The load curve read across its steps: per server, what each step of offered load cost
//! (server CPU per 1,000 deliveries) and how late it arrived (latency p99 from intended
//! times), whether the server carried it, and its capacity (the highest step it carried
//! within the latency target before any step it did not). Not a table builder: the curve's
//! table (`curve_table.rs`), the summary's curve rows and the HTML charts all read
//! [`curves`].

use wscbench_results::{RunResult, Scenario};

use crate::metrics::{self, Metric};
use crate::rows::{Group, by_language};
use crate::stats::Summary;

/// How one server fared at one step, over its rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carried {
    /// Nearly everything offered arrived, within the latency target, in the rounds free of
    /// the load generator (their means).
    Yes,
    /// Nearly everything arrived, but latency p99 passed the target: delivered, not
    /// carried (its cost still compares; its latency is past the target).
    TooLate,
    /// Too little arrived: the server's limit lies below this step.
    No,
    /// Every round's load generator was the limit: the step says nothing of the server.
    LoadGenerator,
    /// Every round failed (the server died or did not start).
    Failed,
}

/// One step of one server's curve.
#[derive(Debug, Clone)]
pub(crate) struct Step<'a> {
    /// The offered deliveries per second.
    pub offered: f64,
    /// Its rounds, oldest first, failed ones included.
    pub results: Vec<&'a RunResult>,
    /// The verdict.
    pub carried: Carried,
}

impl Step<'_> {
    /// The rounds a figure of this step is read from: those free of the load generator
    /// when there are any, otherwise the bound ones (the figure is then a bound too).
    pub fn rounds(&self) -> Vec<&RunResult> {
        let ok: Vec<&RunResult> = self.results.iter().copied().filter(|r| r.is_ok()).collect();
        let free: Vec<&RunResult> = ok.iter().copied().filter(|r| !r.loadgen_bound).collect();
        if free.is_empty() { ok } else { free }
    }

    /// `metric` over [`Step::rounds`].
    pub fn summary(&self, metric: &Metric) -> Option<Summary> {
        let values: Vec<f64> = self
            .rounds()
            .iter()
            .filter_map(|r| (metric.value)(r))
            .collect();
        Summary::of(&values)
    }

    /// True when some ok round was bound by the load generator.
    pub fn any_bound(&self) -> bool {
        self.results.iter().any(|r| r.is_ok() && r.loadgen_bound)
    }
}

/// One server's curve in one run: its steps, lowest offered load first.
#[derive(Debug, Clone)]
pub(crate) struct Curve<'a> {
    /// A result of the server, for its identity (id, profile, language).
    pub first: &'a RunResult,
    /// The steps.
    pub steps: Vec<Step<'a>>,
    /// The latency target the steps were judged by, in ms.
    pub slo_p99_ms: f64,
}

/// What a curve says of the server's capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Capacity {
    /// It carried every step up to this one and not the next.
    Limit(f64),
    /// It carried every step up to this one, then the load generator became the limit: at
    /// least this much.
    LoadGenerator(f64),
    /// It carried every step run: at least the curve's top.
    Top(f64),
    /// It carried none (not even the first step).
    None,
    /// The load generator was the limit from the first step: the curve says nothing of it.
    Unknown,
}

impl Capacity {
    /// The figure a row compares: the highest step carried (0 for none).
    pub fn value(&self) -> f64 {
        match *self {
            Capacity::Limit(v) | Capacity::LoadGenerator(v) | Capacity::Top(v) => v,
            Capacity::None | Capacity::Unknown => 0.0,
        }
    }

    /// As a cell says it: `200,000`, `≥ 400,000 (load generator)`, `≥ 400,000 (top step)`.
    pub fn text(&self) -> String {
        match *self {
            Capacity::Limit(v) => crate::units::rate(v),
            Capacity::LoadGenerator(v) => format!("≥ {} (load generator)", crate::units::rate(v)),
            Capacity::Top(v) => format!("≥ {} (top step)", crate::units::rate(v)),
            Capacity::None => "< first step".to_string(),
            Capacity::Unknown => "unknown (k6 was the limit from the first step)".to_string(),
        }
    }
}

impl Curve<'_> {
    /// The server's capacity: walking up the steps, the last one carried before the first
    /// that was not (or that only the load generator limited).
    pub fn capacity(&self) -> Capacity {
        let mut last = None;
        for step in &self.steps {
            match step.carried {
                Carried::Yes => last = Some(step.offered),
                Carried::LoadGenerator => {
                    return last.map_or(Capacity::Unknown, Capacity::LoadGenerator);
                }
                Carried::TooLate | Carried::No | Carried::Failed => {
                    return last.map_or(Capacity::None, Capacity::Limit);
                }
            }
        }
        last.map_or(Capacity::None, Capacity::Top)
    }

    /// The step offering `offered`, if the curve ran it.
    pub fn at(&self, offered: f64) -> Option<&Step<'_>> {
        self.steps.iter().find(|s| s.offered == offered)
    }
}

/// The verdict on one step from its rounds, judged by `slo_p99_ms`.
pub(crate) fn carried(results: &[&RunResult], slo_p99_ms: f64) -> Carried {
    let ok: Vec<&RunResult> = results.iter().copied().filter(|r| r.is_ok()).collect();
    if ok.is_empty() {
        return Carried::Failed;
    }
    let free: Vec<&RunResult> = ok.iter().copied().filter(|r| !r.loadgen_bound).collect();
    if free.is_empty() {
        return Carried::LoadGenerator;
    }
    let mean = |metric: &Metric| {
        Summary::of(
            &free
                .iter()
                .filter_map(|r| (metric.value)(r))
                .collect::<Vec<_>>(),
        )
        .map(|s| s.mean)
    };
    let delivered = mean(&metrics::DELIVERED_OF_OFFERED);
    let p99 = mean(&metrics::LATENCY_P99);
    match (delivered, p99) {
        (Some(d), Some(p99)) if d >= wscbench_results::curve::CARRIED_RATIO => {
            if p99 <= slo_p99_ms {
                Carried::Yes
            } else {
                Carried::TooLate
            }
        }
        _ => Carried::No,
    }
}

/// Every server's curve among `results` (load-curve results of one run and mode; the
/// default variant and ws only are for the caller to choose), servers in the order given.
pub(crate) fn curves<'a>(results: &[&'a RunResult]) -> Vec<Curve<'a>> {
    let mut curves: Vec<Curve<'a>> = Vec::new();
    for &r in results.iter().filter(|r| r.scenario == Scenario::LoadCurve) {
        let Some(step) = r.curve.as_ref() else {
            continue;
        };
        let label = r.server_label();
        let rest = other_params(r);
        let index = match curves
            .iter()
            .position(|c| c.first.server_label() == label && other_params(c.first) == rest)
        {
            Some(i) => i,
            None => {
                curves.push(Curve {
                    first: r,
                    steps: Vec::new(),
                    slo_p99_ms: step.slo_p99_ms,
                });
                curves.len() - 1
            }
        };
        let curve = &mut curves[index];
        match curve
            .steps
            .iter_mut()
            .find(|s| s.offered == step.offered_deliveries_per_s)
        {
            Some(s) => s.results.push(r),
            None => curve.steps.push(Step {
                offered: step.offered_deliveries_per_s,
                results: vec![r],
                carried: Carried::Failed,
            }),
        }
    }
    for curve in &mut curves {
        curve.steps.sort_by(|a, b| a.offered.total_cmp(&b.offered));
        let slo = curve.slo_p99_ms;
        for step in &mut curve.steps {
            step.results.sort_by_key(|r| r.repetition.index);
            step.carried = carried(&step.results, slo);
        }
    }
    curves
}

/// A result's load parameters other than the step: the curve's shape (clients, room size).
pub(crate) fn other_params(r: &RunResult) -> Vec<(String, String)> {
    wscbench_results::dimensions::params_text(&r.load_params)
        .into_iter()
        .filter(|(k, _)| k != "deliveries")
        .collect()
}

/// The steps at which every curve of `curves` delivered what was offered, free of the load
/// generator (carried, or delivered too late), lowest first: where their costs and
/// latencies compare.
pub(crate) fn steps_all_delivered(curves: &[&Curve]) -> Vec<f64> {
    let Some(first) = curves.first() else {
        return Vec::new();
    };
    first
        .steps
        .iter()
        .map(|s| s.offered)
        .filter(|&offered| {
            curves.iter().all(|c| {
                c.at(offered)
                    .is_some_and(|s| matches!(s.carried, Carried::Yes | Carried::TooLate))
            })
        })
        .collect()
}

/// The curves of one profile's servers (default variants and other variants alike, ws only
/// as every table but the matrix), in row order.
pub(crate) fn profile_curves<'a>(groups: &[Group<'a>], profile: &str) -> Vec<Curve<'a>> {
    let results: Vec<&RunResult> = by_language(groups.iter().filter(|g| {
        g.first().scenario == Scenario::LoadCurve && g.first().server.profile == profile
    }))
    .flat_map(|g| g.results.iter().copied())
    .collect();
    curves(&results)
}
