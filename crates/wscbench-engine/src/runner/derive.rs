//! Figures derived from a point's counters and per-second samples: resource use of each
//! container, rates, CPU-seconds and efficiency, the inputs of the load-generator verdict,
//! and for stepped and long runs the capacity steps and the soak KPIs, and the slow-consumers
//! figures.

use wscbench_results::{
    Derived, LoadParam, Mode, Outcome, RunResult, Sample, Scenario, ServerStats, Usage,
};

use super::Plan;
use crate::judge::capacity::{self, CapacityInputs};
use crate::judge::loadgen_bound::{self, Ceilings, Counters};
use crate::judge::slow_consumers::{self, SlowInputs};
use crate::judge::soak::{self, SoakInputs};
use crate::load::native::Merged;
use crate::load::scenarios::{LoadCurveShape, SlowConsumersShape};

/// The CPU ceilings of a plan, in percent of one core: the server's, the load generator's,
/// and the machine's cores.
fn ceilings(plan: &Plan) -> (f64, f64, u32) {
    let cores = plan.setup.conditions.machine_cores.max(1);
    let server = cpuset_cores(plan.limits.cpuset_server.as_deref())
        .unwrap_or(cores as f64)
        .min(plan.limits.cpus)
        * 100.0;
    let loadgen = match loadgen_hosts_cores(plan) {
        // Each load host's cores, once per host (two engines on one host share them).
        Some(host_cores) => host_cores * 100.0,
        None => cpuset_cores(plan.limits.cpuset_loadgen.as_deref()).unwrap_or(cores as f64) * 100.0,
    };
    (server, loadgen, cores)
}

/// What a stepped or long run adds to [`derive`]'s inputs.
pub struct Long<'a> {
    /// The native report, merged.
    pub merged: &'a Merged,
    /// Epoch ms at which the load started.
    pub load_started_epoch_ms: u64,
    /// The shape the scenario reported in its setup data.
    pub shape: Option<serde_json::Value>,
    /// The point's outcome.
    pub outcome: Outcome,
}

/// Fills `result.capacity` (the capacity scenario), `result.slow_consumers` (the
/// slow-consumers scenario) and `result.soak` (soak mode, or any run of at least
/// [`soak::SOAK_MIN_MS`]).
pub fn derive_long(result: &mut RunResult, plan: &Plan, long: &Long<'_>) {
    let (_, loadgen_ceiling, cores) = ceilings(plan);
    if result.scenario == Scenario::SlowConsumers {
        result.slow_consumers = Some(slow_consumers_of(result, plan.mode, long));
    }
    if result.scenario == Scenario::Capacity {
        let number = |key: &str, default: f64| {
            long.shape
                .as_ref()
                .and_then(|s| s.get(key))
                .and_then(serde_json::Value::as_f64)
                .unwrap_or(default)
        };
        let died = matches!(long.outcome, Outcome::ServerCrashed | Outcome::OomKilled)
            .then_some(long.outcome);
        result.capacity = Some(capacity::capacity(&CapacityInputs {
            windows: &long.merged.steps,
            series: &result.series,
            load_started_epoch_ms: long.load_started_epoch_ms,
            duration_ms: result.duration_ms,
            slo_p95_ms: plan.slo_p95_ms,
            room_size: number("roomSize", 50.0) as u32,
            member_chats_per_s: number("memberChatsPerSecond", 1.0),
            ceilings: Ceilings {
                loadgen_percent: loadgen_ceiling,
                cores,
            },
            server_died: died,
        }));
    } else if plan.mode == Mode::Soak || result.duration_ms >= soak::SOAK_MIN_MS {
        let periods: Vec<(u64, &crate::load::native::MergedWindow)> = long
            .merged
            .periods
            .iter()
            .map(|w| (w.from_ms.saturating_sub(long.load_started_epoch_ms), w))
            .collect();
        let stats = result.server_stats.clone().unwrap_or_default();
        let planned_ms = plan.scenario_seconds(result.scenario).as_millis() as u64;
        result.soak = Some(soak::soak_kpis(&SoakInputs {
            series: &result.series,
            periods: &periods,
            hold_end_ms: result
                .duration_ms
                .min(planned_ms)
                .saturating_sub(soak::QUIET_END_MS),
            errors: result.errors.total(),
            dropped: stats.dropped_slow + stats.dropped_ratelimit,
            deliveries: stats.deliveries,
        }));
    }
}

