//! Whether the load generator, not the server, was the limit of a result (its
//! `loadgen_bound`): a pure function ([`reasons`]) from the result's per-second series and
//! counters to the reasons (data) why it was; none when the server was the limit.
//! The rule is documented in docs/methodology.md; each reason has a test below, the
//! timer's on real samples.

use wscbench_results::{BoundReason, Sample};

/// Share of a CPU ceiling above which it counts as saturated.
pub const SATURATED: f64 = 0.9;
/// The load generator must receive at least this share of what the server delivered.
pub const RECEIVED_SHARE: f64 = 0.98;
/// Slow-consumer drops count once they reach this share of deliveries.
pub const SLOW_DROP_SHARE: f64 = 0.01;
/// A condition must hold for at least this share of the measured seconds (and 2 s).
pub const BUSY_SHARE: f64 = 0.2;
/// Above this share of intended chats missed because the client's own timer was too late,
/// the load generator did not offer the load it was asked to.
pub const TIMER_MISSED_SHARE: f64 = 0.01;
/// Above this share of intended chats sent late or missed by the client's own timer, the
/// load generator reshaped its schedule: a chat sent late by its own timer still goes out
/// (its delay is kept out of the response time), so a few percent of them leave the
/// offered load as it was; a tenth of the schedule does not.
pub const TIMER_LATE_SHARE: f64 = 0.10;
/// When the machine is saturated, the load generator competed with the server when it took
/// at least this share of the CPU used in those seconds.
pub const LOADGEN_SHARE: f64 = 0.5;

/// The counters the verdict reads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    /// Deliveries the server wrote in the load window.
    pub delivered: u64,
    /// Chats the load generator received (absent: it left no summary).
    pub received: Option<u64>,
    /// Sessions the load generator started and closed.
    pub sessions: u64,
    /// Sessions that ended on their own.
    pub sessions_closed: u64,
    /// Messages the server dropped for slow consumers.
    pub dropped_slow: u64,
    /// The load generator was killed for its memory limit, which was this many bytes.
    pub loadgen_oom_limit_bytes: Option<u64>,
    /// Chats the clients' schedule intended (0: no schedule recorded).
    pub chats_intended: u64,
    /// Of those, sent late or missed because the client's own timer fired late.
    pub chats_timer_late: u64,
    /// Of those, missed because the client's own timer was too late.
    pub chats_timer_missed: u64,
}

/// The CPU ceilings the series is judged against, in percent of one core.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceilings {
    /// The load generator's ceiling (its cpuset, or all cores).
    pub loadgen_percent: f64,
    /// The machine's cores.
    pub cores: u32,
}

/// The load generator's share of the machine when it shares the cores with the server: half
/// of them, or its cpuset's ceiling when that is less.
fn loadgen_share_percent(ceilings: &Ceilings) -> f64 {
    ceilings
        .loadgen_percent
        .min(f64::from(ceilings.cores) * 100.0 / 2.0)
}

/// Whether k6's own timers running late were k6's fault: it was short itself, at its share
/// of the CPU (≥ 90 % of it) for long enough, or it fell behind while its CPU had room, the
/// server not holding the cores. Lateness while the server held the cores (above its own
/// share, k6 below its share) is the server's: on two shared cores a server whose threads
/// take the machine starves k6's timers without k6 being the limit (Zig std at 50k/s in run
/// 20261128-031748: k6 at 29–56 % against the server's 83–96 %).
fn timer_late_is_loadgens(
    measured: &[&Sample],
    ceilings: &Ceilings,
    holds: impl Fn(u64) -> bool,
) -> bool {
    let share = loadgen_share_percent(ceilings);
    let at_share = measured
        .iter()
        .filter(|s| s.loadgen_cpu_percent >= SATURATED * share)
        .count() as u64;
    let server_held = measured
        .iter()
        .filter(|s| {
            s.server_cpu_percent.unwrap_or(0.0) >= share
                && s.loadgen_cpu_percent < SATURATED * share
        })
        .count() as u64;
    holds(at_share) || !holds(server_held)
}

