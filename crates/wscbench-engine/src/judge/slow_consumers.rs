//! The slow-consumers scenario's figures, from the native report's one-second periods (the
//! healthy clients' latency), its `slow` object (the slow clients) and the per-second
//! samples (the server's memory), cut into the shape's phases. Pure: every input is given.
//! See docs/methodology.md ("Slow consumers").

use hdrhistogram::Histogram;
use wscbench_results::slow_consumers::{RECOVERY_FACTOR, RECOVERY_WINDOWS};
use wscbench_results::{Sample, SlowConsumers};

use crate::load::native::{MergedSlow, MergedWindow};
use crate::load::scenarios::SlowConsumersShape;

/// What the figures are computed from.
#[derive(Debug, Clone, Copy)]
pub struct SlowInputs<'a> {
    /// The point's shape (its phases, its clients).
    pub shape: SlowConsumersShape,
    /// The native report's periods (epoch ms), ascending: the healthy clients' latency.
    pub periods: &'a [MergedWindow],
    /// The slow clients, when the report had any.
    pub slow: Option<&'a MergedSlow>,
    /// Epoch ms the shape's phases count from (the scenario's start).
    pub started_epoch_ms: u64,
    /// Epoch ms the series' `t_ms` count from (the load's start).
    pub load_started_epoch_ms: u64,
    /// Per-second samples.
    pub series: &'a [Sample],
    /// `dropped_slow` from the server's `/stats` over the load.
    pub dropped_slow: u64,
}

/// The slow-consumers figures of one point.
pub fn slow_consumers(inputs: &SlowInputs<'_>) -> SlowConsumers {
    let shape = &inputs.shape;
    let start = inputs.started_epoch_ms;
    let epoch = |(from, to): (u64, u64)| (start + from, start + to);
    let baseline = epoch(shape.baseline_ms());
    let slow_phase = epoch(shape.slow_ms());
    let recovery = epoch(shape.recovery_ms());
    let p99_baseline = p99_ms(merged_in(inputs.periods, baseline).as_ref());
    let p99_slow = p99_ms(merged_in(inputs.periods, slow_phase).as_ref());
    // The chats stop a second before the end: windows after that have nothing to say.
    let chats_end = recovery.1.saturating_sub(1000);
    let recovery_s = p99_baseline.and_then(|base| {
        recovery_from(
            inputs.periods,
            slow_phase.1,
            chats_end,
            base * RECOVERY_FACTOR,
        )
    });
    let slow_clients = inputs.slow.map_or(0, |s| s.clients);
    let memory = Memory::of(inputs);
    let memory_per_slow_client_bytes = match (memory.baseline, memory.peak_slow, slow_clients) {
        (Some(base), Some(peak), n) if n > 0 => Some((peak as f64 - base as f64) / n as f64),
        _ => None,
    };
    let (first_window, per_second) = per_second_p99(inputs.periods);
    let seconds = |epoch_ms: u64| (epoch_ms as f64 - start as f64) / 1000.0;
    SlowConsumers {
        slow_clients,
        clients: shape.clients,
        healthy_p99_baseline_ms: p99_baseline,
        healthy_p99_slow_ms: p99_slow,
        healthy_p99_ratio: p99_baseline
            .zip(p99_slow)
            .filter(|(base, _)| *base > 0.0)
            .map(|(base, slow)| slow / base),
        recovery_s,
        memory_baseline_bytes: memory.baseline,
        memory_peak_slow_bytes: memory.peak_slow,
        memory_per_slow_client_bytes,
        dropped_slow: inputs.dropped_slow,
        slow_closed_by_server: inputs.slow.map_or(0, |s| s.closed_by_server),
        slow_first_closed_s: inputs
            .slow
            .and_then(|s| s.closed_at_epoch_ms.iter().min())
            .map(|&t| (t as f64 - slow_phase.0 as f64) / 1000.0),
        slow_received: inputs.slow.map_or(0, |s| s.received),
        slow_phase_s: [seconds(slow_phase.0), seconds(slow_phase.1)],
        per_s_start_s: first_window.map_or(0.0, seconds),
        healthy_p99_per_s_ms: per_second,
    }
}

/// A window's middle, epoch ms: a window belongs to the phase its middle lies in.
fn middle(w: &MergedWindow) -> u64 {
    w.from_ms + w.to_ms.saturating_sub(w.from_ms) / 2
}

/// The response times of the windows whose middle lies in `[from, to)`, merged.
fn merged_in(periods: &[MergedWindow], (from, to): (u64, u64)) -> Option<Histogram<u64>> {
    let mut merged: Option<Histogram<u64>> = None;
    for w in periods.iter().filter(|w| (from..to).contains(&middle(w))) {
        match &mut merged {
            None => merged = Some(w.response_time_us.clone()),
            Some(h) => {
                // Windows of one report share their settings (checked when merging).
                let _ = h.add(&w.response_time_us);
            }
        }
    }
    merged
}

