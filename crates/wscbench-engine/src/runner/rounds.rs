//! Rounds: the order a round runs its points in (shuffled from a recorded seed, so drift and
//! neighbours hit every server alike, and reproducibly), which points get another round
//! (the [`Judge`] decides; the budget and the most rounds bound it), and why each stopped.
//! Pure: no engine, no clock of its own.

use std::collections::BTreeMap;
use std::time::Duration;

use wscbench_results::{PointKey, RunResult, Scenario, StopReason};

/// How a run spends its rounds.
/// `run.json` records its budget (`budget_s`, in seconds) and its seed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Adaptive {
    /// The most rounds any point gets (`--max-rounds`).
    #[serde(skip)]
    pub max_rounds: u32,
    /// The time the rounds may take (`--budget`); `None`: no bound.
    #[serde(
        rename = "budget_s",
        serialize_with = "whole_seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub budget: Option<Duration>,
    /// The seed of every round's order (`--seed`).
    pub seed: u64,
    /// How long each calibration loop runs at the start of a round; `None`: no calibration.
    #[serde(skip)]
    pub calibrate_each: Option<Duration>,
}

/// A duration as `run.json` records it: whole seconds.
fn whole_seconds<S: serde::Serializer>(d: &Option<Duration>, to: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => to.serialize_u64(d.as_secs()),
        None => to.serialize_none(),
    }
}

impl Default for Adaptive {
    /// Exactly the planned rounds: no more, no budget, no calibration.
    fn default() -> Self {
        Adaptive {
            max_rounds: 1,
            budget: None,
            seed: 0,
            calibrate_each: None,
        }
    }
}

/// Decides after each round which points need another.
pub trait Judge: Send + Sync {
    /// For each point of `results` (every round so far, failed ones included): the reason it
    /// needs no more rounds, or `None` while it is undecided.
    fn judge(&self, results: &[RunResult]) -> BTreeMap<PointKey, Option<StopReason>>;
}

/// SplitMix64: a small, well-mixed generator, so the order is reproducible from the seed
/// without a dependency.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of round `round` of a run seeded with `seed`.
pub fn round_seed(seed: u64, round: u32) -> u64 {
    let mut state = seed ^ (u64::from(round) << 32);
    splitmix64(&mut state)
}

/// `items` in the order round `round` of a run seeded with `seed` runs them (Fisher–Yates).
pub fn shuffled<T>(mut items: Vec<T>, seed: u64, round: u32) -> Vec<T> {
    let mut state = round_seed(seed, round);
    for i in (1..items.len()).rev() {
        let j = (splitmix64(&mut state) % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
    items
}

/// A seed from the clock, for a run that was not given one.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut state = nanos ^ u64::from(std::process::id());
    splitmix64(&mut state)
}

/// The least rounds of a load curve's levels in a run that adds rounds: the cost's spread is
/// between rounds (2–10 % on two shared cores), so its interval narrows with rounds, and a
/// curve's levels share one start. Five rounds put a 5 % spread within about ±6 %.
pub const CURVE_MIN_ROUNDS: u32 = 5;

/// The least rounds of a point of `scenario` in a run of `repetitions` rounds at least and
/// `max_rounds` at most: the curve's [`CURVE_MIN_ROUNDS`] where the run may add rounds (and
/// never past its most), every other scenario's `repetitions`.
pub fn min_rounds(scenario: Scenario, repetitions: u32, max_rounds: u32) -> u32 {
    let base = repetitions.max(1);
    if scenario == Scenario::LoadCurve && max_rounds > base {
        base.max(CURVE_MIN_ROUNDS.min(max_rounds))
    } else {
        base
    }
}

/// `order` with the items a round owes first, in their order, then the items it adds, by
/// `added` (their rank; `None` for an owed item), each rank in its order: a round's shuffle
/// stays within owed items and within each rank of added ones.
pub fn owed_first<T>(order: Vec<T>, added: impl Fn(&T) -> Option<usize>) -> Vec<T> {
    let mut keyed: Vec<(Option<usize>, T)> = order.into_iter().map(|t| (added(&t), t)).collect();
    // Stable: equal keys keep the shuffled order. `None` (owed) sorts first.
    keyed.sort_by_key(|(rank, _)| *rank);
    keyed.into_iter().map(|(_, t)| t).collect()
}

/// A start still running, as the budget sees it: its least rounds, its scenario's rank in
/// the plan (0: the first, the headline) and how long one of its rounds takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Running {
    /// Its least rounds.
    pub least: u32,
    /// Its scenario's place in the plan's list.
    pub rank: usize,
    /// One round of it.
    pub length: Duration,
}

