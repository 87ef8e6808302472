//! How long a busy connection's writer waits between batches.
//!
//! After a batch of more than one message, or one sent less than `base`
//! after the previous, the writer waits before it takes the next, so that
//! what the hub queues meanwhile leaves in the same write. The wait starts at
//! `base` and doubles while batches keep holding several messages, up to
//! `max`; a batch of one sets it back to `base`. A quiet connection never
//! waits. The Go and Zig std servers pace the same way (docs/fairness.md,
//! "Write batching").

use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Pacer {
    base: Duration,
    max: Duration,
    pause: Duration,
    last: Option<Instant>,
}

impl Pacer {
    /// A `base` of zero never waits.
    pub fn new(base: Duration, max: Duration) -> Self {
        Pacer {
            base,
            max: max.max(base),
            pause: base,
            last: None,
        }
    }

    /// How long to wait after a batch of `sent` messages written at `now`.
    pub fn after(&mut self, sent: usize, now: Instant) -> Duration {
        if self.base.is_zero() {
            return Duration::ZERO;
        }
        let recent = self
            .last
            .is_some_and(|last| now.duration_since(last) < self.base);
        self.last = Some(now);
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
}

/// The writer's first wait, from `WSC_WRITE_COALESCE_MS` (default 5; 0 never
/// waits). An environment variable, so that a server.toml variant can set it
/// for either Rust server without a flag in each.
pub fn write_coalesce() -> Duration {
    env_ms("WSC_WRITE_COALESCE_MS", 5)
}

/// The longest wait, from `WSC_WRITE_COALESCE_MAX_MS` (default 20).
pub fn write_coalesce_max() -> Duration {
    env_ms("WSC_WRITE_COALESCE_MAX_MS", 20)
}

fn env_ms(name: &str, default_ms: u64) -> Duration {
    let ms = std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_ms);
    Duration::from_millis(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_quiet_connection_never_waits() {
        let mut p = Pacer::new(5 * MS, 20 * MS);
        let t0 = Instant::now();
        assert_eq!(p.after(1, t0), Duration::ZERO);
        assert_eq!(p.after(1, t0 + 100 * MS), Duration::ZERO);
    }

    #[test]
    fn full_batches_double_the_wait_up_to_max_and_a_single_message_resets_it() {
        let mut p = Pacer::new(5 * MS, 20 * MS);
        let t0 = Instant::now();
        let waits: Vec<_> = (0..4).map(|i| p.after(10, t0 + i * 50 * MS)).collect();
        assert_eq!(waits, [5 * MS, 10 * MS, 20 * MS, 20 * MS]);
        assert_eq!(p.after(1, t0 + 1000 * MS), Duration::ZERO);
        assert_eq!(p.after(3, t0 + 2000 * MS), 5 * MS);
    }

    #[test]
    fn a_base_of_zero_turns_pacing_off() {
        let mut p = Pacer::new(Duration::ZERO, 20 * MS);
        assert_eq!(p.after(100, Instant::now()), Duration::ZERO);
    }
}
