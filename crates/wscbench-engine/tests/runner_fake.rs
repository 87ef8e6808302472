//! The runner against the fake engine (`fake_engine`): containers are local processes, so a
//! test can kill a server mid-run or interrupt a run and check what was recorded and that
//! nothing is left running.

mod fake_engine;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fake_engine::{FakeEngine, Fault, go_server, root};
use tokio::sync::watch;
use wscbench_engine::catalog;
use wscbench_engine::catalog::images::Image;
use wscbench_engine::runner::{
    self, External, Limits, Plan, PlannedServer, Progress, Setup, VerifyLevel,
};
use wscbench_results::{
    Conditions, LoadParam, LoadPath, Mode, Outcome, RunResult, Scenario, Transport, UsageSource,
};

fn plan(results_dir: &Path, scenarios: &[Scenario]) -> Plan {
    let server = catalog::discover(&root().join("servers"))
        .unwrap()
        .into_iter()
        .find(|s| s.id == "profile-b/go")
        .unwrap();
    Plan {
        servers: vec![PlannedServer::managed(server, None)],
        scenarios: scenarios.to_vec(),
        load_points: Vec::new(),
        mode: Mode::Smoke,
        soak_seconds: None,
        slo_p95_ms: 50.0,
        slo_p99_ms: 50.0,
        load_path: LoadPath::Js,
        repetitions: 1,
        precision_pct: None,
        adaptive: Default::default(),
        limits: Limits {
            cpus: 2.0,
            memory_bytes: 512 << 20,
            cpuset_server: None,
            cpuset_loadgen: None,
            loadgen_memory_bytes: None,
        },
        verify: VerifyLevel::Quick,
        conformance: false,
        loadgens: Vec::new(),
        server_address: None,
        pause_server: None,
        transports: Vec::new(),
        not_offered: Vec::new(),
        sweep: Default::default(),
        curve_steps: None,
        setup: Setup {
            run_id: "fake-run".into(),
            scenarios_dir: root().join("scenarios"),
            results_dir: results_dir.to_owned(),
            k6_image: "fake-k6".into(),
            images: vec![image("wsc-go")],
            tls: None,
            conditions: Conditions {
                server_cpus: 2.0,
                server_memory_bytes: 512 << 20,
                cpuset_server: None,
                cpuset_loadgen: None,
                machine_cores: 2,
                cpu_model: None,
                cpu_mhz: None,
                kernel: "test".into(),
                docker_version: "fake".into(),
                docker_api_version: "1.41".into(),
                k6_version: "v1.8.1".into(),
                loadgen_memory_bytes: None,
                container_hardening: Vec::new(),
                variant_args: Vec::new(),
                variant_env: Vec::new(),
                loadgen_engines: Vec::new(),
                server_address: None,
                pause_server: None,
                host_limits: None,
            },
        },
    }
}

/// An image as a fake engine's build leaves it.
fn image(tag: &str) -> Image {
    Image {
        tag: tag.into(),
        source_hash: "test".into(),
        binary_size_bytes: 1,
        image_size_bytes: 1,
        rebuilt: false,
        version: None,
    }
}

