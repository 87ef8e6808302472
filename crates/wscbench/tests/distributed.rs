//! End to end with two real Docker engines: the server on the first, the load split over one
//! k6 on each with execution segments, against the same smoke run with one k6.
//!
//! Needs the machine `scripts/setup` prepares and a second engine, whose address is given in
//! `WSCBENCH_SECOND_ENGINE`; `scripts/test` starts one with `scripts/second-engine start`, runs
//! this with `--ignored`, and stops and removes the engine whatever happened.

use std::path::Path;
use std::process::Command;

mod common;

use common::wscbench;
use wscbench_results::{LatencySource, Outcome, RunResult};

const SERVER: &str = "profile-b/rust";

fn first_engine() -> String {
    std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".into())
}

/// The containers a run left on an engine (others may share the engine).
fn leftovers(engine: &str, run_id: &str) -> Vec<String> {
    let out = Command::new("docker")
        .args(["-H", engine, "ps", "-aq", "--filter"])
        .arg(format!("label=wscbench.run={run_id}"))
        .output()
        .unwrap_or_else(|e| panic!("these tests need the `docker` CLI ({e}); run scripts/setup"));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs saturation in smoke mode against the server with these extra flags; its one result.
fn saturation(results: &Path, extra: &[&str]) -> RunResult {
    let status = wscbench()
        .args([
            "run",
            "--scenario",
            "saturation",
            "--mode",
            "smoke",
            "--server",
            SERVER,
            "--format",
            "json",
            "--results",
        ])
        .arg(results)
        .args(extra)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(
        status.success(),
        "wscbench run {extra:?} exited with {status}"
    );
    let run = std::fs::read_dir(results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let file = run.join(SERVER).join("saturation.json");
    let result = RunResult::from_json(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        result.outcome,
        Outcome::Ok,
        "{extra:?}: {:?}",
        result.outcome_detail
    );
    result
}

fn within(a: u64, b: u64, share: f64) -> bool {
    (a as f64 - b as f64).abs() <= share * a.max(b) as f64
}

#[test]
#[ignore = "needs Docker, k6 and a second engine (scripts/second-engine): run by scripts/test"]
fn a_run_split_over_two_engines_matches_one_load_generator() {
    let second = std::env::var("WSCBENCH_SECOND_ENGINE").expect(
        "WSCBENCH_SECOND_ENGINE must name a second engine, e.g. $(scripts/second-engine start)",
    );
    let first = first_engine();
    let (one_dir, split_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let one = saturation(one_dir.path(), &[]);
    let split = saturation(
        split_dir.path(),
        &["--loadgen-engine", &first, "--loadgen-engine", &second],
    );

    let (k1, k2) = (one.k6.as_ref().unwrap(), split.k6.as_ref().unwrap());
    let (s1, s2) = (
        one.server_stats.as_ref().unwrap(),
        split.server_stats.as_ref().unwrap(),
    );
    // Deterministic: k6 splits the VUs of every stage between the segments, so the clients
    // (one session each) add up to the same total, half on each engine.
    assert_eq!(k2.sessions, k1.sessions, "clients in all");
    let instances = &split.distributed.as_ref().expect("a split run").instances;
    assert_eq!(instances.len(), 2);
    assert_eq!(instances[1].engine, second);
    // Every delivery is received, and the merged counters say so exactly.
    assert_eq!(
        k1.chat_received, s1.deliveries,
        "one k6 received every delivery"
    );
    assert_eq!(
        k2.chat_received, s2.deliveries,
        "two k6 received every delivery"
    );
    assert_eq!(
        instances
            .iter()
            .map(|i| i.chat_received.unwrap())
            .sum::<u64>(),
        k2.chat_received
    );
    assert_eq!(
        k2.chat_sent, s2.chat_in,
        "every chat sent reached the server"
    );
    // Rate-based: each client chats 5/s from a join that follows the ramp, its first chat a
    // random part of a period late, so two runs with one k6 already differ by up to ~1 % in
    // chats and deliveries (1,430 and 1,442 chats; 97,694 and 98,612 deliveries here). The
    // split run must agree with the single one as closely as two single runs do.
    assert!(
        within(k1.chat_sent, k2.chat_sent, 0.02),
        "chats sent: one k6 {}, two {}",
        k1.chat_sent,
        k2.chat_sent
    );
    assert!(
        within(s1.deliveries, s2.deliveries, 0.02),
        "deliveries: one k6 {}, two {}",
        s1.deliveries,
        s2.deliveries
    );
    // Merged latency: every chat a latency probe received is timed once, in the own-instance
    // histogram or in the cross-instance one. Probes are one client in `latency_probe_every`
    // of each instance, and every member of the room receives about as much, so the timed
    // chats are about that share of all received.
    assert_eq!(k2.latency_source, LatencySource::ResponseTime);
    let cross = split
        .distributed
        .as_ref()
        .unwrap()
        .cross_instance_latency
        .as_ref()
        .expect("chats crossed between the instances");
    // The cross-instance histogram times from the write, as the service time does.
    let service = k2
        .service_time
        .as_ref()
        .expect("service time beside response time");
    let timed = service.count.unwrap() + cross.count.unwrap();
    let share = k2.chat_received as f64 / k2.latency_probe_every.max(1) as f64;
    assert!(
        k2.latency_probe_every >= 1 && within(timed, share.round() as u64, 0.3),
        "timed {timed} of {} received, one client in {} a probe",
        k2.chat_received,
        k2.latency_probe_every
    );
    for latency in [&k2.latency, cross] {
        assert!(latency.p50_ms > 0.0 && latency.p50_ms <= latency.p95_ms);
        assert!(latency.p95_ms <= latency.p99_ms && latency.p99_ms <= latency.max_ms);
    }
    // Each engine's conditions are recorded, and nothing is left on either.
    assert_eq!(split.conditions.loadgen_engines.len(), 2);
    assert!(
        split
            .conditions
            .loadgen_engines
            .iter()
            .all(|e| e.machine_cores > 0)
    );
    for run in [&one.run_id, &split.run_id] {
        assert!(
            leftovers(&first, run).is_empty(),
            "run {run} left containers on {first}"
        );
        assert!(
            leftovers(&second, run).is_empty(),
            "run {run} left containers on {second}"
        );
    }
}
