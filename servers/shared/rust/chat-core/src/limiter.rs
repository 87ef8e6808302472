//! The per-connection token bucket that rate-limits chats: capacity 10, full
//! when the connection opens, refilled continuously at 10 tokens/s. The caller
//! passes the time, so tests need no sleeps.

use std::time::Instant;

/// Tokens the bucket holds when full.
pub const CAPACITY: f64 = 10.0;
/// Tokens added per second.
pub const REFILL_PER_SECOND: f64 = 10.0;

#[derive(Debug)]
pub struct TokenBucket {
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(now: Instant) -> Self {
        Self {
            tokens: CAPACITY,
            last: now,
        }
    }

    /// Takes one token if there is one.
    pub fn allow(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * REFILL_PER_SECOND).min(CAPACITY);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn allowed(bucket: &mut TokenBucket, now: Instant, tries: usize) -> usize {
        (0..tries).filter(|_| bucket.allow(now)).count()
    }

    #[test]
    fn starts_full_and_empties() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(start);
        assert_eq!(allowed(&mut bucket, start, 30), 10);
    }

    #[test]
    fn refills_continuously_at_ten_per_second() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(start);
        assert_eq!(allowed(&mut bucket, start, 10), 10);
        assert!(!bucket.allow(start + Duration::from_millis(99)));
        assert!(bucket.allow(start + Duration::from_millis(100)));
        assert!(!bucket.allow(start + Duration::from_millis(100)));
        assert_eq!(
            allowed(&mut bucket, start + Duration::from_millis(600), 30),
            5
        );
    }

    #[test]
    fn never_holds_more_than_capacity() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(start);
        assert_eq!(
            allowed(&mut bucket, start + Duration::from_secs(3600), 30),
            10
        );
    }

    #[test]
    fn a_clock_going_backwards_adds_nothing() {
        let start = Instant::now() + Duration::from_secs(1);
        let mut bucket = TokenBucket::new(start);
        assert_eq!(allowed(&mut bucket, start, 10), 10);
        assert!(!bucket.allow(start - Duration::from_secs(1)));
    }
}
