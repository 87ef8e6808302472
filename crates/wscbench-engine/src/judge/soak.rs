//! The soak KPIs of a long run, as pure functions of its per-second samples and the native
//! report's periods: memory slope (least squares over the hold after warm-up), throughput
//! and latency drift (last tenth against first tenth), errors and drops, each with a verdict
//! against the thresholds below (documented in docs/methodology.md, "Soak").

use wscbench_results::{KpiVerdict, Sample, SoakKpis};

use crate::judge::series::{at, least_squares_slope};
use crate::load::native::MergedWindow;

/// Runs at least this long get soak KPIs in any mode, in ms.
pub const SOAK_MIN_MS: u64 = 300_000;
/// The warm-up left out of the memory slope: this share of the run...
pub const WARMUP_SHARE: f64 = 0.1;
/// ...but at most this long, in ms.
pub const WARMUP_MAX_MS: u64 = 120_000;
/// Memory may grow by at most this much per hour.
pub const MEMORY_SLOPE_MAX_MIB_PER_H: f64 = 10.0;
/// Throughput may move by at most this share between the first and the last tenth.
pub const THROUGHPUT_DRIFT_MAX_RATIO: f64 = 0.05;
/// Latency p95 may grow by at most this share between the first and the last tenth...
pub const LATENCY_DRIFT_MAX_RATIO: f64 = 0.5;
/// ...or by this much, whichever is larger (loopback latencies are a fraction of a ms, and
/// half of nothing is noise), in ms.
pub const LATENCY_DRIFT_FLOOR_MS: f64 = 1.0;
/// Left out at the end of a hold: the scenarios stop chatting a second before everyone
/// leaves, and k6 starts its scenario a moment after the load phase began, in ms.
pub const QUIET_END_MS: u64 = 2_000;
/// Drops may be at most this share of deliveries + drops.
pub const DROP_MAX_RATIO: f64 = 0.001;

/// The warm-up of a run of `duration_ms`.
pub fn warmup_ms(duration_ms: u64) -> u64 {
    ((duration_ms as f64 * WARMUP_SHARE) as u64).min(WARMUP_MAX_MS)
}

/// Server memory's least-squares slope after `warmup_ms`, in MiB per hour.
pub fn memory_slope_mib_per_h(series: &[Sample], warmup_ms: u64) -> Option<f64> {
    let points: Vec<(f64, f64)> = series
        .iter()
        .filter(|s| s.t_ms >= warmup_ms)
        .filter_map(|s| {
            Some((
                s.t_ms as f64 / 3_600_000.0,
                s.server_mem_bytes? as f64 / (1u64 << 20) as f64,
            ))
        })
        .collect();
    least_squares_slope(&points)
}

/// Deliveries per second in the last tenth of `[from_ms, to_ms]` over those in its first
/// tenth, minus 1; `None` when the first tenth delivered nothing or the server was not read.
pub fn throughput_drift_ratio(series: &[Sample], from_ms: u64, to_ms: u64) -> Option<f64> {
    let tenth = to_ms.checked_sub(from_ms)? / 10;
    if tenth == 0 {
        return None;
    }
    let delivered =
        |a: u64, b: u64| Some(at(series, b, |s| s.deliveries)? - at(series, a, |s| s.deliveries)?);
    let first = delivered(from_ms, from_ms + tenth)?;
    let last = delivered(to_ms - tenth, to_ms)?;
    (first > 0.0).then(|| last / first - 1.0)
}

/// Latency p95 (ms) of the periods whose middle lies in the first and in the last tenth of
/// `[from_ms, to_ms]` (period starts relative to the same zero), each merged bucket by bucket.
pub fn latency_p95_first_last_ms(
    periods: &[(u64, &MergedWindow)],
    from_ms: u64,
    to_ms: u64,
) -> (Option<f64>, Option<f64>) {
    let tenth = to_ms.saturating_sub(from_ms) / 10;
    let p95 = |a: u64, b: u64| {
        let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
        let middle = |start: u64, w: &MergedWindow| start + w.to_ms.saturating_sub(w.from_ms) / 2;
        for (_, w) in periods
            .iter()
            .filter(|(start, w)| (a..b).contains(&middle(*start, w)))
        {
            match &mut merged {
                None => merged = Some(w.latency.clone()),
                Some(h) => {
                    let _ = h.add(&w.latency);
                }
            }
        }
        merged
            .filter(|h| !h.is_empty())
            .map(|h| h.value_at_quantile(0.95) as f64 / 1000.0)
    };
    if tenth == 0 {
        return (None, None);
    }
    (p95(from_ms, from_ms + tenth), p95(to_ms - tenth, to_ms))
}

