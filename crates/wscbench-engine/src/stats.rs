//! Docker stats math: CPU percent and memory exactly as the docker CLI computes them.
//!
//! CPU: `(Δ container usage / Δ system usage) × online CPUs × 100`, from one response's
//! `cpu_stats` and `precpu_stats`. Memory: usage minus inactive page cache
//! (`total_inactive_file` on cgroup v1, `inactive_file` on cgroup v2, `cache` on old engines).

use bollard::models::ContainerStatsResponse;

/// CPU use in percent of one core (200.0 = two cores busy); 0 when there is no previous sample yet.
pub fn cpu_percent(stats: &ContainerStatsResponse) -> f64 {
    let (Some(cpu), Some(pre)) = (&stats.cpu_stats, &stats.precpu_stats) else {
        return 0.0;
    };
    let total = |c: &bollard::models::ContainerCpuStats| {
        c.cpu_usage
            .as_ref()
            .and_then(|u| u.total_usage)
            .unwrap_or(0)
    };
    let cpu_delta = total(cpu) as f64 - total(pre) as f64;
    let system_delta =
        cpu.system_cpu_usage.unwrap_or(0) as f64 - pre.system_cpu_usage.unwrap_or(0) as f64;
    let online = match cpu.online_cpus {
        Some(n) if n > 0 => n as f64,
        _ => cpu
            .cpu_usage
            .as_ref()
            .and_then(|u| u.percpu_usage.as_ref())
            .map_or(0, Vec::len) as f64,
    };
    if system_delta > 0.0 && cpu_delta > 0.0 {
        cpu_delta / system_delta * online * 100.0
    } else {
        0.0
    }
}

/// The container's CPU time used so far (cgroup `total_usage`), in milliseconds.
pub fn cpu_used_ms(stats: &ContainerStatsResponse) -> Option<f64> {
    let ns = stats.cpu_stats.as_ref()?.cpu_usage.as_ref()?.total_usage?;
    (ns > 0).then(|| ns as f64 / 1e6)
}

/// Memory in use without the page cache, in bytes, as `docker stats` shows it.
pub fn memory_bytes(stats: &ContainerStatsResponse) -> u64 {
    let Some(mem) = &stats.memory_stats else {
        return 0;
    };
    let usage = mem.usage.unwrap_or(0);
    let Some(detail) = &mem.stats else {
        return usage;
    };
    let cache = detail
        .get("total_inactive_file")
        .or_else(|| detail.get("inactive_file"))
        .or_else(|| detail.get("cache"))
        .copied()
        .unwrap_or(0);
    if cache < usage { usage - cache } else { usage }
}

/// The number of CPUs the host reports in a stats response (for the CPU ceiling).
pub fn online_cpus(stats: &ContainerStatsResponse) -> Option<u32> {
    stats.cpu_stats.as_ref()?.online_cpus.filter(|n| *n > 0)
}
