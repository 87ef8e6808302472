//! End to end with the real Docker engine, k6 and every server: a smoke-mode run of every
//! server × scenario, its report, and an interrupted run that must leave no container behind.
//!
//! These need the machine that `scripts/setup` prepares, so they are ignored by a plain
//! `cargo test`; `scripts/test` runs them with `--ignored`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::wscbench;
use serde_json::Value;
use wscbench_results::{Outcome, RunResult};

fn docker_containers(filter: &str) -> Vec<String> {
    let out = Command::new("docker")
        .args(["ps", "-aq", "--filter", filter])
        .output()
        .expect("docker CLI");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn server_ids() -> Vec<String> {
    let out = wscbench().arg("list").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect()
}

#[test]
#[ignore = "needs Docker, k6 and every toolchain: run by scripts/test"]
fn a_smoke_run_of_every_server_and_scenario_reports_every_row_with_real_numbers() {
    let results = tempfile::tempdir().unwrap();
    let status = wscbench()
        .args(["run", "--mode", "smoke", "--results"])
        .arg(results.path())
        .status()
        .unwrap();
    assert!(
        status.success(),
        "wscbench run --mode smoke exited with {status}"
    );

    let run_dir = std::fs::read_dir(results.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let servers = server_ids();
    assert!(servers.len() >= 2, "{servers:?}");
    for server in &servers {
        for scenario in ["steady", "burst", "churn", "saturation"] {
            let path = run_dir.join(server).join(format!("{scenario}.json"));
            let result = RunResult::from_json(
                &std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
            )
            .unwrap();
            assert_eq!(
                result.outcome,
                Outcome::Ok,
                "{server} {scenario}: {:?}",
                result.outcome_detail
            );
            assert!(
                !result.series.is_empty(),
                "{server} {scenario}: no docker stats samples"
            );
            assert!(
                result.derived.server.peak_mem_bytes > 0,
                "{server} {scenario}: no memory measured"
            );
            let stats = result.server_stats.as_ref().expect("server counters");
            if scenario == "churn" {
                assert!(
                    stats.connections_total > 0,
                    "{server} churn: no connections"
                );
            } else {
                assert!(
                    result.derived.throughput_msgs_per_s > 0.0,
                    "{server} {scenario}: zero throughput"
                );
            }
        }
    }

    let report = wscbench()
        .args(["report", "--format", "json"])
        .arg(results.path())
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let text = report.to_string();
    for title in ["Steady", "Burst", "Churn", "Saturation", "Binary sizes"] {
        assert!(text.contains(title), "report lacks a {title} table");
    }
    let markdown = wscbench()
        .args(["report", "--format", "markdown"])
        .arg(results.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&markdown.stdout).contains("| Language |"));
    assert!(
        docker_containers("label=wscbench.run").is_empty(),
        "containers left behind"
    );
}

#[test]
#[ignore = "needs Docker, k6 and the Go toolchain: run by scripts/test"]
fn sigint_mid_run_removes_every_container_keeps_results_and_exits_130() {
    let results = tempfile::tempdir().unwrap();
    let mut child = wscbench()
        .args([
            "run",
            "--server",
            "profile-b/go",
            "--scenario",
            "steady",
            "--scenario",
            "burst",
            "--mode",
            "quick",
            "--results",
        ])
        .arg(results.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until k6 is running, then interrupt.
    let deadline = Instant::now() + Duration::from_secs(120);
    while docker_containers("label=wscbench.role=loadgen").is_empty() {
        assert!(Instant::now() < deadline, "k6 never started");
        assert!(child.try_wait().unwrap().is_none(), "wscbench exited early");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    // `kill -INT` sends what Ctrl-C sends.
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "wscbench did not stop after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(130));
    assert!(
        docker_containers("label=wscbench.run").is_empty(),
        "containers left behind"
    );

    let run_dir = std::fs::read_dir(results.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let steady = RunResult::from_json(
        &std::fs::read_to_string(run_dir.join("profile-b/go/steady.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(steady.outcome, Outcome::Interrupted);
    assert!(!run_dir.join("profile-b/go/burst.json").exists());
    let metadata: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(metadata["status"], "interrupted");
}
