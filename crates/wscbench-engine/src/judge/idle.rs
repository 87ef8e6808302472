//! The idle-capacity scenario's judgement: from the per-second samples (the server's
//! connections and memory), the most idle clients held, the memory each costs and what ended
//! the ramp. Pure functions; the rule is in docs/methodology.md ("Idle capacity").

use wscbench_results::{ErrorCounts, FailedSide, IdleCapacity, IdleLimit, Outcome, Sample};

/// The run is stopped when the server's memory reaches this share of its limit.
pub const MEMORY_NEAR_LIMIT: f64 = 0.9;

/// True when `mem_bytes` is near enough the limit to stop adding clients.
pub fn near_limit(mem_bytes: u64, limit_bytes: u64) -> bool {
    limit_bytes > 0 && mem_bytes as f64 >= MEMORY_NEAR_LIMIT * limit_bytes as f64
}

/// How a run ended, as the idle-capacity judgement reads it.
#[derive(Debug, Clone, Default)]
pub struct Ending<'a> {
    /// The runner stopped it for memory.
    pub stopped_near_limit: bool,
    /// The clients' errors, with their reasons.
    pub errors: Option<&'a ErrorCounts>,
    /// The outcome, when the server died.
    pub died: Option<Outcome>,
    /// Why, when the load generator failed.
    pub loadgen_failed: Option<String>,
}

/// Which side client errors came from, and the evidence: a connect with no local port left is
/// the kernel's limit, k6 out of open files the load generator's, refused, unanswered or
/// closed connections the server's.
pub fn failed_side(errors: &ErrorCounts, connections_held: u64) -> (FailedSide, String) {
    let reason = |r: &str| errors.failed_connect_reasons.get(r).copied().unwrap_or(0);
    if reason("ports") > 0 {
        return (
            FailedSide::Kernel,
            format!(
                "{} connects found no local port left on their source address",
                reason("ports")
            ),
        );
    }
    if reason("files") > 0 {
        return (
            FailedSide::LoadGenerator,
            format!(
                "{} connects failed on k6's own open-file limit",
                reason("files")
            ),
        );
    }
    let server: Vec<String> = [
        ("refused", "refused"),
        ("timeout", "left without a handshake"),
        ("handshake", "answered without an upgrade"),
        ("other", "failed otherwise"),
    ]
    .iter()
    .filter(|(r, _)| reason(r) > 0)
    .map(|(r, words)| format!("{} connects {words}", reason(r)))
    .chain(
        (errors.abnormal_closes > 0)
            .then(|| format!("{} clients closed abnormally", errors.abnormal_closes)),
    )
    .collect();
    if server.is_empty() {
        return (
            FailedSide::Unknown,
            format!("{} script errors", errors.script_errors),
        );
    }
    (
        FailedSide::Server,
        format!("{}, at {connections_held} connections", server.join(", ")),
    )
}

