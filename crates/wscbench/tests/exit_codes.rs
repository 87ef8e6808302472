//! Exit codes from the outside, each exact: 0 when all went well, 1 for a failed check, 2 for
//! every usage error (each refusal of `run`), 3 for missing set-up (an unreachable engine,
//! named with its remedy within 2 s); `--help` lists them. 130 and 143 need a run to
//! interrupt: tests/end_to_end.rs.

use std::time::{Duration, Instant};

use assert_cmd::Command;

fn wscbench() -> Command {
    let mut cmd = Command::cargo_bin("wscbench").unwrap();
    cmd.env(
        "WSCBENCH_ROOT",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
    );
    cmd
}

fn unreachable_engine(args: &[&str]) -> (String, Duration) {
    let started = Instant::now();
    let out = wscbench()
        .args(args)
        .env("DOCKER_HOST", "unix:///nonexistent.sock")
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (text, took)
}

#[test]
fn build_names_an_unreachable_engine_and_its_remedy_within_two_seconds() {
    let (text, took) = unreachable_engine(&["build", "--server", "profile-b/go"]);
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{text}");
    assert!(errors[0].contains("unix:///nonexistent.sock"), "{text}");
    assert!(errors[0].contains("scripts/setup"), "{text}");
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn clean_with_an_unreachable_engine_exits_3_within_two_seconds() {
    let (text, took) = unreachable_engine(&["clean"]);
    assert!(
        text.contains("no Docker engine answers at unix:///nonexistent.sock"),
        "{text}"
    );
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn doctor_reports_an_unreachable_engine_as_missing_set_up() {
    let (text, _) = unreachable_engine(&["doctor"]);
    let engine_line = text
        .lines()
        .find(|l| l.contains("docker engine"))
        .unwrap_or_default();
    assert!(engine_line.starts_with("MISSING"), "{text}");
    assert!(engine_line.contains("unix:///nonexistent.sock"), "{text}");
}

#[test]
fn a_command_that_succeeds_exits_0() {
    wscbench().arg("list").assert().code(0);
}

#[test]
fn a_failed_verify_check_exits_1() {
    // Nothing listens on port 1: the checks run and fail.
    wscbench()
        .args(["verify", "--url", "ws://127.0.0.1:1/ws", "--only", "health"])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(1);
}

#[test]
fn usage_mistakes_of_verify_exit_2() {
    wscbench().args(["verify"]).assert().code(2);
    wscbench()
        .args([
            "verify",
            "--url",
            "ws://127.0.0.1:1/ws",
            "--only",
            "no_such_check",
        ])
        .assert()
        .code(2);
    wscbench()
        .args(["verify", "--url", "http://127.0.0.1:1/"])
        .assert()
        .code(2);
}

#[test]
fn every_usage_error_of_run_exits_2_with_one_line_before_any_engine_is_asked() {
    for (args, says) in [
        (&["--scenario", "storm"][..], "invalid value 'storm'"),
        (&["--sweep", "speed=1"][..], "unknown load parameter"),
        (&["--server", "profile-x/cobol"][..], "no server matches"),
        (
            &[
                "--loadgen",
                "js",
                "--loadgen-engine",
                "unix:///nonexistent-1.sock",
                "--loadgen-engine",
                "unix:///nonexistent-2.sock",
            ][..],
            "need the native load path",
        ),
        (
            &["--scenario", "capacity", "--loadgen", "js"][..],
            "needs the native load path",
        ),
        (&["--duration", "30m"][..], "add --mode soak"),
        (
            &["--mode", "soak", "--duration", "30m", "--scenario", "burst"][..],
            "steady and churn only",
        ),
        (
            &["--server", "profile-b/go", "--variant", "gomaxprocs-8"][..],
            "unknown variant \"gomaxprocs-8\"",
        ),
        (
            &["--scenario", "burst", "--sweep", "rate=1,2"][..],
            "does not take it",
        ),
        (
            &["--sweep", "clients=10", "--sweep", "clients=20"][..],
            "is given twice",
        ),
        (
            &["--server", "profile-b/go", "--max-duration", "1m"][..],
            "more than --max-duration",
        ),
    ] {
        let results = tempfile::tempdir().unwrap();
        let out = wscbench()
            .arg("run")
            .args(args)
            .arg("--results")
            .arg(results.path())
            .env("DOCKER_HOST", "unix:///nonexistent.sock")
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
        assert!(errors[0].contains(says), "{args:?}: {stderr}");
        assert_eq!(
            std::fs::read_dir(results.path()).unwrap().count(),
            0,
            "{args:?}: a refused run writes no run folder"
        );
    }
}

#[test]
fn help_lists_the_exit_codes() {
    let out = wscbench().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "Exit codes:",
        "  0  ",
        "  1  ",
        "  2  ",
        "  3  set-up",
        "130  ",
        "143  ",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
}
