//! The per-connection token bucket: capacity 10, refilled continuously at
//! 10 tokens/s, full when the connection opens. Only chat spends tokens.
//!
//! Time is passed in (nanoseconds on any monotonic clock), so tests drive the
//! bucket without sleeping. Only the connection's reader touches its bucket,
//! so there is no lock.
const std = @import("std");

pub const capacity = 10;
pub const refill_per_second = 10;

/// Tokens are kept as nanoseconds of credit so refilling is exact integer
/// arithmetic: one token is earned every 100 ms.
const ns_per_token: i64 = std.time.ns_per_s / refill_per_second;
const max_credit_ns: i64 = capacity * ns_per_token;

/// In i64, not the i96 of `std.Io.Timestamp`: an i96 is 16-byte aligned and
/// would raise the alignment of the client that holds the bucket, which in
/// profile-a/zig is memory libwebsockets allocates. The additions saturate,
/// so no pair of times can overflow them.
pub const TokenBucket = struct {
    credit_ns: i64,
    last_ns: i64,

    /// A full bucket, as at connection open.
    pub fn init(now_ns: i64) TokenBucket {
        return .{ .credit_ns = max_credit_ns, .last_ns = now_ns };
    }

    /// Spends one token if there is one; false means the chat is dropped.
    pub fn allow(b: *TokenBucket, now_ns: i64) bool {
        if (now_ns > b.last_ns) {
            b.credit_ns = @min(max_credit_ns, b.credit_ns +| (now_ns -| b.last_ns));
            b.last_ns = now_ns;
        }
        if (b.credit_ns < ns_per_token) return false;
        b.credit_ns -= ns_per_token;
        return true;
    }
};

const ms = std.time.ns_per_ms;

test "starts full: ten chats pass at once, the eleventh is dropped" {
    var b = TokenBucket.init(0);
    for (0..10) |_| try std.testing.expect(b.allow(0));
    try std.testing.expect(!b.allow(0));
}

test "refills one token every 100 ms" {
    var b = TokenBucket.init(0);
    for (0..10) |_| _ = b.allow(0);
    try std.testing.expect(!b.allow(99 * ms));
    try std.testing.expect(b.allow(100 * ms));
    try std.testing.expect(!b.allow(100 * ms));
    try std.testing.expect(b.allow(200 * ms));
}

test "refill is continuous: two half intervals make one token" {
    var b = TokenBucket.init(0);
    for (0..10) |_| _ = b.allow(0);
    try std.testing.expect(!b.allow(50 * ms));
    try std.testing.expect(b.allow(100 * ms));
}

test "never holds more than capacity" {
    var b = TokenBucket.init(0);
    var passed: usize = 0;
    for (0..30) |_| {
        if (b.allow(3600 * std.time.ns_per_s)) passed += 1;
    }
    try std.testing.expectEqual(@as(usize, 10), passed);
}

test "times far apart neither overflow nor overfill" {
    var b = TokenBucket.init(std.math.minInt(i64));
    for (0..10) |_| _ = b.allow(std.math.minInt(i64));
    try std.testing.expect(b.allow(std.math.maxInt(i64)));
    var passed: usize = 1;
    for (0..30) |_| {
        if (b.allow(std.math.maxInt(i64))) passed += 1;
    }
    try std.testing.expectEqual(@as(usize, 10), passed);
}

test "a clock that goes backwards does not add tokens" {
    var b = TokenBucket.init(1000 * ms);
    for (0..10) |_| _ = b.allow(1000 * ms);
    try std.testing.expect(!b.allow(0));
    try std.testing.expect(!b.allow(1050 * ms));
    try std.testing.expect(b.allow(1100 * ms));
}