/// The idle capacity of a run from its series, the server's memory limit and how it ended.
pub fn idle_capacity(series: &[Sample], limit_bytes: u64, ending: &Ending) -> IdleCapacity {
    let clients_held = series
        .iter()
        .filter_map(|s| s.connections)
        .max()
        .unwrap_or(0);
    let errors = ending.errors.map_or(0, ErrorCounts::total);
    // Each memory's least-squares slope against the server's connections, over the ramp up
    // to the most connections: after it, clients leave and a server that keeps what it
    // allocated (Go's heap, an allocator's free lists) would pull the slope down. A sample
    // with no memory read yet (the first, 0) says nothing.
    let ramp_end = series
        .iter()
        .position(|s| s.connections == Some(clients_held))
        .map_or(series.len(), |i| i + 1);
    let ramp = &series[..ramp_end];
    let per_client = |mem: fn(&Sample) -> Option<u64>| {
        let points: Vec<(f64, f64)> = ramp
            .iter()
            .filter(|s| s.server_mem_bytes.is_some_and(|m| m > 0))
            .filter_map(|s| Some((s.connections? as f64, mem(s)? as f64)))
            .collect();
        crate::judge::series::least_squares_slope(&points)
    };
    let limited_by = match (ending.died, &ending.loadgen_failed) {
        (Some(outcome), _) => IdleLimit::ServerDied {
            outcome: outcome.as_str().to_string(),
        },
        (None, Some(detail)) => IdleLimit::LoadgenFailed {
            detail: detail.clone(),
        },
        (None, None) if ending.stopped_near_limit => IdleLimit::MemoryNearLimit,
        (None, None) if errors > 0 => {
            let (side, evidence) = failed_side(ending.errors.unwrap(), clients_held);
            IdleLimit::ClientErrors {
                errors,
                side,
                evidence,
            }
        }
        _ => IdleLimit::AllHeld,
    };
    IdleCapacity {
        clients_held,
        bytes_per_client: per_client(|s| s.server_mem_bytes),
        user_bytes_per_client: per_client(|s| s.server_anon_bytes),
        kernel_bytes_per_client: per_client(|s| s.server_kernel_bytes),
        loadgen_bytes_per_client: per_client(|s| Some(s.loadgen_mem_bytes)),
        peak_mem_bytes: series
            .iter()
            .filter_map(|s| s.server_mem_bytes)
            .max()
            .unwrap_or(0),
        memory_limit_bytes: limit_bytes,
        limited_by,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clients ramp up 1,000 a second, each costing the server 20 KiB over a 4 MiB base (12
    /// KiB of it user space, 8 KiB the kernel's) and k6 6 KiB over 30 MiB.
    fn ramp(seconds: u64) -> Vec<Sample> {
        (0..=seconds)
            .map(|s| Sample {
                t_ms: s * 1000,
                connections: Some(s * 1000),
                server_mem_bytes: Some((4 << 20) + s * 1000 * 20 * 1024),
                server_anon_bytes: Some((3 << 20) + s * 1000 * 12 * 1024),
                server_kernel_bytes: Some((1 << 20) + s * 1000 * 8 * 1024),
                loadgen_mem_bytes: (30 << 20) + s * 1000 * 6 * 1024,
                ..Sample::default()
            })
            .collect()
    }

    #[test]
    fn the_cost_is_fitted_over_the_ramp_up_not_over_clients_leaving() {
        let mut series = vec![Sample {
            connections: Some(0),
            server_mem_bytes: Some(0),
            ..Sample::default()
        }];
        series.extend(ramp(10));
        // Every client left; the memory stayed.
        series.push(Sample {
            t_ms: 11_000,
            connections: Some(0),
            server_mem_bytes: Some((4 << 20) + 10_000 * 20 * 1024),
            ..Sample::default()
        });
        let idle = idle_capacity(&series, 512 << 20, &Ending::default());
        assert!((idle.bytes_per_client.unwrap() - 20_480.0).abs() < 1e-6);
    }

    #[test]
    fn a_clients_cost_is_split_into_user_space_and_kernel_and_the_load_generators() {
        let idle = idle_capacity(&ramp(10), 512 << 20, &Ending::default());
        let near = |x: Option<f64>, want: f64| (x.unwrap() - want).abs() < 1e-6;
        assert!(near(idle.user_bytes_per_client, 12_288.0));
        assert!(near(idle.kernel_bytes_per_client, 8_192.0));
        assert!(near(idle.loadgen_bytes_per_client, 6_144.0));
    }

    #[test]
    fn bytes_per_client_is_the_slope_of_memory_against_connections() {
        let idle = idle_capacity(&ramp(10), 512 << 20, &Ending::default());
        assert_eq!(idle.clients_held, 10_000);
        assert!((idle.bytes_per_client.unwrap() - 20_480.0).abs() < 1e-6);
        assert_eq!(idle.limited_by, IdleLimit::AllHeld);
        assert_eq!(idle.peak_mem_bytes, (4 << 20) + 10_000 * 20 * 1024);
    }

    #[test]
    fn what_ended_the_ramp_is_death_then_the_load_generator_then_memory_then_errors() {
        let errors = ErrorCounts {
            failed_connects: 5,
            failed_connect_reasons: [("refused".to_string(), 5)].into(),
            ..ErrorCounts::default()
        };
        let ending = |died, loadgen_failed: Option<&str>, stopped_near_limit| Ending {
            stopped_near_limit,
            errors: Some(&errors),
            died,
            loadgen_failed: loadgen_failed.map(str::to_string),
        };
        let limit = |e: &Ending| idle_capacity(&ramp(3), 1 << 30, e).limited_by;
        assert_eq!(
            limit(&ending(Some(Outcome::OomKilled), Some("k6 exited"), true)),
            IdleLimit::ServerDied {
                outcome: "oom_killed".into()
            }
        );
        assert_eq!(
            limit(&ending(None, Some("k6 exited"), true)),
            IdleLimit::LoadgenFailed {
                detail: "k6 exited".into()
            }
        );
        assert_eq!(limit(&ending(None, None, true)), IdleLimit::MemoryNearLimit);
        assert_eq!(
            limit(&ending(None, None, false)),
            IdleLimit::ClientErrors {
                errors: 5,
                side: FailedSide::Server,
                evidence: "5 connects refused, at 3000 connections".into()
            }
        );
    }

    #[test]
    fn client_errors_are_the_kernels_the_load_generators_or_the_servers_by_their_reasons() {
        let with = |reasons: &[(&str, u64)], abnormal_closes: u64| ErrorCounts {
            failed_connects: reasons.iter().map(|r| r.1).sum(),
            abnormal_closes,
            failed_connect_reasons: reasons.iter().map(|(r, n)| (r.to_string(), *n)).collect(),
            ..ErrorCounts::default()
        };
        let side = |e: ErrorCounts| failed_side(&e, 19_000);
        assert_eq!(
            side(with(&[("ports", 7), ("refused", 1)], 0)),
            (
                FailedSide::Kernel,
                "7 connects found no local port left on their source address".into()
            )
        );
        assert_eq!(side(with(&[("files", 2)], 0)).0, FailedSide::LoadGenerator);
        assert_eq!(
            side(with(&[("timeout", 40)], 12)),
            (
                FailedSide::Server,
                "40 connects left without a handshake, 12 clients closed abnormally, at 19000 connections".into()
            )
        );
        assert_eq!(side(with(&[], 0)).0, FailedSide::Unknown);
    }

    #[test]
    fn memory_is_near_the_limit_from_ninety_percent() {
        assert!(!near_limit(460 << 20, 512 << 20));
        assert!(near_limit(461 << 20, 512 << 20));
        assert!(!near_limit(1 << 30, 0), "no limit, never near it");
    }

    #[test]
    fn a_server_never_read_has_no_slope() {
        let series = vec![Sample::default(); 3];
        let idle = idle_capacity(&series, 512 << 20, &Ending::default());
        assert_eq!((idle.clients_held, idle.bytes_per_client), (0, None));
    }
}