/// p99 in ms, or `None` without a sample.
fn p99_ms(h: Option<&Histogram<u64>>) -> Option<f64> {
    h.filter(|h| !h.is_empty())
        .map(|h| h.value_at_quantile(0.99) as f64 / 1000.0)
}

/// Seconds from `slow_end` to the start of the first of [`RECOVERY_WINDOWS`] windows in a
/// row whose p99 is at most `bound_ms`, among the windows that end after `slow_end` and begin
/// before `chats_end` (0 when the window holding `slow_end` already is one); `None` if never.
/// A window without a sample breaks a run: nothing says it was back.
fn recovery_from(
    periods: &[MergedWindow],
    slow_end: u64,
    chats_end: u64,
    bound_ms: f64,
) -> Option<f64> {
    let after: Vec<&MergedWindow> = periods
        .iter()
        .filter(|w| w.to_ms > slow_end && w.from_ms < chats_end)
        .collect();
    let within =
        |w: &&MergedWindow| p99_ms(Some(&w.response_time_us)).is_some_and(|p99| p99 <= bound_ms);
    after
        .windows(RECOVERY_WINDOWS)
        .find(|run| run.iter().all(within))
        .map(|run| run[0].from_ms.saturating_sub(slow_end) as f64 / 1000.0)
}

/// The first window's start (epoch ms) and each second's p99 from it on, one entry per
/// second (`None` for a second without a window or a sample).
fn per_second_p99(periods: &[MergedWindow]) -> (Option<u64>, Vec<Option<f64>>) {
    let Some(first) = periods.first().map(|w| w.from_ms) else {
        return (None, Vec::new());
    };
    let mut out: Vec<Option<f64>> = Vec::new();
    for w in periods {
        let i = (w.from_ms.saturating_sub(first) / 1000) as usize;
        if out.len() <= i {
            out.resize(i + 1, None);
        }
        out[i] = p99_ms(Some(&w.response_time_us));
    }
    (Some(first), out)
}

/// The server's memory in the baseline and slow phases.
struct Memory {
    baseline: Option<u64>,
    peak_slow: Option<u64>,
}