/// The time an added start of rank `rank` must leave for the others after round `round`:
/// every round still owed, and every round up to `max_rounds` that a start of an earlier
/// scenario may still take, so a later scenario's added round never spends what the
/// plan's headline needs (the default bench's population, then its curve).
pub fn reserved(running: &[Running], round: u32, max_rounds: u32, rank: usize) -> Duration {
    running
        .iter()
        .map(|r| {
            let until = if r.rank < rank { max_rounds } else { r.least };
            r.length * until.saturating_sub(round)
        })
        .sum()
}

/// Whether a point of `length` may still start at `elapsed` into a run with `budget`: the
/// budget is never exceeded by more than one point's length misjudged.
pub fn fits(elapsed: Duration, length: Duration, budget: Option<Duration>) -> bool {
    budget.is_none_or(|budget| elapsed + length <= budget)
}

/// Which points get another round after round `round` (1-based, just finished), and the
/// stop reason of those that do not. `verdicts` is the judge's word; `failed_only` names
/// points with no usable result yet; `min_rounds` each point's least rounds. Points past
/// their least keep going while undecided, up to `max_rounds`. A point the judge found
/// load-generator bound in every round so far stops even before its least: its further
/// rounds would measure k6 again.
pub fn next_round(
    points: &[PointKey],
    verdicts: &BTreeMap<PointKey, Option<StopReason>>,
    failed_only: &dyn Fn(&PointKey) -> bool,
    round: u32,
    min_rounds: &dyn Fn(&PointKey) -> u32,
    max_rounds: u32,
) -> (Vec<PointKey>, BTreeMap<PointKey, StopReason>) {
    let mut again = Vec::new();
    let mut stopped = BTreeMap::new();
    for point in points {
        if round < min_rounds(point) {
            match verdicts.get(point).copied().flatten() {
                Some(StopReason::LoadgenBound) => {
                    stopped.insert(point.clone(), StopReason::LoadgenBound);
                }
                _ => again.push(point.clone()),
            }
            continue;
        }
        let reason = if failed_only(point) {
            Some(StopReason::Failed)
        } else {
            verdicts.get(point).copied().flatten()
        };
        match reason {
            Some(reason) => {
                stopped.insert(point.clone(), reason);
            }
            None if round >= max_rounds => {
                stopped.insert(point.clone(), StopReason::MaxRounds);
            }
            None => again.push(point.clone()),
        }
    }
    (again, stopped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wscbench_results::Scenario;

    fn key(server: &str) -> PointKey {
        PointKey {
            server: server.into(),
            variant: None,
            scenario: Scenario::Steady,
            load_params: Vec::new(),
            transport: Default::default(),
        }
    }

    #[test]
    fn a_rounds_order_is_reproducible_from_its_seed_and_differs_between_rounds() {
        let items: Vec<u32> = (0..24).collect();
        let first = shuffled(items.clone(), 42, 1);
        assert_eq!(first, shuffled(items.clone(), 42, 1));
        assert_ne!(first, shuffled(items.clone(), 42, 2));
        assert_ne!(first, shuffled(items.clone(), 43, 1));
        let mut sorted = first.clone();
        sorted.sort();
        assert_eq!(sorted, items, "a permutation of the same points");
    }

    #[test]
    fn every_point_runs_until_the_minimum_rounds_whatever_the_judge_says() {
        let points = [key("a"), key("b")];
        let verdicts = BTreeMap::from([(key("a"), Some(StopReason::Precise))]);
        let (again, stopped) = next_round(&points, &verdicts, &|_| false, 2, &|_| 3, 10);
        assert_eq!(again, points);
        assert!(stopped.is_empty());
    }

    #[test]
    fn after_the_minimum_only_undecided_points_get_another_round() {
        let points = [key("a"), key("b"), key("c"), key("d")];
        let verdicts = BTreeMap::from([
            (key("a"), Some(StopReason::Precise)),
            (key("b"), None),
            (key("c"), Some(StopReason::Decided)),
        ]);
        let failed = |p: &PointKey| p.server == "d";
        let (again, stopped) = next_round(&points, &verdicts, &failed, 3, &|_| 3, 10);
        assert_eq!(again, vec![key("b")]);
        assert_eq!(stopped[&key("a")], StopReason::Precise);
        assert_eq!(stopped[&key("c")], StopReason::Decided);
        assert_eq!(stopped[&key("d")], StopReason::Failed);
    }

    #[test]
    fn a_point_bound_by_the_load_generator_in_every_round_stops_before_the_minimum() {
        let points = [key("a"), key("b")];
        let verdicts = BTreeMap::from([
            (key("a"), Some(StopReason::LoadgenBound)),
            (key("b"), Some(StopReason::Precise)),
        ]);
        let (again, stopped) = next_round(&points, &verdicts, &|_| false, 2, &|_| 3, 10);
        assert_eq!(
            again,
            vec![key("b")],
            "a precise point still runs its minimum"
        );
        assert_eq!(stopped[&key("a")], StopReason::LoadgenBound);
    }

    #[test]
    fn an_added_round_leaves_room_for_what_is_owed_and_for_every_round_an_earlier_scenario_may_take()
     {
        let s = Duration::from_secs;
        let running = [
            // The population (rank 0), past its least, undecided.
            Running {
                least: 3,
                rank: 0,
                length: s(20),
            },
            // The curve (rank 1), owing five rounds.
            Running {
                least: 5,
                rank: 1,
                length: s(100),
            },
            // Churn (rank 3), past its least.
            Running {
                least: 3,
                rank: 3,
                length: s(10),
            },
        ];
        // After round 4 of at most 10: churn's added round leaves room for six more of the
        // population and of the curve; the curve's own, for the population's six only (its
        // own round owed is its own); the population's, for the curve's round owed.
        assert_eq!(reserved(&running, 4, 10, 3), s(6 * 20 + 6 * 100));
        assert_eq!(reserved(&running, 4, 10, 1), s(6 * 20 + 100));
        assert_eq!(reserved(&running, 4, 10, 0), s(100));
        assert_eq!(reserved(&running, 10, 10, 3), Duration::ZERO);
    }

    #[test]
    fn an_undecided_point_stops_at_the_most_rounds() {
        let points = [key("a")];
        let verdicts = BTreeMap::from([(key("a"), None)]);
        let (again, stopped) = next_round(&points, &verdicts, &|_| false, 10, &|_| 3, 10);
        assert!(again.is_empty());
        assert_eq!(stopped[&key("a")], StopReason::MaxRounds);
    }

    #[test]
    fn a_curve_owes_more_rounds_than_the_other_points_only_where_rounds_are_added() {
        assert_eq!(min_rounds(Scenario::LoadCurve, 3, 10), CURVE_MIN_ROUNDS);
        assert_eq!(min_rounds(Scenario::Population, 3, 10), 3);
        assert_eq!(
            min_rounds(Scenario::LoadCurve, 3, 3),
            3,
            "exactly --runs rounds"
        );
        assert_eq!(
            min_rounds(Scenario::LoadCurve, 3, 4),
            4,
            "never past the most"
        );
        assert_eq!(min_rounds(Scenario::LoadCurve, 7, 10), 7);
    }

    #[test]
    fn a_point_owed_more_rounds_keeps_going_while_the_others_stop_at_theirs() {
        let mut curve = key("a");
        curve.scenario = Scenario::LoadCurve;
        let points = [curve.clone(), key("b")];
        let verdicts = BTreeMap::from([
            (curve.clone(), Some(StopReason::Precise)),
            (key("b"), Some(StopReason::Precise)),
        ]);
        let least = |p: &PointKey| min_rounds(p.scenario, 3, 10);
        let (again, stopped) = next_round(&points, &verdicts, &|_| false, 3, &least, 10);
        assert_eq!(again, vec![curve]);
        assert_eq!(stopped[&key("b")], StopReason::Precise);
    }

    #[test]
    fn a_round_runs_what_it_owes_first_then_what_it_adds_by_rank() {
        // (item, rank if added)
        let order = vec![
            (1, Some(2)),
            (2, None),
            (3, Some(0)),
            (4, None),
            (5, Some(2)),
            (6, Some(0)),
        ];
        let sorted: Vec<u32> = owed_first(order, |&(_, rank)| rank)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        assert_eq!(sorted, vec![2, 4, 3, 6, 1, 5]);
    }

    #[test]
    fn a_point_starts_only_if_it_ends_within_the_budget() {
        let s = Duration::from_secs;
        assert!(fits(s(100), s(50), Some(s(150))));
        assert!(!fits(s(101), s(50), Some(s(150))));
        assert!(fits(s(10_000), s(50), None));
    }
}
