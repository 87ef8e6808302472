//! Load sweeps (`wscbench run --sweep clients=100,200`): parsing one key's values, checking a
//! whole sweep against the scenarios it will run, the points it expands to (the product of
//! its keys, with the load curve's own steps when no sweep gives them), and which of those
//! points each scenario runs. Which scenario takes which key is
//! [`Scenario::load_params`].

use std::collections::BTreeMap;
use std::str::FromStr;

use wscbench_results::{LoadParam, LoadParams, Mode, Scenario};

use crate::load::scenarios;

/// Why a sweep cannot run; each is one line naming what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SweepError {
    /// Not `key=v1,v2,...`.
    #[error("--sweep {given:?}: expected KEY=V1,V2,... such as clients=100,200,500")]
    Malformed { given: String },
    /// A key no scenario takes.
    #[error("--sweep {key}: unknown load parameter; the parameters are {}", names(&LoadParam::ALL))]
    UnknownKey { key: String },
    /// A value the key does not allow ([`scenarios::requirement`]).
    #[error("--sweep {key}: {value:?} is not {}", scenarios::requirement(*key))]
    BadValue { key: LoadParam, value: String },
    /// The same value twice in one key.
    #[error("--sweep {key}: {value} is given twice")]
    DuplicateValue { key: LoadParam, value: String },
    /// The same key in two `--sweep` flags.
    #[error("--sweep {key} is given twice; put every value in one flag: {key}=V1,V2,...")]
    DuplicateKey { key: LoadParam },
    /// A key one of the chosen scenarios does not take.
    #[error("--sweep {key}: the {scenario} scenario does not take it (it takes {}); choose scenarios with --scenario", names(scenario.load_params()))]
    NotTaken { key: LoadParam, scenario: Scenario },
    /// A point whose parameters make no shape that can run.
    #[error(transparent)]
    Shape(#[from] scenarios::ShapeError),
}

/// Load parameters' names, `a, b, c`, as messages list them.
fn names(params: &[LoadParam]) -> String {
    let names: Vec<&str> = params.iter().map(|p| p.as_str()).collect();
    names.join(", ")
}

/// One `--sweep` flag: a load parameter and its values, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepKey {
    /// The parameter.
    pub key: LoadParam,
    /// The values, each one [`scenarios::requirement`] allows.
    pub values: Vec<f64>,
}

impl FromStr for SweepKey {
    type Err = SweepError;

    fn from_str(given: &str) -> Result<Self, SweepError> {
        let malformed = || SweepError::Malformed {
            given: given.to_string(),
        };
        let (key, values) = given.split_once('=').ok_or_else(malformed)?;
        let key = key.trim().to_ascii_lowercase();
        if key.is_empty() || values.trim().is_empty() {
            return Err(malformed());
        }
        let key: LoadParam = key.parse().map_err(|_| SweepError::UnknownKey { key })?;
        let mut parsed: Vec<f64> = Vec::new();
        for text in values.split(',').map(str::trim) {
            let bad = || SweepError::BadValue {
                key,
                value: text.to_string(),
            };
            let value: f64 = text.parse().map_err(|_| bad())?;
            if !scenarios::accepts(key, value) {
                return Err(bad());
            }
            if parsed.contains(&value) {
                return Err(SweepError::DuplicateValue {
                    key,
                    value: text.to_string(),
                });
            }
            parsed.push(value);
        }
        Ok(SweepKey {
            key,
            values: parsed,
        })
    }
}

/// Every `--sweep` of a run, at most one per key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sweep {
    keys: Vec<SweepKey>,
}

/// A sweep is recorded (`run.json`'s `sweep`) as its keys, each with its values.
impl serde::Serialize for Sweep {
    fn serialize<S: serde::Serializer>(&self, to: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&self.as_map(), to)
    }
}

