//! `compare` on synthetic runs: a clear improvement, a clear regression, and noise that must
//! come out "within noise"; conditions that differ are named.

mod common;

use common::repetitions;
use wscbench_report::{CompareError, Verdict, compare};

const A: &str = "20261120-090000";
const B: &str = "20261122-180000";
const BASELINE: [f64; 5] = [1000.0, 1010.0, 990.0, 1005.0, 995.0];

fn throughput_verdict(b: &[f64]) -> (Verdict, f64) {
    let a = repetitions(A, "profile-b/go", "steady", &BASELINE);
    let b = repetitions(B, "profile-b/go", "steady", b);
    let comparison = compare(A, &a, B, &b, 0.05).unwrap();
    let change = comparison
        .changes
        .iter()
        .find(|c| c.metric == "throughput")
        .unwrap();
    (change.verdict, change.change_percent.unwrap())
}

#[test]
fn a_clear_improvement_is_better() {
    let (verdict, change) = throughput_verdict(&[1200.0, 1210.0, 1190.0, 1205.0, 1195.0]);
    assert_eq!(verdict, Verdict::Better);
    assert!((change - 20.0).abs() < 1e-9, "{change}");
}

#[test]
fn a_clear_regression_is_worse_and_fails_a_ten_percent_threshold_but_not_a_thirty_percent_one() {
    let a = repetitions(A, "profile-b/go", "steady", &BASELINE);
    let b = repetitions(
        B,
        "profile-b/go",
        "steady",
        &[800.0, 810.0, 790.0, 805.0, 795.0],
    );
    let comparison = compare(A, &a, B, &b, 0.05).unwrap();
    let regressions = comparison.regressions(10.0);
    let metrics: Vec<&str> = regressions.iter().map(|c| c.metric).collect();
    assert_eq!(metrics, ["throughput", "deliveries"]);
    assert_eq!(regressions[0].verdict, Verdict::Worse);
    assert_eq!(regressions[0].ratio_text(), "1.25 ± 0.02× lower");
    assert!(comparison.regressions(30.0).is_empty());
}

#[test]
fn noise_comes_out_within_noise() {
    let (verdict, _) = throughput_verdict(&[1003.0, 992.0, 1011.0, 997.0, 1001.0]);
    assert_eq!(verdict, Verdict::WithinNoise);
}

#[test]
fn a_single_run_on_either_side_is_not_tested() {
    let (verdict, _) = throughput_verdict(&[2000.0]);
    assert_eq!(verdict, Verdict::Untested);
}

#[test]
fn b_may_measure_a_subset_of_as_points() {
    let mut a = repetitions(A, "profile-b/go", "steady", &BASELINE);
    a.extend(repetitions(A, "profile-b/rust", "steady", &BASELINE));
    let b = repetitions(B, "profile-b/go", "steady", &BASELINE);
    let comparison = compare(A, &a, B, &b, 0.05).unwrap();
    assert_eq!((comparison.only_in_a, comparison.only_in_b), (1, 0));
    assert!(
        comparison
            .changes
            .iter()
            .all(|c| c.point == "profile-b/go steady")
    );
}

#[test]
fn runs_that_share_no_point_cannot_be_compared() {
    let a = repetitions(A, "profile-b/go", "steady", &BASELINE);
    let b = repetitions(B, "profile-b/rust", "steady", &BASELINE);
    let error = compare(A, &a, B, &b, 0.05).unwrap_err();
    assert!(matches!(error, CompareError::NothingShared { .. }));
}

#[test]
fn differing_conditions_are_listed_never_silent() {
    let a = repetitions(A, "profile-b/go", "steady", &BASELINE);
    let mut b = repetitions(B, "profile-b/go", "steady", &BASELINE);
    for r in &mut b {
        r.conditions.machine_cores = 4;
        r.server.source_hash = "77aa".into();
    }
    let comparison = compare(A, &a, B, &b, 0.05).unwrap();
    assert_eq!(
        comparison.differences,
        [
            "machine cores: 2 → 4",
            "profile-b/go sources: 3f9a1c0d → 77aa"
        ]
    );
}

#[test]
fn the_terminal_comparison_of_a_regression() {
    let a = repetitions(A, "profile-b/go", "steady", &BASELINE);
    let b = repetitions(
        B,
        "profile-b/go",
        "steady",
        &[800.0, 810.0, 790.0, 805.0, 795.0],
    );
    let comparison = compare(A, &a, B, &b, 0.05).unwrap();
    insta::assert_snapshot!(wscbench_report::Format::Terminal.render(&comparison.to_report()));
}
