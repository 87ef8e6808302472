//! How long a flooded connection's writer waits between batches.
//!
//! While the connection receives at least `flood_rate` messages a second
//! (measured over 100 ms windows), after a batch of more than one message, or
//! one sent less than `base` after the previous, the writer waits before it
//! takes the next, so that what the hub queues meanwhile leaves in the same
//! write. The wait starts at `base` and doubles while batches keep holding
//! several messages, up to `max`; a batch of one sets it back to `base`. Below
//! `flood_rate` the writer never waits, so moderate traffic pays no latency
//! for it. The Go and Zig servers pace the same way (docs/fairness.md,
//! "Pacing").

use std::time::{Duration, Instant};

/// How long `Pacer` counts messages before it updates the rate.
const RATE_WINDOW: Duration = Duration::from_millis(100);

#[derive(Debug, Clone)]
pub struct Pacer {
    base: Duration,
    max: Duration,
    flood_rate: f64,
    pause: Duration,
    last: Option<Instant>,
    window: Option<(Instant, usize)>,
    /// Messages a second in the last full window.
    rate: f64,
}

impl Pacer {
    /// A `base` of zero never waits.
    pub fn new(base: Duration, max: Duration, flood_rate: f64) -> Self {
        Pacer {
            base,
            max: max.max(base),
            flood_rate,
            pause: base,
            last: None,
            window: None,
            rate: 0.0,
        }
    }

    /// How long to wait after a batch of `sent` messages written at `now`.
    pub fn after(&mut self, sent: usize, now: Instant) -> Duration {
        if self.base.is_zero() {
            return Duration::ZERO;
        }
        self.measure(sent, now);
        let recent = self
            .last
            .is_some_and(|last| now.duration_since(last) < self.base);
        self.last = Some(now);
        if self.rate < self.flood_rate {
            self.pause = self.base;
            return Duration::ZERO;
        }
        let wait = if sent > 1 || recent {
            self.pause
        } else {
            Duration::ZERO
        };
        self.pause = if sent > 1 {
            (self.pause * 2).min(self.max)
        } else {
            self.base
        };
        wait
    }

    fn measure(&mut self, sent: usize, now: Instant) {
        let (start, count) = self.window.get_or_insert((now, 0));
        *count += sent;
        let elapsed = now.duration_since(*start);
        if elapsed >= RATE_WINDOW {
            self.rate = *count as f64 / elapsed.as_secs_f64();
            self.window = Some((now, 0));
        }
    }
}

impl Pacer {
    /// The pacing of both Rust servers, from the environment (so that a
    /// server.toml variant can set it without a flag in each):
    /// `WSC_WRITE_COALESCE_MS` (default 5; 0 never waits),
    /// `WSC_WRITE_COALESCE_MAX_MS` (default 20) and `WSC_FLOOD_RATE` (default
    /// 1000 messages a second).
    pub fn from_env() -> Self {
        fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        }
        Pacer::new(
            Duration::from_millis(env("WSC_WRITE_COALESCE_MS", 5)),
            Duration::from_millis(env("WSC_WRITE_COALESCE_MAX_MS", 20)),
            env("WSC_FLOOD_RATE", 1000.0),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn below_the_flood_rate_the_writer_never_waits() {
        let mut p = Pacer::new(5 * MS, 20 * MS, 1000.0);
        let t0 = Instant::now();
        // 100 messages a second, in pairs: busy batches, but not a flood.
        for i in 0..50 {
            assert_eq!(p.after(2, t0 + i * 20 * MS), Duration::ZERO, "batch {i}");
        }
    }

    #[test]
    fn a_flooded_connections_wait_doubles_up_to_max_and_a_single_message_resets_it() {
        let mut p = Pacer::new(5 * MS, 20 * MS, 1000.0);
        // 10 messages every 5 ms is 2,000 a second; the first window measures it.
        let mut now = Instant::now();
        for _ in 0..21 {
            p.after(10, now);
            now += 5 * MS;
        }
        let waits: Vec<_> = (0..4)
            .map(|_| {
                let w = p.after(10, now);
                now += 5 * MS;
                w
            })
            .collect();
        assert_eq!(waits, [10 * MS, 20 * MS, 20 * MS, 20 * MS]);
        assert_eq!(p.after(1, now), Duration::ZERO);
        assert_eq!(p.after(3, now + 5 * MS), 5 * MS);
    }

    #[test]
    fn a_base_of_zero_turns_pacing_off() {
        let mut p = Pacer::new(Duration::ZERO, 20 * MS, 1000.0);
        let mut now = Instant::now();
        for _ in 0..100 {
            assert_eq!(p.after(100, now), Duration::ZERO);
            now += MS;
        }
    }
}
