//! `wscbench compare` and `wscbench report --history` on temp dirs of synthetic results: exit
//! codes of --fail-on-regression, and one clear line for input that cannot be compared.

mod common;

#[path = "../../wscbench-report/tests/common/mod.rs"]
mod results;

use std::fs;
use std::path::Path;

use assert_cmd::prelude::*;
use predicates::prelude::*;
use results::{repetitions, write};

const A: &str = "20261120-090000";
const B: &str = "20261122-180000";
const BASELINE: [f64; 5] = [1000.0, 1010.0, 990.0, 1005.0, 995.0];

fn two_runs(b_throughputs: &[f64]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &repetitions(A, "profile-b/go", "steady", &BASELINE),
    );
    write(
        dir.path(),
        &repetitions(B, "profile-b/go", "steady", b_throughputs),
    );
    dir
}

fn compare(dir: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = common::wscbench();
    cmd.args(["compare", A, B, "--results"])
        .arg(dir)
        .args(extra);
    cmd
}

#[test]
fn a_regression_beyond_the_threshold_exits_one() {
    let dir = two_runs(&[800.0, 810.0, 790.0, 805.0, 795.0]);
    compare(dir.path(), &["--fail-on-regression", "5"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("worse"))
        .stderr(predicate::str::contains(
            "regression: profile-b/go steady Throughput",
        ));
}

#[test]
fn a_regression_within_the_threshold_exits_zero() {
    let dir = two_runs(&[800.0, 810.0, 790.0, 805.0, 795.0]);
    compare(dir.path(), &["--fail-on-regression", "25"])
        .assert()
        .code(0);
}

#[test]
fn noise_never_fails_the_threshold() {
    let dir = two_runs(&[1003.0, 992.0, 1011.0, 997.0, 1001.0]);
    compare(dir.path(), &["--fail-on-regression", "0"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("within noise"));
}

#[test]
fn compare_prints_json_with_the_verdicts() {
    let dir = two_runs(&[1200.0, 1210.0, 1190.0, 1205.0, 1195.0]);
    let output = compare(dir.path(), &["--format", "json"]).output().unwrap();
    assert!(output.status.success());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["changes"][0]["verdict"], "better");
}

#[test]
fn fails_for_a_run_id_that_does_not_exist() {
    let dir = two_runs(&BASELINE);
    let mut cmd = common::wscbench();
    cmd.args(["compare", A, "20990101-000000", "--results"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no results of run `20990101-000000`",
        ));
}

#[test]
fn fails_for_runs_that_share_no_point() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &repetitions(A, "profile-b/go", "steady", &BASELINE),
    );
    write(
        dir.path(),
        &repetitions(B, "profile-b/rust", "steady", &BASELINE),
    );
    compare(dir.path(), &[])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("share no measured point"));
}

#[test]
fn fails_for_result_files_of_a_newer_schema() {
    let dir = two_runs(&BASELINE);
    let file = dir.path().join(B).join("profile-b/go/steady.rep-1.json");
    let text = fs::read_to_string(&file).unwrap().replace(
        &format!("\"schema_version\": {}", wscbench_results::SCHEMA_VERSION),
        "\"schema_version\": 99",
    );
    fs::write(&file, text).unwrap();
    compare(dir.path(), &[])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("newer wscbench"));
}

#[test]
fn a_corrupt_result_file_is_skipped_with_a_warning_and_the_rest_compared() {
    let dir = two_runs(&BASELINE);
    fs::write(
        dir.path().join(B).join("profile-b/go/steady.rep-2.json"),
        "{",
    )
    .unwrap();
    compare(dir.path(), &[])
        .assert()
        .code(0)
        .stderr(predicate::str::contains(
            "steady.rep-2.json: not valid JSON",
        ))
        // The point's name may wrap inside its cell at the terminal's 120 columns.
        .stdout(predicate::str::contains("profile-b/go").and(predicate::str::contains("steady")));
}

#[test]
fn history_lists_one_metric_across_runs_and_marks_changed_sources() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &repetitions(A, "profile-b/go", "steady", &BASELINE),
    );
    let mut newer = repetitions(B, "profile-b/go", "steady", &BASELINE);
    for r in &mut newer {
        r.server.source_hash = "77aa".into();
    }
    write(dir.path(), &newer);
    let mut cmd = common::wscbench();
    cmd.arg("report")
        .arg(dir.path())
        .args([
            "--history",
            "--server",
            "profile-b/go",
            "--scenario",
            "steady",
            "--format",
            "markdown",
        ])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "History — profile-b/go steady: Throughput (msg/s)",
        ))
        .stdout(predicate::str::contains("77aa ◆"));
}
