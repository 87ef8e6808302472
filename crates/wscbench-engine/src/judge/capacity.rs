//! The capacity scenario's judgement: from the native report's per-step windows, the
//! server's counters and the per-second samples, each step's figures and whether it held at
//! the latency target, by one pure rule ([`step_reasons`], documented in
//! docs/methodology.md, one test per reason), and the largest step that held.

use wscbench_results::{BoundReason, Capacity, CapacityStep, Outcome, Sample, StepReason};

use crate::judge::loadgen_bound::{self, Ceilings, Counters};
use crate::judge::series::at;
use crate::load::native::{self, MergedWindow};

/// A step holds only while the server dropped less than this share of messages.
pub const MAX_DROP_RATIO: f64 = 0.001;

/// What the step rule reads of one step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepFigures {
    /// Latency p95 over the hold, in ms; `None` when no chat was received.
    pub latency_p95_ms: Option<f64>,
    /// Client errors during the hold.
    pub errors: u64,
    /// The server's deliveries during the hold.
    pub deliveries: u64,
    /// Dropped for slow consumers during the hold.
    pub dropped_slow: u64,
    /// Valid chats in during the hold.
    pub chat_in: u64,
    /// Dropped by the rate limit during the hold.
    pub dropped_ratelimit: u64,
    /// Why the load generator was the limit during the hold (the verdict's rule).
    pub loadgen_reasons: Vec<BoundReason>,
    /// The server died during this step, with this outcome.
    pub server_died: Option<Outcome>,
}

/// Why a step did not hold, every reason that applies, in a fixed order; empty when it held.
pub fn step_reasons(f: &StepFigures, slo_p95_ms: f64) -> Vec<StepReason> {
    let mut reasons = Vec::new();
    if let Some(outcome) = f.server_died {
        reasons.push(StepReason::ServerDied {
            outcome: outcome.as_str().to_string(),
        });
    }
    match f.latency_p95_ms {
        None => reasons.push(StepReason::NoChatsReceived),
        Some(p95_ms) if p95_ms >= slo_p95_ms => reasons.push(StepReason::LatencyOverTarget {
            p95_ms,
            target_ms: slo_p95_ms,
        }),
        Some(_) => {}
    }
    let share = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            part as f64 / whole as f64
        }
    };
    let drop_ratio = share(f.dropped_slow, f.deliveries + f.dropped_slow)
        .max(share(f.dropped_ratelimit, f.chat_in));
    if drop_ratio >= MAX_DROP_RATIO {
        reasons.push(StepReason::ServerDrops {
            dropped_slow: f.dropped_slow,
            dropped_ratelimit: f.dropped_ratelimit,
            drop_ratio,
        });
    }
    if f.errors > 0 {
        reasons.push(StepReason::ClientErrors { errors: f.errors });
    }
    if !f.loadgen_reasons.is_empty() {
        reasons.push(StepReason::LoadgenLimit {
            reasons: f.loadgen_reasons.clone(),
        });
    }
    reasons
}

/// The largest step that held (every step before it held too), the first that did not, and
/// why: steps after a broken one do not count.
pub fn judge(steps: &[CapacityStep]) -> (Option<u64>, Option<u64>, Vec<StepReason>) {
    let mut held = None;
    for step in steps {
        if !step.held {
            return (held, Some(step.clients), step.reasons.clone());
        }
        held = Some(step.clients);
    }
    (held, None, Vec::new())
}

/// Everything the capacity figures are computed from.
#[derive(Debug, Clone, Copy)]
pub struct CapacityInputs<'a> {
    /// The native report's steps (epoch ms).
    pub windows: &'a [MergedWindow],
    /// The per-second samples (ms since the load started).
    pub series: &'a [Sample],
    /// Epoch ms at which the load started (the series' zero).
    pub load_started_epoch_ms: u64,
    /// How long the load ran, in ms.
    pub duration_ms: u64,
    /// The latency target, in ms.
    pub slo_p95_ms: f64,
    /// The room size the load stands for.
    pub room_size: u32,
    /// Chats per second of each member of such a room.
    pub member_chats_per_s: f64,
    /// CPU ceilings, for the load-generator rule.
    pub ceilings: Ceilings,
    /// The server died during the load, with this outcome.
    pub server_died: Option<Outcome>,
}

