//! A load curve's levels inside one point: the point's measurement split into one result per
//! level, each a row of the results as a point of its own would be (its `deliveries`, its
//! slice of the series, the server's counters between the samples inside its hold, k6's
//! figures from its hold's window), and the rule by which a level ends the point. Pure: the
//! phases measure, this file only reads what they measured (docs/methodology.md, "The load
//! curve").

use std::collections::BTreeMap;

use wscbench_results::{ErrorCounts, Outcome, RunResult, ServerStats};

use super::derive::{samples_within, window};
use crate::native::{Merged, NativeCounters};

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
pub fn split(whole: &Whole<'_>, params: &[BTreeMap<String, f64>]) -> Vec<Level> {
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
        let held = samples_within(&result.series, from, to);
        result.server_stats = held.and_then(|(a, b)| Some(window(stats_at(whole, a)?, stats_at(whole, b)?)));
        result.duration_ms = match held {
            Some((a, b)) => b - a,
            None => whole.result.duration_ms.min(to).saturating_sub(from),
        };
        let (mut k6, mut errors) = w.k6_metrics(connect_p95_ms, merged.latency_probe_every);
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
            last.outcome_detail = Some(format!("{ending}{}", not_run(i + 1))).filter(|d| !d.is_empty());
            return;
        }
    }
    let kept = results.len();
    if let Some(last) = results.last_mut().filter(|_| kept < planned && kept > 0) {
        last.outcome_detail = Some(format!(
            "k6's monitor ended the point after this level{}",
            not_run(kept)
        ));
    }
}

/// The point's result as one level's, before the level's own figures: its load parameters,
/// and nothing derived.
fn level_result(whole: &RunResult, params: &BTreeMap<String, f64>) -> RunResult {
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
fn outside_windows(all: ErrorCounts, windows: &[crate::native::MergedWindow]) -> ErrorCounts {
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
