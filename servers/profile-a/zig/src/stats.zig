//! The server's cumulative counters and their /stats JSON.
//!
//! The event loop is single-threaded, so plain integers would do; the
//! counters are atomics anyway so the shape matches the five other servers
//! (and the protocol's "counters are atomics") and a reader may move work to
//! other threads without touching them.

const std = @import("std");

const Counter = std.atomic.Value(u64);

pub const Stats = struct {
    connections_current: Counter = .init(0),
    connections_total: Counter = .init(0),
    joins: Counter = .init(0),
    frames_in: Counter = .init(0),
    chat_in: Counter = .init(0),
    chat_accepted: Counter = .init(0),
    deliveries: Counter = .init(0),
    dropped_ratelimit: Counter = .init(0),
    dropped_slow: Counter = .init(0),
    malformed: Counter = .init(0),

    pub fn inc(counter: *Counter) void {
        _ = counter.fetchAdd(1, .monotonic);
    }

    pub fn dec(counter: *Counter) void {
        _ = counter.fetchSub(1, .monotonic);
    }

    /// Writes the /stats object (no trailing newline).
    pub fn writeJson(self: *const Stats, w: *std.Io.Writer, server: []const u8, uptime_ms: u64) std.Io.Writer.Error!void {
        try w.print("{{\"server\":\"{s}\",\"uptime_ms\":{d}", .{ server, uptime_ms });
        inline for (@typeInfo(Stats).@"struct".field_names) |name| {
            try w.print(",\"" ++ name ++ "\":{d}", .{@field(self, name).load(.monotonic)});
        }
        try w.writeByte('}');
    }
};

test "stats JSON lists every counter in the protocol's order" {
    var s: Stats = .{};
    Stats.inc(&s.connections_current);
    Stats.inc(&s.connections_total);
    Stats.inc(&s.connections_total);
    Stats.inc(&s.malformed);
    var buf: [512]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try s.writeJson(&w, "wsca-zig", 42);
    try std.testing.expectEqualStrings(
        "{\"server\":\"wsca-zig\",\"uptime_ms\":42,\"connections_current\":1,\"connections_total\":2," ++
            "\"joins\":0,\"frames_in\":0,\"chat_in\":0,\"chat_accepted\":0,\"deliveries\":0," ++
            "\"dropped_ratelimit\":0,\"dropped_slow\":0,\"malformed\":1}",
        w.buffered(),
    );
}