/// The slow-consumers figures of a result whose counters and series are in: the phases
/// count from the scenario's start the report gives, or (an extension that gives none) from
/// when the load started.
fn slow_consumers_of(
    result: &RunResult,
    mode: Mode,
    long: &Long<'_>,
) -> wscbench_results::SlowConsumers {
    let started_epoch_ms = long
        .merged
        .slow
        .as_ref()
        .and_then(|s| s.started_epoch_ms)
        .unwrap_or(long.load_started_epoch_ms);
    // Without a start in the report, its close times count from 0: put them on our clock.
    let slow = long.merged.slow.clone().map(|mut s| {
        if s.started_epoch_ms.is_none() {
            for t in &mut s.closed_at_epoch_ms {
                *t += started_epoch_ms;
            }
        }
        s
    });
    slow_consumers::slow_consumers(&SlowInputs {
        shape: SlowConsumersShape::with_params(mode, &result.load_params),
        periods: &long.merged.periods,
        slow: slow.as_ref(),
        started_epoch_ms,
        load_started_epoch_ms: long.load_started_epoch_ms,
        series: &result.series,
        dropped_slow: result
            .server_stats
            .as_ref()
            .map_or(0, |stats| stats.dropped_slow),
    })
}

/// Fills `result.derived`, `loadgen_bound` and `loadgen_bound_reasons` from its counters and
/// series. `loadgen_oom` is set when the k6 container was killed for its memory limit. `hold`
/// is a load curve's level's measured hold, `(from, to)` ms of the load (k6's window); without
/// it a load-curve result's cost is read where its chats ran ([`chatting`]).
pub fn derive(result: &mut RunResult, plan: &Plan, loadgen_oom: bool, hold: Option<(u64, u64)>) {
    let seconds = (result.duration_ms as f64 / 1000.0).max(0.001);
    let (server_ceiling, loadgen_ceiling, cores) = ceilings(plan);
    // Absent, never 0, when nothing measured the server (an external one without --pid or
    // --container).
    let server = result
        .series
        .iter()
        .any(|s| s.server_cpu_percent.is_some())
        .then(|| {
            usage(
                &result.series,
                |s| s.server_cpu_percent.unwrap_or(0.0),
                |s| s.server_mem_bytes.unwrap_or(0),
                server_ceiling,
            )
        });
    let loadgen = usage(
        &result.series,
        |s| s.loadgen_cpu_percent,
        |s| s.loadgen_mem_bytes,
        loadgen_ceiling,
    );
    if let Some(distributed) = &mut result.distributed {
        for (i, instance) in distributed.instances.iter_mut().enumerate() {
            let host_cores = plan
                .setup
                .conditions
                .loadgen_engines
                .iter()
                .find(|e| e.endpoint == instance.engine)
                .map_or(cores, |e| e.machine_cores.max(1));
            let of = |s: &Sample| s.loadgen_instances.get(i).copied().unwrap_or_default();
            instance.usage = usage(
                &result.series,
                |s| of(s).cpu_percent,
                |s| of(s).mem_bytes,
                host_cores as f64 * 100.0,
            );
        }
    }
    let stats = result.server_stats.clone().unwrap_or_default();
    let received = chats_received(result);
    result.derived = Derived {
        throughput_msgs_per_s: stats.chat_accepted as f64 / seconds,
        deliveries_per_s: stats.deliveries as f64 / seconds,
        drop_rate_ratio: ratio(stats.dropped_ratelimit, stats.chat_in).unwrap_or(0.0),
        received_ratio: received.and_then(|r| ratio(r, stats.deliveries)),
        deliveries_per_server_cpu_s: server
            .as_ref()
            .filter(|s| s.cpu_seconds > 0.0 && stats.deliveries > 0)
            .map(|s| stats.deliveries as f64 / s.cpu_seconds),
        bytes_written_per_delivery: stats
            .bytes_written
            .and_then(|bytes| ratio(bytes, stats.deliveries)),
        server,
        loadgen,
    };
    let chats = result.k6.as_ref().and_then(|k| k.chats);
    let counters = Counters {
        delivered: stats.deliveries,
        received,
        sessions: result.k6.as_ref().map_or(0, |k| k.sessions),
        sessions_closed: finished_sessions(
            result.scenario,
            result
                .k6
                .as_ref()
                .map_or((0, 0), |k| (k.sessions, k.sessions_closed)),
        ),
        dropped_slow: stats.dropped_slow,
        loadgen_oom_limit_bytes: loadgen_oom
            .then_some(plan.limits.loadgen_memory_bytes.unwrap_or(0)),
        chats_intended: chats.map_or(0, |c| c.intended),
        chats_timer_late: chats.map_or(0, |c| c.timer_late()),
        chats_timer_missed: chats.map_or(0, |c| c.missed_timer),
    };
    let ceilings = Ceilings {
        loadgen_percent: loadgen_ceiling,
        cores,
    };
    result.loadgen_bound_reasons = loadgen_bound::reasons(&result.series, &counters, &ceilings);
    result.loadgen_bound = !result.loadgen_bound_reasons.is_empty();
    if result.scenario == Scenario::LoadCurve {
        result.curve = Some(curve_step(result, plan, hold));
        let delivered = result.delivered_of_offered();
        if let Some(curve) = &mut result.curve {
            curve.delivered_ratio = delivered;
        }
    }
}

