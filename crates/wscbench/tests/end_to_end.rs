//! End to end with the real Docker engine, k6 and every server: a smoke-mode run of every
//! server × scenario, its report, a variant and a sweep, and an interrupted run that must
//! leave no container behind.
//!
//! These need the machine that `scripts/setup` prepares, so they are ignored by a plain
//! `cargo test`; `scripts/test` runs them with `--ignored`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::wscbench;
use serde_json::Value;
use wscbench_results::{LatencySource, LoadParam, LoadPath, Outcome, RunResult};

fn docker_containers(filter: &str) -> Vec<String> {
    let out = Command::new("docker")
        .args(["ps", "-aq", "--filter", filter])
        .output()
        .unwrap_or_else(|e| {
            panic!("these tests need the `docker` CLI and an engine ({e}); run scripts/setup")
        });
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The servers a run without a selection takes: every one `wscbench list` shows but the
/// extra group's, which runs only when named.
fn server_ids() -> Vec<String> {
    let out = wscbench().arg("list").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        // A server's line starts at the margin; its transports are indented below it.
        .filter(|l| !l.starts_with(char::is_whitespace))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|id| !id.starts_with("extra/"))
        .map(String::from)
        .collect()
}

/// The one run directory under `results`.
fn only_run(results: &Path) -> PathBuf {
    std::fs::read_dir(results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

/// Runs `wscbench run ARGS --results <a temporary folder>` and asserts it succeeded; returns
/// the folder (removed when dropped) and the one run directory in it.
fn run_ok(args: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let results = tempfile::tempdir().unwrap();
    let status = wscbench()
        .arg("run")
        .args(args)
        .arg("--results")
        .arg(results.path())
        .status()
        .unwrap();
    assert!(
        status.success(),
        "wscbench run {} exited with {status}",
        args.join(" ")
    );
    let run_dir = only_run(results.path());
    (results, run_dir)
}

/// The standard output of `wscbench report --format FORMAT PATH`, which must succeed.
fn report(format: &str, path: &Path) -> String {
    let out = wscbench()
        .args(["report", "--format", format])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Reads `<run>/<server>/<scenario>.json` and checks what every ok result of `path` has.
fn ok_result(run_dir: &Path, server: &str, scenario: &str, path: LoadPath) -> RunResult {
    let file = run_dir.join(server).join(format!("{scenario}.json"));
    let result = RunResult::from_json(
        &std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display())),
    )
    .unwrap();
    assert_eq!(
        result.outcome,
        Outcome::Ok,
        "{server} {scenario} ({path}): {:?}",
        result.outcome_detail
    );
    assert_eq!(result.load_path, path);
    let k6 = result.k6.as_ref().expect("k6 metrics");
    assert_eq!(
        k6.latency_source,
        match path {
            LoadPath::Native => LatencySource::ResponseTime,
            LoadPath::Js => LatencySource::K6Trend,
        }
    );
    if path == LoadPath::Native {
        // Every chat the schedule meant to send went out: nothing held these servers back.
        let chats = k6.chats.expect("the native path records its schedule");
        assert!(
            chats.sent_per_intended().is_some_and(|s| s >= 0.99),
            "{server} {scenario}: sent / intended {chats:?}"
        );
        assert!(
            k6.service_time.is_some(),
            "service time beside response time"
        );
    }
    assert!(
        k6.chat_received > 0,
        "{server} {scenario} ({path}): nothing received"
    );
    result
}

#[test]
#[ignore = "needs Docker, k6 and every toolchain: run by scripts/test"]
fn a_smoke_run_of_every_server_and_scenario_reports_every_row_with_real_numbers() {
    let (results, run_dir) = run_ok(&["--mode", "smoke"]);
    let servers = server_ids();
    assert!(servers.len() >= 2, "{servers:?}");
    for server in &servers {
        for scenario in ["burst", "churn"] {
            let result = ok_result(&run_dir, server, scenario, LoadPath::Native);
            // The native client reads everything the server writes, whatever the shape.
            let received = result.derived.received_ratio.expect("the server delivered");
            assert!(
                received >= 0.99,
                "{server} {scenario}: the native load path received {:.1}% of deliveries",
                100.0 * received
            );
            assert!(
                !result.series.is_empty(),
                "{server} {scenario}: no docker stats samples"
            );
            assert!(
                result
                    .derived
                    .server
                    .as_ref()
                    .is_some_and(|u| u.peak_mem_bytes > 0),
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

    // The population: every level held, memory per user from the slope with its two parts,
    // CPU per 1,000 users and the pongs' latency.
    for server in &servers {
        let result = ok_result(&run_dir, server, "population", LoadPath::Native);
        let p = result.population.expect("population figures");
        assert_eq!(p.levels.len(), 3, "{server}: {p:?}");
        assert!(
            p.users_held >= 291 && p.limited_by == wscbench_results::IdleLimit::AllHeld,
            "{server}: {p:?}"
        );
        for bytes in [
            p.mem_bytes_per_user,
            p.user_bytes_per_user,
            p.kernel_bytes_per_user,
        ] {
            assert!(bytes.is_some(), "{server}: {p:?}");
        }
        assert!(
            p.mem_bytes_per_user.unwrap() > 0.0 && p.cpu_ms_per_s_per_1k_users.unwrap() > 0.0,
            "{server}: {p:?}"
        );
        assert!(p.pong_p99_ms.is_some(), "{server}: no pong timed: {p:?}");
    }

    let page =
        std::fs::read_to_string(run_dir.join("report.html")).expect("run writes report.html");
    assert!(page.contains("<svg"), "the run's HTML report has charts");

    let json: Value = serde_json::from_str(&report("json", results.path())).unwrap();
    let text = json.to_string();
    for title in ["Population", "Load curve", "Burst", "Churn", "Binary sizes"] {
        assert!(text.contains(title), "report lacks a {title} table");
    }
    assert!(report("markdown", results.path()).contains("| Language |"));
    assert!(
        docker_containers("label=wscbench.run").is_empty(),
        "containers left behind"
    );
}

#[test]
#[ignore = "needs Docker, k6 and the Go toolchain: run by scripts/test"]
fn the_js_load_path_still_runs_every_scenario_with_the_same_result_fields() {
    let (_results, run_dir) = run_ok(&[
        "--server",
        "profile-b/go",
        "--mode",
        "smoke",
        "--loadgen",
        "js",
        "--scenario",
        "steady",
        "--scenario",
        "burst",
        "--scenario",
        "churn",
        "--scenario",
        "saturation",
    ]);
    for scenario in ["steady", "burst", "churn", "saturation"] {
        ok_result(&run_dir, "profile-b/go", scenario, LoadPath::Js);
    }
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(manifest["load_path"], "js");
    assert_eq!(manifest["status"], "completed");
}

#[test]
#[ignore = "needs Docker, k6 and the Go toolchain: run by scripts/test"]
fn a_capacity_smoke_run_judges_every_step_and_the_idle_ramp_counts_its_clients() {
    let (results, run_dir) = run_ok(&[
        "--server",
        "profile-b/go",
        "--mode",
        "smoke",
        "--scenario",
        "capacity",
        "--scenario",
        "idle-capacity",
    ]);
    let capacity = ok_result(&run_dir, "profile-b/go", "capacity", LoadPath::Native);
    let c = capacity.capacity.expect("capacity figures");
    assert!(!c.steps.is_empty(), "no step measured");
    for step in &c.steps {
        assert_eq!(step.held, step.reasons.is_empty(), "{step:?}");
        assert!(step.to_ms > step.from_ms && step.chat_sent > 0, "{step:?}");
    }
    // Every step held up to the largest one counted, and the table says so.
    if let Some(held) = c.max_clients_held {
        assert!(
            c.steps
                .iter()
                .take_while(|s| s.clients <= held)
                .all(|s| s.held)
        );
    }
    let file = run_dir.join("profile-b/go/idle-capacity.json");
    let idle = RunResult::from_json(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(idle.outcome, Outcome::Ok, "{:?}", idle.outcome_detail);
    let i = idle.idle.expect("idle figures");
    assert!(i.clients_held >= 100, "{i:?}");
    let text = report("markdown", results.path());
    assert!(
        text.contains("### Capacity — most clients held at latency p95 < 50.0 ms"),
        "{text}"
    );
}

#[test]
#[ignore = "needs Docker, k6 and the Go toolchain: run by scripts/test"]
fn sigint_mid_run_removes_every_container_keeps_results_and_exits_130() {
    interrupt_mid_run("-INT", 130);
}

#[test]
#[ignore = "needs Docker, k6 and the Go toolchain: run by scripts/test"]
fn sigterm_mid_run_removes_every_container_keeps_results_and_exits_143() {
    interrupt_mid_run("-TERM", 143);
}

fn interrupt_mid_run(signal: &str, code: i32) {
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
            "--runs",
            "1",
            "--no-calibration",
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
    // `kill -INT` sends what Ctrl-C sends; `kill -TERM` what a CI cancel sends.
    assert!(
        Command::new("kill")
            .args([signal, &child.id().to_string()])
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
            "wscbench did not stop after {signal}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(code));
    assert!(
        docker_containers("label=wscbench.run").is_empty(),
        "containers left behind"
    );

    let run_dir = only_run(results.path());
    // The round's order is shuffled: whichever point ran first was interrupted, the other
    // never started.
    let written: Vec<PathBuf> = ["steady", "burst"]
        .iter()
        .map(|s| run_dir.join(format!("profile-b/go/{s}.json")))
        .filter(|p| p.exists())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let first = RunResult::from_json(&std::fs::read_to_string(&written[0]).unwrap()).unwrap();
    assert_eq!(first.outcome, Outcome::Interrupted);
    let metadata: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(metadata["status"], "interrupted");
}

#[test]
#[ignore = "needs Docker, k6 and the Go toolchain: run by scripts/test"]
fn a_variant_and_a_sweep_run_for_real_and_the_report_sets_them_across_the_knob() {
    // 2 rows × 2 values of 8 s smoke steady: about 45 s.
    let (_results, run_dir) = run_ok(&[
        "--server",
        "profile-b/go",
        "--scenario",
        "steady",
        "--variant",
        "default",
        "--variant",
        "gomaxprocs-1",
        "--sweep",
        "clients=5,10",
        "--mode",
        "smoke",
    ]);
    let mut deliveries = Vec::new();
    for server in ["profile-b/go", "profile-b/go@gomaxprocs-1"] {
        for clients in [5, 10] {
            let scenario = format!("steady+clients={clients}");
            let result = ok_result(&run_dir, server, &scenario, LoadPath::Native);
            assert_eq!(result.load_params[&LoadParam::Clients], clients as f64);
            let expected_env: &[&str] = if server.contains('@') {
                &["GOMAXPROCS=1"]
            } else {
                &[]
            };
            assert_eq!(result.conditions.variant_env, expected_env, "{server}");
            deliveries.push(result.server_stats.expect("server counters").deliveries);
        }
    }
    // The value reached k6: every chat goes to every other member, so 10 clients get
    // 10·9 deliveries per round of chats where 5 get 5·4.
    for pair in deliveries.chunks(2) {
        assert!(
            pair[1] > 2 * pair[0],
            "deliveries at 5 and 10 clients: {pair:?}"
        );
    }
    let text = report("markdown", &run_dir);
    for title in [
        "### Steady — Deliveries/s across clients",
        "### Steady — Deliveries/s across variant",
        "| profile-b/go@gomaxprocs-1 |",
    ] {
        assert!(text.contains(title), "no {title:?} in:\n{text}");
    }
    assert!(
        docker_containers("label=wscbench.run").is_empty(),
        "containers left behind"
    );
}

/// servers/profile-b/go built with its manifest's `build` command and started by hand on a
/// free loopback port, as a user starts a server for `run --url`; killed when dropped.
struct HandStarted {
    child: std::process::Child,
    port: u16,
}

impl HandStarted {
    fn profile_b_go() -> Self {
        let dir = common::root().join("servers/profile-b/go");
        let manifest = std::fs::read_to_string(dir.join("server.toml")).unwrap();
        let build = manifest
            .lines()
            .find_map(|l| l.strip_prefix("build = \""))
            .and_then(|l| l.strip_suffix('"'))
            .expect("a build command in server.toml");
        let status = Command::new("sh")
            .args(["-c", build])
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(status.success(), "{build}: {status}");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(dir.join("bin/server"))
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the server never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        HandStarted { child, port }
    }
}

impl Drop for HandStarted {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[ignore = "needs Docker, k6 and the Go toolchain: run by scripts/test"]
fn a_server_started_by_hand_is_benchmarked_by_url_with_its_pid_measured_and_marked_external() {
    let mut server = HandStarted::profile_b_go();
    let pid = server.child.id();
    let url = format!("ws://127.0.0.1:{}/ws", server.port);
    let (_results, run_dir) = run_ok(&[
        "--url",
        &url,
        "--name",
        "local-go",
        "--pid",
        &pid.to_string(),
        "--mode",
        "smoke",
    ]);
    for scenario in ["burst", "churn"] {
        let result = ok_result(&run_dir, "external/local-go", scenario, LoadPath::Native);
        assert_eq!(result.external_url.as_deref(), Some(url.as_str()));
        assert_eq!(
            result.server_usage_source,
            wscbench_results::UsageSource::Process { pid }
        );
        let stats = result
            .server_stats
            .as_ref()
            .expect("its /stats over the load");
        assert!(stats.deliveries > 0, "{scenario}: no deliveries");
        let latency = &result.k6.as_ref().unwrap().latency;
        assert!(latency.p95_ms > 0.0, "{scenario}: {latency:?}");
        let usage = result
            .derived
            .server
            .as_ref()
            .expect("CPU and memory from /proc");
        assert!(usage.peak_mem_bytes > 1 << 20, "{scenario}: {usage:?}");
        assert!(usage.cpu_seconds > 0.0, "{scenario}: {usage:?}");
    }
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "wscbench never stops a server it did not start"
    );
    let text = report("markdown", &run_dir);
    assert!(text.contains("External servers (by URL)"), "{text}");
    assert!(text.contains("local-go"), "{text}");
    let run_label = format!(
        "label=wscbench.run={}",
        run_dir.file_name().unwrap().to_string_lossy()
    );
    assert!(
        docker_containers(&run_label).is_empty(),
        "k6 containers removed"
    );
}