impl Memory {
    fn of(inputs: &SlowInputs<'_>) -> Memory {
        let shape = &inputs.shape;
        // Phase bounds on the series' clock (ms since the load started).
        let offset = inputs.started_epoch_ms as i64 - inputs.load_started_epoch_ms as i64;
        let on_series = |(from, to): (u64, u64)| (from as i64 + offset, to as i64 + offset);
        let in_phase = |(from, to): (i64, i64)| {
            inputs
                .series
                .iter()
                .filter(move |s| (from..to).contains(&(s.t_ms as i64)))
                .filter_map(|s| s.server_mem_bytes)
        };
        let baseline: Vec<u64> = in_phase(on_series(shape.baseline_ms())).collect();
        Memory {
            baseline: (!baseline.is_empty())
                .then(|| baseline.iter().sum::<u64>() / baseline.len() as u64),
            peak_slow: in_phase(on_series(shape.slow_ms())).max(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wscbench_results::Mode;

    const START: u64 = 1_700_000_000_000;

    /// One-second windows from the scenario's start, each with 100 samples at `p99_ms[i]`
    /// (`None`: no sample).
    fn windows(p99_ms: &[Option<f64>]) -> Vec<MergedWindow> {
        p99_ms
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut h = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
                if let Some(ms) = p {
                    h.record_n((ms * 1000.0) as u64, 100).unwrap();
                }
                MergedWindow {
                    clients: 0,
                    from_ms: START + i as u64 * 1000,
                    to_ms: START + (i as u64 + 1) * 1000,
                    counters: Default::default(),
                    latency: h.clone(),
                    pong_latency_us: h.clone(),
                    response_time_us: h,
                }
            })
            .collect()
    }

    /// The quick shape: join 2 s, baseline 10 s (2–12), slow 15 s (12–27), recovery 15 s
    /// (27–42). `slow_s` are the p99s of the slow phase's 15 windows, `after` those of the
    /// recovery's first windows (the rest at baseline).
    fn p99s(slow_s: f64, after: &[Option<f64>]) -> Vec<Option<f64>> {
        let mut p = vec![Some(2.0); 2];
        p.extend(vec![Some(2.0); 10]);
        p.extend(vec![Some(slow_s); 15]);
        p.extend(after.iter().copied());
        p.resize(42, Some(2.0));
        p
    }

    fn memory(t_ms: u64, bytes: u64) -> Sample {
        Sample {
            t_ms,
            server_mem_bytes: Some(bytes),
            ..Sample::default()
        }
    }

    fn slow(clients: u64, closed_at_s: &[f64]) -> MergedSlow {
        MergedSlow {
            clients,
            received: 500,
            closed_by_server: closed_at_s.len() as u64,
            closed_at_epoch_ms: closed_at_s
                .iter()
                .map(|s| START + (s * 1000.0) as u64)
                .collect(),
            errors: 0,
            read_paused_ms: 15_000,
            started_epoch_ms: Some(START),
        }
    }

    fn inputs<'a>(
        periods: &'a [MergedWindow],
        slow: Option<&'a MergedSlow>,
        series: &'a [Sample],
    ) -> SlowInputs<'a> {
        SlowInputs {
            shape: SlowConsumersShape::of(Mode::Quick),
            periods,
            slow,
            started_epoch_ms: START,
            // The load started half a second before the scenario (k6's own start).
            load_started_epoch_ms: START - 500,
            series,
            dropped_slow: 1234,
        }
    }

    #[test]
    fn recovery_is_the_start_of_three_windows_in_a_row_back_within_one_and_a_half_times_the_baseline()
     {
        // After the slow phase: 9 ms, 2.5 ms (within 3 ms), 9 ms, then back for good at 30 s.
        let periods = windows(&p99s(
            20.0,
            &[
                Some(9.0),
                Some(2.5),
                Some(9.0),
                Some(2.0),
                Some(2.0),
                Some(2.9),
            ],
        ));
        // Memory: 10 MB in the baseline, up to 13 MB in the slow phase (series clock: +500 ms).
        let series: Vec<Sample> = (0..43)
            .map(|s| {
                let t = s * 1000;
                let bytes = match t {
                    t if t < 12_500 => 10_000_000,
                    t if t < 27_500 => 10_000_000 + (t - 12_500) / 5,
                    _ => 11_000_000,
                };
                memory(t, bytes)
            })
            .collect();
        let s = slow(30, &[20.25, 14.0]);
        let got = slow_consumers(&inputs(&periods, Some(&s), &series));
        assert_eq!(got.slow_clients, 30);
        assert_eq!(got.clients, 300);
        let close =
            |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 0.02 * b.abs().max(1.0));
        assert!(close(got.healthy_p99_baseline_ms, 2.0), "{got:?}");
        assert!(close(got.healthy_p99_slow_ms, 20.0), "{got:?}");
        assert!(close(got.healthy_p99_ratio, 10.0), "{got:?}");
        assert_eq!(got.recovery_s, Some(3.0));
        assert_eq!(got.memory_baseline_bytes, Some(10_000_000));
        // The last sample in the slow phase is at 27 000 ms: 10 MB + 14 500 / 5.
        assert_eq!(got.memory_peak_slow_bytes, Some(10_002_900));
        assert_eq!(got.memory_per_slow_client_bytes, Some(2_900.0 / 30.0));
        assert_eq!(got.dropped_slow, 1234);
        assert_eq!(got.slow_closed_by_server, 2);
        assert_eq!(got.slow_first_closed_s, Some(2.0));
        assert_eq!(got.slow_phase_s, [12.0, 27.0]);
        assert_eq!(got.per_s_start_s, 0.0);
        assert_eq!(got.healthy_p99_per_s_ms.len(), 42);
        assert!(close(got.healthy_p99_per_s_ms[12], 20.0));
    }

    #[test]
    fn a_server_that_never_recovers_before_the_chats_stop_has_no_recovery_time() {
        // Every recovery window over the bound but two in a row, then a gap without samples.
        let mut after = vec![Some(9.0); 14];
        after[3] = Some(2.0);
        after[4] = Some(2.0);
        after[10] = None;
        after[11] = Some(2.0);
        after[12] = Some(2.0);
        // The last window (41–42 s) begins after the chats stopped: it does not count.
        after.push(Some(2.0));
        let periods = windows(&p99s(20.0, &after));
        let got = slow_consumers(&inputs(&periods, Some(&slow(30, &[])), &[]));
        assert_eq!(got.recovery_s, None);
        assert_eq!(got.slow_first_closed_s, None);
        assert_eq!(got.slow_closed_by_server, 0);
        // Nothing measured the server's memory.
        assert_eq!(got.memory_baseline_bytes, None);
        assert_eq!(got.memory_per_slow_client_bytes, None);
    }

    #[test]
    fn a_run_without_slow_clients_has_no_cost_per_slow_client_and_recovers_at_once() {
        let periods = windows(&p99s(2.0, &[]));
        let series: Vec<Sample> = (0..43).map(|s| memory(s * 1000, 8_000_000)).collect();
        let got = slow_consumers(&inputs(&periods, None, &series));
        assert_eq!(got.slow_clients, 0);
        assert_eq!(got.memory_baseline_bytes, Some(8_000_000));
        assert_eq!(got.memory_per_slow_client_bytes, None);
        assert_eq!(got.recovery_s, Some(0.0));
        assert!(
            got.healthy_p99_ratio
                .is_some_and(|r| (r - 1.0).abs() < 1e-9)
        );
        assert_eq!(got.slow_received, 0);
    }

    #[test]
    fn without_any_period_every_latency_figure_is_absent() {
        let got = slow_consumers(&inputs(&[], Some(&slow(4, &[13.0])), &[]));
        assert_eq!(got.healthy_p99_baseline_ms, None);
        assert_eq!(got.healthy_p99_ratio, None);
        assert_eq!(got.recovery_s, None);
        assert!(got.healthy_p99_per_s_ms.is_empty());
        assert_eq!(got.slow_first_closed_s, Some(1.0));
    }
}