/// A load-curve result's step: the load its level offered (its shape at its `deliveries`)
/// and what it cost over its hold (a level's `hold`: the samples inside it); [`derive`] then
/// adds the share the clients received. Every member of a room is a client, so each
/// intended chat asks for `room_size − 1` deliveries.
fn curve_step(
    result: &RunResult,
    plan: &Plan,
    hold: Option<(u64, u64)>,
) -> wscbench_results::CurveStep {
    let curve = LoadCurveShape::with_params(plan.mode, &result.load_params);
    let offered_per_s = result
        .load_params
        .get(&LoadParam::Deliveries)
        .copied()
        .unwrap_or(curve.steps[0]);
    let step = curve.at(offered_per_s);
    let offered = result
        .k6
        .as_ref()
        .and_then(|k| k.chats)
        .map(|c| c.intended * step.room_size.saturating_sub(1));
    wscbench_results::CurveStep {
        hold_deliveries_per_server_cpu_s: held_efficiency(
            &result.series,
            match hold {
                Some((from, to)) => samples_within(&result.series, from, to),
                None => chatting(&result.series, step.hold_seconds),
            },
        ),
        offered_deliveries_per_s: offered_per_s,
        room_size: step.room_size,
        clients: step.clients,
        chats_per_s: step.chats_per_client_s(),
        offered_deliveries: offered,
        // Read once the step is in place: RunResult::delivered_of_offered needs its room.
        delivered_ratio: None,
        slo_p99_ms: plan.slo_p99_ms,
        // Set when the level ends its point (runner/levels.rs).
        ended_point: None,
    }
}

/// The part of the load when chats were under way, as `(from, to)` ms of the load: from
/// the first sample at which the server's deliveries had moved (k6 starts its schedule
/// about a second into the series, and the clients join before the first chat) to the last
/// sample at which they were still moving, at most `hold_seconds − 1` s later, so neither
/// the join ramp nor the leaves after the hold fall inside. `None` when deliveries never
/// moved in two samples.
pub(crate) fn chatting(series: &[Sample], hold_seconds: u64) -> Option<(u64, u64)> {
    let moved = |i: usize| -> bool {
        matches!((series[i - 1].deliveries, series[i].deliveries), (Some(a), Some(b)) if b > a)
    };
    let first = (1..series.len()).find(|&i| moved(i))?;
    let limit = series[first].t_ms + hold_seconds.saturating_sub(1) * 1000 + 500;
    // The last sample whose next one still moved: the chats ran on past it.
    let last = (first + 1..series.len().saturating_sub(1))
        .take_while(|&i| series[i].t_ms <= limit && moved(i + 1))
        .last()?;
    Some((series[first].t_ms, series[last].t_ms))
}

/// The first and last samples inside `[from, to]` ms of the load, as `(from, to)` sample
/// times: a level's hold as the server's counters can read it (both samples carry counters
/// of the level alone, never of the rate change before it or the level after). `None`
/// without two such samples.
pub(crate) fn samples_within(series: &[Sample], from: u64, to: u64) -> Option<(u64, u64)> {
    let inside: Vec<u64> = series
        .iter()
        .map(|s| s.t_ms)
        .filter(|&t| t >= from && t <= to)
        .collect();
    match (inside.first(), inside.last()) {
        (Some(&first), Some(&last)) if last > first => Some((first, last)),
        _ => None,
    }
}

