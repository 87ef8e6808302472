//! How long a busy connection's writer waits between batches.
//!
//! After a batch of more than one message, or one sent less than `base_ns`
//! after the previous, the writer waits before it takes the next, so that
//! what the hub queues meanwhile leaves in the same write. The wait starts at
//! `base_ns` and doubles while batches keep holding several messages, up to
//! `max_ns`; a batch of one sets it back to `base_ns`. A quiet connection
//! never waits. The other servers pace the same way (docs/fairness.md,
//! "Write batching"); client.zig turns the wait into a libwebsockets timer.

const std = @import("std");

pub const Pacer = struct {
    base_ns: u64,
    max_ns: u64,
    pause_ns: u64,
    last_ns: ?i64 = null,

    /// A `base_ns` of zero never waits.
    pub fn init(base_ns: u64, max_ns: u64) Pacer {
        return .{ .base_ns = base_ns, .max_ns = @max(base_ns, max_ns), .pause_ns = base_ns };
    }

    /// How long to wait, in nanoseconds, after a batch of `sent` messages
    /// written at `now_ns`.
    pub fn after(p: *Pacer, sent: usize, now_ns: i64) u64 {
        if (p.base_ns == 0) return 0;
        const recent = if (p.last_ns) |last| now_ns - last < p.base_ns else false;
        p.last_ns = now_ns;
        const wait = if (sent > 1 or recent) p.pause_ns else 0;
        p.pause_ns = if (sent > 1) @min(p.pause_ns * 2, p.max_ns) else p.base_ns;
        return wait;
    }
};

const testing = std.testing;
const ms = std.time.ns_per_ms;

test "a quiet connection never waits" {
    var p: Pacer = .init(5 * ms, 20 * ms);
    try testing.expectEqual(0, p.after(1, 0));
    try testing.expectEqual(0, p.after(1, 100 * ms));
}

test "full batches double the wait up to max and a single message resets it" {
    var p: Pacer = .init(5 * ms, 20 * ms);
    var waits: [4]u64 = undefined;
    for (&waits, 0..) |*w, i| w.* = p.after(10, @intCast(i * 50 * ms));
    try testing.expectEqualSlices(u64, &.{ 5 * ms, 10 * ms, 20 * ms, 20 * ms }, &waits);
    try testing.expectEqual(0, p.after(1, 1000 * ms));
    try testing.expectEqual(5 * ms, p.after(3, 2000 * ms));
}

test "a base of zero turns pacing off" {
    var p: Pacer = .init(0, 20 * ms);
    try testing.expectEqual(0, p.after(100, 0));
}
