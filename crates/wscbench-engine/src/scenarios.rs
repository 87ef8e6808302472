//! The scenario set as the runner plans it: how long each shape runs in each mode, and which
//! load parameters (`--sweep` keys) each shape takes. Both are those of
//! `scenarios/lib/modes.js` (tests read that file under node and check them).

use wscbench_results::{Mode, Scenario};

/// [`seconds`], with soak's length set by `wscbench run --duration` (`DURATION` in k6's
/// environment) for the shapes that have one (steady's hold, churn's duration).
pub fn planned_seconds(scenario: Scenario, mode: Mode, soak_seconds: Option<u64>) -> u64 {
    match (scenario, mode, soak_seconds) {
        (Scenario::Steady | Scenario::Churn, Mode::Soak, Some(s)) => s,
        _ => seconds(scenario, mode),
    }
}

/// True when `--duration` changes this scenario's length.
pub fn has_soak_length(scenario: Scenario) -> bool {
    matches!(scenario, Scenario::Steady | Scenario::Churn)
}

/// How long a scenario's k6 executor runs, in seconds, before k6's graceful stop: used for
/// progress and for the time-out after which k6 is stopped. Soak lengthens only the shapes
/// whose length changes what is measured. Capacity's is its longest: every step held.
pub fn seconds(scenario: Scenario, mode: Mode) -> u64 {
    match (scenario, mode) {
        (Scenario::Steady, Mode::Smoke) => 8,
        (Scenario::Steady, Mode::Quick) => 12,
        (Scenario::Steady, Mode::Seed) => 60,
        (Scenario::Steady, Mode::Soak) => 300,
        (Scenario::Burst, Mode::Smoke) => 8,
        (Scenario::Burst, Mode::Quick) => 17,
        (Scenario::Burst, _) => 20,
        (Scenario::Churn, Mode::Smoke) => 7,
        (Scenario::Churn, Mode::Quick) => 12,
        (Scenario::Churn, Mode::Seed) => 60,
        (Scenario::Churn, Mode::Soak) => 180,
        (Scenario::Saturation, Mode::Smoke) => 8,
        (Scenario::Saturation, Mode::Quick) => 36,
        (Scenario::Saturation, _) => 100,
        (Scenario::Capacity, Mode::Smoke) => 18,
        (Scenario::Capacity, _) => 240,
        (Scenario::IdleCapacity, Mode::Smoke) => 12,
        (Scenario::IdleCapacity, _) => 120,
    }
}

/// The load parameters a sweep can set, each passed to k6 as its upper-case environment
/// variable (`clients` → `CLIENTS`): `clients` is how many clients the shape holds (at once,
/// or over its length for churn), `rate` the chats per second each client sends.
pub const LOAD_PARAMS: &[&str] = &["clients", "rate"];

/// The load parameters scenario `scenario` takes (`SWEEP_KEYS` in `scenarios/lib/modes.js`).
/// A burst's clients chat once and a churn client once per stay, so only the shapes that
/// chat at a rate take `rate`.
pub fn load_params(scenario: Scenario) -> &'static [&'static str] {
    match scenario {
        Scenario::Steady | Scenario::Saturation => &["clients", "rate"],
        Scenario::Burst | Scenario::Churn => &["clients"],
        // Stepped by design: their steps are the knob.
        Scenario::Capacity | Scenario::IdleCapacity => &[],
    }
}

/// True when a value of `key` must be a whole number (a count of clients).
pub fn is_count(key: &str) -> bool {
    key == "clients"
}

