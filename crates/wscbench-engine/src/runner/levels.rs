//! A load curve's levels inside one point: the point's measurement split into one result per
//! level, each a row of the results as a point of its own would be (its `deliveries`, its
//! slice of the series, the server's counters over its hold, k6's figures from its hold's
//! window), and the rule by which a level ends the point. Pure: the
//! phases measure, this file only reads what they measured (docs/methodology.md, "The load
//! curve").

use wscbench_results::{ErrorCounts, LoadParams, Outcome, RunResult, ServerStats};

use super::derive::window;
use crate::load::native::{Merged, NativeCounters};

/// A level ends the point when less than this share of what it offered arrived (the same
/// rule as `LEVEL_DELIVERED_SHARE` in `scenarios/load-curve.js`, whose monitor stops k6).
pub const LEVEL_DELIVERED_SHARE: f64 = 0.9;
/// ... or when its response time p95 passed this many times the latency target
/// (`LEVEL_LATE_FACTOR` in `scenarios/load-curve.js`).
pub const LEVEL_LATE_FACTOR: f64 = 4.0;

/// What one start of a load curve measured.
pub struct Whole<'a> {
    /// The point's result: the whole series, the k6 figures of the whole run.
    pub result: &'a RunResult,
    /// How the point ended.
    pub outcome: Outcome,
    /// Why, for a non-`ok` outcome.
    pub detail: Option<String>,
    /// The merged native report, whose steps are the levels' holds.
    pub merged: Option<&'a Merged>,
    /// The server's counters read with each sample, by the sample's `t_ms`.
    pub stats: &'a [(u64, ServerStats)],
    /// Epoch ms at which the load started: the series' zero.
    pub load_started_epoch_ms: u64,
    /// How long each level's rate change settles before its hold, in ms.
    pub settle_ms: u64,
}

/// One level's result, before its figures are derived, and its hold in ms of the load.
pub struct Level {
    /// The level as a result of its own.
    pub result: RunResult,
    /// k6's window of the level's hold, `(from, to)` ms of the load; `None` for a point that
    /// failed as a whole.
    pub hold: Option<(u64, u64)>,
}

/// The levels of `whole`, one per load parameters of `params` (the levels, rising) that ran:
/// a level runs until k6's window of its hold ends, or is the one the server died in. A point
/// that failed as a whole (verification, k6, an interrupt, no native report) records its
/// failure at every level, as separate points each would have.
pub fn split(whole: &Whole<'_>, params: &[LoadParams]) -> Vec<Level> {
    let died = matches!(whole.outcome, Outcome::ServerCrashed | Outcome::OomKilled);
    let merged = match whole.merged {
        Some(merged) if whole.outcome == Outcome::Ok || died => merged,
        _ => {
            let (outcome, detail) = match (whole.outcome, whole.merged) {
                (Outcome::Ok, None) => (
                    Outcome::LoadgenFailed,
                    Some("no native report to read the levels' holds from".to_string()),
                ),
                (outcome, _) => (outcome, whole.detail.clone()),
            };
            return params
                .iter()
                .map(|p| {
                    let mut result = level_result(whole.result, p);
                    result.outcome = outcome;
                    result.outcome_detail = detail.clone();
                    Level { result, hold: None }
                })
                .collect();
        }
    };
    let outside = outside_windows(whole.result.errors.clone(), &merged.steps);
    let connect_p95_ms = whole.result.k6.as_ref().map_or(0.0, |k| k.connect_p95_ms);
    let mut levels = Vec::new();
    for (i, (p, w)) in params.iter().zip(&merged.steps).enumerate() {
        let from = w.from_ms.saturating_sub(whole.load_started_epoch_ms);
        let to = w.to_ms.saturating_sub(whole.load_started_epoch_ms);
        let reached = whole.result.duration_ms >= to;
        if !reached && !died {
            break;
        }
        let mut result = level_result(whole.result, p);
        result.series = whole
            .result
            .series
            .iter()
            .filter(|s| s.t_ms + whole.settle_ms.min(1000) > from && s.t_ms <= to)
            .cloned()
            .collect();
        let (mut k6, mut errors) = w.k6_metrics(connect_p95_ms, merged.latency_probe_every);
        result.server_stats = counters_over(whole, &result.series, (from, to)).map(|mut stats| {
            // The server cannot have accepted chats the clients did not send: where the
            // extrapolation to the window's edges reads more, the clients' count stands.
            stats.chat_accepted = stats.chat_accepted.min(k6.chat_sent);
            stats
        });
        result.duration_ms = whole.result.duration_ms.min(to).saturating_sub(from);
        // The same clients carry every level: the sessions are the point's.
        if let Some(all) = &whole.result.k6 {
            k6.sessions = all.sessions;
            k6.sessions_closed = all.sessions_closed;
        }
        if i == 0 {
            errors = add(errors, &outside);
        }
        result.k6 = Some(k6);
        result.errors = errors;
        if !reached {
            result.outcome = whole.outcome;
            result.outcome_detail = whole.detail.clone();
        }
        levels.push(Level {
            result,
            hold: Some((from, to)),
        });
        if !reached {
            return levels;
        }
    }
    // A server that died after every hold (in the leave) died at the last level.
    if let Some(last) = levels.last_mut().filter(|_| died) {
        last.result.outcome = whole.outcome;
        last.result.outcome_detail = whole.detail.clone();
    }
    levels
}

