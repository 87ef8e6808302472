//! The load curve read across its steps: per server, what each step of offered load cost
//! (server CPU per 1,000 deliveries) and how late it arrived (latency p99 from intended
//! times), whether the server carried it, and its capacity (per round, the load at which
//! latency p99 crosses the target, interpolated between the steps around it; then the mean
//! over rounds with its interval, or a bound that names what stopped the curve). Not a
//! table builder: the curve's table (`curve_table.rs`), the summary's curve rows and the
//! HTML charts all read [`curves`].

use wscbench_results::{LoadParam, RunResult, Scenario};

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

/// What stopped a curve before the server's crossing: the side a lower bound names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The curve ended: the server carried its top step.
    Top,
    /// The step above the last carried one measured k6, not the server.
    LoadGenerator,
}

/// One step of one round as the capacity reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RoundStep {
    /// Free of the load generator: its latency p99 and delivered share (0 to 1).
    Measured {
        /// Latency p99 in ms.
        p99_ms: Option<f64>,
        /// The share of the offered deliveries that arrived.
        delivered: Option<f64>,
    },
    /// The load generator was the limit (bound, or k6 failed): nothing of the server.
    LoadGenerator,
    /// The server died at this step (crashed or killed for memory).
    Died,
}

impl RoundStep {
    /// True when the server carried the step within `slo_p99_ms`.
    fn carried(&self, slo_p99_ms: f64) -> bool {
        matches!(*self, RoundStep::Measured { p99_ms: Some(p99), delivered: Some(d) }
            if d >= wscbench_results::curve::CARRIED_RATIO && p99 <= slo_p99_ms)
    }
}

/// Where one round of a curve crossed the latency target (or the delivered share).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Crossing {
    /// Between the last step carried and the first not, interpolated on the log of the load.
    At(f64),
    /// It carried its highest carried step and the curve says no more: at least this much.
    AtLeast(f64, Side),
    /// It carried no step: below this one (the lowest the server did not carry).
    Below(f64),
    /// The load generator was the limit at every step: nothing of the server.
    Unknown,
}

/// Where one round's steps (`(offered, step)`, lowest first) cross `slo_p99_ms`: above the
/// highest step carried, so a step below it that k6 limited (or that the server was late
/// at) does not end the curve. The step above it decides: not carried, the crossing is
/// interpolated between the two on the log of the load, at the first of the latency target
/// and the 99 % delivered share to be passed (linear in each between the steps); the
/// server died there, the crossing is the last step carried; k6 was the limit, or no step
/// above, the figure is a lower bound naming that side.
pub(crate) fn round_crossing(steps: &[(f64, RoundStep)], slo_p99_ms: f64) -> Crossing {
    let Some(h) = steps.iter().rposition(|(_, s)| s.carried(slo_p99_ms)) else {
        return steps
            .iter()
            .find(|(_, s)| !matches!(s, RoundStep::LoadGenerator))
            .map_or(Crossing::Unknown, |&(offered, _)| Crossing::Below(offered));
    };
    let (carried_at, carried) = steps[h];
    let Some(&(next_at, next)) = steps.get(h + 1) else {
        return Crossing::AtLeast(carried_at, Side::Top);
    };
    let (
        RoundStep::Measured { p99_ms, delivered },
        RoundStep::Measured {
            p99_ms: p99_h,
            delivered: d_h,
        },
    ) = (next, carried)
    else {
        return match next {
            RoundStep::LoadGenerator => Crossing::AtLeast(carried_at, Side::LoadGenerator),
            _ => Crossing::At(carried_at),
        };
    };
    // How far towards the next step each figure passes its limit, 0 to 1.
    let latency = match (p99_h, p99_ms) {
        (Some(a), Some(b)) if b > slo_p99_ms && b > a => Some((slo_p99_ms - a) / (b - a)),
        _ => None,
    };
    let ratio = wscbench_results::curve::CARRIED_RATIO;
    let share = match (d_h, delivered) {
        (Some(a), Some(b)) if b < ratio && a > b => Some((a - ratio) / (a - b)),
        _ => None,
    };
    let fraction = match (latency, share) {
        (Some(l), Some(s)) => l.min(s),
        (Some(f), None) | (None, Some(f)) => f,
        // Not carried, and neither figure says where between: the last step carried.
        (None, None) => 0.0,
    }
    .clamp(0.0, 1.0);
    Crossing::At((carried_at.ln() + fraction * (next_at.ln() - carried_at.ln())).exp())
}

