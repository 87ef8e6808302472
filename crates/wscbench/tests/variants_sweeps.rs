//! Variants and sweeps from the outside: `list --variants`, and every bad `run` of them
//! refused with one line and exit 2 before the results folder, a build or the engine.

use std::time::Duration;

use assert_cmd::Command;

fn wscbench() -> Command {
    let mut cmd = Command::cargo_bin("wscbench").unwrap();
    cmd.env(
        "WSCBENCH_ROOT",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
    )
    // Nothing here may reach an engine: one that is asked would fail with exit 3.
    .env("DOCKER_HOST", "unix:///nonexistent.sock")
    .timeout(Duration::from_secs(20));
    cmd
}

#[test]
fn list_shows_every_servers_variants() {
    let out = wscbench().args(["list", "--variants"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "  @gomaxprocs-1 (GOMAXPROCS=1)",
        "  @gomaxprocs-2 (GOMAXPROCS=2)",
        "  @tokio-1-worker (TOKIO_WORKER_THREADS=1)",
        "  @tokio-2-workers (TOKIO_WORKER_THREADS=2)",
    ] {
        assert_eq!(
            text.matches(line).count(),
            2,
            "{line} under both profiles:\n{text}"
        );
    }
    let plain = wscbench().arg("list").output().unwrap();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains('@'));
}

/// Runs `run` with `args`, expecting exit 2 with one error line that contains `says`, and
/// nothing written.
fn refused(args: &[&str], says: &str) {
    let results = tempfile::tempdir().unwrap();
    let out = wscbench()
        .arg("run")
        .args(args)
        .arg("--results")
        .arg(results.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let errors: Vec<&&str> = lines.iter().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
    assert!(errors[0].contains(says), "{args:?}: {stderr}");
    assert_eq!(
        std::fs::read_dir(results.path()).unwrap().count(),
        0,
        "{args:?}: no run folder"
    );
}

#[test]
fn an_unknown_variant_names_the_variants_of_the_selected_servers() {
    refused(
        &["--server", "profile-b/go", "--variant", "gomaxprocs-8"],
        "unknown variant \"gomaxprocs-8\": profile-b/go has gomaxprocs-1, gomaxprocs-2",
    );
    // A Rust variant is unknown to a Go server.
    refused(
        &["--server", "profile-b/go", "--variant", "tokio-1-worker"],
        "unknown variant \"tokio-1-worker\"",
    );
}

#[test]
fn a_sweep_key_the_scenario_does_not_take_is_refused() {
    refused(
        &["--scenario", "burst", "--sweep", "rate=1,2"],
        "--sweep rate: the burst scenario does not take it (it takes clients)",
    );
    // All four scenarios by default: churn does not take rate either.
    refused(&["--sweep", "rate=1"], "scenario does not take it");
}

#[test]
fn bad_sweep_values_and_keys_are_refused() {
    refused(
        &["--scenario", "saturation", "--sweep", "clients=100,many"],
        "\"many\" is not a positive whole number",
    );
    refused(
        &["--scenario", "saturation", "--sweep", "rate=-2"],
        "\"-2\" is not a positive number",
    );
    refused(
        &["--scenario", "saturation", "--sweep", "threads=2"],
        "unknown load parameter",
    );
    refused(
        &[
            "--scenario",
            "saturation",
            "--sweep",
            "clients=10",
            "--sweep",
            "clients=20",
        ],
        "--sweep clients is given twice",
    );
}

#[test]
fn a_plan_longer_than_the_bound_is_refused_and_the_bound_can_be_raised() {
    // 6 servers × (100 s + 4 s) × 13 values = 135.2 min with the seed's lengths.
    let sweep = "clients=10,20,30,40,50,60,70,80,90,100,110,120,130";
    refused(
        &[
            "--scenario",
            "saturation",
            "--sweep",
            sweep,
            "--mode",
            "seed",
        ],
        "this run would take about 136 min (78 points of load and set-up), more than --max-duration 120 min",
    );
    refused(
        &[
            "--server",
            "profile-b/go",
            "--variant",
            "all",
            "--scenario",
            "steady",
            "--max-duration",
            "2m",
            "--mode",
            "seed",
        ],
        "more than --max-duration 2 min",
    );
    // A soak's --duration counts: two 90-minute holds and their set-up are over 3 h.
    refused(
        &[
            "--lang",
            "go",
            "--lang",
            "zig",
            "--profile",
            "b",
            "--scenario",
            "steady",
            "--mode",
            "soak",
            "--duration",
            "90m",
        ],
        "this run would take about 181 min (2 points of load and set-up), more than --max-duration 120 min",
    );
    // Raised, the same plan gets past every check to the engine, which is not there (exit 3).
    let out = wscbench()
        .args([
            "run",
            "--scenario",
            "saturation",
            "--sweep",
            sweep,
            "--mode",
            "seed",
        ])
        .args(["--max-duration", "3h", "--results"])
        .arg(tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
}
