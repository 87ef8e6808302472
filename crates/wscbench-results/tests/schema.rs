//! Reading result files: round trips, malformed files and newer schemas.

use wscbench_results::{ReadError, RunResult, SCHEMA_VERSION};

const MINIMAL: &str = r#"{
  "schema_version": 1, "run_id": "r1",
  "server": {"id":"profile-b/go","image":"wsc-go","language":"go","profile":"b","framework":"gorilla","source_hash":"abc"},
  "scenario": "steady", "mode": "smoke",
  "conditions": {"server_cpus":2.0,"server_memory_bytes":536870912,"machine_cores":2,"kernel":"6.1","docker_version":"20.10.24","docker_api_version":"1.41","k6_version":"v1.8.1"},
  "started_at": "2026-11-21T00:00:00Z", "duration_ms": 10000, "overhead_ms": 2000,
  "outcome": "ok",
  "errors": {"failed_connects":0,"abnormal_closes":0,"script_errors":0},
  "derived": {"throughput_msgs_per_s":1.0,"deliveries_per_s":9.0,"drop_rate_ratio":0.0,
    "server":{"peak_cpu_percent":1.0,"mean_cpu_percent":0.5,"peak_mem_bytes":1000,"cpu_limit_percent":200.0},
    "loadgen":{"peak_cpu_percent":1.0,"mean_cpu_percent":0.5,"peak_mem_bytes":1000,"cpu_limit_percent":200.0}},
  "loadgen_bound": false
}"#;

#[test]
fn a_minimal_result_file_parses_and_round_trips() {
    let result = RunResult::from_json(MINIMAL).unwrap();
    assert_eq!(result.server.id, "profile-b/go");
    assert!(result.series.is_empty());
    let again = RunResult::from_json(&result.to_json()).unwrap();
    assert_eq!(again, result);
}

#[test]
fn malformed_json_is_a_malformed_error_not_a_panic() {
    assert!(matches!(
        RunResult::from_json("{ not json"),
        Err(ReadError::Malformed { .. })
    ));
    assert!(matches!(
        RunResult::from_json(r#"{"schema_version":1}"#),
        Err(ReadError::Malformed { .. })
    ));
}

#[test]
fn a_newer_schema_version_is_refused_with_its_number() {
    let newer = MINIMAL.replace(
        "\"schema_version\": 1",
        &format!("\"schema_version\": {}", SCHEMA_VERSION + 1),
    );
    match RunResult::from_json(&newer) {
        Err(ReadError::TooNew { found }) => assert_eq!(found, SCHEMA_VERSION + 1),
        other => panic!("expected TooNew, got {other:?}"),
    }
}