/// What a curve says of the server's capacity: its rounds' crossings together.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Capacity {
    /// Every round crossed: the crossings' mean and 95 % interval.
    Measured(Summary),
    /// Some round's curve ended, or met the load generator, before the server crossed: at
    /// least this much (the mean over rounds of crossings and bounds), naming the side (the
    /// load generator when any round met it).
    AtLeast(f64, Side),
    /// Some round carried no step (the rest crossed): at most this much (the mean over
    /// rounds of crossings and of the lowest step not carried); `below` of `rounds` carried
    /// none.
    AtMost {
        /// The bound.
        value: f64,
        /// Rounds that carried no step.
        below: usize,
        /// Rounds read.
        rounds: usize,
    },
    /// No round said anything of the server: k6 was the limit at every step it ran.
    Unknown,
}

impl Capacity {
    /// The rounds' crossings together; rounds that say nothing are left out.
    pub fn of(crossings: &[Crossing]) -> Capacity {
        let known: Vec<Crossing> = crossings
            .iter()
            .copied()
            .filter(|c| *c != Crossing::Unknown)
            .collect();
        if known.is_empty() {
            return Capacity::Unknown;
        }
        let lower = |c: &Crossing| match *c {
            Crossing::At(v) | Crossing::AtLeast(v, _) => v,
            Crossing::Below(_) | Crossing::Unknown => 0.0,
        };
        let mean =
            |f: &dyn Fn(&Crossing) -> f64| known.iter().map(f).sum::<f64>() / known.len() as f64;
        let sides: Vec<Side> = known
            .iter()
            .filter_map(|c| match c {
                Crossing::AtLeast(_, side) => Some(*side),
                _ => None,
            })
            .collect();
        let below = known
            .iter()
            .filter(|c| matches!(c, Crossing::Below(_)))
            .count();
        if !sides.is_empty() {
            let side = if sides.contains(&Side::LoadGenerator) {
                Side::LoadGenerator
            } else {
                Side::Top
            };
            return Capacity::AtLeast(mean(&lower), side);
        }
        if below > 0 {
            let upper = |c: &Crossing| match *c {
                Crossing::At(v) | Crossing::Below(v) | Crossing::AtLeast(v, _) => v,
                Crossing::Unknown => 0.0,
            };
            return Capacity::AtMost {
                value: mean(&upper),
                below,
                rounds: known.len(),
            };
        }
        let values: Vec<f64> = known.iter().map(lower).collect();
        Summary::of(&values).map_or(Capacity::Unknown, Capacity::Measured)
    }

    /// The figure a row ranks by: the mean crossing, or the bound.
    pub fn value(&self) -> f64 {
        match self {
            Capacity::Measured(s) => s.mean,
            Capacity::AtLeast(v, _) | Capacity::AtMost { value: v, .. } => *v,
            Capacity::Unknown => 0.0,
        }
    }

    /// Where the capacity may lie: the 95 % interval of a measured one (none with one
    /// round), from a lower bound up without end, from 0 to an upper bound.
    pub fn range(&self) -> Option<(f64, f64)> {
        match self {
            Capacity::Measured(s) => s.ci95,
            Capacity::AtLeast(v, _) => Some((*v, f64::INFINITY)),
            Capacity::AtMost { value, .. } => Some((0.0, *value)),
            Capacity::Unknown => None,
        }
    }

    /// `151,572 ± 3,210`, `≥ 400,000 (top step)`, `≥ 200,000 (load generator)`, `< 50,000
    /// (first step not carried)`.
    pub fn text(&self) -> String {
        let rate = crate::units::rate;
        match self {
            Capacity::Measured(s) => match s.ci95.filter(|(lo, hi)| hi > lo) {
                Some((lo, hi)) => format!("{} ± {}", rate(s.mean), rate((hi - lo) / 2.0)),
                None if s.n < 2 => format!("{} (one round)", rate(s.mean)),
                None => rate(s.mean),
            },
            Capacity::AtLeast(v, Side::Top) => format!("≥ {} (top step)", rate(*v)),
            Capacity::AtLeast(v, Side::LoadGenerator) => {
                format!("≥ {} (load generator)", rate(*v))
            }
            Capacity::AtMost {
                value,
                below,
                rounds,
            } if below == rounds => {
                format!("< {} (no step carried)", rate(*value))
            }
            Capacity::AtMost {
                value,
                below,
                rounds,
            } => format!(
                "≤ {} ({below} of {rounds} rounds carried no step)",
                rate(*value)
            ),
            Capacity::Unknown => "unknown (k6 was the limit at every step)".to_string(),
        }
    }

    /// `151k`, `≥ 400k`, `≤ 80k`: the figure in a margin.
    pub fn short(&self) -> String {
        let v = short_rate(self.value());
        match self {
            Capacity::Measured(_) | Capacity::Unknown => v,
            Capacity::AtLeast(..) => format!("≥ {v}"),
            Capacity::AtMost { .. } => format!("≤ {v}"),
        }
    }
}

