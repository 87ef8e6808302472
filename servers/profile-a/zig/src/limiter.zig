//! The per-connection token bucket: capacity 10, full when the connection
//! opens, refilled continuously at 10 tokens/s. Only chats spend tokens.
//!
//! Time is passed in (monotonic nanoseconds) so tests can drive the clock.

const std = @import("std");

pub const capacity: f64 = 10;
pub const refill_per_second: f64 = 10;

pub const Limiter = struct {
    tokens: f64,
    last_ns: u64,

    /// A full bucket, as at connection open.
    pub fn init(now_ns: u64) Limiter {
        return .{ .tokens = capacity, .last_ns = now_ns };
    }

    /// Spends one token if there is one. Returns whether the chat may pass.
    pub fn take(self: *Limiter, now_ns: u64) bool {
        if (now_ns > self.last_ns) {
            const elapsed_s: f64 = @as(f64, @floatFromInt(now_ns - self.last_ns)) / std.time.ns_per_s;
            self.tokens = @min(capacity, self.tokens + elapsed_s * refill_per_second);
            self.last_ns = now_ns;
        }
        if (self.tokens < 1) return false;
        self.tokens -= 1;
        return true;
    }
};

const ms = std.time.ns_per_ms;

test "a new bucket lets exactly ten chats through at once" {
    var l = Limiter.init(0);
    var passed: usize = 0;
    for (0..30) |_| {
        if (l.take(0)) passed += 1;
    }
    try std.testing.expectEqual(@as(usize, 10), passed);
}

test "an empty bucket refills one token every 100 ms" {
    var l = Limiter.init(0);
    for (0..10) |_| try std.testing.expect(l.take(0));
    try std.testing.expect(!l.take(0));
    try std.testing.expect(!l.take(99 * ms));
    try std.testing.expect(l.take(100 * ms));
    try std.testing.expect(!l.take(100 * ms));
    try std.testing.expect(l.take(200 * ms));
}

test "refill is continuous: two half-intervals make one token" {
    var l = Limiter.init(0);
    for (0..10) |_| _ = l.take(0);
    try std.testing.expect(!l.take(50 * ms));
    try std.testing.expect(l.take(100 * ms));
}

test "the bucket never holds more than ten tokens" {
    var l = Limiter.init(0);
    const later = 60 * std.time.ns_per_s;
    var passed: usize = 0;
    for (0..30) |_| {
        if (l.take(later)) passed += 1;
    }
    try std.testing.expectEqual(@as(usize, 10), passed);
}

test "a clock that goes backwards neither refills nor crashes" {
    var l = Limiter.init(1000 * ms);
    for (0..10) |_| _ = l.take(1000 * ms);
    try std.testing.expect(!l.take(500 * ms));
}
