//! The statistics against values computed independently in Python (`statistics` and scipy):
//! see tests/fixtures/stats/make.py, which wrote expected.json.

use serde_json::Value;
use wscbench_report::stats::{Summary, t_quantile, welch};

fn expected() -> Value {
    serde_json::from_str(include_str!("fixtures/stats/expected.json")).unwrap()
}

fn close(actual: f64, expected: &Value, what: &str) {
    let expected = expected.as_f64().unwrap();
    let tolerance = 1e-9 * expected.abs().max(1.0);
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: {actual} is not {expected}"
    );
}

fn values(sample: &Value) -> Vec<f64> {
    sample["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
fn summaries_match_pythons_statistics_and_scipys_t_interval() {
    for (name, want) in expected()["summaries"].as_object().unwrap() {
        let got = Summary::of(&values(want)).unwrap();
        assert_eq!(got.n as u64, want["n"].as_u64().unwrap(), "{name} n");
        close(got.mean, &want["mean"], &format!("{name} mean"));
        close(
            got.std_dev.unwrap(),
            &want["std_dev"],
            &format!("{name} std_dev"),
        );
        close(got.cv.unwrap(), &want["cv"], &format!("{name} cv"));
        close(got.min, &want["min"], &format!("{name} min"));
        close(got.max, &want["max"], &format!("{name} max"));
        close(got.median, &want["median"], &format!("{name} median"));
        let (lo, hi) = got.ci95.unwrap();
        close(lo, &want["ci95"][0], &format!("{name} ci95 low"));
        close(hi, &want["ci95"][1], &format!("{name} ci95 high"));
    }
}

#[test]
fn only_a_cv_above_five_percent_is_noisy() {
    let expected = expected();
    let summaries = &expected["summaries"];
    assert!(
        !Summary::of(&values(&summaries["five_throughputs"]))
            .unwrap()
            .is_noisy()
    );
    assert!(
        Summary::of(&values(&summaries["noisy_six"]))
            .unwrap()
            .is_noisy()
    );
}

#[test]
fn welchs_test_matches_scipys_unequal_variance_t_test() {
    let expected = expected();
    for case in expected["welch"].as_array().unwrap() {
        let sample = |side: &str| {
            let name = case[side].as_str().unwrap();
            Summary::of(&values(&expected["summaries"][name])).unwrap()
        };
        let got = welch(&sample("a"), &sample("b")).unwrap();
        let what = format!("{} vs {}", case["a"], case["b"]);
        close(got.t, &case["t"], &format!("{what} t"));
        close(got.df, &case["df"], &format!("{what} df"));
        close(got.p, &case["p"], &format!("{what} p"));
    }
}

#[test]
fn t_quantiles_match_scipy() {
    for case in expected()["t_quantiles"].as_array().unwrap() {
        let got = t_quantile(case["p"].as_f64().unwrap(), case["df"].as_f64().unwrap());
        close(got, &case["q"], &format!("t quantile {case}"));
    }
}

#[test]
fn welchs_test_needs_two_values_on_each_side() {
    let one = Summary::of(&[1.0]).unwrap();
    let two = Summary::of(&[1.0, 2.0]).unwrap();
    assert!(welch(&one, &two).is_none());
    assert!(welch(&two, &two).is_some());
}
