//! CPU and memory from recorded docker stats responses, computed as the docker CLI does.

use bollard::models::ContainerStatsResponse;
use wscbench_engine::docker::stats::{cpu_percent, memory_bytes};

fn fixture(name: &str) -> ContainerStatsResponse {
    let path = format!(
        "{}/tests/fixtures/docker-stats/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn cgroup_v1_cpu_is_the_usage_delta_over_the_system_delta_times_online_cpus() {
    let stats = fixture("cgroup-v1.json");
    // (139560642 - 119381520) / (2426470000000 - 2424450000000) * 2 * 100
    let expected =
        (139_560_642.0 - 119_381_520.0) / (2_426_470_000_000.0 - 2_424_450_000_000.0) * 2.0 * 100.0;
    assert!(
        (cpu_percent(&stats) - expected).abs() < 1e-9,
        "{} vs {expected}",
        cpu_percent(&stats)
    );
}

#[test]
fn cgroup_v1_memory_subtracts_total_inactive_file_not_cache() {
    // usage 2326528, total_inactive_file 0, cache 16384: the CLI subtracts total_inactive_file.
    assert_eq!(memory_bytes(&fixture("cgroup-v1.json")), 2_326_528);
}

#[test]
fn cgroup_v2_memory_subtracts_inactive_file() {
    assert_eq!(
        memory_bytes(&fixture("cgroup-v2.json")),
        10_485_760 - 3_145_728
    );
}

#[test]
fn cgroup_v2_cpu_uses_online_cpus_without_percpu_usage() {
    let stats = fixture("cgroup-v2.json");
    assert!(
        cpu_percent(&stats) > 1.9 && cpu_percent(&stats) < 2.1,
        "{}",
        cpu_percent(&stats)
    );
}

#[test]
fn without_online_cpus_the_percpu_list_counts_the_cpus() {
    let mut stats = fixture("cgroup-v1.json");
    let with_online = cpu_percent(&stats);
    stats.cpu_stats.as_mut().unwrap().online_cpus = None;
    assert_eq!(
        stats
            .cpu_stats
            .as_ref()
            .unwrap()
            .cpu_usage
            .as_ref()
            .unwrap()
            .percpu_usage
            .as_ref()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(cpu_percent(&stats), with_online);
}

#[test]
fn the_first_sample_without_a_previous_reading_is_zero_not_garbage() {
    let mut stats = fixture("cgroup-v1.json");
    stats.precpu_stats = Some(Default::default());
    stats.precpu_stats.as_mut().unwrap().system_cpu_usage =
        stats.cpu_stats.as_ref().unwrap().system_cpu_usage;
    assert_eq!(cpu_percent(&stats), 0.0);
    let mut empty = fixture("cgroup-v1.json");
    empty.memory_stats = None;
    assert_eq!(memory_bytes(&empty), 0);
}

#[test]
fn an_old_engine_without_inactive_file_falls_back_to_cache() {
    let mut stats = fixture("cgroup-v1.json");
    let detail = stats.memory_stats.as_mut().unwrap().stats.as_mut().unwrap();
    detail.remove("total_inactive_file");
    detail.remove("inactive_file");
    assert_eq!(memory_bytes(&stats), 2_326_528 - 16_384);
}
