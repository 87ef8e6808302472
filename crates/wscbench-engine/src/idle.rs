//! The idle-capacity scenario's judgement: from the per-second samples (the server's
//! connections and memory), the most idle clients held, the memory each costs and what ended
//! the ramp. Pure functions; the rule is in docs/methodology.md ("Idle capacity").

use wscbench_results::{IdleCapacity, IdleLimit, Mode, Outcome, Sample};

/// The clients of each step in `mode` (`idle-capacity` in `scenarios/lib/modes.js`; a test
/// in `scenarios.rs` checks them): what the host limits are planned for.
pub fn steps(mode: Mode) -> &'static [u64] {
    match mode {
        Mode::Smoke => &[1_000, 2_000, 3_000],
        _ => &[10_000, 25_000, 50_000, 100_000, 150_000, 200_000],
    }
}

/// The run is stopped when the server's memory reaches this share of its limit.
pub const MEMORY_NEAR_LIMIT: f64 = 0.9;

/// True when `mem_bytes` is near enough the limit to stop adding clients.
pub fn near_limit(mem_bytes: u64, limit_bytes: u64) -> bool {
    limit_bytes > 0 && mem_bytes as f64 >= MEMORY_NEAR_LIMIT * limit_bytes as f64
}

/// The idle capacity of a run: `stopped_near_limit` when the runner stopped it for memory,
/// `errors` the clients' errors, `died` the outcome when the server died.
pub fn idle_capacity(
    series: &[Sample],
    limit_bytes: u64,
    stopped_near_limit: bool,
    errors: u64,
    died: Option<Outcome>,
) -> IdleCapacity {
    // Each memory's least-squares slope against the server's connections.
    let per_client = |mem: fn(&Sample) -> Option<u64>| {
        let points: Vec<(f64, f64)> = series
            .iter()
            .filter_map(|s| Some((s.connections? as f64, mem(s)? as f64)))
            .collect();
        crate::series::least_squares_slope(&points)
    };
    let limited_by = match (died, stopped_near_limit, errors) {
        (Some(outcome), _, _) => IdleLimit::ServerDied {
            outcome: outcome.as_str().to_string(),
        },
        (None, true, _) => IdleLimit::MemoryNearLimit,
        (None, false, errors) if errors > 0 => IdleLimit::ClientErrors { errors },
        _ => IdleLimit::AllHeld,
    };
    IdleCapacity {
        clients_held: series
            .iter()
            .filter_map(|s| s.connections)
            .max()
            .unwrap_or(0),
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
    fn a_clients_cost_is_split_into_user_space_and_kernel_and_the_load_generators() {
        let idle = idle_capacity(&ramp(10), 512 << 20, false, 0, None);
        let near = |x: Option<f64>, want: f64| (x.unwrap() - want).abs() < 1e-6;
        assert!(near(idle.user_bytes_per_client, 12_288.0));
        assert!(near(idle.kernel_bytes_per_client, 8_192.0));
        assert!(near(idle.loadgen_bytes_per_client, 6_144.0));
    }

    #[test]
    fn bytes_per_client_is_the_slope_of_memory_against_connections() {
        let idle = idle_capacity(&ramp(10), 512 << 20, false, 0, None);
        assert_eq!(idle.clients_held, 10_000);
        assert!((idle.bytes_per_client.unwrap() - 20_480.0).abs() < 1e-6);
        assert_eq!(idle.limited_by, IdleLimit::AllHeld);
        assert_eq!(idle.peak_mem_bytes, (4 << 20) + 10_000 * 20 * 1024);
    }

    #[test]
    fn what_ended_the_ramp_is_death_then_memory_then_errors() {
        assert_eq!(
            idle_capacity(&ramp(3), 1 << 30, true, 5, Some(Outcome::OomKilled)).limited_by,
            IdleLimit::ServerDied {
                outcome: "oom_killed".into()
            }
        );
        assert_eq!(
            idle_capacity(&ramp(3), 1 << 30, true, 5, None).limited_by,
            IdleLimit::MemoryNearLimit
        );
        assert_eq!(
            idle_capacity(&ramp(3), 1 << 30, false, 5, None).limited_by,
            IdleLimit::ClientErrors { errors: 5 }
        );
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
        let idle = idle_capacity(&series, 512 << 20, false, 0, None);
        assert_eq!((idle.clients_held, idle.bytes_per_client), (0, None));
    }
}