impl Sweep {
    /// The sweep of these flags, refusing a key given twice.
    pub fn new(keys: Vec<SweepKey>) -> Result<Sweep, SweepError> {
        for (i, k) in keys.iter().enumerate() {
            if keys[..i].iter().any(|earlier| earlier.key == k.key) {
                return Err(SweepError::DuplicateKey { key: k.key });
            }
        }
        Ok(Sweep { keys })
    }

    /// Refuses a key that one of `scenarios` does not take, and a point whose parameters
    /// make a shape that cannot run in `mode` (a fan-out room larger than its clients).
    pub fn check(&self, scenarios: &[Scenario], mode: Mode) -> Result<(), SweepError> {
        for k in &self.keys {
            if let Some(&scenario) = scenarios.iter().find(|s| !s.load_params().contains(&k.key)) {
                return Err(SweepError::NotTaken {
                    key: k.key,
                    scenario,
                });
            }
        }
        if let Some(steps) = self.keys.iter().find(|k| k.key == LoadParam::Deliveries) {
            scenarios::check_steps(&steps.values)?;
        }
        for point in self.points() {
            for &scenario in scenarios {
                scenarios::check_point(scenario, mode, &point)?;
            }
        }
        Ok(())
    }

    /// True without any `--sweep`.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Key to values, as the run manifest records it.
    pub fn as_map(&self) -> BTreeMap<LoadParam, Vec<f64>> {
        self.keys
            .iter()
            .map(|k| (k.key, k.values.clone()))
            .collect()
    }

    /// The load parameters of every point: the product of the keys' values, the first key
    /// outermost, each key's values in the order given. One empty set without a sweep.
    pub fn points(&self) -> Vec<LoadParams> {
        let mut points = vec![BTreeMap::new()];
        for k in &self.keys {
            points = points
                .into_iter()
                .flat_map(|point| {
                    k.values.iter().map(move |&v| {
                        let mut next = point.clone();
                        next.insert(k.key, v);
                        next
                    })
                })
                .collect();
        }
        points
    }
}

/// A run's load points: `sweep`'s, times the load curve's own steps in `mode` when the run
/// has the load curve and no sweep gives its steps (`--sweep deliveries=...`). Scenarios
/// other than the curve do not take `deliveries` and run once per other value
/// ([`loads_of`]).
pub fn run_points(sweep: &Sweep, scenarios: &[Scenario], mode: Mode) -> Vec<LoadParams> {
    run_points_at(sweep, scenarios, &scenarios::LoadCurveShape::of(mode).steps)
}

/// [`run_points`] with the load curve's steps `steps` in place of its own in the mode (the
/// steps placed from the load generator's measured limit).
pub fn run_points_at(sweep: &Sweep, scenarios: &[Scenario], steps: &[f64]) -> Vec<LoadParams> {
    let points = if sweep.is_empty() {
        Vec::new()
    } else {
        sweep.points()
    };
    let given = sweep.keys.iter().any(|k| k.key == LoadParam::Deliveries);
    if given || !scenarios.contains(&Scenario::LoadCurve) {
        return points;
    }
    let base = if points.is_empty() {
        vec![BTreeMap::new()]
    } else {
        points
    };
    base.iter()
        .flat_map(|point| {
            steps.iter().map(move |&d| {
                let mut next = point.clone();
                next.insert(LoadParam::Deliveries, d);
                next
            })
        })
        .collect()
}

/// `point`'s parameters that `scenario` takes: what it runs with.
pub fn taken(scenario: Scenario, point: &LoadParams) -> LoadParams {
    let keys = scenario.load_params();
    point
        .iter()
        .filter(|(k, _)| keys.contains(k))
        .map(|(k, v)| (*k, *v))
        .collect()
}

/// The load points `scenario` runs, in order: one per distinct set of the parameters it
/// takes, so that a scenario without `deliveries` runs once where the curve runs each step.
pub fn loads_of(scenario: Scenario, load_points: &[LoadParams]) -> Vec<&LoadParams> {
    let mut seen: Vec<LoadParams> = Vec::new();
    let mut loads = Vec::new();
    for point in load_points {
        let own = taken(scenario, point);
        if !seen.contains(&own) {
            seen.push(own);
            loads.push(point);
        }
    }
    loads
}