/// Why a level's result ends its point, or `None` when the next level may run: client errors,
/// less than [`LEVEL_DELIVERED_SHARE`] of what it offered arrived, or a response time p95
/// over [`LEVEL_LATE_FACTOR`] times the latency target.
pub fn ended(result: &RunResult, slo_p99_ms: f64) -> Option<String> {
    let errors = result.errors.total();
    if errors > 0 {
        return Some(format!("{errors} client errors"));
    }
    if let Some(delivered) = result
        .curve
        .as_ref()
        .and_then(|c| c.delivered_ratio)
        .filter(|&d| d < LEVEL_DELIVERED_SHARE)
    {
        return Some(format!(
            "{:.1} % of the offered deliveries arrived",
            delivered * 100.0
        ));
    }
    let p95_ms = result.k6.as_ref()?.latency.p95_ms;
    (p95_ms > LEVEL_LATE_FACTOR * slo_p99_ms).then(|| {
        format!("response time p95 {p95_ms:.1} ms, over {LEVEL_LATE_FACTOR} × {slo_p99_ms} ms")
    })
}

/// Keeps the levels up to the first that ended the point (by [`ended`], or by its server's
/// death) and says so in its detail (a point that failed as a whole keeps every level), with how many of the `planned` levels were not run; a
/// point that k6's monitor stopped below the last level says that instead. The levels above
/// are not written: the run's `stops` name them `ended-below` or `died-below`.
pub fn end_at_first_ended(results: &mut Vec<RunResult>, planned: usize, slo_p99_ms: f64) {
    let not_run = |kept: usize| match planned.saturating_sub(kept) {
        0 => String::new(),
        1 => "; the level above was not run".to_string(),
        n => format!("; the {n} levels above were not run"),
    };
    for i in 0..results.len() {
        let why = match results[i].outcome {
            Outcome::Ok => ended(&results[i], slo_p99_ms),
            Outcome::ServerCrashed | Outcome::OomKilled => {
                results[i].outcome_detail.clone().or(Some(String::new()))
            }
            // A point that failed as a whole: every level records it.
            _ => return,
        };
        if let Some(why) = why {
            results.truncate(i + 1);
            let last = &mut results[i];
            let ending = match last.outcome {
                Outcome::Ok => format!("this level ended the point: {why}"),
                _ => why,
            };
            mark_ended(last, format!("{ending}{}", not_run(i + 1)));
            return;
        }
    }
    let kept = results.len();
    if let Some(last) = results.last_mut().filter(|_| kept < planned && kept > 0) {
        mark_ended(
            last,
            format!(
                "k6's monitor ended the point after this level{}",
                not_run(kept)
            ),
        );
    }
}

/// Records in a level's result that it ended its point: in its outcome's detail, and in its
/// curve step, where the report reads that the levels above did not run in its round.
fn mark_ended(result: &mut RunResult, why: String) {
    let why = Some(why).filter(|w| !w.is_empty());
    if let Some(curve) = &mut result.curve {
        curve.ended_point = why.clone().or(Some("the level ended the point".into()));
    }
    result.outcome_detail = why;
}