/// Deliveries per server CPU-second over `[from, to]` ms of the load: the deliveries the
/// server's counters moved by between the samples at those times, against the CPU it used
/// between those moments ([`cpu_seconds_between`]). `None` without a window, counters, CPU
/// or deliveries.
pub(crate) fn held_efficiency(series: &[Sample], window: Option<(u64, u64)>) -> Option<f64> {
    let (from, to) = window?;
    let at = |t: u64| series.iter().find(|s| s.t_ms == t);
    let deliveries = at(to)?.deliveries?.checked_sub(at(from)?.deliveries?)?;
    let cpu_s = cpu_seconds_between(series, from as i64, to as i64);
    (deliveries > 0 && cpu_s > 0.0).then(|| deliveries as f64 / cpu_s)
}

/// The server's CPU-seconds between `from` and `to` ms of the load. Docker reads CPU on its
/// own clock, about a second behind the sample that carries the reading
/// (`server_cpu_read_ms`), so readings are placed at their own times: with the cumulative
/// CPU time (`server_cpu_used_ms`) it is the difference between the two moments,
/// interpolated between the readings around each; otherwise each reading's percent counts
/// for the part of its interval (since the previous reading) inside the window. A reading
/// repeated in two samples counts once; a result without reading times (before they were
/// recorded) reads each at its sample's time.
pub(crate) fn cpu_seconds_between(series: &[Sample], from: i64, to: i64) -> f64 {
    let mut readings: Vec<(i64, Option<f64>, f64)> = Vec::new();
    for s in series {
        let Some(percent) = s.server_cpu_percent else {
            continue;
        };
        let read = s.server_cpu_read_ms.unwrap_or(s.t_ms as i64);
        if readings.last().is_none_or(|&(last, _, _)| read > last) {
            readings.push((read, s.server_cpu_used_ms, percent));
        }
    }
    let used: Vec<(i64, f64)> = readings
        .iter()
        .filter_map(|&(read, used, _)| Some((read, used?)))
        .collect();
    if let (Some(a), Some(b)) = (interpolate(&used, from), interpolate(&used, to)) {
        return (b - a).max(0.0) / 1000.0;
    }
    let mut previous: Option<i64> = None;
    let mut cpu_s = 0.0;
    for (read, _, percent) in readings {
        let start = previous.unwrap_or(read - 1000);
        previous = Some(read);
        let overlap = (read.min(to) - start.max(from)).max(0);
        cpu_s += percent / 100.0 * overlap as f64 / 1000.0;
    }
    cpu_s
}

/// The cumulative figure at `t`, linear between the readings around it; `None` outside them.
fn interpolate(points: &[(i64, f64)], t: i64) -> Option<f64> {
    let after = points.iter().position(|&(at, _)| at >= t)?;
    let (t1, v1) = points[after];
    if t1 == t {
        return Some(v1);
    }
    let (t0, v0) = points[after.checked_sub(1)?];
    Some(v0 + (v1 - v0) * (t - t0) as f64 / (t1 - t0) as f64)
}

/// The chats every client received, to set against the server's deliveries: k6's (the
/// healthy clients' in slow-consumers) and the slow consumers', which the native report
/// keeps apart (so [`derive_long`] must have run).
fn chats_received(result: &RunResult) -> Option<u64> {
    let slow = result
        .slow_consumers
        .as_ref()
        .map_or(0, |s| s.slow_received);
    result.k6.as_ref().map(|k| k.chat_received + slow)
}

/// The sessions the verdict counts as finished, of `(sessions, closed)`: all of them in
/// idle-capacity, which ends by stopping k6 with every client still joined (by design, not
/// sessions k6 failed to finish); the closed ones elsewhere.
fn finished_sessions(scenario: Scenario, (sessions, closed): (u64, u64)) -> u64 {
    if scenario == Scenario::IdleCapacity {
        sessions
    } else {
        closed
    }
}