/// The environment variable k6 reads `key` from.
pub fn env_name(key: &str) -> String {
    key.to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::path::Path;
    use std::process::Command;

    /// The shapes of every scenario in `mode`, as `scenarios/lib/modes.js` computes them
    /// (run under node with k6's `__ENV` stubbed).
    fn shapes(mode: Mode) -> Value {
        shapes_with(mode, None)
    }

    /// The shapes in `mode` with soak's DURATION set, when given.
    fn shapes_with(mode: Mode, duration: Option<u64>) -> Value {
        node(
            &format!(
                "MODE: '{mode}', DURATION: '{}'",
                duration.map(|d| d.to_string()).unwrap_or_default()
            ),
            "console.log(JSON.stringify(Object.fromEntries(\
               ['steady', 'burst', 'churn', 'saturation', 'capacity', 'idle-capacity'].map((n) => [n, m.shapeOf(n)]))));",
        )
        .unwrap()
    }

    /// Runs `body` under node after importing modes.js with `env` as k6's `__ENV`, and
    /// returns what it printed as JSON.
    fn node(env: &str, body: &str) -> Result<Value, String> {
        let modes = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/lib/modes.js");
        let script = format!(
            "globalThis.__ENV = {{ WS_URL: 'ws://127.0.0.1:1/ws', {env} }};\n\
             const m = await import('file://{}');\n{body}",
            modes.canonicalize().unwrap().display()
        );
        let out = Command::new("node")
            .args(["--input-type=module", "-e", &script])
            .output()
            .expect("this test needs node (installed on every machine of this project's kind)");
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    }

    #[test]
    fn the_load_parameters_of_every_scenario_match_modes_js() {
        let keys = node(
            "MODE: 'smoke'",
            "console.log(JSON.stringify({ keys: m.SWEEP_KEYS, params: m.LOAD_PARAMS }));",
        )
        .unwrap();
        assert_eq!(keys["params"], serde_json::json!(LOAD_PARAMS));
        for &scenario in Scenario::ALL {
            assert_eq!(
                keys["keys"][scenario.as_str()],
                serde_json::json!(load_params(scenario)),
                "{scenario}"
            );
        }
    }

    #[test]
    fn a_sweep_value_reaches_the_shape_through_the_environment() {
        let shape = |env: &str, name: &str| {
            node(
                env,
                &format!("console.log(JSON.stringify(m.shapeOf('{name}')));"),
            )
        };
        let steady = shape("MODE: 'smoke', CLIENTS: '40', RATE: '2.5'", "steady").unwrap();
        assert_eq!(
            (
                steady["clients"].as_u64(),
                steady["chatsPerSecond"].as_f64()
            ),
            (Some(40), Some(2.5))
        );
        // Without a value, the mode's defaults.
        let plain = shape("MODE: 'smoke'", "steady").unwrap();
        assert_eq!(
            (plain["clients"].as_u64(), plain["chatsPerSecond"].as_f64()),
            (Some(10), Some(1.0))
        );
        // Saturation holds one level of clients for as long as its steps took.
        let saturation = shape("MODE: 'smoke', CLIENTS: '30'", "saturation").unwrap();
        assert_eq!(saturation["steps"], serde_json::json!([30]));
        let burst = shape("MODE: 'quick', CLIENTS: '300'", "burst").unwrap();
        assert_eq!(burst["clients"].as_u64(), Some(300));
        // A key the shape does not take, and a value that is not a positive number, stop k6.
        let err = shape("MODE: 'smoke', RATE: '2'", "burst").unwrap_err();
        assert!(err.contains("burst does not take RATE"), "{err}");
        let err = shape("MODE: 'smoke', CLIENTS: '-3'", "steady").unwrap_err();
        assert!(
            err.contains("CLIENTS must be a positive whole number"),
            "{err}"
        );
    }

    #[test]
    fn a_swept_shape_runs_as_long_as_the_plain_one() {
        for &mode in Mode::ALL {
            let swept = node(
                &format!("MODE: '{mode}', CLIENTS: '7', RATE: '3'"),
                "console.log(JSON.stringify(m.shapeOf('saturation')));",
            )
            .unwrap();
            let total = swept["rampSeconds"].as_u64().unwrap()
                * swept["steps"].as_array().unwrap().len() as u64
                + sum(&swept["holdSeconds"])
                + sum(&swept["rampDownSeconds"]);
            assert_eq!(total, seconds(Scenario::Saturation, mode), "{mode}");
        }
    }

    fn sum(v: &Value) -> u64 {
        match v {
            Value::Array(items) => items.iter().map(sum).sum(),
            other => other.as_u64().unwrap(),
        }
    }

    #[test]
    fn planned_durations_match_the_shapes_in_modes_js() {
        for &mode in Mode::ALL {
            let s = shapes(mode);
            let from_js = |scenario: Scenario| {
                let shape = &s[scenario.as_str()];
                match scenario {
                    Scenario::Steady => sum(&shape["holdSeconds"]),
                    Scenario::Burst => {
                        sum(&shape["rampUpSeconds"])
                            + sum(&shape["holdSeconds"])
                            + sum(&shape["rampDownSeconds"])
                    }
                    Scenario::Churn => sum(&shape["durationSeconds"]),
                    Scenario::Saturation => {
                        shape["steps"].as_array().unwrap().len() as u64 * sum(&shape["rampSeconds"])
                            + sum(&shape["holdSeconds"])
                            + sum(&shape["rampDownSeconds"])
                    }
                    Scenario::Capacity | Scenario::IdleCapacity => {
                        shape["steps"].as_array().unwrap().len() as u64
                            * (sum(&shape["rampSeconds"]) + sum(&shape["holdSeconds"]))
                    }
                }
            };
            for &scenario in Scenario::ALL {
                assert_eq!(
                    seconds(scenario, mode),
                    from_js(scenario),
                    "{scenario} in {mode}"
                );
            }
        }
    }

    #[test]
    fn a_soak_duration_lengthens_steady_and_churn_only() {
        let s = shapes_with(Mode::Soak, Some(1800));
        assert_eq!(s["steady"]["holdSeconds"], 1800);
        assert_eq!(s["churn"]["durationSeconds"], 1800);
        assert_eq!(
            planned_seconds(Scenario::Steady, Mode::Soak, Some(1800)),
            1800
        );
        assert_eq!(
            planned_seconds(Scenario::Churn, Mode::Soak, Some(1800)),
            1800
        );
        assert_eq!(
            planned_seconds(Scenario::Saturation, Mode::Soak, Some(1800)),
            seconds(Scenario::Saturation, Mode::Soak)
        );
        assert_eq!(
            planned_seconds(Scenario::Steady, Mode::Seed, Some(1800)),
            60
        );
    }
}
