//! The precision goal: each scenario's headline figures, how wide their 95 % interval may
//! be, and the verdict on each point of a run after a round — precise, decided against its
//! neighbours, or undecided — that decides which points get another round.

use std::collections::BTreeMap;

use wscbench_results::{PointKey, RunResult, Scenario, StopReason};

use crate::metrics::{self, Metric};
use crate::stats::Summary;

/// A headline figure of a scenario and how much wider than the goal its interval may be
/// (latency percentiles move more between rounds than rates and sizes: twice the goal).
#[derive(Debug, Clone, Copy)]
pub struct Headline {
    /// The figure.
    pub metric: &'static Metric,
    /// Its interval may be this many times the precision goal.
    pub tolerance: f64,
    /// Only an interval within the goal settles it: a figure the answer quotes as a price
    /// (memory per user) is not settled by ranking apart from its neighbours alone.
    pub needs_precision: bool,
}

const fn headline(metric: &'static Metric, tolerance: f64) -> Headline {
    Headline {
        metric,
        tolerance,
        needs_precision: false,
    }
}

const fn price(metric: &'static Metric) -> Headline {
    Headline {
        metric,
        tolerance: 1.0,
        needs_precision: true,
    }
}

/// The figures a scenario's answer rests on: the ones the summary ranks by.
pub fn headlines(scenario: Scenario) -> &'static [Headline] {
    const STEADY: &[Headline] = &[
        headline(&metrics::PEAK_MEMORY, 1.0),
        headline(&metrics::CPU_EFFICIENCY, 1.0),
        headline(&metrics::LATENCY_P95, 2.0),
    ];
    const LATENCY: &[Headline] = &[headline(&metrics::LATENCY_P95, 2.0)];
    const SATURATION: &[Headline] = &[
        headline(&metrics::DELIVERIES, 1.0),
        headline(&metrics::CPU_EFFICIENCY, 1.0),
    ];
    const CAPACITY: &[Headline] = &[headline(&metrics::MAX_CLIENTS, 1.0)];
    const IDLE: &[Headline] = &[headline(&metrics::IDLE_CLIENTS, 1.0)];
    const P99: &[Headline] = &[headline(&metrics::LATENCY_P99, 2.0)];
    const CURVE: &[Headline] = &[
        headline(&metrics::CPU_PER_1K_DELIVERIES, 1.0),
        headline(&metrics::LATENCY_P99, 2.0),
    ];
    const POPULATION: &[Headline] = &[
        price(&metrics::MEMORY_PER_USER),
        headline(&metrics::CPU_PER_1K_USERS, 1.0),
    ];
    match scenario {
        Scenario::Population => POPULATION,
        Scenario::LoadCurve => CURVE,
        Scenario::Steady => STEADY,
        Scenario::Burst | Scenario::Churn => LATENCY,
        Scenario::Saturation | Scenario::Fanout => SATURATION,
        Scenario::SlowConsumers => P99,
        Scenario::Capacity => CAPACITY,
        Scenario::IdleCapacity => IDLE,
    }
}

/// A summary's 95 % interval half-width as a share of its mean; `None` without an interval
/// or with a zero mean.
pub fn relative_half_width(summary: &Summary) -> Option<f64> {
    let (lo, hi) = summary.ci95?;
    (summary.mean != 0.0).then(|| (hi - lo) / 2.0 / summary.mean.abs())
}

/// The verdict on every point of `results` (all rounds so far; failed rounds are left out of
/// the figures) with a precision goal of `precision_pct` percent: `Some(Precise)` when every
/// headline interval is within its goal, `Some(Decided)` when each one that is not is
/// separated from the intervals of its neighbours in that figure's ranking among like
/// points (same scenario and load) and is not one that needs its precision,
/// `Some(LoadgenBound)` when two or more good rounds were all load-generator bound (another
/// cannot decide anything), `None` while undecided (fewer than two good rounds included). A figure a busy k6 moves is read over the rounds free of
/// the load generator where there are any, as the tables read it.
pub fn verdicts(
    results: &[RunResult],
    precision_pct: f64,
) -> BTreeMap<PointKey, Option<StopReason>> {
    let mut by_point: BTreeMap<PointKey, Vec<&RunResult>> = BTreeMap::new();
    for result in results {
        by_point.entry(result.point()).or_default().push(result);
    }
    // A figure a busy k6 moves is judged, as the tables read it, over the rounds free of
    // the load generator where there are any.
    let summary = |point: &PointKey, metric: &Metric| {
        let ok: Vec<&&RunResult> = by_point[point].iter().filter(|r| r.is_ok()).collect();
        let free = |r: &&&RunResult| metric.reads_server(r);
        let rounds: Vec<&&RunResult> = if ok.iter().any(free) {
            ok.into_iter().filter(free).collect()
        } else {
            ok
        };
        let values: Vec<f64> = rounds.iter().filter_map(|r| (metric.value)(r)).collect();
        Summary::of(&values)
    };
    let like = |a: &PointKey, b: &PointKey| {
        a.scenario == b.scenario && a.load_params == b.load_params && a != b
    };
    let goal = precision_pct / 100.0;
    by_point
        .keys()
        .map(|point| {
            let ok: Vec<&&RunResult> = by_point[point].iter().filter(|r| r.is_ok()).collect();
            if ok.len() >= 2 && ok.iter().all(|r| r.loadgen_bound) {
                return (point.clone(), Some(StopReason::LoadgenBound));
            }
            let mut all_precise = true;
            let mut all_settled = true;
            for h in headlines(point.scenario) {
                let Some(own) = summary(point, h.metric) else {
                    continue;
                };
                if own.n < 2 {
                    all_settled = false;
                    all_precise = false;
                    continue;
                }
                let precise = relative_half_width(&own).is_some_and(|w| w <= goal * h.tolerance);
                if precise {
                    continue;
                }
                all_precise = false;
                if h.needs_precision {
                    all_settled = false;
                    continue;
                }
                let mut others: Vec<Summary> = by_point
                    .keys()
                    .filter(|other| like(point, other))
                    .filter_map(|other| summary(other, h.metric))
                    .collect();
                others.sort_by(|a, b| a.mean.total_cmp(&b.mean));
                let below = others.iter().rev().find(|o| o.mean <= own.mean);
                let above = others.iter().find(|o| o.mean > own.mean);
                let separated = |o: Option<&Summary>| {
                    o.is_none_or(|o| o.n >= 2 && !own.overlaps(o) && o.ci95.is_some())
                };
                if !(separated(below) && separated(above)) {
                    all_settled = false;
                }
            }
            let verdict = if all_precise {
                Some(StopReason::Precise)
            } else if all_settled {
                Some(StopReason::Decided)
            } else {
                None
            };
            (point.clone(), verdict)
        })
        .collect()
}
