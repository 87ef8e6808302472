//! Docker stats math: CPU percent and memory exactly as the docker CLI computes them.
//!
//! CPU: `(Δ container usage / Δ system usage) × online CPUs × 100`, from one response's
//! `cpu_stats` and `precpu_stats`. Memory: usage minus inactive page cache
//! (`total_inactive_file` on cgroup v1, `inactive_file` on cgroup v2, `cache` on old engines).
//! And the memory split into its user-space and its kernel part ([`anon_bytes`],
//! [`kernel_bytes`]), which `docker stats` does not show.

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

/// A `memory.stat` counter of a Docker stats response, by its v2 or its v1 (hierarchical
/// first) name.
fn stat(stats: &ContainerStatsResponse, names: &[&str]) -> Option<u64> {
    let detail = stats.memory_stats.as_ref()?.stats.as_ref()?;
    names.iter().find_map(|n| detail.get(*n).copied())
}

/// The container's anonymous (user-space) memory: what its processes allocated, in bytes:
/// `anon` on cgroup v2, `total_rss` (or `rss`) on v1.
pub fn anon_bytes(stats: &ContainerStatsResponse) -> Option<u64> {
    stat(stats, &["anon", "total_rss", "rss"])
}

/// The kernel's memory charged to the container, in bytes: on cgroup v2 its `kernel`
/// counter (kernels from 5.18), else `slab` + `sock` + `kernel_stack` + `pagetables` +
/// `percpu`; on v1, whose `memory.stat` has no kernel line, what the cgroup is charged
/// beyond anonymous memory and page cache (`usage` − `total_rss` − `total_cache`), which on
/// the kernels that charge kernel memory to v1 cgroups is slab, stacks and page tables
/// (sockets' buffers only where `memory.kmem.tcp` accounting is on).
pub fn kernel_bytes(stats: &ContainerStatsResponse) -> Option<u64> {
    let detail = stats.memory_stats.as_ref()?.stats.as_ref()?;
    if detail.contains_key("anon") {
        if let Some(k) = detail.get("kernel") {
            return Some(*k);
        }
        let parts = ["slab", "sock", "kernel_stack", "pagetables", "percpu"];
        return Some(parts.iter().filter_map(|n| detail.get(*n)).sum());
    }
    let usage = stats.memory_stats.as_ref()?.usage?;
    let rss = stat(stats, &["total_rss", "rss"])?;
    let cache = stat(stats, &["total_cache", "cache"])?;
    Some(usage.saturating_sub(rss + cache))
}

/// Where a container's cumulative CPU time lives on its host, by cgroup layout: v1's
/// `cpuacct.usage` (nanoseconds) under the cgroupfs or the systemd driver, then v2's
/// `cpu.stat` (`usage_usec`) under either.
const CGROUP_CPU_FILES: &[&str] = &[
    "cpuacct/docker/{id}/cpuacct.usage",
    "cpu,cpuacct/docker/{id}/cpuacct.usage",
    "cpuacct/system.slice/docker-{id}.scope/cpuacct.usage",
    "cpu,cpuacct/system.slice/docker-{id}.scope/cpuacct.usage",
    "docker/{id}/cpu.stat",
    "system.slice/docker-{id}.scope/cpu.stat",
];

/// The container's CPU time used so far, in milliseconds, read from its cgroup under `root`
/// (`/sys/fs/cgroup`) at the moment of the call, where the container runs on this host and
/// its cgroup is readable; `None` otherwise (a remote engine, an unknown layout), and the
/// caller keeps Docker's once-a-second reading. Unlike Docker's reading, which lags its
/// sample by about a second, this one can be taken at the same instant as the server's
/// delivery counter.
pub fn cgroup_cpu_used_ms(root: &std::path::Path, id: &str) -> Option<f64> {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    CGROUP_CPU_FILES.iter().find_map(|pattern| {
        let text = std::fs::read_to_string(root.join(pattern.replace("{id}", id))).ok()?;
        if pattern.ends_with("cpu.stat") {
            let usec: f64 = text
                .lines()
                .find_map(|line| line.strip_prefix("usage_usec "))?
                .trim()
                .parse()
                .ok()?;
            Some(usec / 1e3)
        } else {
            let ns: f64 = text.trim().parse().ok()?;
            Some(ns / 1e6)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bollard::models::ContainerMemoryStats;
    use std::collections::HashMap;

    fn response(usage: u64, stat: &[(&str, u64)]) -> ContainerStatsResponse {
        ContainerStatsResponse {
            memory_stats: Some(ContainerMemoryStats {
                usage: Some(usage),
                stats: Some(
                    stat.iter()
                        .map(|(k, v)| (k.to_string(), *v))
                        .collect::<HashMap<_, _>>(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn cgroup_v2_names_its_anonymous_and_kernel_memory() {
        let r = response(
            100,
            &[("anon", 60), ("kernel", 30), ("slab", 20), ("file", 10)],
        );
        assert_eq!((anon_bytes(&r), kernel_bytes(&r)), (Some(60), Some(30)));
        let older = response(
            100,
            &[("anon", 60), ("slab", 20), ("sock", 4), ("kernel_stack", 2)],
        );
        assert_eq!(kernel_bytes(&older), Some(26));
    }

    #[test]
    fn on_cgroup_v1_the_kernels_part_is_what_is_neither_anonymous_nor_cache() {
        let r = response(100, &[("total_rss", 50), ("rss", 49), ("total_cache", 20)]);
        assert_eq!((anon_bytes(&r), kernel_bytes(&r)), (Some(50), Some(30)));
        assert_eq!(
            kernel_bytes(&response(10, &[("total_rss", 50), ("total_cache", 20)])),
            Some(0)
        );
    }

    #[test]
    fn no_memory_stat_says_nothing() {
        let r = ContainerStatsResponse::default();
        assert_eq!((anon_bytes(&r), kernel_bytes(&r)), (None, None));
    }

    fn write(root: &std::path::Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_cgroup_v1_container_reads_its_cpu_in_nanoseconds_as_milliseconds() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "cpuacct/docker/abc123/cpuacct.usage",
            "2500000000\n",
        );
        assert_eq!(cgroup_cpu_used_ms(root.path(), "abc123"), Some(2500.0));
    }

    #[test]
    fn a_cgroup_v2_container_reads_usage_usec_from_cpu_stat() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "system.slice/docker-abc123.scope/cpu.stat",
            "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n",
        );
        assert_eq!(cgroup_cpu_used_ms(root.path(), "abc123"), Some(1500.0));
    }

    #[test]
    fn a_container_whose_cgroup_is_not_on_this_host_has_no_reading() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(cgroup_cpu_used_ms(root.path(), "abc123"), None);
        assert_eq!(
            cgroup_cpu_used_ms(root.path(), "../../etc"),
            None,
            "an id is hex only"
        );
    }
}
