//! The scenario set as the runner plans it: how long each shape runs in each mode. The
//! numbers are those of `scenarios/lib/modes.js` (a test reads that file and checks them).

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
        (Scenario::Steady, Mode::Quick) => 60,
        (Scenario::Steady, Mode::Soak) => 300,
        (Scenario::Burst, Mode::Smoke) => 8,
        (Scenario::Burst, _) => 20,
        (Scenario::Churn, Mode::Smoke) => 7,
        (Scenario::Churn, Mode::Quick) => 60,
        (Scenario::Churn, Mode::Soak) => 180,
        (Scenario::Saturation, Mode::Smoke) => 8,
        (Scenario::Saturation, _) => 100,
        (Scenario::Capacity, Mode::Smoke) => 18,
        (Scenario::Capacity, _) => 240,
        (Scenario::IdleCapacity, Mode::Smoke) => 12,
        (Scenario::IdleCapacity, _) => 140,
    }
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

    fn shapes_with(mode: Mode, duration: Option<u64>) -> Value {
        let modes = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/lib/modes.js");
        let script = format!(
            "globalThis.__ENV = {{ WS_URL: 'ws://127.0.0.1:1/ws', MODE: '{mode}', DURATION: '{}' }};\n\
             const m = await import('file://{}');\n\
             console.log(JSON.stringify(Object.fromEntries(\
               ['steady', 'burst', 'churn', 'saturation', 'capacity', 'idle-capacity'].map((n) => [n, m.shapeOf(n)]))));",
            duration.map(|d| d.to_string()).unwrap_or_default(),
            modes.canonicalize().unwrap().display()
        );
        let out = Command::new("node")
            .args(["--input-type=module", "-e", &script])
            .output()
            .expect("this test needs node (installed on every machine of this project's kind)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
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
            planned_seconds(Scenario::Steady, Mode::Quick, Some(1800)),
            60
        );
    }
}