/// What the soak KPIs are computed from.
#[derive(Debug, Clone, Copy)]
pub struct SoakInputs<'a> {
    /// Per-second samples, ms since the load started.
    pub series: &'a [Sample],
    /// The native report's periods with their start in ms since the load started.
    pub periods: &'a [(u64, &'a MergedWindow)],
    /// The end of the measured hold, in ms since the load started: the scenario's planned
    /// length less its quiet end (no chats before the leave), not the closes after it.
    pub hold_end_ms: u64,
    /// Client errors over the run.
    pub errors: u64,
    /// Server drops (slow consumers + rate limit) over the run.
    pub dropped: u64,
    /// Server deliveries over the run.
    pub deliveries: u64,
}

/// Every KPI and its verdict.
pub fn soak_kpis(inputs: &SoakInputs<'_>) -> SoakKpis {
    let end = inputs.hold_end_ms;
    let warmup = warmup_ms(end);
    let in_hold: Vec<Sample> = inputs
        .series
        .iter()
        .filter(|s| s.t_ms <= end)
        .cloned()
        .collect();
    let memory = memory_slope_mib_per_h(&in_hold, warmup);
    let throughput = throughput_drift_ratio(inputs.series, warmup, end);
    let (first, last) = latency_p95_first_last_ms(inputs.periods, warmup, end);
    let tenth = end.saturating_sub(warmup) / 10;
    let errors_last_tenth = inputs
        .periods
        .iter()
        .filter(|(start, _)| *start + tenth >= end)
        .map(|(_, w)| w.counters.errors())
        .sum();
    let offered = inputs.deliveries + inputs.dropped;
    let drop_ratio = if offered == 0 {
        0.0
    } else {
        inputs.dropped as f64 / offered as f64
    };
    let verdict = |kpi: &str, pass: Option<bool>, threshold: String| KpiVerdict {
        kpi: kpi.to_string(),
        pass,
        threshold,
    };
    let verdicts = vec![
        verdict(
            "memory_slope",
            memory.map(|m| m <= MEMORY_SLOPE_MAX_MIB_PER_H),
            format!("≤ {MEMORY_SLOPE_MAX_MIB_PER_H} MiB/h"),
        ),
        verdict(
            "throughput_drift",
            throughput.map(|d| d.abs() <= THROUGHPUT_DRIFT_MAX_RATIO),
            format!("within ±{} %", THROUGHPUT_DRIFT_MAX_RATIO * 100.0),
        ),
        verdict(
            "latency_drift",
            first
                .zip(last)
                .map(|(a, b)| b <= a + (a * LATENCY_DRIFT_MAX_RATIO).max(LATENCY_DRIFT_FLOOR_MS)),
            format!(
                "p95 up ≤ {} % or ≤ {LATENCY_DRIFT_FLOOR_MS} ms",
                LATENCY_DRIFT_MAX_RATIO * 100.0
            ),
        ),
        verdict("errors", Some(inputs.errors == 0), "none".to_string()),
        verdict(
            "drops",
            Some(drop_ratio < DROP_MAX_RATIO),
            format!("< {} %", DROP_MAX_RATIO * 100.0),
        ),
    ];
    SoakKpis {
        warmup_s: warmup as f64 / 1000.0,
        measured_s: end.saturating_sub(warmup) as f64 / 1000.0,
        memory_slope_mib_per_h: memory,
        throughput_drift_ratio: throughput,
        latency_p95_first_ms: first,
        latency_p95_last_ms: last,
        errors: inputs.errors,
        errors_last_tenth,
        dropped: inputs.dropped,
        drop_ratio,
        verdicts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;

    /// A synthetic soak: `minutes` of samples, memory `base + slope·t`, deliveries at `rate`
    /// per second, stepping to `rate · (1 + drift)` for the last tenth.
    fn series(minutes: u64, mib_per_h: f64, rate: f64, drift: f64) -> Vec<Sample> {
        let end = minutes * 60_000;
        let mut delivered = 0.0;
        (0..=minutes * 60)
            .map(|s| {
                let t_ms = s * 1000;
                if s > 0 {
                    delivered += if t_ms > end - end / 10 {
                        rate * (1.0 + drift)
                    } else {
                        rate
                    };
                }
                Sample {
                    t_ms,
                    server_mem_bytes: Some(
                        ((20.0 + mib_per_h * t_ms as f64 / 3_600_000.0) * (1u64 << 20) as f64)
                            as u64,
                    ),
                    deliveries: Some(delivered as u64),
                    ..Sample::default()
                }
            })
            .collect()
    }

    #[test]
    fn memory_slope_is_mib_per_hour_after_the_warm_up() {
        let mut s = series(30, 6.0, 100.0, 0.0);
        // A warm-up spike that the slope must not see.
        for sample in s.iter_mut().take(60) {
            sample.server_mem_bytes = sample.server_mem_bytes.map(|m| m + (50 << 20));
        }
        let warmup = warmup_ms(30 * 60_000);
        assert_eq!(warmup, 120_000, "a tenth, at most two minutes");
        let slope = memory_slope_mib_per_h(&s, warmup).unwrap();
        assert!((slope - 6.0).abs() < 0.01, "{slope}");
    }

    #[test]
    fn throughput_drift_compares_the_last_tenth_with_the_first() {
        let s = series(30, 0.0, 1000.0, -0.2);
        let d = throughput_drift_ratio(&s, 0, 30 * 60_000).unwrap();
        assert!((d + 0.2).abs() < 0.01, "{d}");
        let steady = series(30, 0.0, 1000.0, 0.0);
        assert!(
            throughput_drift_ratio(&steady, 0, 30 * 60_000)
                .unwrap()
                .abs()
                < 1e-3
        );
        assert_eq!(
            throughput_drift_ratio(&series(30, 0.0, 0.0, 0.0), 0, 1_800_000),
            None
        );
    }

    fn period(p95_us: u64, errors: u64) -> MergedWindow {
        let mut latency = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
        latency.record_n(p95_us, 100).unwrap();
        MergedWindow {
            clients: 0,
            from_ms: 0,
            to_ms: 10_000,
            counters: crate::load::native::NativeCounters {
                ws_errors: errors,
                ..Default::default()
            },
            response_time_us: latency.clone(),
            pong_latency_us: latency.clone(),
            latency,
        }
    }

    #[test]
    fn latency_drift_and_the_verdicts_follow_the_thresholds() {
        // 10-s periods over 30 min: 0.5 ms at first, 3 ms in the last tenth, one error late.
        let early = period(500, 0);
        let late = period(3_000, 0);
        let failing = period(3_000, 1);
        let periods: Vec<(u64, &MergedWindow)> = (0..180u64)
            .map(|i| {
                let start = i * 10_000;
                let w = match i {
                    179 => &failing,
                    i if i >= 162 => &late,
                    _ => &early,
                };
                (start, w)
            })
            .collect();
        let s = series(30, 12.0, 1000.0, 0.0);
        let kpis = soak_kpis(&SoakInputs {
            series: &s,
            periods: &periods,
            hold_end_ms: 1_800_000,
            errors: 1,
            dropped: 10,
            deliveries: 1_000_000,
        });
        // Within the histogram's 3 significant figures.
        assert_eq!(kpis.latency_p95_first_ms, Some(0.5));
        assert!((kpis.latency_p95_last_ms.unwrap() - 3.0).abs() < 0.01);
        assert_eq!(kpis.errors_last_tenth, 1);
        let pass: Vec<(&str, Option<bool>)> = kpis
            .verdicts
            .iter()
            .map(|v| (v.kpi.as_str(), v.pass))
            .collect();
        assert_eq!(
            pass,
            [
                ("memory_slope", Some(false)),
                ("throughput_drift", Some(true)),
                ("latency_drift", Some(false)),
                ("errors", Some(false)),
                ("drops", Some(true)),
            ]
        );
        // A period counts toward the tenth its middle falls in.
        let later = period(900, 0);
        let (a, b) = latency_p95_first_last_ms(&[(0, &early), (990_000, &later)], 0, 1_000_000);
        assert_eq!((a, b), (Some(0.5), Some(0.9)));
        let (_, none) = latency_p95_first_last_ms(&[(0, &early), (996_000, &later)], 0, 1_000_000);
        assert_eq!(none, None, "its middle is past the end");
    }
}
