//! How long a flooded connection's writer waits between batches.
//!
//! While the connection receives at least `flood_rate` messages a second
//! (counted over 100 ms windows), after a batch of more than one message, or
//! one sent less than `base_ns` after the previous, the writer waits before it
//! takes the next, so that what the hub queues meanwhile leaves in the same
//! write. The wait starts at `base_ns` and doubles while batches keep holding
//! several messages, up to `max_ns`; a batch of one sets it back to `base_ns`.
//! Below `flood_rate` the writer never waits. The other servers pace the same
//! way (docs/fairness.md, "Pacing"); client.zig turns the wait into a
//! libwebsockets timer, and it is off by default here (main.zig says why).

const std = @import("std");

const rate_window_ns: u64 = 100 * std.time.ns_per_ms;

pub const Pacer = struct {
    base_ns: u64,
    max_ns: u64,
    flood_rate: u64,
    pause_ns: u64,
    last_ns: ?i64 = null,
    window_start_ns: ?i64 = null,
    window_count: u64 = 0,
    /// Messages a second in the last full window.
    rate: u64 = 0,

    /// A `base_ns` of zero never waits.
    pub fn init(base_ns: u64, max_ns: u64, flood_rate: u64) Pacer {
        return .{ .base_ns = base_ns, .max_ns = @max(base_ns, max_ns), .flood_rate = flood_rate, .pause_ns = base_ns };
    }

    /// How long to wait, in nanoseconds, after a batch of `sent` messages
    /// written at `now_ns`.
    pub fn after(p: *Pacer, sent: usize, now_ns: i64) u64 {
        if (p.base_ns == 0) return 0;
        p.measure(sent, now_ns);
        const recent = if (p.last_ns) |last| now_ns - last < p.base_ns else false;
        p.last_ns = now_ns;
        if (p.rate < p.flood_rate) {
            p.pause_ns = p.base_ns;
            return 0;
        }
        const wait = if (sent > 1 or recent) p.pause_ns else 0;
        p.pause_ns = if (sent > 1) @min(p.pause_ns * 2, p.max_ns) else p.base_ns;
        return wait;
    }

    fn measure(p: *Pacer, sent: usize, now_ns: i64) void {
        const start = p.window_start_ns orelse now_ns;
        p.window_start_ns = start;
        p.window_count += sent;
        const elapsed: u64 = @intCast(@max(0, now_ns - start));
        if (elapsed >= rate_window_ns) {
            p.rate = p.window_count * std.time.ns_per_s / elapsed;
            p.window_start_ns = now_ns;
            p.window_count = 0;
        }
    }
};

const testing = std.testing;
const ms = std.time.ns_per_ms;

test "below the flood rate the writer never waits" {
    var p: Pacer = .init(5 * ms, 20 * ms, 1000);
    // 100 messages a second, in pairs: busy batches, but not a flood.
    for (0..50) |i| try testing.expectEqual(0, p.after(2, @intCast(i * 20 * ms)));
}

test "a flooded connection's wait doubles up to max and a single message resets it" {
    var p: Pacer = .init(5 * ms, 20 * ms, 1000);
    // 10 messages every 5 ms is 2,000 a second; the first window measures it.
    var now: i64 = 0;
    for (0..21) |_| {
        _ = p.after(10, now);
        now += 5 * ms;
    }
    var waits: [4]u64 = undefined;
    for (&waits) |*w| {
        w.* = p.after(10, now);
        now += 5 * ms;
    }
    try testing.expectEqualSlices(u64, &.{ 10 * ms, 20 * ms, 20 * ms, 20 * ms }, &waits);
    try testing.expectEqual(0, p.after(1, now));
    try testing.expectEqual(5 * ms, p.after(3, now + 5 * ms));
}

test "a base of zero turns pacing off" {
    var p: Pacer = .init(0, 20 * ms, 1000);
    for (0..100) |i| try testing.expectEqual(0, p.after(100, @intCast(i * ms)));
}
