//! Exit codes from the outside: an unreachable engine is named with its remedy within 2 s and
//! exits 3; usage mistakes exit 2; `--help` lists the codes.

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
fn usage_mistakes_exit_2() {
    wscbench()
        .args(["run", "--scenario", "storm"])
        .assert()
        .code(2);
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

#[test]
fn a_split_run_on_the_js_load_path_is_refused_before_any_engine_is_asked() {
    let out = wscbench()
        .args(["run", "--loadgen", "js", "--mode", "smoke", "--results"])
        .arg(tempfile::tempdir().unwrap().path())
        .args(["--loadgen-engine", "unix:///nonexistent-1.sock"])
        .args(["--loadgen-engine", "unix:///nonexistent-2.sock"])
        .env("DOCKER_HOST", "unix:///nonexistent.sock")
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("native load path"), "{stderr}");
}

#[test]
fn capacity_on_the_js_path_and_a_duration_without_soak_are_refused_in_one_line() {
    for (args, says) in [
        (
            &[
                "run",
                "--scenario",
                "capacity",
                "--loadgen",
                "js",
                "--server",
                "profile-b/go",
            ][..],
            "needs the native load path",
        ),
        (
            &["run", "--duration", "30m", "--server", "profile-b/go"][..],
            "add --mode soak",
        ),
        (
            &[
                "run",
                "--mode",
                "soak",
                "--duration",
                "30m",
                "--scenario",
                "burst",
                "--server",
                "profile-b/go",
            ][..],
            "steady and churn only",
        ),
    ] {
        let out = wscbench()
            .args(args)
            .env("DOCKER_HOST", "unix:///nonexistent.sock")
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {err}");
        assert!(errors[0].contains(says), "{args:?}: {err}");
        assert_ne!(out.status.code(), Some(0), "{args:?}");
    }
}