/// Every reason that applies, in a fixed order; empty when the server was the limit.
pub fn reasons(series: &[Sample], counters: &Counters, ceilings: &Ceilings) -> Vec<BoundReason> {
    let mut reasons = Vec::new();
    if let Some(limit_bytes) = counters.loadgen_oom_limit_bytes {
        reasons.push(BoundReason::LoadgenOutOfMemory { limit_bytes });
    }
    // Docker's first sample has no previous CPU reading.
    let measured: Vec<&Sample> = series.iter().skip(1).collect();
    let measured_s = measured.len() as u64;
    let holds = |seconds: u64| seconds >= 2 && seconds as f64 >= BUSY_SHARE * measured_s as f64;
    let intended = counters.chats_intended as f64;
    if counters.chats_intended >= 100
        && (counters.chats_timer_late as f64 > TIMER_LATE_SHARE * intended
            || counters.chats_timer_missed as f64 > TIMER_MISSED_SHARE * intended)
        && timer_late_is_loadgens(&measured, ceilings, holds)
    {
        reasons.push(BoundReason::TimerLate {
            late: counters.chats_timer_late,
            intended: counters.chats_intended,
        });
    }
    if let Some(received) = counters.received
        && counters.delivered >= 100
        && (received as f64) < RECEIVED_SHARE * counters.delivered as f64
    {
        reasons.push(BoundReason::ReceivedShort {
            received,
            delivered: counters.delivered,
        });
    }
    let cut_off = counters.sessions.saturating_sub(counters.sessions_closed);
    if cut_off > 0 {
        reasons.push(BoundReason::SessionsCutOff {
            cut_off,
            sessions: counters.sessions,
        });
    }
    let loadgen_busy = measured
        .iter()
        .filter(|s| s.loadgen_cpu_percent >= SATURATED * ceilings.loadgen_percent)
        .count() as u64;
    let machine = SATURATED * ceilings.cores as f64 * 100.0;
    let saturated: Vec<&&Sample> = measured
        .iter()
        .filter(|s| s.loadgen_cpu_percent + s.server_cpu_percent.unwrap_or(0.0) >= machine)
        .collect();
    let loadgen_in_saturated: f64 = saturated.iter().map(|s| s.loadgen_cpu_percent).sum();
    let all_in_saturated: f64 = saturated
        .iter()
        .map(|s| s.loadgen_cpu_percent + s.server_cpu_percent.unwrap_or(0.0))
        .sum();
    let share = if all_in_saturated > 0.0 {
        loadgen_in_saturated / all_in_saturated
    } else {
        0.0
    };
    let competed = holds(saturated.len() as u64) && share >= LOADGEN_SHARE;
    if holds(loadgen_busy) {
        reasons.push(BoundReason::LoadgenCpuSaturated {
            busy_s: loadgen_busy,
            measured_s,
            ceiling_percent: ceilings.loadgen_percent,
        });
    } else if competed {
        reasons.push(BoundReason::MachineSaturated {
            busy_s: saturated.len() as u64,
            measured_s,
            cores: ceilings.cores,
            loadgen_share_ratio: share,
        });
    }
    // Slow-consumer drops mean a client did not read in time; every client is the load
    // generator, so they are its fault only while it was short of CPU.
    let loadgen_short_of_cpu = holds(loadgen_busy) || competed;
    if loadgen_short_of_cpu
        && counters.dropped_slow > 0
        && counters.dropped_slow as f64 >= SLOW_DROP_SHARE * counters.delivered.max(1) as f64
    {
        reasons.push(BoundReason::SlowConsumerDrops {
            dropped: counters.dropped_slow,
            delivered: counters.delivered,
        });
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;

    const CEILINGS: Ceilings = Ceilings {
        loadgen_percent: 200.0,
        cores: 2,
    };

    fn series(seconds: usize, server: f64, loadgen: f64) -> Vec<Sample> {
        (0..=seconds)
            .map(|i| Sample {
                t_ms: i as u64 * 1000,
                server_cpu_percent: Some(server),
                loadgen_cpu_percent: loadgen,
                ..Sample::default()
            })
            .collect()
    }

    fn all_received(delivered: u64) -> Counters {
        Counters {
            delivered,
            received: Some(delivered),
            sessions: 100,
            sessions_closed: 100,
            ..Counters::default()
        }
    }

    #[test]
    fn a_quiet_run_that_received_everything_is_not_bound() {
        assert!(reasons(&series(10, 30.0, 20.0), &all_received(10_000), &CEILINGS).is_empty());
    }

    #[test]
    fn chats_held_back_by_the_clients_own_timers_are_a_reason_and_a_few_are_not() {
        let late = |chats_timer_late| Counters {
            chats_intended: 10_000,
            chats_timer_late,
            ..all_received(10_000)
        };
        // 8 % sent late by k6's own timer: still sent, the offered load unchanged.
        assert!(reasons(&series(10, 30.0, 20.0), &late(800), &CEILINGS).is_empty());
        assert_eq!(
            reasons(&series(10, 30.0, 20.0), &late(1_200), &CEILINGS),
            [BoundReason::TimerLate {
                late: 1_200,
                intended: 10_000
            }]
        );
        // 2 % never sent because k6 was too late: the offered load fell.
        let missed = Counters {
            chats_timer_missed: 200,
            ..late(200)
        };
        assert_eq!(
            reasons(&series(10, 30.0, 20.0), &missed, &CEILINGS).len(),
            1
        );
    }

    /// A real step's per-second CPU (whole percent of one core, server then k6) and its
    /// counters.
    fn recorded(
        server: &[f64],
        loadgen: &[f64],
        intended: u64,
        late: u64,
    ) -> (Vec<Sample>, Counters) {
        let series = server
            .iter()
            .zip(loadgen)
            .enumerate()
            .map(|(i, (&server, &loadgen))| Sample {
                t_ms: i as u64 * 1000,
                server_cpu_percent: Some(server),
                loadgen_cpu_percent: loadgen,
                ..Sample::default()
            })
            .collect();
        let counters = Counters {
            chats_intended: intended,
            chats_timer_late: late,
            ..all_received(200_000)
        };
        (series, counters)
    }

    #[test]
    fn timer_lateness_while_the_server_held_the_cores_is_the_servers() {
        // Run 20261128-031748, profile-b/zig, load curve at 50k deliveries/s, rounds 2 and
        // 1: 108 and 45 of 401 and 391 chats late by k6's own timer (27 % and 12 %), while
        // Zig std's threads took 102–157 % of the two cores and k6 29–85 %.
        let (series, counters) = recorded(
            &[0.0, 0.0, 0.0, 136.0, 156.0, 128.0, 154.0, 5.0, 157.0, 128.0],
            &[0.0, 35.0, 1.0, 46.0, 34.0, 49.0, 35.0, 4.0, 36.0, 36.0],
            401,
            108,
        );
        assert!(reasons(&series, &counters, &CEILINGS).is_empty());
        let (series, counters) = recorded(
            &[0.0, 0.0, 102.0, 102.0, 122.0, 135.0, 122.0, 6.0],
            &[0.0, 68.0, 85.0, 85.0, 56.0, 49.0, 50.0, 2.0],
            391,
            45,
        );
        assert!(reasons(&series, &counters, &CEILINGS).is_empty());
    }

    #[test]
    fn timer_lateness_while_k6_sat_at_its_share_is_k6s() {
        // Run 20261126-133440, profile-a/rust, saturation, round 1: 11,462 of 78,644 chats
        // late by k6's own timer (15 %) while k6 sat at a core (its half of two) for 11 of
        // the 37 measured seconds, the server beside it.
        let (series, counters) = recorded(
            &[
                0.0, 0.0, 7.0, 24.0, 42.0, 64.0, 59.0, 53.0, 54.0, 49.0, 54.0, 38.0, 47.0, 60.0,
                69.0, 72.0, 66.0, 55.0, 63.0, 72.0, 90.0, 92.0, 97.0, 97.0, 96.0, 94.0, 103.0,
                103.0, 108.0, 111.0, 104.0, 65.0, 48.0, 91.0, 80.0, 41.0, 6.0, 0.0,
            ],
            &[
                0.0, 0.0, 16.0, 38.0, 55.0, 79.0, 75.0, 79.0, 70.0, 66.0, 71.0, 55.0, 67.0, 75.0,
                78.0, 74.0, 70.0, 99.0, 68.0, 78.0, 98.0, 99.0, 97.0, 97.0, 96.0, 102.0, 92.0,
                91.0, 87.0, 84.0, 93.0, 57.0, 52.0, 91.0, 84.0, 51.0, 12.0, 12.0,
            ],
            78_644,
            11_462,
        );
        assert_eq!(
            reasons(&series, &counters, &CEILINGS),
            [BoundReason::TimerLate {
                late: 11_462,
                intended: 78_644
            }]
        );
    }

    #[test]
    fn receiving_less_than_98_percent_of_deliveries_is_a_reason() {
        let counters = Counters {
            received: Some(9_700),
            ..all_received(10_000)
        };
        assert_eq!(
            reasons(&series(10, 30.0, 20.0), &counters, &CEILINGS),
            [BoundReason::ReceivedShort {
                received: 9_700,
                delivered: 10_000
            }]
        );
        let counters = Counters {
            received: Some(9_850),
            ..all_received(10_000)
        };
        assert!(reasons(&series(10, 30.0, 20.0), &counters, &CEILINGS).is_empty());
    }

    #[test]
    fn sessions_cut_off_by_k6_are_a_reason() {
        let counters = Counters {
            sessions_closed: 97,
            ..all_received(10_000)
        };
        assert_eq!(
            reasons(&series(10, 30.0, 20.0), &counters, &CEILINGS),
            [BoundReason::SessionsCutOff {
                cut_off: 3,
                sessions: 100
            }]
        );
    }

    #[test]
    fn a_load_generator_at_its_ceiling_is_a_reason() {
        let ceilings = Ceilings {
            loadgen_percent: 100.0,
            cores: 2,
        };
        assert_eq!(
            reasons(&series(10, 50.0, 95.0), &all_received(10_000), &ceilings),
            [BoundReason::LoadgenCpuSaturated {
                busy_s: 10,
                measured_s: 10,
                ceiling_percent: 100.0
            }]
        );
    }

    #[test]
    fn a_saturated_machine_counts_only_when_the_load_generator_took_half_of_it() {
        // k6 took 120 of 190: it competed with the server.
        let found = reasons(&series(10, 70.0, 120.0), &all_received(10_000), &CEILINGS);
        assert!(
            matches!(
                found[..],
                [BoundReason::MachineSaturated { busy_s: 10, measured_s: 10, cores: 2, loadgen_share_ratio }]
                    if (loadgen_share_ratio - 120.0 / 190.0).abs() < 1e-9
            ),
            "{found:?}"
        );
        // A cheap load generator on a machine the server saturates: the server was the limit.
        assert!(reasons(&series(10, 160.0, 30.0), &all_received(10_000), &CEILINGS).is_empty());
    }

    #[test]
    fn slow_consumer_drops_count_only_while_the_load_generator_was_short_of_cpu() {
        let counters = Counters {
            dropped_slow: 500,
            ..all_received(10_000)
        };
        assert!(
            reasons(&series(10, 160.0, 30.0), &counters, &CEILINGS).is_empty(),
            "the server's own writers fell behind"
        );
        assert_eq!(
            reasons(&series(10, 70.0, 120.0), &counters, &CEILINGS)[1],
            BoundReason::SlowConsumerDrops {
                dropped: 500,
                delivered: 10_000
            }
        );
    }

    #[test]
    fn a_load_generator_killed_for_memory_is_a_reason() {
        let counters = Counters {
            loadgen_oom_limit_bytes: Some(1 << 30),
            received: None,
            ..all_received(10_000)
        };
        assert_eq!(
            reasons(&series(10, 30.0, 20.0), &counters, &CEILINGS),
            [BoundReason::LoadgenOutOfMemory {
                limit_bytes: 1 << 30
            }]
        );
    }

    #[test]
    fn one_busy_second_is_not_enough() {
        let mut s = series(10, 30.0, 20.0);
        s[3].loadgen_cpu_percent = 199.0;
        assert!(reasons(&s, &all_received(10_000), &CEILINGS).is_empty());
    }
}