/// The point's result as one level's, before the level's own figures: its load parameters,
/// and nothing derived.
fn level_result(whole: &RunResult, params: &LoadParams) -> RunResult {
    let mut result = whole.clone();
    result.load_params = params.clone();
    result.outcome = Outcome::Ok;
    result.outcome_detail = None;
    result.derived = Default::default();
    result.loadgen_bound = false;
    result.loadgen_bound_reasons = Vec::new();
    result.curve = None;
    result
}

/// The server's counters over k6's window `(from, to)` of a level's hold: between the first
/// and last samples inside it, extended to the window's edges at the rates the first two and
/// the last two samples inside it read (a level's own rate: never across its rate change nor
/// the next level's), so that they count what k6's window counts. `None` without two
/// samples inside.
fn counters_over(
    whole: &Whole<'_>,
    series: &[wscbench_results::Sample],
    (from, to): (u64, u64),
) -> Option<ServerStats> {
    let inside: Vec<u64> = series
        .iter()
        .map(|s| s.t_ms)
        .filter(|&t| t >= from && t <= to)
        .collect();
    let [a, a2, ..] = inside[..] else {
        return None;
    };
    let [.., b1, b] = inside[..] else {
        return None;
    };
    let start = extrapolated((stats_at(whole, a)?, a), (stats_at(whole, a2)?, a2), from);
    let end = extrapolated((stats_at(whole, b1)?, b1), (stats_at(whole, b)?, b), to);
    Some(window(&start, &end))
}

/// The counters at `t` on the line through two readings (their gauges as at the later one).
fn extrapolated((p, tp): (&ServerStats, u64), (q, tq): (&ServerStats, u64), t: u64) -> ServerStats {
    let share = (t as f64 - tp as f64) / (tq as f64 - tp as f64);
    let at = |x: u64, y: u64| (x as f64 + (y as f64 - x as f64) * share).round().max(0.0) as u64;
    ServerStats {
        server: q.server.clone(),
        uptime_ms: q.uptime_ms,
        connections_current: q.connections_current,
        connections_total: at(p.connections_total, q.connections_total),
        joins: at(p.joins, q.joins),
        frames_in: at(p.frames_in, q.frames_in),
        chat_in: at(p.chat_in, q.chat_in),
        chat_accepted: at(p.chat_accepted, q.chat_accepted),
        deliveries: at(p.deliveries, q.deliveries),
        dropped_ratelimit: at(p.dropped_ratelimit, q.dropped_ratelimit),
        dropped_slow: at(p.dropped_slow, q.dropped_slow),
        malformed: at(p.malformed, q.malformed),
        bytes_written: p.bytes_written.zip(q.bytes_written).map(|(x, y)| at(x, y)),
    }
}

/// The server's counters read with the sample at `t_ms`.
fn stats_at<'a>(whole: &Whole<'a>, t_ms: u64) -> Option<&'a ServerStats> {
    whole
        .stats
        .iter()
        .find(|(t, _)| *t == t_ms)
        .map(|(_, stats)| stats)
}

/// The point's client errors outside every hold (the join ramp, the rate changes, the leave):
/// the first level counts them.
fn outside_windows(all: ErrorCounts, windows: &[crate::load::native::MergedWindow]) -> ErrorCounts {
    let mut inside = NativeCounters::default();
    for w in windows {
        inside.connect_errors += w.counters.connect_errors;
        inside.abnormal_closes += w.counters.abnormal_closes;
        inside.ws_errors += w.counters.ws_errors;
    }
    ErrorCounts {
        failed_connects: all.failed_connects.saturating_sub(inside.connect_errors),
        abnormal_closes: all.abnormal_closes.saturating_sub(inside.abnormal_closes),
        script_errors: all.script_errors.saturating_sub(inside.ws_errors),
        failed_connect_reasons: all.failed_connect_reasons,
    }
}

