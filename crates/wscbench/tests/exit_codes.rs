//! Exit codes from the outside, each exact: 0 when all went well, 1 for a failed check, 2 for
//! every usage error (each refusal of `run`), 3 for missing set-up (an unreachable engine,
//! named with its remedy within 2 s; a missing toolchain during build, run and verify);
//! `--help` lists them. 130 and 143 need a run to interrupt: tests/end_to_end.rs.

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
    unreachable_engine_with(wscbench().args(args))
}

fn unreachable_engine_with(cmd: &mut Command) -> (String, Duration) {
    let started = Instant::now();
    let out = cmd
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
    // The Go toolchain is asked before the engine: a stand-in answers for it.
    let bin = path_without_toolchains();
    let go = bin.path().join("go");
    std::fs::write(&go, "#!/bin/sh\necho go version go1.26 stand-in\n").unwrap();
    std::fs::set_permissions(&go, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (text, took) = unreachable_engine_with(
        wscbench()
            .args(["build", "--server", "profile-b/go"])
            .env("PATH", bin.path()),
    );
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
        // The population's knobs out of range, and a population the host cannot hold.
        (
            &["--scenario", "population", "--sweep", "room-size=0"][..],
            "not a whole number of at least 2",
        ),
        (
            &["--scenario", "population", "--sweep", "ping-s=0"][..],
            "not a positive number of seconds",
        ),
        (
            &["--scenario", "population", "--sweep", "churn=101"][..],
            "not a percentage from 0 to 100",
        ),
        (
            &["--scenario", "population", "--sweep", "users=30000"][..],
            "a population of 30000 users cannot run on this machine",
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
fn a_load_curve_step_above_what_k6_was_measured_to_receive_exits_2_before_any_engine_is_asked() {
    // A measurement as `wscbench loadgen-capacity` keeps it: 1,000 chats per CPU-second on
    // the native path over ws, so no machine's cores reach 2M deliveries/s.
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(
        cache.path().join("loadgen-capacity.json"),
        r#"{"paths":[{"measured_at":"20261128-030000","capacity":{"load_path":"native","transport":"ws","clients":50,"sender_rate_limit_per_s":0.0,"sender_frames_per_s":null,"received":10000,"received_per_s":1000.0,"loadgen_cpu_s":10.0,"loadgen_cpu_docker_s":10.0,"received_per_cpu_s":1000.0,"loadgen_peak_mem_bytes":1}}]}"#,
    )
    .unwrap();
    let results = tempfile::tempdir().unwrap();
    let run = |sweep: &str| {
        wscbench()
            .args([
                "run",
                "--server",
                "profile-b/go",
                "--scenario",
                "load-curve",
                "--sweep",
                sweep,
            ])
            .arg("--results")
            .arg(results.path())
            .env("WSCBENCH_CACHE", cache.path())
            .env("DOCKER_HOST", "unix:///nonexistent.sock")
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap()
    };
    let out = run("deliveries=100,2000000");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("steps of 2000000 deliveries/s are more than k6 can receive here")
            && errors[0].contains("1000 chats per CPU-second on the native path over ws")
            && errors[0].contains("20261128-030000"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(results.path()).unwrap().count(), 0);
    // A step within the ceiling passes this check and goes on to ask for the engine (exit 3).
    let out = run("deliveries=100");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A PATH with a shell and nothing else: no Go, no Rust, no Python, so no Zig.
fn path_without_toolchains() -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/bin/sh", bin.path().join("sh")).unwrap();
    bin
}

/// Runs wscbench with `args` on a PATH without the Zig toolchain and without an engine; the
/// one error line must name the toolchain, not the engine: the toolchain is asked first.
fn without_zig(args: &[&str]) {
    let bin = path_without_toolchains();
    let out = wscbench()
        .args(args)
        .env("PATH", bin.path())
        .env("DOCKER_HOST", "unix:///nonexistent.sock")
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
    assert!(
        errors[0].contains("profile-b/zig is built with zig, which is not installed here")
            && errors[0].contains("pip install ziglang"),
        "{args:?}: {stderr}"
    );
}

#[test]
fn build_without_the_zig_toolchain_exits_3_naming_it_before_any_engine_is_asked() {
    without_zig(&["build", "--server", "profile-b/zig"]);
}

#[test]
fn run_without_the_zig_toolchain_exits_3_naming_it_before_any_engine_is_asked() {
    let results = tempfile::tempdir().unwrap();
    let results = results.path().to_str().unwrap();
    without_zig(&["run", "--server", "profile-b/zig", "--results", results]);
}

#[test]
fn verify_without_the_zig_toolchain_exits_3_too() {
    without_zig(&["verify", "--server", "profile-b/zig"]);
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

/// A loopback HTTP server that answers every request `200 ok` and upgrades nothing: it
/// answers /health, and fails every WebSocket check.
fn answers_but_never_upgrades() -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
        }
    });
    port
}

#[test]
fn run_refuses_a_url_that_does_not_answer_with_3_and_writes_nothing() {
    // Port 9 (discard) on loopback: nothing listens there on these machines.
    let results = tempfile::tempdir().unwrap();
    let out = wscbench()
        .args(["run", "--url", "ws://127.0.0.1:9/ws", "--name", "nobody"])
        .arg("--results")
        .arg(results.path())
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("nothing answers at ws://127.0.0.1:9/ws"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(results.path()).unwrap().count(), 0);
}

#[test]
fn run_refuses_a_url_that_does_not_upgrade_with_1_naming_the_failed_checks() {
    let port = answers_but_never_upgrades();
    let url = format!("ws://127.0.0.1:{port}/ws");
    let results = tempfile::tempdir().unwrap();
    let out = wscbench()
        .args(["run", "--url", &url, "--name", "no-upgrade"])
        .arg("--results")
        .arg(results.path())
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let error = stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(error.contains(&format!("{url} failed verify")), "{error}");
    assert!(error.contains("join_ack: "), "{error}");
    assert!(error.contains("nothing was benchmarked"), "{error}");
    assert_eq!(std::fs::read_dir(results.path()).unwrap().count(), 0);
}

#[test]
fn run_refuses_url_beside_a_server_selection_and_a_name_that_is_not_safe_with_2() {
    for args in [
        &[
            "run",
            "--url",
            "ws://127.0.0.1:9/ws",
            "--name",
            "x",
            "--server",
            "profile-b/go",
        ][..],
        &["run", "--url", "ws://127.0.0.1:9/ws"],
        &["run", "--url", "ws://127.0.0.1:9/ws", "--name", "../x"],
        &["run", "--pid", "1"],
    ] {
        let out = wscbench().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
}

#[test]
fn a_runtime_the_host_lacks_exits_3_naming_it_before_any_engine_is_asked() {
    let results = tempfile::tempdir().unwrap();
    let results = results.path().to_str().unwrap();
    for args in [
        &["build", "--server", "extra/node-ws"][..],
        &["run", "--server", "extra/node-ws", "--results", results][..],
        &["verify", "--server", "extra/node-ws"][..],
    ] {
        let bin = path_without_toolchains();
        let out = wscbench()
            .args(args)
            .env("PATH", bin.path())
            .env("DOCKER_HOST", "unix:///nonexistent.sock")
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(
            stderr.contains("extra/node-ws runs on Node.js, which is not installed here"),
            "{args:?}: {stderr}"
        );
    }
}