/// Every step the run reached, judged, and the capacity they add up to.
pub fn capacity(inputs: &CapacityInputs<'_>) -> Capacity {
    let reached: Vec<&MergedWindow> = inputs
        .windows
        .iter()
        .filter(|w| w.from_ms.saturating_sub(inputs.load_started_epoch_ms) < inputs.duration_ms)
        .collect();
    let last = reached.len().saturating_sub(1);
    let steps: Vec<CapacityStep> = reached
        .iter()
        .enumerate()
        .map(|(i, w)| step(inputs, w, if i == last { inputs.server_died } else { None }))
        .collect();
    let (max_clients_held, broke_at_clients, broke_because) = judge(&steps);
    let server_bytes_per_client = bytes_per_client(&steps);
    Capacity {
        slo_p95_ms: inputs.slo_p95_ms,
        room_size: inputs.room_size,
        member_chats_per_s: inputs.member_chats_per_s,
        steps,
        max_clients_held,
        broke_at_clients,
        broke_because,
        server_bytes_per_client,
    }
}

/// The least-squares slope of the server's peak memory against clients over the steps that
/// held (in order, up to the first that did not), in bytes per client.
pub fn bytes_per_client(steps: &[CapacityStep]) -> Option<f64> {
    let points: Vec<(f64, f64)> = steps
        .iter()
        .take_while(|s| s.held)
        .map(|s| (s.clients as f64, s.server_peak_mem_bytes as f64))
        .collect();
    crate::judge::series::least_squares_slope(&points)
}

