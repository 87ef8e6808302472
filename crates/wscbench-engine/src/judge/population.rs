//! The population scenario's judgement: from the per-second samples and the k6 hold windows
//! of its levels, each level's means, and from the levels what one connected user costs
//! (memory as the slope across the levels, user space and kernel apart; CPU per 1,000 users
//! at the highest level held). Pure functions; the rule is in docs/methodology.md ("The
//! population").

use wscbench_results::{ErrorCounts, IdleLimit, Population, PopulationLevel, Sample};

use crate::judge::idle::Ending;
use crate::load::native::MergedWindow;

/// A level counts as held when the server's mean connections over its hold's later half
/// reach this share of the level's users (churn keeps a few away for a moment).
pub const HELD_SHARE: f64 = 0.97;

/// What the judgement reads besides the series.
pub struct Inputs<'a> {
    /// The per-second samples of the point.
    pub series: &'a [Sample],
    /// The k6 hold windows of the levels, in order (epoch ms), merged over instances.
    pub holds: &'a [MergedWindow],
    /// When the load started, epoch ms: the origin of the samples' `t_ms`.
    pub load_started_epoch_ms: u64,
    /// The users planned at each level.
    pub levels: &'a [u64],
    /// The connects a second a level's ramp asked at most.
    pub connects_per_s: u64,
    /// The server's memory limit, in bytes.
    pub memory_limit_bytes: u64,
}

/// The mean of `field` over `samples` where it was read; `None` when nowhere.
fn mean(samples: &[&Sample], field: impl Fn(&Sample) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = samples.iter().filter_map(|s| field(s)).collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The server's CPU over a window, in CPU ms per second: from its cumulative CPU time at the
/// first and last reading inside the window (exact, whatever the sampler missed), or the mean
/// of its per-second readings where no cumulative figure was read.
fn server_cpu_ms_per_s(samples: &[&Sample]) -> Option<f64> {
    let read: Vec<(i64, f64)> = samples
        .iter()
        .filter_map(|s| Some((s.server_cpu_read_ms?, s.server_cpu_used_ms?)))
        .collect();
    if let (Some(first), Some(last)) = (read.first(), read.last())
        && last.0 > first.0
    {
        return Some((last.1 - first.1) / (last.0 - first.0) as f64 * 1000.0);
    }
    mean(samples, |s| s.server_cpu_percent.map(|p| p * 10.0))
}

/// The p99 of a histogram in ms, `None` when empty.
fn p99_ms(h: &hdrhistogram::Histogram<u64>) -> Option<f64> {
    (!h.is_empty()).then(|| h.value_at_quantile(0.99) as f64 / 1000.0)
}

/// The samples of a hold's later half, where its level has settled: a ramp that runs late
/// into the hold (k6 slow to connect) leaves memory still rising in its first samples
/// (profile-b/zig in run 20261128-130727: 355.7 MiB at 4,999 users a second into its
/// last hold, 387.1 MiB at 5,000 from the next second on, as in every other round). The
/// whole hold where its later half has no sample.
fn settled<'a>(inside: &[&'a Sample], from: u64, to: u64) -> Vec<&'a Sample> {
    let middle = from + (to - from) / 2;
    let later: Vec<&Sample> = inside
        .iter()
        .copied()
        .filter(|s| s.t_ms >= middle)
        .collect();
    if later.is_empty() {
        inside.to_vec()
    } else {
        later
    }
}