/// The points `scenario` runs as one start each, in order: [`loads_of`], with a load
/// curve's levels (the loads that differ only in `deliveries`) together as one point, levels
/// in the order given (rising: [`Sweep::check`]).
pub fn started_points(scenario: Scenario, load_points: &[LoadParams]) -> Vec<Vec<&LoadParams>> {
    let mut groups: Vec<Vec<&LoadParams>> = Vec::new();
    for point in loads_of(scenario, load_points) {
        let same_curve = |group: &Vec<&LoadParams>| {
            scenario == Scenario::LoadCurve && without_level(group[0]) == without_level(point)
        };
        match groups.iter_mut().find(|g| same_curve(g)) {
            Some(group) => group.push(point),
            None => groups.push(vec![point]),
        }
    }
    groups
}

/// A point's parameters without the load curve's level (`deliveries`): its curve.
pub fn without_level(point: &LoadParams) -> LoadParams {
    point
        .iter()
        .filter(|(k, _)| **k != LoadParam::Deliveries)
        .map(|(k, v)| (*k, *v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_curve_runs_its_own_steps_and_the_other_scenarios_once() {
        let scenarios = [Scenario::LoadCurve, Scenario::Steady];
        let points = run_points(&Sweep::default(), &scenarios, Mode::Quick);
        let steps = scenarios::LoadCurveShape::of(Mode::Quick).steps;
        assert_eq!(points.len(), steps.len());
        assert_eq!(loads_of(Scenario::LoadCurve, &points).len(), steps.len());
        assert_eq!(loads_of(Scenario::Steady, &points).len(), 1);
        assert!(taken(Scenario::Steady, &points[2]).is_empty());
        assert_eq!(
            taken(Scenario::LoadCurve, &points[2])[&LoadParam::Deliveries],
            steps[2]
        );
        // Without the curve, a run has no load points of its own.
        assert!(run_points(&Sweep::default(), &[Scenario::Steady], Mode::Quick).is_empty());
        // A sweep of the curve's clients: each value runs every step.
        let sweep = Sweep::new(vec![key("clients=400,500").unwrap()]).unwrap();
        let points = run_points(&sweep, &[Scenario::LoadCurve], Mode::Quick);
        assert_eq!(points.len(), 2 * steps.len());
        // ... each value's steps are the levels of one point.
        let started = started_points(Scenario::LoadCurve, &points);
        assert_eq!(started.len(), 2);
        assert!(started.iter().all(|levels| levels.len() == steps.len()));
        assert_eq!(started[1][3][&LoadParam::Deliveries], steps[3]);
        assert_eq!(started[1][0][&LoadParam::Clients], 500.0);
        // Steady takes the clients alone: one point per value.
        assert_eq!(started_points(Scenario::Steady, &points).len(), 2);
    }

    #[test]
    fn given_load_curve_steps_replace_the_curves_own_and_must_rise() {
        let sweep = Sweep::new(vec![key("deliveries=1000,5000").unwrap()]).unwrap();
        assert!(sweep.check(&[Scenario::LoadCurve], Mode::Quick).is_ok());
        assert_eq!(
            run_points(&sweep, &[Scenario::LoadCurve], Mode::Quick).len(),
            2
        );
        let falling = Sweep::new(vec![key("deliveries=5000,1000").unwrap()]).unwrap();
        assert!(
            falling
                .check(&[Scenario::LoadCurve], Mode::Quick)
                .unwrap_err()
                .to_string()
                .contains("must rise")
        );
        // Steady does not take it.
        assert!(sweep.check(&[Scenario::Steady], Mode::Quick).is_err());
    }

    fn key(text: &str) -> Result<SweepKey, SweepError> {
        text.parse()
    }

    #[test]
    fn a_sweep_flag_parses_its_key_and_values_in_order() {
        assert_eq!(
            key("clients=100, 200,50").unwrap(),
            SweepKey {
                key: LoadParam::Clients,
                values: vec![100.0, 200.0, 50.0]
            }
        );
        assert_eq!(key("RATE=0.5,2").unwrap().values, [0.5, 2.0]);
    }

    #[test]
    fn every_bad_sweep_flag_says_what_is_wrong() {
        let message = |text: &str| key(text).unwrap_err().to_string();
        assert!(message("clients").contains("expected KEY=V1,V2"));
        assert!(message("clients=").contains("expected KEY=V1,V2"));
        assert!(message("speed=1,2").contains(
            "unknown load parameter; the parameters are clients, rate, room-size, slow-share, deliveries"
        ));
        assert!(message("clients=100,abc").contains("\"abc\" is not a positive whole number"));
        assert!(message("clients=0").contains("\"0\" is not a positive whole number"));
        assert!(message("clients=2.5").contains("\"2.5\" is not a positive whole number"));
        assert!(message("rate=-1").contains("\"-1\" is not a positive number"));
        assert!(message("rate=inf").contains("\"inf\" is not a positive number"));
        assert!(message("rate=1,,2").contains("\"\" is not a positive number"));
        assert!(message("clients=10,10").contains("10 is given twice"));
        assert!(message("room-size=1").contains("\"1\" is not a whole number of at least 2"));
        assert!(
            message("slow-share=1")
                .contains("\"1\" is not a fraction between 0 and 1 (both excluded)")
        );
    }

    #[test]
    fn a_key_given_twice_is_refused() {
        let err = Sweep::new(vec![key("rate=1").unwrap(), key("rate=2").unwrap()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--sweep rate is given twice; put every value in one flag: rate=V1,V2,..."
        );
    }

    #[test]
    fn a_key_a_chosen_scenario_does_not_take_is_refused() {
        let sweep = Sweep::new(vec![key("rate=1,2").unwrap()]).unwrap();
        assert!(
            sweep
                .check(&[Scenario::Steady, Scenario::Saturation], Mode::Quick)
                .is_ok()
        );
        let err = sweep
            .check(&[Scenario::Saturation, Scenario::Burst], Mode::Quick)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--sweep rate: the burst scenario does not take it (it takes clients); choose scenarios with --scenario"
        );
    }

    #[test]
    fn a_fanout_room_size_sweep_plans_in_quick_mode_and_is_refused_where_rooms_outgrow_the_clients()
    {
        let sweep = Sweep::new(vec![key("room-size=2,10,100,1000").unwrap()]).unwrap();
        assert!(sweep.check(&[Scenario::Fanout], Mode::Quick).is_ok());
        assert_eq!(sweep.points().len(), 4);
        let err = sweep.check(&[Scenario::Fanout], Mode::Smoke).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--sweep room-size=1000: fanout in smoke mode has 100 clients"),
            "{err}"
        );
        let err = sweep
            .check(&[Scenario::SlowConsumers], Mode::Quick)
            .unwrap_err();
        assert!(
            err.to_string().contains(
                "the slow-consumers scenario does not take it (it takes clients, slow-share)"
            ),
            "{err}"
        );
    }

    #[test]
    fn two_keys_expand_to_their_product_first_key_outermost() {
        let sweep = Sweep::new(vec![
            key("clients=10,20").unwrap(),
            key("rate=1,5").unwrap(),
        ])
        .unwrap();
        let points: Vec<Vec<(LoadParam, f64)>> = sweep
            .points()
            .into_iter()
            .map(|p| p.into_iter().collect())
            .collect();
        let p = |c: f64, r: f64| vec![(LoadParam::Clients, c), (LoadParam::Rate, r)];
        assert_eq!(points, [p(10., 1.), p(10., 5.), p(20., 1.), p(20., 5.)]);
        assert_eq!(Sweep::default().points(), [BTreeMap::new()]);
    }
}