/// `50k`, `1.6M`, `152k`: an offered load in a row's name or a margin, to three figures.
pub(crate) fn short_rate(v: f64) -> String {
    let three = |x: f64| {
        let digits = if x >= 100.0 {
            0
        } else if x >= 10.0 {
            1
        } else {
            2
        };
        let text = format!("{x:.digits$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    };
    if v >= 1e6 {
        format!("{}M", three(v / 1e6))
    } else if v >= 1e3 {
        format!("{}k", three(v / 1e3))
    } else {
        three(v)
    }
}

impl Curve<'_> {
    /// The server's capacity: each complete round's [`round_crossing`], then together
    /// ([`Capacity::of`]).
    pub fn capacity(&self) -> Capacity {
        let crossings: Vec<Crossing> = self
            .round_steps()
            .iter()
            .map(|steps| round_crossing(steps, self.slo_p99_ms))
            .collect();
        Capacity::of(&crossings)
    }

    /// The capacity in words, with the steps below it the server did not carry (Zig std
    /// late at its lowest loads and carrying its highest).
    pub fn capacity_text(&self) -> String {
        let capacity = self.capacity();
        let floor = match &capacity {
            Capacity::Measured(s) => s.mean,
            Capacity::AtLeast(v, _) => *v,
            Capacity::AtMost { .. } | Capacity::Unknown => 0.0,
        };
        let missed: Vec<String> = self
            .steps
            .iter()
            .filter(|s| s.offered < floor && matches!(s.carried, Carried::TooLate | Carried::No))
            .map(|s| short_rate(s.offered))
            .collect();
        if missed.is_empty() {
            capacity.text()
        } else {
            format!("{}, not carried at {}", capacity.text(), missed.join(", "))
        }
    }

    /// Each round's steps as the capacity reads them, lowest first: the rounds in which
    /// every step ran (those above a step the server died at, or above a level that ended
    /// its point, excepted), none interrupted or refused by verification. A round the judge
    /// gave only some steps says nothing of where the others crossed, so it is left out
    /// rather than filled in.
    pub fn round_steps(&self) -> Vec<Vec<(f64, RoundStep)>> {
        let mut rounds: Vec<u32> = self
            .steps
            .iter()
            .flat_map(|s| s.results.iter().map(|r| r.repetition.index))
            .collect();
        rounds.sort_unstable();
        rounds.dedup();
        rounds
            .into_iter()
            .filter_map(|round| {
                let mut steps = Vec::new();
                // The level before ended its point: the levels above did not run.
                let mut ended = false;
                for step in &self.steps {
                    let Some(r) = step
                        .results
                        .iter()
                        .rev()
                        .find(|r| r.repetition.index == round)
                    else {
                        if ended || steps.iter().any(|(_, s)| *s == RoundStep::Died) {
                            break;
                        }
                        return None;
                    };
                    ended = r.curve.as_ref().is_some_and(|c| c.ended_point.is_some());
                    steps.push((step.offered, round_step(r)?));
                }
                Some(steps)
            })
            .collect()
    }

    /// The step offering `offered`, if the curve ran it.
    pub fn at(&self, offered: f64) -> Option<&Step<'_>> {
        self.steps.iter().find(|s| s.offered == offered)
    }
}