/// The cores of the load generators' hosts, each host counted once by the name its engines
/// report; `None` when the load runs on the server's engine alone.
fn loadgen_hosts_cores(plan: &Plan) -> Option<f64> {
    let engines = &plan.setup.conditions.loadgen_engines;
    if engines.is_empty() {
        return None;
    }
    let mut seen = std::collections::BTreeMap::new();
    for engine in engines {
        seen.entry(engine.host_name.as_str())
            .or_insert(engine.machine_cores.max(1));
    }
    Some(seen.values().map(|&c| c as f64).sum())
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// Peak and mean CPU, peak memory and CPU-seconds of one container over the series.
fn usage(
    series: &[Sample],
    cpu: impl Fn(&Sample) -> f64,
    mem: impl Fn(&Sample) -> u64,
    ceiling: f64,
) -> Usage {
    // Docker's first stats sample has no previous CPU reading; leave it out of the mean.
    let measured = &series[series.len().min(1)..];
    Usage {
        peak_cpu_percent: series.iter().map(&cpu).fold(0.0, f64::max),
        mean_cpu_percent: if measured.is_empty() {
            0.0
        } else {
            measured.iter().map(&cpu).sum::<f64>() / measured.len() as f64
        },
        peak_mem_bytes: series.iter().map(&mem).max().unwrap_or(0),
        cpu_limit_percent: ceiling,
        cpu_seconds: series
            .windows(2)
            .map(|w| cpu(&w[1]) / 100.0 * w[1].t_ms.saturating_sub(w[0].t_ms) as f64 / 1000.0)
            .sum(),
    }
}

/// Counters over the load window: end minus start; uptime and current connections as at the end.
pub fn window(start: &ServerStats, end: &ServerStats) -> ServerStats {
    ServerStats {
        server: end.server.clone(),
        uptime_ms: end.uptime_ms,
        connections_current: end.connections_current,
        connections_total: end
            .connections_total
            .saturating_sub(start.connections_total),
        joins: end.joins.saturating_sub(start.joins),
        frames_in: end.frames_in.saturating_sub(start.frames_in),
        chat_in: end.chat_in.saturating_sub(start.chat_in),
        chat_accepted: end.chat_accepted.saturating_sub(start.chat_accepted),
        deliveries: end.deliveries.saturating_sub(start.deliveries),
        dropped_ratelimit: end
            .dropped_ratelimit
            .saturating_sub(start.dropped_ratelimit),
        dropped_slow: end.dropped_slow.saturating_sub(start.dropped_slow),
        malformed: end.malformed.saturating_sub(start.malformed),
        // Absent at either end (a server that does not count bytes): absent, never zero.
        bytes_written: end
            .bytes_written
            .zip(start.bytes_written)
            .map(|(end, start)| end.saturating_sub(start)),
    }
}

/// Number of cores in a cpuset such as `0-1,3`.
pub fn cpuset_cores(cpuset: Option<&str>) -> Option<f64> {
    let mut count = 0u32;
    for part in cpuset?.split(',').filter(|p| !p.trim().is_empty()) {
        match part.trim().split_once('-') {
            Some((a, b)) => {
                count += b.parse::<u32>().ok()?.checked_sub(a.parse::<u32>().ok()?)? + 1
            }
            None => {
                part.trim().parse::<u32>().ok()?;
                count += 1;
            }
        }
    }
    (count > 0).then_some(count as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_capacity_clients_left_joined_at_the_end_are_not_sessions_cut_off() {
        assert_eq!(finished_sessions(Scenario::IdleCapacity, (3000, 0)), 3000);
        assert_eq!(finished_sessions(Scenario::Capacity, (3000, 2990)), 2990);
        assert_eq!(finished_sessions(Scenario::Steady, (100, 0)), 0);
    }

    #[test]
    fn the_slow_consumers_chats_count_as_received_beside_the_healthy_clients() {
        let mut result = super::super::fixtures::blank("slow_consumers");
        result.k6 = Some(wscbench_results::K6Metrics {
            chat_received: 20_160,
            ..Default::default()
        });
        assert_eq!(chats_received(&result), Some(20_160));
        result.slow_consumers = Some(wscbench_results::SlowConsumers {
            slow_received: 2_304,
            ..Default::default()
        });
        assert_eq!(chats_received(&result), Some(22_464));
        result.k6 = None;
        assert_eq!(chats_received(&result), None);
    }

    #[test]
    fn cpusets_count_their_cores() {
        assert_eq!(cpuset_cores(Some("0")), Some(1.0));
        assert_eq!(cpuset_cores(Some("0-1")), Some(2.0));
        assert_eq!(cpuset_cores(Some("0-1,3")), Some(3.0));
        assert_eq!(cpuset_cores(Some("x")), None);
        assert_eq!(cpuset_cores(None), None);
    }

    #[test]
    fn cpu_seconds_integrate_the_per_second_percentages() {
        let series: Vec<Sample> = [(0, 999.0), (1000, 50.0), (2000, 150.0), (2500, 200.0)]
            .iter()
            .map(|&(t_ms, cpu)| Sample {
                t_ms,
                server_cpu_percent: Some(cpu),
                ..Sample::default()
            })
            .collect();
        let u = usage(
            &series,
            |s| s.server_cpu_percent.unwrap_or(0.0),
            |_| 0,
            200.0,
        );
        // 0.5 + 1.5 + 1.0 (half a second at two cores); the first sample has no interval.
        assert!((u.cpu_seconds - 3.0).abs() < 1e-9, "{}", u.cpu_seconds);
        assert!((u.mean_cpu_percent - 400.0 / 3.0).abs() < 1e-9);
        assert_eq!(u.peak_cpu_percent, 999.0);
    }

    /// profile-b/rust at 200k deliveries/s in run 20261128-000835: (t_ms, deliveries, CPU
    /// %). Docker's CPU readings lag the counters by a second: 191k deliveries by 3171 ms
    /// beside 0.03 % CPU.
    const LAGGED: [(u64, u64, f64); 8] = [
        (1170, 12, 0.0),
        (2170, 12, 20.4),
        (3171, 191_454, 0.03),
        (4179, 393_714, 98.4),
        (5171, 586_736, 99.5),
        (6176, 793_372, 94.2),
        (7170, 807_893, 99.6),
        (8171, 807_893, 2.3),
    ];

    fn lagged(read_behind_ms: Option<i64>) -> Vec<Sample> {
        LAGGED
            .iter()
            .map(|&(t_ms, deliveries, cpu)| Sample {
                t_ms,
                deliveries: Some(deliveries),
                server_cpu_percent: Some(cpu),
                server_cpu_read_ms: read_behind_ms.map(|behind| t_ms as i64 - behind),
                ..Sample::default()
            })
            .collect()
    }

    #[test]
    fn the_chats_run_from_the_first_sample_after_deliveries_moved_to_the_last_before_they_stopped()
    {
        assert_eq!(chatting(&lagged(None), 5), Some((3171, 6176)));
        // A hold shorter than the chats seen ends the window at the hold.
        assert_eq!(chatting(&lagged(None), 3), Some((3171, 5171)));
        let idle: Vec<Sample> = lagged(None)
            .into_iter()
            .map(|s| Sample {
                deliveries: Some(12),
                ..s
            })
            .collect();
        assert_eq!(chatting(&idle, 5), None);
    }

    #[test]
    fn cpu_read_a_second_behind_the_counters_is_set_against_the_deliveries_of_its_own_interval() {
        // The truth: every chat's CPU (the readings of 4179 to 8171 ms) against every delivery.
        let truth = 807_881.0 / (0.984 + 0.995 + 0.942 + 0.996 + 0.023);
        let read = held_efficiency(&lagged(Some(1000)), chatting(&lagged(None), 5)).unwrap();
        assert!((read / truth - 1.0).abs() < 0.01, "{read} vs {truth}");
        // The window before: from the ramp's end (2 s) with each reading at its sample's
        // time, it set the second of 191k deliveries beside the 0.03 % read at 3171 ms and
        // flattered every server by about a third.
        let before = held_efficiency(&lagged(None), Some((2170, 6176))).unwrap();
        assert!(before / truth > 1.3, "{before} vs {truth}");
    }

    #[test]
    fn with_the_cumulative_cpu_a_missed_or_repeated_reading_changes_nothing() {
        // 99 % of a core from 3000 ms on, read a second behind each sample.
        let sample = |t_ms: u64, read: i64| Sample {
            t_ms,
            deliveries: Some(t_ms * 100),
            server_cpu_percent: Some(99.0),
            server_cpu_read_ms: Some(read),
            server_cpu_used_ms: Some((read - 3000).max(0) as f64 * 0.99),
            ..Sample::default()
        };
        let every: Vec<Sample> = (3..10)
            .map(|s| sample(s * 1000, s as i64 * 1000 - 1000))
            .collect();
        let cpu = cpu_seconds_between(&every, 4000, 7000);
        assert!((cpu - 2.97).abs() < 1e-9, "{cpu}");
        // The sample of 6000 ms repeats the reading before it (none came in that second):
        // the same CPU-seconds.
        let mut missed = every.clone();
        missed[3].server_cpu_read_ms = missed[2].server_cpu_read_ms;
        missed[3].server_cpu_used_ms = missed[2].server_cpu_used_ms;
        assert!((cpu_seconds_between(&missed, 4000, 7000) - 2.97).abs() < 1e-9);
        // Halfway between readings: interpolated.
        assert!((cpu_seconds_between(&every, 4500, 5000) - 0.495).abs() < 1e-9);
    }
}