/// Each level's hold, as the samples inside its window read it: its memory and connections
/// where it settled (the hold's later half), its CPU over the whole hold.
pub fn levels(inputs: &Inputs) -> Vec<PopulationLevel> {
    inputs
        .holds
        .iter()
        .zip(inputs.levels)
        .filter_map(|(w, &users)| {
            let from = w.from_ms.saturating_sub(inputs.load_started_epoch_ms);
            let to = w
                .to_ms
                .saturating_sub(inputs.load_started_epoch_ms)
                .max(from);
            let inside: Vec<&Sample> = inputs
                .series
                .iter()
                .filter(|s| s.t_ms >= from && s.t_ms <= to)
                .filter(|s| s.server_mem_bytes.is_some_and(|m| m > 0))
                .collect();
            let settled = settled(&inside, from, to);
            Some(PopulationLevel {
                users_planned: users,
                from_ms: from,
                to_ms: to,
                connections: mean(&settled, |s| s.connections.map(|c| c as f64))?,
                mem_bytes: mean(&settled, |s| s.server_mem_bytes.map(|m| m as f64))?,
                user_bytes: mean(&settled, |s| s.server_anon_bytes.map(|m| m as f64)),
                kernel_bytes: mean(&settled, |s| s.server_kernel_bytes.map(|m| m as f64)),
                loadgen_mem_bytes: mean(&settled, |s| Some(s.loadgen_mem_bytes as f64))?,
                server_cpu_ms_per_s: server_cpu_ms_per_s(&inside),
                loadgen_cpu_ms_per_s: mean(&inside, |s| Some(s.loadgen_cpu_percent * 10.0))?,
                chat_p99_ms: p99_ms(&w.response_time_us),
                pong_p99_ms: p99_ms(&w.pong_latency_us),
            })
        })
        .collect()
}

/// True when a level's hold had (nearly) all its users connected.
pub fn held(level: &PopulationLevel) -> bool {
    level.connections >= HELD_SHARE * level.users_planned as f64
}

/// The client errors counted while the levels ran (k6's one-second periods that started
/// before the last hold ended): a server that fails its users then is limited by them, while
/// closes that go wrong at the leave after the last hold are not the population's limit.
/// The failed connects' reasons are the run's.
pub fn errors_while_held(
    periods: &[MergedWindow],
    holds: &[MergedWindow],
    all: &ErrorCounts,
) -> ErrorCounts {
    let Some(end) = holds.last().map(|h| h.to_ms) else {
        return all.clone();
    };
    let (mut connects, mut closes) = (0, 0);
    for p in periods.iter().filter(|p| p.from_ms < end) {
        connects += p.counters.connect_errors;
        closes += p.counters.abnormal_closes;
    }
    ErrorCounts {
        failed_connects: connects,
        abnormal_closes: closes,
        script_errors: 0,
        failed_connect_reasons: if connects > 0 {
            all.failed_connect_reasons.clone()
        } else {
            Default::default()
        },
    }
}

/// The slope of `y` against the levels' connections.
fn slope(held: &[&PopulationLevel], y: impl Fn(&PopulationLevel) -> Option<f64>) -> Option<f64> {
    let points: Option<Vec<(f64, f64)>> =
        held.iter().map(|l| Some((l.connections, y(l)?))).collect();
    crate::judge::series::least_squares_slope(&points?)
}