/// One round of one step as the capacity reads it; `None` for a round that says nothing
/// (refused by verification, interrupted).
fn round_step(r: &RunResult) -> Option<RoundStep> {
    use wscbench_results::Outcome;
    match r.outcome {
        Outcome::Ok if r.loadgen_bound => Some(RoundStep::LoadGenerator),
        Outcome::Ok => Some(RoundStep::Measured {
            p99_ms: (metrics::LATENCY_P99.value)(r),
            delivered: (metrics::DELIVERED_OF_OFFERED.value)(r),
        }),
        Outcome::LoadgenFailed => Some(RoundStep::LoadGenerator),
        Outcome::ServerCrashed | Outcome::OomKilled => Some(RoundStep::Died),
        Outcome::VerifyFailed | Outcome::Interrupted => None,
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
pub(crate) fn other_params(r: &RunResult) -> Vec<(LoadParam, String)> {
    wscbench_results::dimensions::params_text(&r.load_params)
        .into_iter()
        .filter(|(k, _)| *k != LoadParam::Deliveries)
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

#[cfg(test)]
mod tests {
    use super::*;

    const SLO: f64 = 50.0;

    /// A step free of the load generator with everything delivered and this p99.
    fn at(offered: f64, p99_ms: f64) -> (f64, RoundStep) {
        (
            offered,
            RoundStep::Measured {
                p99_ms: Some(p99_ms),
                delivered: Some(1.0),
            },
        )
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn a_curve_carried_at_every_step_is_at_least_its_top_step() {
        let steps = [
            at(50e3, 5.0),
            at(100e3, 8.0),
            at(200e3, 20.0),
            at(400e3, 45.0),
        ];
        assert_eq!(
            round_crossing(&steps, SLO),
            Crossing::AtLeast(400e3, Side::Top)
        );
    }

    #[test]
    fn a_curve_carried_nowhere_lies_below_its_first_step() {
        let steps = [at(50e3, 60.0), at(100e3, 90.0)];
        assert_eq!(round_crossing(&steps, SLO), Crossing::Below(50e3));
        let bound_then_late = [(50e3, RoundStep::LoadGenerator), at(100e3, 90.0)];
        assert_eq!(
            round_crossing(&bound_then_late, SLO),
            Crossing::Below(100e3),
            "the lowest step the server itself did not carry"
        );
        let all_bound = [(50e3, RoundStep::LoadGenerator); 2];
        assert_eq!(round_crossing(&all_bound, SLO), Crossing::Unknown);
    }

    #[test]
    fn a_crossing_between_steps_is_interpolated_on_the_log_of_the_load() {
        // p99 10 ms at 100k and 90 ms at 200k: 50 ms is half way, at 100k × √2.
        let steps = [
            at(50e3, 5.0),
            at(100e3, 10.0),
            at(200e3, 90.0),
            at(400e3, 300.0),
        ];
        let Crossing::At(x) = round_crossing(&steps, SLO) else {
            panic!("a crossing")
        };
        assert!(close(x, 100e3 * 2f64.sqrt()), "{x}");
    }

    #[test]
    fn a_delivered_share_that_falls_first_decides_the_crossing() {
        // On time at 200k, but only 97 % arrived: 99 % is passed a third of the way.
        let steps = [
            at(100e3, 10.0),
            (
                200e3,
                RoundStep::Measured {
                    p99_ms: Some(40.0),
                    delivered: Some(0.97),
                },
            ),
        ];
        let Crossing::At(x) = round_crossing(&steps, SLO) else {
            panic!("a crossing")
        };
        assert!(close(x, 100e3 * 2f64.powf(1.0 / 3.0)), "{x}");
    }

    #[test]
    fn a_load_generator_step_below_carried_ones_does_not_end_the_curve() {
        let steps = [
            (50e3, RoundStep::LoadGenerator),
            at(100e3, 70.0),
            at(200e3, 30.0),
            at(400e3, 40.0),
        ];
        assert_eq!(
            round_crossing(&steps, SLO),
            Crossing::AtLeast(400e3, Side::Top)
        );
        let capped = [
            at(50e3, 5.0),
            at(100e3, 9.0),
            (200e3, RoundStep::LoadGenerator),
        ];
        assert_eq!(
            round_crossing(&capped, SLO),
            Crossing::AtLeast(100e3, Side::LoadGenerator)
        );
    }

    #[test]
    fn a_server_that_died_at_a_step_crossed_at_the_step_before() {
        let steps = [at(50e3, 5.0), at(100e3, 9.0), (200e3, RoundStep::Died)];
        assert_eq!(round_crossing(&steps, SLO), Crossing::At(100e3));
    }

    #[test]
    fn crossings_in_every_round_are_a_mean_with_an_interval() {
        let Capacity::Measured(s) = Capacity::of(&[
            Crossing::At(140e3),
            Crossing::At(150e3),
            Crossing::At(160e3),
            Crossing::Unknown,
        ]) else {
            panic!("measured")
        };
        assert_eq!(
            (s.n, s.mean),
            (3, 150e3),
            "the round k6 limited is left out"
        );
        let (lo, hi) = s.ci95.unwrap();
        assert!(lo < 140e3 && hi > 160e3);
    }

    #[test]
    fn one_bound_round_makes_the_capacity_a_bound_naming_its_side() {
        assert_eq!(
            Capacity::of(&[
                Crossing::At(300e3),
                Crossing::AtLeast(400e3, Side::Top),
                Crossing::AtLeast(200e3, Side::LoadGenerator),
            ]),
            Capacity::AtLeast(300e3, Side::LoadGenerator)
        );
        let top = Capacity::AtLeast(400e3, Side::Top);
        assert_eq!(top.text(), "≥ 400,000 (top step)");
        assert_eq!(top.range(), Some((400e3, f64::INFINITY)));
        assert_eq!(
            Capacity::of(&[Crossing::Below(50e3), Crossing::Below(50e3)]).text(),
            "< 50,000 (no step carried)"
        );
        assert_eq!(
            Capacity::of(&[Crossing::Unknown]).text(),
            "unknown (k6 was the limit at every step)"
        );
    }

    #[test]
    fn short_rates_keep_three_figures() {
        let rates: Vec<String> = [50e3, 141_421.0, 1.6e6, 400e3, 63_000.0]
            .into_iter()
            .map(short_rate)
            .collect();
        assert_eq!(rates, ["50k", "141k", "1.6M", "400k", "63k"]);
    }
}