fn step(inputs: &CapacityInputs<'_>, w: &MergedWindow, died: Option<Outcome>) -> CapacityStep {
    let from_ms = w.from_ms.saturating_sub(inputs.load_started_epoch_ms);
    let to_ms = w
        .to_ms
        .saturating_sub(inputs.load_started_epoch_ms)
        .min(inputs.duration_ms);
    let series = inputs.series;
    let delta = |field: fn(&Sample) -> Option<u64>| -> u64 {
        match (at(series, from_ms, field), at(series, to_ms, field)) {
            (Some(a), Some(b)) => (b - a).max(0.0).round() as u64,
            _ => 0,
        }
    };
    let deliveries = delta(|s| s.deliveries);
    let dropped_slow = delta(|s| s.dropped_slow);
    let chat_in = delta(|s| s.chat_in);
    let dropped_ratelimit = delta(|s| s.dropped_ratelimit);
    let hold: Vec<Sample> = series
        .iter()
        .filter(|s| s.t_ms >= from_ms && s.t_ms <= to_ms)
        .cloned()
        .collect();
    let mean = |f: fn(&Sample) -> f64| {
        if hold.is_empty() {
            0.0
        } else {
            hold.iter().map(f).sum::<f64>() / hold.len() as f64
        }
    };
    let c = &w.counters;
    // The whole-run rule, over the hold alone; sessions end after the last step, not in one.
    let loadgen_reasons = loadgen_bound::reasons(
        // The verdict leaves out its first sample (docker's has no previous reading): give
        // it the one before the hold.
        &series
            .iter()
            .filter(|s| s.t_ms + 1000 >= from_ms && s.t_ms <= to_ms)
            .cloned()
            .collect::<Vec<_>>(),
        &Counters {
            delivered: deliveries,
            // A window's chats received are counted on the readers' clock (within 100 ms
            // of the read, with its latencies), the other counters at each VU's flush.
            received: Some(c.chat_received),
            dropped_slow,
            ..Counters::default()
        },
        &inputs.ceilings,
    );
    let latency = (!w.latency.is_empty()).then(|| native::latency_ms(&w.latency));
    let figures = StepFigures {
        latency_p95_ms: latency.as_ref().map(|l| l.p95_ms),
        errors: c.errors(),
        deliveries,
        dropped_slow,
        chat_in,
        dropped_ratelimit,
        loadgen_reasons,
        server_died: died,
    };
    let reasons = step_reasons(&figures, inputs.slo_p95_ms);
    CapacityStep {
        clients: w.clients,
        from_ms,
        to_ms,
        chat_sent: c.chat_sent,
        chat_received: c.chat_received,
        errors: figures.errors,
        latency_p50_ms: latency.as_ref().map(|l| l.p50_ms),
        latency_p95_ms: figures.latency_p95_ms,
        latency_p99_ms: latency.as_ref().map(|l| l.p99_ms),
        deliveries,
        chat_in,
        dropped_slow,
        dropped_ratelimit,
        server_mean_cpu_percent: mean(|s| s.server_cpu_percent.unwrap_or(0.0)),
        loadgen_mean_cpu_percent: mean(|s| s.loadgen_cpu_percent),
        server_peak_mem_bytes: hold
            .iter()
            .filter_map(|s| s.server_mem_bytes)
            .max()
            .unwrap_or(0),
        held: reasons.is_empty(),
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;

    fn good() -> StepFigures {
        StepFigures {
            latency_p95_ms: Some(3.0),
            deliveries: 100_000,
            chat_in: 2_000,
            ..StepFigures::default()
        }
    }

    #[test]
    fn a_step_under_the_target_without_drops_errors_or_loadgen_limit_holds() {
        assert!(step_reasons(&good(), 50.0).is_empty());
        // Drops just under 0.1 % still hold.
        let f = StepFigures {
            dropped_slow: 99,
            ..good()
        };
        assert!(step_reasons(&f, 50.0).is_empty());
    }

    #[test]
    fn a_p95_at_or_over_the_target_breaks_the_step() {
        let f = StepFigures {
            latency_p95_ms: Some(50.0),
            ..good()
        };
        assert_eq!(
            step_reasons(&f, 50.0),
            [StepReason::LatencyOverTarget {
                p95_ms: 50.0,
                target_ms: 50.0
            }]
        );
    }

    #[test]
    fn a_step_without_any_chat_received_breaks() {
        let f = StepFigures {
            latency_p95_ms: None,
            ..good()
        };
        assert_eq!(step_reasons(&f, 50.0), [StepReason::NoChatsReceived]);
    }

    #[test]
    fn drops_of_a_tenth_of_a_percent_break_the_step_slow_or_rate_limited() {
        let slow = StepFigures {
            dropped_slow: 101,
            ..good()
        };
        assert!(matches!(
            step_reasons(&slow, 50.0)[..],
            [StepReason::ServerDrops { dropped_slow: 101, dropped_ratelimit: 0, drop_ratio }]
                if (drop_ratio - 101.0 / 100_101.0).abs() < 1e-12
        ));
        let limited = StepFigures {
            dropped_ratelimit: 2,
            ..good()
        };
        assert!(matches!(
            step_reasons(&limited, 50.0)[..],
            [StepReason::ServerDrops { dropped_ratelimit: 2, drop_ratio, .. }] if drop_ratio == 0.001
        ));
    }

    #[test]
    fn client_errors_break_the_step() {
        let f = StepFigures {
            errors: 1,
            ..good()
        };
        assert_eq!(
            step_reasons(&f, 50.0),
            [StepReason::ClientErrors { errors: 1 }]
        );
    }

    #[test]
    fn a_load_generator_at_its_limit_breaks_the_step_as_not_the_servers() {
        let why = vec![BoundReason::LoadgenCpuSaturated {
            busy_s: 18,
            measured_s: 20,
            ceiling_percent: 200.0,
        }];
        let f = StepFigures {
            loadgen_reasons: why.clone(),
            ..good()
        };
        assert_eq!(
            step_reasons(&f, 50.0),
            [StepReason::LoadgenLimit { reasons: why }]
        );
    }

    #[test]
    fn a_server_that_died_breaks_its_step() {
        let f = StepFigures {
            server_died: Some(Outcome::OomKilled),
            latency_p95_ms: None,
            ..good()
        };
        assert_eq!(
            step_reasons(&f, 50.0),
            [
                StepReason::ServerDied {
                    outcome: "oom_killed".into()
                },
                StepReason::NoChatsReceived
            ]
        );
    }

    fn judged(clients: u64, held: bool) -> CapacityStep {
        CapacityStep {
            clients,
            held,
            reasons: if held {
                vec![]
            } else {
                vec![StepReason::ClientErrors { errors: 1 }]
            },
            ..CapacityStep::default()
        }
    }

    #[test]
    fn memory_per_client_is_the_slope_over_the_steps_that_held() {
        let mem = |clients: u64, mib: u64, held: bool| CapacityStep {
            server_peak_mem_bytes: mib << 20,
            ..judged(clients, held)
        };
        let steps = [
            mem(100, 12, true),
            mem(200, 14, true),
            mem(500, 20, true),
            mem(1000, 90, false),
        ];
        // (100, 12), (200, 14), (500, 20) MiB lie on 2 MiB per 100 clients: 20,971.52 bytes each.
        let slope = bytes_per_client(&steps).unwrap();
        assert!((slope - 20_971.52).abs() < 1e-6, "{slope}");
        assert_eq!(bytes_per_client(&steps[..1]), None);
    }

    #[test]
    fn capacity_is_the_last_step_held_before_the_first_that_broke() {
        let steps = [
            judged(100, true),
            judged(200, true),
            judged(500, false),
            judged(1000, true),
        ];
        let (held, broke, why) = judge(&steps);
        assert_eq!((held, broke), (Some(200), Some(500)));
        assert_eq!(why, [StepReason::ClientErrors { errors: 1 }]);
        assert_eq!(judge(&[judged(100, false)]).0, None);
        assert_eq!(
            judge(&[judged(100, true), judged(200, true)]),
            (Some(200), None, vec![])
        );
    }

    fn sample(t_ms: u64, deliveries: u64, loadgen_cpu: f64) -> Sample {
        Sample {
            t_ms,
            deliveries: Some(deliveries),
            chat_in: Some(deliveries / 49),
            dropped_slow: Some(0),
            dropped_ratelimit: Some(0),
            server_cpu_percent: Some(40.0),
            loadgen_cpu_percent: loadgen_cpu,
            server_mem_bytes: Some(10 << 20),
            ..Sample::default()
        }
    }

    fn window(
        clients: u64,
        from_ms: u64,
        to_ms: u64,
        received: u64,
        latency_us: u64,
    ) -> MergedWindow {
        let mut latency = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
        if received > 0 {
            latency.record_n(latency_us, received).unwrap();
        }
        MergedWindow {
            clients,
            from_ms,
            to_ms,
            counters: native::NativeCounters {
                chat_received: received,
                ..Default::default()
            },
            response_time_us: latency.clone(),
            pong_latency_us: latency.clone(),
            latency,
        }
    }

    #[test]
    fn steps_take_the_servers_counters_at_their_ends_and_stop_at_the_load_end() {
        // 1,000 deliveries a second; the load started at epoch 1,000,000 ms and ran 25 s.
        let series: Vec<Sample> = (0..=25).map(|s| sample(s * 1000, s * 1000, 30.0)).collect();
        let windows = [
            window(100, 1_002_500, 1_010_000, 7_500, 2_000),
            window(200, 1_012_000, 1_020_000, 8_000, 80_000),
            window(500, 1_030_000, 1_040_000, 0, 0),
        ];
        let cap = capacity(&CapacityInputs {
            windows: &windows,
            series: &series,
            load_started_epoch_ms: 1_000_000,
            duration_ms: 25_000,
            slo_p95_ms: 50.0,
            room_size: 50,
            member_chats_per_s: 1.0,
            ceilings: Ceilings {
                loadgen_percent: 200.0,
                cores: 2,
            },
            server_died: None,
        });
        assert_eq!(cap.steps.len(), 2, "the third step was never reached");
        let first = &cap.steps[0];
        assert_eq!((first.from_ms, first.to_ms), (2_500, 10_000));
        assert_eq!(first.deliveries, 7_500, "interpolated between samples");
        assert!(first.held, "{:?}", first.reasons);
        assert!(matches!(
            cap.steps[1].reasons[..],
            [StepReason::LatencyOverTarget { .. }]
        ));
        assert_eq!(cap.max_clients_held, Some(100));
        assert_eq!(cap.broke_at_clients, Some(200));
    }
}