#[test]
fn a_two_key_sweep_runs_its_product_inside_each_repetition_every_server_at_each_value() {
    let dir = tempfile::tempdir().unwrap();
    let mut plan = plan(dir.path(), &[Scenario::Steady]);
    let go = plan.servers[0].server.clone();
    plan.servers.push(PlannedServer::managed(
        go.clone(),
        go.variant("gomaxprocs-1"),
    ));
    plan.repetitions = 2;
    plan.load_points = wscbench_engine::load::sweep::Sweep::new(vec![
        "clients=10,20".parse().unwrap(),
        "rate=1,2".parse().unwrap(),
    ])
    .unwrap()
    .points();
    let points: Vec<String> = plan
        .points()
        .iter()
        .map(|p| {
            format!(
                "{} {} {}",
                p.repetition.index,
                p.server.label(),
                p.result_path(Path::new("")).display()
            )
        })
        .collect();
    assert_eq!(points.len(), plan.len());
    assert_eq!(
        points[..5],
        [
            "1 profile-b/go profile-b/go/steady+clients=10+rate=1.rep-1.json",
            "1 profile-b/go@gomaxprocs-1 profile-b/go@gomaxprocs-1/steady+clients=10+rate=1.rep-1.json",
            "1 profile-b/go profile-b/go/steady+clients=10+rate=2.rep-1.json",
            "1 profile-b/go@gomaxprocs-1 profile-b/go@gomaxprocs-1/steady+clients=10+rate=2.rep-1.json",
            "1 profile-b/go profile-b/go/steady+clients=20+rate=1.rep-1.json",
        ]
    );
    assert_eq!(points.len(), 2 * 2 * 2 * 2);
    assert!(points[8].starts_with("2 profile-b/go profile-b/go/steady+clients=10+rate=1.rep-2"));
    let distinct: std::collections::BTreeSet<&String> = points.iter().collect();
    assert_eq!(
        distinct.len(),
        points.len(),
        "every point has a file of its own"
    );
    // Two rows × 4 load points × 2 repetitions of smoke steady (5 s) + 4 s each.
    assert_eq!(plan.estimate(), Duration::from_secs(16 * 9));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_variant_runs_the_same_image_with_its_environment_and_a_sweep_value_reaches_k6() {
    let dir = tempfile::tempdir().unwrap();
    let engine = FakeEngine::new(Fault::None);
    let mut plan = plan(dir.path(), &[Scenario::Steady]);
    let go = plan.servers[0].server.clone();
    let variant = go
        .variant("gomaxprocs-1")
        .expect("profile-b/go declares gomaxprocs-1");
    plan.servers = vec![PlannedServer::managed(go, Some(variant))];
    plan.load_points = vec![[(LoadParam::Clients, 20.0)].into()];
    let (_tx, rx) = watch::channel(false);
    let results = runner::execute(&engine, &plan, rx, &mut |_| {})
        .await
        .unwrap();

    let result = &results[0];
    assert_eq!(result.outcome, Outcome::Ok, "{:?}", result.outcome_detail);
    assert_eq!(result.variant.as_deref(), Some("gomaxprocs-1"));
    assert_eq!(result.conditions.variant_env, ["GOMAXPROCS=1"]);
    assert!(result.conditions.variant_args.is_empty());
    assert_eq!(result.load_params, [(LoadParam::Clients, 20.0)].into());
    assert!(
        dir.path()
            .join("profile-b/go@gomaxprocs-1/steady+clients=20.json")
            .is_file()
    );
    let specs = engine.specs.lock().unwrap();
    let (server, k6) = (&specs[0], &specs[1]);
    assert_eq!(server.image, "wsc-go", "the plain server's image");
    assert_eq!(server.env, ["GOMAXPROCS=1"]);
    assert_eq!(server.cmd[..2], ["--host", "127.0.0.1"]);
    assert!(
        server
            .name
            .contains("wsc-go-gomaxprocs-1-steady-clients20-r1"),
        "{}",
        server.name
    );
    assert!(k6.env.contains(&"CLIENTS=20".to_string()), "{:?}", k6.env);
    assert!(k6.env.contains(&"MODE=smoke".to_string()));
    assert!(!k6.env.iter().any(|e| e.starts_with("RATE=")));
    assert_eq!(engine.live(), 0);
}

fn read(path: PathBuf) -> RunResult {
    RunResult::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_oom_killed_mid_run_is_recorded_and_the_next_scenario_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let engine = FakeEngine::new(Fault::OomKillAfter(Duration::from_millis(2500)));
    let plan = plan(dir.path(), &[Scenario::Steady, Scenario::Burst]);
    let (_tx, rx) = watch::channel(false);
    let results = runner::execute(&engine, &plan, rx, &mut |_| {})
        .await
        .unwrap();

    assert_eq!(results.len(), 2);
    for (result, scenario) in results.iter().zip(["steady", "burst"]) {
        assert_eq!(
            result.outcome,
            Outcome::OomKilled,
            "{scenario}: {:?}",
            result.outcome_detail
        );
        assert_eq!(
            read(dir.path().join(result.relative_path())),
            *result,
            "written as returned"
        );
    }
    assert_eq!(engine.live(), 0, "every container removed");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_clean_run_is_ok_with_counters_samples_and_k6_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let engine = FakeEngine::new(Fault::None);
    let plan = plan(dir.path(), &[Scenario::Steady]);
    let (_tx, rx) = watch::channel(false);
    let results = runner::execute(&engine, &plan, rx, &mut |_| {})
        .await
        .unwrap();

    let result = &results[0];
    assert_eq!(result.outcome, Outcome::Ok, "{:?}", result.outcome_detail);
    assert!(result.series.len() >= 2, "one sample per second of load");
    assert_eq!(result.k6.as_ref().unwrap().chat_received, 621);
    // The verification traffic is outside the load window, and the fake k6 sent nothing.
    assert_eq!(result.server_stats.as_ref().unwrap().chat_in, 0);
    let server = result.derived.server.as_ref().unwrap();
    assert!((server.peak_cpu_percent - 40.0).abs() < 1e-9);
    assert_eq!(server.peak_mem_bytes, 8 << 20);
    assert_eq!(engine.started(), 2);
    assert_eq!(engine.live(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_row_s_conformance_is_recorded_once_before_its_first_load_outside_the_load_window() {
    let dir = tempfile::tempdir().unwrap();
    let engine = FakeEngine::new(Fault::None);
    let mut plan = plan(dir.path(), &[Scenario::Steady, Scenario::Churn]);
    plan.conformance = true;
    let (_tx, rx) = watch::channel(false);
    let mut phases = Vec::new();
    let results = runner::execute(&engine, &plan, rx, &mut |p| {
        if let runner::Progress::Phase(phase) = p {
            phases.push(phase);
        }
    })
    .await
    .unwrap();

    assert!(
        results.iter().all(|r| r.outcome == Outcome::Ok),
        "{results:?}"
    );
    assert_eq!(
        phases.iter().filter(|p| **p == "conformance").count(),
        1,
        "{phases:?}"
    );
    let path = dir.path().join("conformance/profile-b/go/ws.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let found = wscbench_results::ServerConformance::from_json(&text).unwrap();
    assert_eq!(found.server, "profile-b/go");
    assert!(found.cases.len() > 30, "{} cases", found.cases.len());
    assert!(found.passed(), "profile-b/go ignores no MUST: {text}");
    // The cases' chats are outside the load window, like the verification's.
    assert_eq!(results[0].server_stats.as_ref().unwrap().chat_in, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn k6_ending_without_a_summary_is_recorded_as_a_load_generator_failure() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = FakeEngine::new(Fault::None);
    engine.k6_writes_summary = false;
    let plan = plan(dir.path(), &[Scenario::Churn]);
    let (_tx, rx) = watch::channel(false);
    let results = runner::execute(&engine, &plan, rx, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(results[0].outcome, Outcome::LoadgenFailed);
    assert!(
        results[0]
            .outcome_detail
            .as_deref()
            .unwrap()
            .contains("no summary"),
        "{:?}",
        results[0].outcome_detail
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_mid_load_records_interrupted_skips_the_rest_and_removes_containers() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = FakeEngine::new(Fault::None);
    engine.k6_runs_for = Duration::from_secs(60);
    let plan = plan(dir.path(), &[Scenario::Steady, Scenario::Burst]);
    let (tx, rx) = watch::channel(false);
    let mut cancel = Some(tx);
    let results = runner::execute(&engine, &plan, rx, &mut |p| {
        if let runner::Progress::Tick { elapsed, .. } = p
            && elapsed >= Duration::from_secs(1)
            && let Some(tx) = cancel.take()
        {
            tx.send(true).unwrap();
        }
    })
    .await
    .unwrap();
    assert_eq!(results.len(), 1, "the second scenario never starts");
    assert_eq!(results[0].outcome, Outcome::Interrupted);
    // The round's order is shuffled: whichever ran first was interrupted, the other never ran.
    let (ran, skipped) = match results[0].scenario {
        Scenario::Steady => ("steady", "burst"),
        _ => ("burst", "steady"),
    };
    assert!(
        dir.path()
            .join(format!("profile-b/go/{ran}.json"))
            .is_file(),
        "the interrupted run is written"
    );
    assert!(
        !dir.path()
            .join(format!("profile-b/go/{skipped}.json"))
            .exists()
    );
    assert_eq!(engine.live(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_mid_scenario_is_recorded_as_crashed_with_its_partial_series() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = FakeEngine::new(Fault::CrashAfter(Duration::from_millis(3500)));
    engine.k6_runs_for = Duration::from_secs(60);
    let plan = plan(dir.path(), &[Scenario::Steady, Scenario::Burst]);
    let (_tx, rx) = watch::channel(false);
    let results = runner::execute(&engine, &plan, rx, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(results.len(), 2, "the next scenario still runs");
    let steady = &results[0];
    assert_eq!(
        steady.outcome,
        Outcome::ServerCrashed,
        "{:?}",
        steady.outcome_detail
    );
    assert!(
        !steady.series.is_empty(),
        "the samples taken before the crash are kept"
    );
    assert!(steady.duration_ms < 10_000, "no wait for k6's own end");
    assert_eq!(engine.live(), 0, "every container removed");
}

#[tokio::test(flavor = "multi_thread")]
async fn k6_killed_mid_run_is_a_load_generator_failure_and_the_server_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = FakeEngine::new(Fault::None);
    engine.k6_runs_for = Duration::from_secs(2);
    engine.k6_exit_code = 137;
    engine.k6_writes_summary = false;
    let plan = plan(dir.path(), &[Scenario::Saturation]);
    let (_tx, rx) = watch::channel(false);
    let results = runner::execute(&engine, &plan, rx, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(results[0].outcome, Outcome::LoadgenFailed);
    let detail = results[0].outcome_detail.as_deref().unwrap();
    assert!(
        detail.contains("137") && detail.contains("no summary"),
        "{detail}"
    );
    assert_eq!(engine.live(), 0, "the server is removed too");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stats_stream_that_dies_mid_run_never_hangs_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = FakeEngine::new(Fault::None);
    engine.usage_samples = Some(2);
    let plan = plan(dir.path(), &[Scenario::Steady]);
    let (_tx, rx) = watch::channel(false);
    let mut on = |_: runner::Progress<'_>| {};
    let run = runner::execute(&engine, &plan, rx, &mut on);
    let results = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the run ends although the stats stream stopped")
        .unwrap();
    let result = &results[0];
    assert_eq!(result.outcome, Outcome::Ok, "{:?}", result.outcome_detail);
    // Samples go on once a second with the last reading the stream gave.
    assert!(result.series.len() >= 2);
    assert_eq!(engine.live(), 0);
}

/// A small deterministic generator, so a failing seed can be replayed.
fn next_random(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *state >> 33
}

/// Interrupts at random moments (before, during and after the load) must leave no container,
/// no temporary file and no result that claims to be complete. N from `WSCBENCH_INTERRUPTS`
/// (default 6; `WSCBENCH_INTERRUPTS=20` for the README figure), seed from `WSCBENCH_SEED` (default: the clock; printed).
#[tokio::test(flavor = "multi_thread")]
async fn interrupts_at_random_moments_leave_no_container_and_no_temporary_file() {
    let n: usize = std::env::var("WSCBENCH_INTERRUPTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let seed: u64 = std::env::var("WSCBENCH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("WSCBENCH_SEED={seed}");
    let mut state = seed;
    let mut leaks = 0;
    for i in 0..n {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = FakeEngine::new(Fault::None);
        engine.k6_runs_for = Duration::from_secs(2);
        let plan = plan(dir.path(), &[Scenario::Steady, Scenario::Churn]);
        let (tx, rx) = watch::channel(false);
        let after = Duration::from_millis(next_random(&mut state) % 6000);
        let cancel = tokio::spawn(async move {
            tokio::time::sleep(after).await;
            let _ = tx.send(true);
        });
        let results = runner::execute(&engine, &plan, rx, &mut |_| {})
            .await
            .unwrap();
        cancel.abort();
        let temporary = walk(dir.path())
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "tmp"))
            .count();
        let live = engine.live();
        if live > 0 || temporary > 0 {
            leaks += 1;
            eprintln!(
                "interrupt {i} after {after:?}: {live} containers, {temporary} temporary files left"
            );
        }
        for result in &results {
            assert!(
                matches!(result.outcome, Outcome::Ok | Outcome::Interrupted),
                "interrupt {i}: {:?} {:?}",
                result.outcome,
                result.outcome_detail
            );
        }
    }
    eprintln!("{n} interrupts, {leaks} leaks");
    assert_eq!(leaks, 0);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// A native report of one k6 instance that received `received` chats with these latencies (µs).
fn native_report(instance: u32, received: u64, own_us: &[u64], cross_us: &[u64]) -> String {
    let buckets = |values: &[u64]| {
        values
            .iter()
            .map(|v| format!("[{v},1]"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let histogram = |values: &[u64]| {
        format!(
            r#"{{"lowest_trackable_us":1,"highest_trackable_us":60000000,"significant_figures":3,"buckets":[{}]}}"#,
            buckets(values)
        )
    };
    format!(
        r#"{{"format":"wscbench-native/1","instance":"k6-{instance}","instance_id":{instance},"process_cpu_ns":1000,
        "counters":{{"sessions":10,"sessions_closed":10,"chat_sent":40,"chat_received":{received}}},
        "latency_us":{},"cross_instance_latency_us":{}}}"#,
        histogram(own_us),
        histogram(cross_us)
    )
}

/// A plan whose load is split over `n` engines (all on this host).
fn split_plan(results_dir: &Path, n: usize) -> Plan {
    let mut plan = plan(results_dir, &[Scenario::Steady]);
    plan.load_path = LoadPath::Native;
    plan.loadgens = (1..=n)
        .map(|i| runner::LoadgenEngine {
            endpoint: format!("unix:///fake-{i}.sock"),
            api_host: "127.0.0.1".into(),
        })
        .collect();
    plan
}

/// Runs a plan split in two: k6 1 on the server's engine, k6 2 on `second`.
async fn run_split(dir: &Path, server_engine: &FakeEngine, second: &FakeEngine) -> RunResult {
    let plan = split_plan(dir, 2);
    let (_tx, rx) = watch::channel(false);
    let mut results = runner::execute_on(
        server_engine,
        &[server_engine, second],
        &plan,
        rx,
        &mut |_| {},
    )
    .await
    .unwrap();
    results.remove(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_split_run_resumes_every_instance_and_merges_their_reports() {
    let dir = tempfile::tempdir().unwrap();
    let mut server_engine = FakeEngine::new(Fault::None);
    server_engine.k6_native = Some(native_report(1, 300, &[1_000, 2_000], &[50_000]));
    let mut second = FakeEngine::new(Fault::None);
    second.k6_native = Some(native_report(2, 500, &[3_000], &[60_000, 70_000]));
    let result = &run_split(dir.path(), &server_engine, &second).await;
    assert_eq!(result.outcome, Outcome::Ok, "{:?}", result.outcome_detail);
    let k6 = result.k6.as_ref().unwrap();
    assert_eq!(k6.chat_received, 800, "counters add up");
    assert_eq!(k6.chat_sent, 80);
    assert_eq!(k6.latency.count, Some(3), "own-instance latencies only");
    assert!(
        (k6.latency.max_ms - 3.0).abs() < 0.01,
        "{}",
        k6.latency.max_ms
    );
    let split = result
        .distributed
        .as_ref()
        .expect("a split run records its instances");
    assert_eq!(split.execution_segment_sequence, "0,1/2,1");
    assert_eq!(split.instances.len(), 2);
    assert_eq!(split.instances[1].execution_segment, "1/2:1");
    assert_eq!(split.instances[1].chat_received, Some(500));
    assert!(split.start_skew_ms >= 0.0 && split.start_skew_ms < 1000.0);
    let cross = split.cross_instance_latency.as_ref().unwrap();
    assert_eq!(cross.count, Some(3));
    // Each instance's container is sampled apart and summed for the verdict.
    let sample = &result.series[1];
    assert_eq!(sample.loadgen_instances.len(), 2);
    assert!((sample.loadgen_cpu_percent - 80.0).abs() < 1e-9);
    assert!((split.instances[0].usage.peak_cpu_percent - 40.0).abs() < 1e-9);
    for instance in ["k6-1", "k6-2"] {
        assert!(
            walk(dir.path())
                .iter()
                .any(|p| p.ends_with(format!("{instance}/native.json"))),
            "one raw output folder per instance"
        );
    }
    assert_eq!((server_engine.live(), second.live()), (0, 0));
    assert_eq!((server_engine.started(), second.started()), (2, 1));
}

#[tokio::test(flavor = "multi_thread")]
async fn one_load_generator_failing_mid_run_fails_the_point_and_empties_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let mut server_engine = FakeEngine::new(Fault::None);
    server_engine.k6_runs_for = Duration::from_secs(60);
    let mut second = FakeEngine::new(Fault::None);
    second.k6_runs_for = Duration::from_secs(2);
    second.k6_exit_code = 137;
    second.k6_writes_summary = false;
    let started = Instant::now();
    let result = &run_split(dir.path(), &server_engine, &second).await;
    assert_eq!(result.outcome, Outcome::LoadgenFailed);
    let detail = result.outcome_detail.as_deref().unwrap();
    assert!(
        detail.contains("k6 2 of 2 on unix:///fake-2.sock") && detail.contains("137"),
        "{detail}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the other instance is not waited for"
    );
    assert_eq!(server_engine.live(), 0, "server and first k6 removed");
    assert_eq!(second.live(), 0, "the failed k6 removed on its own engine");
    assert_eq!(
        result.distributed.as_ref().unwrap().instances[1].exit_code,
        Some(137)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_split_instance_whose_k6_cannot_stamp_chats_fails_the_point() {
    let dir = tempfile::tempdir().unwrap();
    let mut server_engine = FakeEngine::new(Fault::None);
    server_engine.k6_native = Some(native_report(1, 300, &[1_000], &[]));
    let mut second = FakeEngine::new(Fault::None);
    // An older k6/x/chat: no instance_id, so 0.
    second.k6_native =
        Some(native_report(2, 500, &[1_000], &[]).replace(r#""instance_id":2,"#, ""));
    let result = run_split(dir.path(), &server_engine, &second).await;
    assert_eq!(result.outcome, Outcome::LoadgenFailed);
    let detail = result.outcome_detail.as_deref().unwrap();
    assert!(detail.contains("k6 2 reported instance 0"), "{detail}");
    assert_eq!((server_engine.live(), second.live()), (0, 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_that_stops_itself_ends_a_stepped_scenario_but_fails_a_fixed_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = FakeEngine::new(Fault::None);
    engine.k6_runs_for = Duration::from_secs(2);
    // exec.test.abort(): what capacity's monitor does at the step that broke.
    engine.k6_exit_code = 108;
    let plan = plan(
        dir.path(),
        &[Scenario::Capacity, Scenario::IdleCapacity, Scenario::Steady],
    );
    let (_tx, rx) = watch::channel(false);
    let results = runner::execute(&engine, &plan, rx, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(
        results[0].outcome,
        Outcome::Ok,
        "{:?}",
        results[0].outcome_detail
    );
    assert_eq!(
        results[1].outcome,
        Outcome::Ok,
        "{:?}",
        results[1].outcome_detail
    );
    // The idle ramp is judged from the series alone: the server's connections and memory.
    let idle = results[1].idle.as_ref().expect("idle figures");
    assert_eq!(idle.memory_limit_bytes, 512 << 20);
    assert_eq!(results[2].outcome, Outcome::LoadgenFailed);
    assert!(
        results[2]
            .outcome_detail
            .as_deref()
            .unwrap()
            .contains("108"),
        "{:?}",
        results[2].outcome_detail
    );
    assert_eq!(engine.live(), 0);
}

/// A native report whose step windows are `holds` (ms after `start`, epoch ms), each with
/// `chats` intended and sent and every one received by 49 others.
fn native_with_holds(start: u64, holds: &[(u64, u64, u64)]) -> String {
    let histogram = r#"{"lowest_trackable_us":1,"highest_trackable_us":60000000,"significant_figures":3,"buckets":[[2000,1]]}"#;
    let steps: Vec<String> = holds
        .iter()
        .map(|&(from, to, chats)| {
            format!(
                r#"{{"clients":50,"from_ms":{},"to_ms":{},"counters":{{"chat_sent":{chats},"chats_intended":{chats},"chats_sent_on_time":{chats},"chat_received":{}}},"latency_us":{histogram}}}"#,
                start + from,
                start + to,
                chats * 49
            )
        })
        .collect();
    format!(
        r#"{{"format":"wscbench-native/1","instance":"k6","process_cpu_ns":1000,
        "counters":{{"sessions":50,"sessions_closed":50,"chat_sent":500,"chat_received":24500}},
        "latency_us":{histogram},"steps":[{}]}}"#,
        steps.join(",")
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_load_curve_runs_its_levels_inside_one_point_and_writes_a_result_per_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = FakeEngine::new(Fault::None);
    engine.k6_runs_for = Duration::from_secs(7);
    engine.k6_native_at = Some(Box::new(|start| {
        native_with_holds(start, &[(500, 3000, 100), (3500, 6000, 400)])
    }));
    let mut plan = plan(dir.path(), &[Scenario::LoadCurve]);
    plan.load_path = LoadPath::Native;
    plan.load_points = wscbench_engine::load::sweep::run_points(
        &Default::default(),
        &[Scenario::LoadCurve],
        Mode::Smoke,
    );
    // One start of the server a round for both levels: the ramp, two levels, the last
    // level's rate a settle more, the quiet second (2 + 2 × (1 + 2) + 1 + 1 s) and one
    // overhead.
    assert_eq!(plan.round_starts().len(), 1);
    assert_eq!(
        plan.round_points().len(),
        2,
        "a point of the results per level"
    );
    assert_eq!(plan.estimate(), Duration::from_secs(10 + 4));
    let (_tx, rx) = watch::channel(false);
    let mut levels_seen = Vec::new();
    let results = runner::execute(&engine, &plan, rx, &mut |p| {
        if let Progress::Starting { levels, .. } = p {
            levels_seen.push(levels);
        }
    })
    .await
    .unwrap();

    assert_eq!(levels_seen, [2]);
    assert_eq!(
        engine.started(),
        2,
        "one server and one k6 for the whole curve"
    );
    let k6 = engine.specs.lock().unwrap()[1].clone();
    assert!(
        k6.env.contains(&"DELIVERIES=2450,9800".to_string()),
        "{:?}",
        k6.env
    );
    assert!(
        k6.env.contains(&"SLO_P99_MS=50".to_string()),
        "{:?}",
        k6.env
    );
    assert!(!k6.name.contains("deliveries"), "{}", k6.name);
    assert_eq!(results.len(), 2);
    for (result, (deliveries, chats)) in results.iter().zip([(2450.0, 100), (9800.0, 400)]) {
        assert_eq!(result.outcome, Outcome::Ok, "{:?}", result.outcome_detail);
        assert_eq!(
            result.load_params,
            [(LoadParam::Deliveries, deliveries)].into()
        );
        assert_eq!(
            read(dir.path().join(result.relative_path())),
            *result,
            "written as returned"
        );
        let k6 = result.k6.as_ref().unwrap();
        assert_eq!(k6.chats.unwrap().intended, chats, "its own window's chats");
        assert_eq!(k6.chat_received, chats * 49);
        let curve = result.curve.as_ref().expect("a curve step per level");
        assert_eq!(curve.offered_deliveries_per_s, deliveries);
        assert_eq!(curve.offered_deliveries, Some(chats * 49));
        // Its slice of the series: the samples of its rate change and its hold.
        assert!(!result.series.is_empty());
        assert!(
            result
                .series
                .iter()
                .all(|s| s.t_ms + 1000 > 500 && s.t_ms <= 6000 + 500)
        );
        assert_eq!(result.duration_ms, 2500, "k6's window of its hold");
    }
    assert!(results[1].series[0].t_ms > results[0].series[0].t_ms);
    assert!(
        dir.path()
            .join("raw/profile-b/go/load-curve/native.json")
            .is_file(),
        "one raw folder for the point, named without its levels"
    );
    assert_eq!(engine.live(), 0);
}

/// A judge that keeps one server undecided for ever and calls every other decided.
struct KeepsUndecided(&'static str);

impl runner::rounds::Judge for KeepsUndecided {
    fn judge(
        &self,
        results: &[RunResult],
    ) -> std::collections::BTreeMap<wscbench_results::PointKey, Option<wscbench_results::StopReason>>
    {
        results
            .iter()
            .map(|r| {
                let verdict =
                    (r.server_label() != self.0).then_some(wscbench_results::StopReason::Decided);
                (r.point(), verdict)
            })
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multi_round_run_adds_rounds_only_to_the_undecided_point_and_records_why_each_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let engine = FakeEngine::new(Fault::None);
    let mut plan = plan(dir.path(), &[Scenario::Steady]);
    let go = plan.servers[0].server.clone();
    plan.servers.push(PlannedServer::managed(
        go.clone(),
        go.variant("gomaxprocs-1"),
    ));
    plan.repetitions = 2;
    plan.adaptive = runner::rounds::Adaptive {
        max_rounds: 4,
        budget: None,
        seed: 7,
        calibrate_each: Some(Duration::from_millis(20)),
    };
    let (_tx, rx) = watch::channel(false);
    let mut rounds_seen = Vec::new();
    let output = runner::execute_rounds(
        &engine,
        &[],
        &plan,
        Some(&KeepsUndecided("profile-b/go@gomaxprocs-1")),
        rx,
        &mut |p| {
            if let Progress::Round { index, points, .. } = p {
                rounds_seen.push((index, points));
            }
        },
    )
    .await
    .unwrap();

    assert_eq!(rounds_seen, [(1, 2), (2, 2), (3, 1), (4, 1)]);
    let count = |label: &str| {
        output
            .results
            .iter()
            .filter(|r| r.server_label() == label)
            .count()
    };
    assert_eq!(count("profile-b/go"), 2, "decided after the minimum");
    assert_eq!(
        count("profile-b/go@gomaxprocs-1"),
        4,
        "undecided up to the most"
    );
    let stops: Vec<(String, u32, wscbench_results::StopReason)> = output
        .stops
        .iter()
        .map(|s| (s.point.clone(), s.rounds, s.reason))
        .collect();
    assert_eq!(
        stops,
        [
            (
                "profile-b/go steady".to_string(),
                2,
                wscbench_results::StopReason::Decided
            ),
            (
                "profile-b/go@gomaxprocs-1 steady".to_string(),
                4,
                wscbench_results::StopReason::MaxRounds
            ),
        ]
    );
    // Every result knows its round, its place in the shuffled order and the round's speed.
    for result in &output.results {
        let round = result.round.as_ref().expect("a round");
        assert!(round.position >= 1 && round.position <= round.points);
        assert!(round.machine_speed.is_some_and(|m| m.index > 0.0));
        assert!(result.outcome == Outcome::Ok, "{:?}", result.outcome_detail);
    }
    assert_eq!(output.rounds.len(), 4);
    let added = dir
        .path()
        .join("profile-b/go@gomaxprocs-1/steady.rep-4.json");
    assert!(added.is_file(), "an added round writes its own file");
}

/// One round of `scenarios` for profile-b/go, then rounds added (the judge never decides)
/// within a budget of `budget_s` seconds.
async fn rounds_within_a_budget(scenarios: &[Scenario], budget_s: u64) -> runner::RoundsOutput {
    let dir = tempfile::tempdir().unwrap();
    let engine = FakeEngine::new(Fault::None);
    let mut plan = plan(dir.path(), scenarios);
    plan.repetitions = 1;
    plan.adaptive = runner::rounds::Adaptive {
        max_rounds: 5,
        budget: Some(Duration::from_secs(budget_s)),
        seed: 3,
        calibrate_each: None,
    };
    let (_tx, rx) = watch::channel(false);
    runner::execute_rounds(
        &engine,
        &[],
        &plan,
        Some(&KeepsUndecided("profile-b/go")),
        rx,
        &mut |_| {},
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn added_rounds_stop_when_the_budget_leaves_no_room_for_the_next_point() {
    // A smoke steady point is planned at 8 s: a 1 s budget has no room for a second round.
    let output = rounds_within_a_budget(&[Scenario::Steady], 1).await;
    assert_eq!(output.results.len(), 1, "the minimum round runs, no more");
    assert_eq!(output.stops[0].reason, wscbench_results::StopReason::Budget);
}

#[tokio::test(flavor = "multi_thread")]
async fn points_that_ran_in_the_round_the_budget_cut_short_stopped_for_the_budget() {
    // Round 2 starts within the budget; its second point (8 s more) no longer fits.
    let output = rounds_within_a_budget(&[Scenario::Steady, Scenario::Burst], 20).await;
    assert_eq!(output.results.len(), 3, "two in round 1, one in round 2");
    let reasons: Vec<_> = output.stops.iter().map(|s| (s.rounds, s.reason)).collect();
    assert!(
        reasons
            .iter()
            .all(|(_, r)| *r == wscbench_results::StopReason::Budget),
        "{reasons:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_server_is_frozen_on_schedule_during_the_load_and_thawed_after() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = FakeEngine::new(Fault::None);
    engine.k6_runs_for = Duration::from_millis(3500);
    let mut plan = plan(dir.path(), &[Scenario::Steady]);
    plan.pause_server = Some("300ms/1s".parse().unwrap());
    let (_tx, rx) = watch::channel(false);
    let results = runner::execute(&engine, &plan, rx, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(
        results[0].outcome,
        Outcome::Ok,
        "{:?}",
        results[0].outcome_detail
    );
    let pauses = engine.pauses.lock().unwrap().len();
    assert!(
        (3..=4).contains(&pauses),
        "one pause a second of load: {pauses}"
    );
    assert_eq!(
        results[0].conditions.pause_server.as_deref(),
        Some("300ms/1s")
    );
    assert_eq!(
        engine.live(),
        0,
        "a frozen server is still stopped and removed"
    );
}

/// The profile-b Go server started by the test itself, as a user starts a server by hand
/// for `run --url`; killed when dropped.
struct HandStarted {
    child: Child,
    port: u16,
}

impl HandStarted {
    fn start() -> Self {
        let port = wscbench_engine::catalog::local::free_port().unwrap();
        let child = Command::new(go_server())
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the hand-started server never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HandStarted { child, port }
    }

    fn external(&self, usage: UsageSource) -> PlannedServer {
        PlannedServer::external_server(External {
            name: "local-go".into(),
            url: format!("ws://127.0.0.1:{}/ws", self.port),
            usage,
        })
    }
}

impl Drop for HandStarted {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_external_server_watched_by_its_pid_is_loaded_measured_and_left_running() {
    let dir = tempfile::tempdir().unwrap();
    let engine = FakeEngine::new(Fault::None);
    let mut server = HandStarted::start();
    let pid = server.child.id();
    let mut plan = plan(dir.path(), &[Scenario::Steady]);
    plan.servers = vec![server.external(UsageSource::Process { pid })];
    let (_tx, rx) = watch::channel(false);
    let results = runner::execute(&engine, &plan, rx, &mut |_| {})
        .await
        .unwrap();

    let result = &results[0];
    assert_eq!(result.outcome, Outcome::Ok, "{:?}", result.outcome_detail);
    assert_eq!(result.server.id, "external/local-go");
    assert_eq!(result.server.profile, "external");
    let url = format!("ws://127.0.0.1:{}/ws", server.port);
    assert_eq!(result.external_url.as_deref(), Some(url.as_str()));
    assert_eq!(result.server_usage_source, UsageSource::Process { pid });
    // Memory from the process's own VmRSS: a Go server holds megabytes.
    let usage = result
        .derived
        .server
        .as_ref()
        .expect("measured through /proc");
    assert!(usage.peak_mem_bytes > 1 << 20, "{usage:?}");
    assert!(result.series.iter().all(|s| s.server_mem_bytes.is_some()));
    assert!(
        result.server_stats.is_some(),
        "its /stats read over the load"
    );
    let specs = engine.specs.lock().unwrap();
    assert_eq!(specs.len(), 1, "only k6 is started");
    assert!(
        specs[0].env.contains(&format!("WS_URL={url}")),
        "k6 aims at the URL"
    );
    assert!(
        specs[0].name.contains("-ext-local-go-steady-"),
        "{}",
        specs[0].name
    );
    drop(specs);
    assert_eq!(engine.live(), 0, "k6 removed");
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "a server wscbench did not start is never stopped"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_external_server_without_pid_or_container_has_its_usage_absent_never_zero() {
    let dir = tempfile::tempdir().unwrap();
    let engine = FakeEngine::new(Fault::None);
    let server = HandStarted::start();
    let mut plan = plan(dir.path(), &[Scenario::Steady]);
    plan.servers = vec![server.external(UsageSource::Absent)];
    let (_tx, rx) = watch::channel(false);
    let results = runner::execute(&engine, &plan, rx, &mut |_| {})
        .await
        .unwrap();

    let result = &results[0];
    assert_eq!(result.outcome, Outcome::Ok, "{:?}", result.outcome_detail);
    assert_eq!(result.derived.server, None);
    assert!(!result.series.is_empty());
    assert!(
        result
            .series
            .iter()
            .all(|s| s.server_cpu_percent.is_none() && s.server_mem_bytes.is_none())
    );
    let json = result.to_json();
    assert!(
        !json.contains("server_cpu_percent"),
        "absent, not written as 0"
    );
    assert!(json.contains(r#""kind": "absent""#), "{json}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_external_pid_that_exits_mid_run_is_recorded_as_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let engine = FakeEngine::new(Fault::None);
    let mut server = HandStarted::start();
    let pid = server.child.id();
    let mut plan = plan(dir.path(), &[Scenario::Steady]);
    plan.servers = vec![server.external(UsageSource::Process { pid })];
    let (_tx, rx) = watch::channel(false);
    let mut killed = false;
    let results = runner::execute(&engine, &plan, rx, &mut |p| {
        if let Progress::Tick { .. } = p
            && !killed
        {
            // Killed, not reaped: a zombie is as gone as an exited process.
            server.child.kill().unwrap();
            killed = true;
        }
    })
    .await
    .unwrap();

    let result = &results[0];
    assert!(killed, "the load ran for at least a second");
    assert_eq!(
        result.outcome,
        Outcome::ServerCrashed,
        "{:?}",
        result.outcome_detail
    );
    assert_eq!(engine.live(), 0, "k6 removed");
}

#[test]
fn a_transport_the_server_does_not_offer_gets_no_point_and_the_others_one_each() {
    let dir = tempfile::tempdir().unwrap();
    let mut plan = plan(dir.path(), &[Scenario::Steady]);
    let mut server = plan.servers[0].server.clone();
    server.transports = vec![Transport::Ws, Transport::WsDeflate];
    server.not_offered = [
        ("wss".to_string(), "no TLS here (test)".to_string()),
        ("wss+deflate".to_string(), "no TLS here (test)".to_string()),
    ]
    .into();
    plan.servers[0].server = server;
    plan.transports = vec![Transport::Ws, Transport::Wss, Transport::WsDeflate];
    let transports: Vec<Transport> = plan.points().iter().map(|p| p.transport).collect();
    assert_eq!(transports, [Transport::Ws, Transport::WsDeflate]);
    assert_eq!(plan.len(), 2);
    let paths: Vec<PathBuf> = plan
        .points()
        .iter()
        .map(|p| p.result_path(Path::new("")))
        .collect();
    assert_eq!(
        paths,
        [
            PathBuf::from("profile-b/go/steady.json"),
            PathBuf::from("profile-b/go/steady.ws+deflate.json")
        ]
    );
}