/// What the population cost the server, from its series, its levels' holds and how it ended.
pub fn population(inputs: &Inputs, ending: &Ending) -> Population {
    let levels = levels(inputs);
    let held: Vec<&PopulationLevel> = levels.iter().filter(|l| held(l)).collect();
    // The slope reads every level with users connected, held or still filling: memory
    // follows the connections either way, and a server slow to accept still has a cost per
    // user. The CPU is read where the most users were connected.
    let measured: Vec<&PopulationLevel> = levels.iter().filter(|l| l.connections > 0.0).collect();
    let top = measured
        .iter()
        .max_by(|a, b| a.connections.total_cmp(&b.connections));
    let per_1k = |cpu: Option<f64>, l: &PopulationLevel| {
        cpu.filter(|_| l.connections > 0.0)
            .map(|c| c / l.connections * 1000.0)
    };
    let users_held = inputs
        .series
        .iter()
        .filter_map(|s| s.connections)
        .max()
        .unwrap_or(0);
    let idle = crate::judge::idle::idle_capacity(inputs.series, inputs.memory_limit_bytes, ending);
    let limited_by = match idle.limited_by {
        // Every level reached, yet one not held: the server did not keep its users.
        IdleLimit::AllHeld if held.len() < inputs.levels.len() => IdleLimit::ClientErrors {
            errors: 0,
            side: wscbench_results::FailedSide::Server,
            evidence: format!(
                "{} of {} levels held {:.0} % of their users",
                held.len(),
                inputs.levels.len(),
                HELD_SHARE * 100.0
            ),
        },
        other => other,
    };
    Population {
        users_planned: inputs.levels.last().copied().unwrap_or(0),
        users_held,
        mem_bytes_per_user: slope(&measured, |l| Some(l.mem_bytes)),
        user_bytes_per_user: slope(&measured, |l| l.user_bytes),
        kernel_bytes_per_user: slope(&measured, |l| l.kernel_bytes),
        cpu_ms_per_s_per_1k_users: top.and_then(|l| per_1k(l.server_cpu_ms_per_s, l)),
        chat_p99_ms: top.and_then(|l| l.chat_p99_ms),
        pong_p99_ms: top.and_then(|l| l.pong_p99_ms),
        connects_per_s: inputs.connects_per_s,
        loadgen_bytes_per_user: slope(&measured, |l| Some(l.loadgen_mem_bytes)),
        loadgen_cpu_ms_per_s_per_1k_users: top
            .and_then(|l| per_1k(Some(l.loadgen_cpu_ms_per_s), l)),
        peak_mem_bytes: idle.peak_mem_bytes,
        memory_limit_bytes: inputs.memory_limit_bytes,
        levels,
        limited_by,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;
    use wscbench_results::Outcome;

    const START: u64 = 1_700_000_000_000;

    /// A hold window of the k6 report from `from_s` to `to_s` of the load, its chats at
    /// `chat_ms` and its pongs at `pong_ms`.
    fn hold(clients: u64, from_s: u64, to_s: u64, chat_ms: u64, pong_ms: u64) -> MergedWindow {
        let histogram = |ms: u64| {
            let mut h = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
            h.record_n(ms * 1000, 100).unwrap();
            h
        };
        MergedWindow {
            clients,
            from_ms: START + from_s * 1000,
            to_ms: START + to_s * 1000,
            counters: Default::default(),
            latency: histogram(chat_ms),
            response_time_us: histogram(chat_ms),
            pong_latency_us: histogram(pong_ms),
        }
    }

    /// t_ms, connections, memory, anon, kernel, CPU read ms, CPU used ms, k6 memory.
    type Row = (u64, u64, u64, u64, u64, i64, f64, u64);

    /// A profile-b/zig population in smoke mode (300 users, levels 100, 200, 300, holds of
    /// 2 s) built around the level means a smoke run on this machine measured (Zig std: about
    /// 32 KiB of user space and 48 KiB of kernel a user, two threads each): per-second samples
    /// of memory, user space and kernel in bytes, the cumulative CPU in ms at its read time.
    fn zig_smoke() -> (Vec<Sample>, Vec<MergedWindow>) {
        let rows: [Row; 12] = [
            // t_ms, connections, mem, anon, kernel, cpu read ms, cpu used ms, k6 mem
            (
                1_000, 0, 1_830_912, 200_704, 1_564_672, 200, 12.0, 18_000_000,
            ),
            (
                2_000, 100, 8_441_856, 3_354_624, 5_087_232, 1_200, 25.0, 21_800_000,
            ),
            (
                3_000, 100, 8_478_720, 3_366_912, 5_111_808, 2_200, 28.8, 21_830_000,
            ),
            (
                4_000, 100, 8_509_440, 3_379_200, 5_130_240, 3_200, 32.6, 21_860_000,
            ),
            (
                5_000, 200, 16_674_816, 6_619_136, 10_055_680, 4_200, 50.0, 29_200_000,
            ),
            (
                6_000, 200, 16_732_160, 6_643_712, 10_088_448, 5_200, 54.1, 29_300_000,
            ),
            (
                7_000, 200, 16_764_928, 6_651_904, 10_113_024, 6_200, 58.2, 29_300_000,
            ),
            (
                8_000, 200, 16_748_544, 6_647_808, 10_100_736, 7_200, 62.3, 29_310_000,
            ),
            (
                9_000, 300, 24_698_880, 9_895_936, 14_802_944, 8_200, 85.0, 35_800_000,
            ),
            (
                10_000, 300, 24_756_224, 9_916_416, 14_839_808, 9_200, 92.0, 35_850_000,
            ),
            (
                11_000, 300, 24_793_088, 9_932_800, 14_860_288, 10_200, 99.0, 35_860_000,
            ),
            (
                12_000, 300, 24_774_656, 9_928_704, 14_845_952, 11_200, 106.0, 35_860_000,
            ),
        ];
        let series = rows
            .iter()
            .map(|&(t_ms, c, mem, anon, kernel, read, used, k6)| Sample {
                t_ms,
                connections: Some(c),
                server_mem_bytes: Some(mem),
                server_anon_bytes: Some(anon),
                server_kernel_bytes: Some(kernel),
                server_cpu_read_ms: Some(read),
                server_cpu_used_ms: Some(used),
                loadgen_mem_bytes: k6,
                loadgen_cpu_percent: 1.5,
                ..Sample::default()
            })
            .collect();
        let holds = vec![
            hold(100, 2, 4, 6, 6),
            hold(200, 6, 8, 8, 3),
            hold(300, 10, 12, 8, 10),
        ];
        (series, holds)
    }

    fn inputs<'a>(series: &'a [Sample], holds: &'a [MergedWindow]) -> Inputs<'a> {
        Inputs {
            series,
            holds,
            load_started_epoch_ms: START,
            levels: &[100, 200, 300],
            connects_per_s: 2_000,
            memory_limit_bytes: 512 << 20,
        }
    }

    #[test]
    fn memory_per_user_is_the_slope_of_the_levels_means_with_user_space_and_kernel_apart() {
        let (series, holds) = zig_smoke();
        let p = population(&inputs(&series, &holds), &Ending::default());
        assert_eq!(p.levels.len(), 3);
        assert_eq!(p.users_held, 300);
        assert_eq!(p.limited_by, IdleLimit::AllHeld);
        let kib = |b: Option<f64>| b.unwrap() / 1024.0;
        // (24.77 MB − 8.49 MB) / 200 users ≈ 79.5 KiB; the parts add up to the whole.
        assert!((kib(p.mem_bytes_per_user) - 79.5).abs() < 0.5, "{p:?}");
        assert!((kib(p.user_bytes_per_user) - 31.8).abs() < 0.5);
        assert!((kib(p.kernel_bytes_per_user) - 47.7).abs() < 0.5);
        let parts = p.user_bytes_per_user.unwrap() + p.kernel_bytes_per_user.unwrap();
        assert!((parts - p.mem_bytes_per_user.unwrap()).abs() / parts < 0.01);
        // k6 paid about 70 KB a user: its own figure, beside the server's.
        assert!((kib(p.loadgen_bytes_per_user) - 67.6).abs() < 1.0);
    }

    /// profile-b/zig's samples (t_ms, connections, memory) in two rounds of run
    /// 20261128-130727, its holds from 2.19 s, 7.19 s and 12.19 s, 3 s each: round 1's
    /// levels settled before their holds; round 2's last ramp ran a second late (k6 slow to
    /// connect), its memory still rising in that hold's first half.
    const ZIG_STD_ROUND_1: [(u64, u64, u64); 15] = [
        (1_094, 1_500, 774_144),
        (2_093, 1_650, 122_441_728),
        (3_094, 1_650, 134_459_392),
        (4_094, 1_650, 134_426_624),
        (5_094, 1_650, 134_406_144),
        (6_094, 3_200, 134_627_328),
        (7_094, 3_350, 264_085_504),
        (8_095, 3_350, 272_424_960),
        (9_094, 3_350, 272_396_288),
        (10_094, 3_350, 272_351_232),
        (11_094, 4_850, 272_343_040),
        (12_094, 5_000, 402_083_840),
        (13_094, 5_000, 405_995_520),
        (14_094, 5_000, 405_983_232),
        (15_094, 5_000, 405_958_656),
    ];
    const ZIG_STD_ROUND_2: [(u64, u64, u64); 15] = [
        (1_091, 1_500, 794_624),
        (2_091, 1_650, 122_236_928),
        (3_091, 1_650, 134_529_024),
        (4_091, 1_650, 134_475_776),
        (5_091, 1_650, 134_418_432),
        (6_091, 3_200, 134_397_952),
        (7_091, 3_350, 264_900_608),
        (8_091, 3_350, 272_134_144),
        (9_091, 3_350, 272_306_176),
        (10_091, 3_350, 272_244_736),
        (11_097, 4_130, 272_228_352),
        (12_092, 4_307, 340_393_984),
        (13_091, 4_999, 372_998_144),
        (14_091, 5_000, 405_880_832),
        (15_091, 5_000, 405_843_968),
    ];

    fn memory_per_user_of(rows: &[(u64, u64, u64)], hold_from_ms: [u64; 3]) -> f64 {
        let series: Vec<Sample> = rows
            .iter()
            .map(|&(t_ms, c, mem)| Sample {
                t_ms,
                connections: Some(c),
                server_mem_bytes: Some(mem),
                loadgen_mem_bytes: 100 << 20,
                ..Sample::default()
            })
            .collect();
        let holds: Vec<MergedWindow> = hold_from_ms
            .iter()
            .zip([1_650, 3_350, 5_000])
            .map(|(&from, users)| MergedWindow {
                from_ms: START + from,
                to_ms: START + from + 3_000,
                ..hold(users, 0, 0, 1, 1)
            })
            .collect();
        let inputs = Inputs {
            levels: &[1_650, 3_350, 5_000],
            ..inputs(&series, &holds)
        };
        population(&inputs, &Ending::default())
            .mem_bytes_per_user
            .unwrap()
    }

    #[test]
    fn memory_is_read_where_each_level_settled_so_a_late_ramp_reads_like_an_early_one() {
        let early = memory_per_user_of(&ZIG_STD_ROUND_1, [2_195, 7_195, 12_195]);
        let late = memory_per_user_of(&ZIG_STD_ROUND_2, [2_190, 7_190, 12_190]);
        // About 79.2 KiB a user in both; a mean over the whole hold read round 2 at 77,766 B.
        assert!((early - 81_061.0).abs() < 10.0, "{early}");
        assert!(
            (late - early).abs() / early < 0.001,
            "{late} against {early}"
        );
    }

    #[test]
    fn cpu_per_thousand_users_is_the_servers_cpu_over_the_top_levels_hold_per_user() {
        let (series, holds) = zig_smoke();
        let p = population(&inputs(&series, &holds), &Ending::default());
        // Reads at 9.2 s and 11.2 s inside [10 s, 12 s]: hold from 10 s takes 10,000 and
        // 11,000 and 12,000 ms samples, read at 9,200 .. 11,200: 14 ms over 2 s = 7 ms/s,
        // over 300 users = 23.3 ms/s per 1,000.
        let cpu = p.cpu_ms_per_s_per_1k_users.unwrap();
        assert!((cpu - 23.33).abs() < 0.1, "{cpu}");
        assert_eq!(p.chat_p99_ms.map(f64::round), Some(8.0));
        assert_eq!(p.pong_p99_ms.map(f64::round), Some(10.0));
        let k6 = p.loadgen_cpu_ms_per_s_per_1k_users.unwrap();
        assert!(
            (k6 - 50.0).abs() < 0.1,
            "1.5 % of a core = 15 ms/s over 300 users: {k6}"
        );
    }

    #[test]
    fn a_server_killed_at_its_second_level_is_recorded_there_with_its_memory() {
        let (mut series, holds) = zig_smoke();
        series.truncate(6); // died 6 s in, during the second level's hold
        let ending = Ending {
            died: Some(Outcome::OomKilled),
            ..Ending::default()
        };
        let p = population(&inputs(&series, &holds), &ending);
        assert_eq!(
            p.limited_by,
            IdleLimit::ServerDied {
                outcome: "oom_killed".into()
            }
        );
        assert_eq!(p.users_held, 200);
        assert_eq!(p.levels.len(), 2, "the third level has no samples");
        assert_eq!(p.peak_mem_bytes, 16_732_160);
        // Two levels measured: a slope still, and the CPU of the highest.
        assert!(p.mem_bytes_per_user.is_some());
        assert_eq!(p.levels[1].users_planned, 200);
    }

    #[test]
    fn a_level_short_of_its_users_is_not_held_and_says_so_when_nothing_else_ended_the_run() {
        let (mut series, holds) = zig_smoke();
        for s in &mut series[8..] {
            s.connections = Some(240); // 60 of the last level's users never came
        }
        let p = population(&inputs(&series, &holds), &Ending::default());
        assert!(!held(&p.levels[2]));
        assert!(matches!(
            p.limited_by,
            IdleLimit::ClientErrors {
                side: wscbench_results::FailedSide::Server,
                ..
            }
        ));
        // The slope still over every level; the CPU where the most users were connected.
        assert!(p.mem_bytes_per_user.is_some());
        let cpu = p.cpu_ms_per_s_per_1k_users.unwrap();
        assert!((cpu - 29.2).abs() < 0.1, "7 ms/s over 240 users: {cpu}");
    }

    #[test]
    fn closes_that_go_wrong_at_the_leave_after_the_last_hold_are_not_the_limit() {
        let (_, holds) = zig_smoke();
        let period = |from_s: u64, connect_errors: u64, abnormal_closes: u64| MergedWindow {
            from_ms: START + from_s * 1000,
            to_ms: START + (from_s + 1) * 1000,
            counters: crate::load::native::NativeCounters {
                connect_errors,
                abnormal_closes,
                ..Default::default()
            },
            ..hold(0, from_s, from_s + 1, 1, 1)
        };
        let all = ErrorCounts {
            failed_connects: 3,
            abnormal_closes: 2_541,
            script_errors: 2_541,
            failed_connect_reasons: [("refused".to_string(), 3)].into(),
        };
        // 3 refused connects at 5 s (the second level's ramp), 2,541 abnormal closes at the
        // leave, 12 s in and after.
        let periods = [period(5, 3, 0), period(12, 0, 2_000), period(14, 0, 541)];
        let during = errors_while_held(&periods, &holds, &all);
        assert_eq!((during.failed_connects, during.abnormal_closes), (3, 0));
        assert_eq!(during.failed_connect_reasons["refused"], 3);
        let quiet = errors_while_held(&periods[1..], &holds, &all);
        assert_eq!(quiet.total(), 0);
    }

    #[test]
    fn failed_connects_name_their_side() {
        let (series, holds) = zig_smoke();
        let errors = ErrorCounts {
            failed_connects: 12,
            failed_connect_reasons: [("refused".to_string(), 12)].into(),
            ..ErrorCounts::default()
        };
        let ending = Ending {
            errors: Some(&errors),
            ..Ending::default()
        };
        let p = population(&inputs(&series, &holds), &ending);
        assert!(matches!(
            p.limited_by,
            IdleLimit::ClientErrors {
                errors: 12,
                side: wscbench_results::FailedSide::Server,
                ..
            }
        ));
    }
}