fn add(a: ErrorCounts, b: &ErrorCounts) -> ErrorCounts {
    ErrorCounts {
        failed_connects: a.failed_connects + b.failed_connects,
        abnormal_closes: a.abnormal_closes + b.abnormal_closes,
        script_errors: a.script_errors + b.script_errors,
        failed_connect_reasons: b.failed_connect_reasons.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::native::MergedWindow;
    use hdrhistogram::Histogram;
    use wscbench_results::LoadParam;
    use wscbench_results::{CurveStep, K6Metrics, Sample};

    /// When the load started, epoch ms.
    const T0: u64 = 1_700_000_000_000;
    /// One room of 50: each chat asks for 49 deliveries.
    const OTHERS: u64 = 49;

    fn histogram(values_us: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
        for &v in values_us {
            h.record(v).unwrap();
        }
        h
    }

    /// k6's window of a hold `[from, to)` ms of the load, with its chats and latencies.
    fn hold(from: u64, to: u64, chats: u64, received: u64, latency_us: &[u64]) -> MergedWindow {
        MergedWindow {
            clients: 50,
            from_ms: T0 + from,
            to_ms: T0 + to,
            counters: NativeCounters {
                chat_sent: chats,
                chats_intended: chats,
                chats_sent_on_time: chats,
                chat_received: received,
                ..Default::default()
            },
            latency: histogram(latency_us),
            response_time_us: histogram(latency_us),
            pong_latency_us: histogram(&[]),
        }
    }

    fn merged(steps: Vec<MergedWindow>) -> Merged {
        Merged {
            counters: NativeCounters::default(),
            process_cpu_ns: 0,
            latency: histogram(&[]),
            response_time_us: histogram(&[]),
            cross_latency: histogram(&[]),
            steps,
            period_ms: 0,
            periods: Vec::new(),
            latency_probe_every: 10,
            negotiated: Vec::new(),
            connect_error_reasons: Default::default(),
            slow: None,
        }
    }

    /// A curve of two levels (2,450 and 9,800 deliveries/s, 50 and 200 chats/s) after a 2-s
    /// ramp, each a 1-s rate change and a 5-s hold, sampled every second from 500 ms on.
    /// Returns the series and the server's counters with each sample.
    fn measured() -> (Vec<Sample>, Vec<(u64, ServerStats)>) {
        let chats_per_s = |t: u64| match t {
            0..2000 => 0,
            2000..8000 => 50,
            _ => 200,
        };
        let mut chats = 0u64;
        let mut series = Vec::new();
        let mut stats = Vec::new();
        let mut last = 0;
        for t in (500..15_000).step_by(1000) {
            // Chats accepted since the last sample, millisecond by millisecond.
            chats += (last..t).map(chats_per_s).sum::<u64>() / 1000;
            last = t;
            series.push(Sample {
                t_ms: t,
                deliveries: Some(chats * OTHERS),
                chat_in: Some(chats),
                connections: Some(50),
                server_cpu_percent: Some(50.0),
                server_cpu_read_ms: Some(t as i64),
                server_cpu_used_ms: Some(t as f64 / 2.0),
                ..Sample::default()
            });
            stats.push((
                t,
                ServerStats {
                    connections_current: 50,
                    chat_in: chats,
                    chat_accepted: chats,
                    deliveries: chats * OTHERS,
                    ..ServerStats::default()
                },
            ));
        }
        (series, stats)
    }

    fn params(deliveries: f64) -> LoadParams {
        [(LoadParam::Deliveries, deliveries)].into()
    }

    fn whole_result(series: Vec<Sample>, duration_ms: u64) -> RunResult {
        let mut result = super::super::fixtures::blank("load_curve");
        result.series = series;
        result.duration_ms = duration_ms;
        result.k6 = Some(K6Metrics {
            sessions: 50,
            sessions_closed: 50,
            connect_p95_ms: 4.0,
            ..K6Metrics::default()
        });
        result
    }

    #[test]
    fn each_level_gets_its_slice_its_counters_over_its_hold_and_k6_s_window() {
        let (series, stats) = measured();
        let result = whole_result(series, 16_000);
        let merged = merged(vec![
            hold(3000, 8000, 250, 250 * OTHERS, &[2_000, 3_000]),
            hold(9000, 14_000, 1000, 1000 * OTHERS, &[5_000, 60_000]),
        ]);
        let whole = Whole {
            result: &result,
            outcome: Outcome::Ok,
            detail: None,
            merged: Some(&merged),
            stats: &stats,
            load_started_epoch_ms: T0,
            settle_ms: 1000,
        };
        let levels = split(&whole, &[params(2450.0), params(9800.0)]);
        assert_eq!(levels.len(), 2);
        let (first, second) = (&levels[0], &levels[1]);
        assert_eq!(first.result.load_params, params(2450.0));
        assert_eq!(second.result.load_params, params(9800.0));
        assert_eq!(
            (first.hold, second.hold),
            (Some((3000, 8000)), Some((9000, 14_000)))
        );
        // The slice: the second before the hold (the rate change) and the hold.
        let times = |l: &Level| l.result.series.iter().map(|s| s.t_ms).collect::<Vec<_>>();
        assert_eq!(times(first), [2500, 3500, 4500, 5500, 6500, 7500]);
        assert_eq!(times(second), [8500, 9500, 10_500, 11_500, 12_500, 13_500]);
        // The server's counters over exactly k6's window: 5 s at each level's rate, though
        // the samples around the window's end straddle the next level's rate change.
        let stats = |l: &Level| l.result.server_stats.clone().unwrap();
        assert_eq!(stats(first).chat_accepted, 250);
        assert_eq!(stats(first).deliveries, 250 * OTHERS);
        assert_eq!(stats(second).deliveries, 1000 * OTHERS);
        assert_eq!(first.result.duration_ms, 5000);
        // k6's figures are its window's; the sessions are the point's.
        let k6 = second.result.k6.as_ref().unwrap();
        assert_eq!(k6.chat_received, 1000 * OTHERS);
        assert_eq!(k6.chats.unwrap().intended, 1000);
        assert_eq!(
            (k6.sessions, k6.sessions_closed, k6.connect_p95_ms),
            (50, 50, 4.0)
        );
        assert!(
            (k6.latency.max_ms - 60.0).abs() < 0.1,
            "{}",
            k6.latency.max_ms
        );
        assert!(first.result.k6.as_ref().unwrap().latency.max_ms < 4.0);
        assert!(levels.iter().all(|l| l.result.outcome == Outcome::Ok));
    }

    #[test]
    fn a_level_k6_never_finished_is_not_run_and_the_one_the_server_died_in_records_it() {
        let stats = measured().1;
        let merged = merged(vec![
            hold(3000, 8000, 250, 250 * OTHERS, &[2_000]),
            hold(9000, 14_000, 0, 0, &[]),
        ]);
        fn whole<'a>(
            result: &'a RunResult,
            outcome: Outcome,
            merged: &'a Merged,
            stats: &'a [(u64, ServerStats)],
        ) -> Whole<'a> {
            Whole {
                result,
                outcome,
                detail: (outcome != Outcome::Ok)
                    .then(|| "the server exited with Some(2) during the load".into()),
                merged: Some(merged),
                stats,
                load_started_epoch_ms: T0,
                settle_ms: 1000,
            }
        }
        let levels = [params(2450.0), params(9800.0)];
        // k6's monitor stopped the test 700 ms after the first hold.
        let stopped = whole_result(measured().0[..9].to_vec(), 8_900);
        assert_eq!(
            split(&whole(&stopped, Outcome::Ok, &merged, &stats), &levels).len(),
            1
        );
        // The server died 2 s into the second hold: that level records the crash.
        let died = whole_result(measured().0[..12].to_vec(), 11_600);
        let split = split(
            &whole(&died, Outcome::ServerCrashed, &merged, &stats),
            &levels,
        );
        assert_eq!(split.len(), 2);
        assert_eq!(split[0].result.outcome, Outcome::Ok);
        assert_eq!(split[1].result.outcome, Outcome::ServerCrashed);
        assert!(
            split[1]
                .result
                .outcome_detail
                .as_deref()
                .unwrap()
                .contains("exited")
        );
    }

    #[test]
    fn a_point_that_failed_as_a_whole_records_its_failure_at_every_level() {
        let result = whole_result(Vec::new(), 0);
        let whole = Whole {
            result: &result,
            outcome: Outcome::VerifyFailed,
            detail: Some("health: /health did not answer".into()),
            merged: None,
            stats: &[],
            load_started_epoch_ms: T0,
            settle_ms: 1000,
        };
        let levels = split(&whole, &[params(2450.0), params(9800.0)]);
        assert_eq!(levels.len(), 2);
        assert!(
            levels
                .iter()
                .all(|l| l.result.outcome == Outcome::VerifyFailed && l.hold.is_none())
        );
        assert_eq!(levels[1].result.load_params, params(9800.0));
        let mut results: Vec<RunResult> = levels.into_iter().map(|l| l.result).collect();
        end_at_first_ended(&mut results, 2, 50.0);
        assert_eq!(results.len(), 2, "every level keeps the failure");
    }

    /// A level's result as derive leaves it: what arrived of the offered, p95, errors.
    fn level(deliveries: f64, delivered_ratio: f64, p95_ms: f64) -> RunResult {
        let mut result = super::super::fixtures::blank("load_curve");
        result.load_params = params(deliveries);
        result.curve = Some(CurveStep {
            offered_deliveries_per_s: deliveries,
            room_size: 50,
            clients: 50,
            chats_per_s: 1.0,
            offered_deliveries: None,
            delivered_ratio: Some(delivered_ratio),
            slo_p99_ms: 50.0,
            hold_deliveries_per_server_cpu_s: None,
            ended_point: None,
        });
        result.k6 = Some(K6Metrics::default());
        result.k6.as_mut().unwrap().latency.p95_ms = p95_ms;
        result
    }

    #[test]
    fn the_first_level_not_carried_by_far_ends_the_point_and_says_so() {
        // Late (p99 over the target) but within four times it: the next level runs.
        let mut results = vec![
            level(50e3, 1.0, 10.0),
            level(100e3, 0.9995, 120.0),
            level(200e3, 0.7, 900.0),
            level(400e3, 0.5, 2000.0),
        ];
        end_at_first_ended(&mut results, 4, 50.0);
        assert_eq!(results.len(), 3);
        assert_eq!(results[1].outcome_detail, None);
        assert_eq!(
            results[2].outcome_detail.as_deref(),
            Some(
                "this level ended the point: 70.0 % of the offered deliveries arrived; the level above was not run"
            )
        );
        assert_eq!(
            results[2].outcome,
            Outcome::Ok,
            "measured: a row of the curve"
        );
        assert_eq!(
            results[2].curve.as_ref().unwrap().ended_point,
            results[2].outcome_detail,
            "the report reads it from the curve step"
        );
        assert_eq!(results[1].curve.as_ref().unwrap().ended_point, None);
        // Far too late, everything delivered.
        let mut late = vec![level(50e3, 1.0, 201.0), level(100e3, 1.0, 10.0)];
        end_at_first_ended(&mut late, 2, 50.0);
        assert_eq!(late.len(), 1);
        assert!(
            late[0]
                .outcome_detail
                .as_deref()
                .unwrap()
                .contains("response time p95 201.0 ms, over 4 × 50 ms")
        );
        // Client errors.
        let mut errors = vec![level(50e3, 1.0, 10.0), level(100e3, 1.0, 10.0)];
        errors[0].errors.abnormal_closes = 3;
        end_at_first_ended(&mut errors, 2, 50.0);
        assert!(
            errors[0]
                .outcome_detail
                .as_deref()
                .unwrap()
                .starts_with("this level ended the point: 3 client errors")
        );
        // k6's monitor stopped the point where this side saw nothing: said so.
        let mut stopped = vec![level(50e3, 0.95, 10.0)];
        end_at_first_ended(&mut stopped, 3, 50.0);
        assert_eq!(
            stopped[0].outcome_detail.as_deref(),
            Some("k6's monitor ended the point after this level; the 2 levels above were not run")
        );
        // Every level carried: nothing said.
        let mut all = vec![level(50e3, 1.0, 10.0), level(100e3, 1.0, 10.0)];
        end_at_first_ended(&mut all, 2, 50.0);
        assert!(all.iter().all(|r| r.outcome_detail.is_none()));
    }

    #[test]
    fn a_server_that_died_at_a_level_ends_the_point_there() {
        let mut results = vec![level(50e3, 1.0, 10.0), level(100e3, 0.4, 10.0)];
        results[1].outcome = Outcome::OomKilled;
        results[1].outcome_detail =
            Some("the server was killed for exceeding its memory limit".into());
        end_at_first_ended(&mut results, 4, 50.0);
        assert_eq!(results.len(), 2);
        assert_eq!(
            results[1].outcome_detail.as_deref(),
            Some(
                "the server was killed for exceeding its memory limit; the 2 levels above were not run"
            )
        );
    }
}
