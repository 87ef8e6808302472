//! Test fixtures shared by the runner's unit tests: a minimal result to derive from.

use wscbench_results::RunResult;

/// The smallest result that parses, for `scenario` (its JSON name), with no figures.
pub fn blank(scenario: &str) -> RunResult {
    serde_json::from_value(serde_json::json!({
        "schema_version": wscbench_results::SCHEMA_VERSION,
        "run_id": "20261126-000000",
        "server": {"id": "profile-b/go", "image": "wsc-go", "language": "go",
                   "profile": "b", "framework": "gorilla", "source_hash": "abc"},
        "scenario": scenario, "mode": "quick",
        "conditions": {"server_cpus": 2.0, "server_memory_bytes": 536870912u64,
                       "machine_cores": 2, "kernel": "6.1", "docker_version": "20.10",
                       "docker_api_version": "1.41", "k6_version": "v1.8.1"},
        "started_at": "2026-11-26T00:00:00Z", "duration_ms": 0, "overhead_ms": 0,
        "outcome": "ok", "loadgen_bound": false,
        "errors": serde_json::to_value(wscbench_results::ErrorCounts::default()).unwrap(),
        "derived": serde_json::to_value(wscbench_results::Derived::default()).unwrap()
    }))
    .expect("a minimal result parses")
}
