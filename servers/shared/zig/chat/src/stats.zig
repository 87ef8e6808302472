//! The server's cumulative counters, served by GET /stats and printed as the
//! final stdout line on shutdown.
//!
//! Every counter is an atomic, bumped by whoever sees the event: in
//! profile-b/zig the connection threads, never under the hub's lock; in
//! profile-a/zig the one event-loop thread, where plain integers would do, but
//! the shape stays that of the other servers so either stack may move work to
//! other threads without touching the counters.
const std = @import("std");

const Counter = std.atomic.Value(u64);

/// The counters in the order docs/protocol.md lists them, which is also the
/// order of the JSON.
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
    /// WebSocket frame bytes written to clients, as handed to the socket or
    /// to TLS: after permessage-deflate, before encryption.
    bytes_written: Counter = .init(0),

    /// Counters only grow and nobody waits on them, so relaxed ordering is
    /// enough; a /stats reader sees each counter at some recent value.
    pub fn add(s: *Stats, comptime field: []const u8, n: u64) void {
        if (n == 0) return;
        _ = @field(s, field).fetchAdd(n, .monotonic);
    }

    pub fn inc(s: *Stats, comptime field: []const u8) void {
        _ = @field(s, field).fetchAdd(1, .monotonic);
    }

    pub fn dec(s: *Stats, comptime field: []const u8) void {
        _ = @field(s, field).fetchSub(1, .monotonic);
    }

    pub fn get(s: *const Stats, comptime field: []const u8) u64 {
        return @field(s, field).load(.monotonic);
    }

    /// Writes the /stats object on one line, without a trailing newline.
    /// `server` is the server's image tag, which /stats reports.
    pub fn writeJson(s: *const Stats, server: []const u8, uptime_ms: u64, w: *std.Io.Writer) std.Io.Writer.Error!void {
        try w.print("{{\"server\":\"{s}\",\"uptime_ms\":{d}", .{ server, uptime_ms });
        inline for (comptime std.meta.fieldNames(Stats)) |name| {
            try w.print(",\"{s}\":{d}", .{ name, s.get(name) });
        }
        try w.writeByte('}');
    }
};

/// The bytes of a server's (unmasked) WebSocket frame with a `payload`-byte
/// payload: a 2-byte header, plus 2 or 8 bytes of extended length past 125
/// and 65,535 bytes (RFC 6455, 5.2). Writers add it to `bytes_written`.
pub fn frameBytes(payload: usize) u64 {
    const header: u64 = if (payload <= 125) 2 else if (payload <= 65535) 4 else 10;
    return header + payload;
}

test "a frame is its payload and a header that grows with it" {
    try std.testing.expectEqual(@as(u64, 2), frameBytes(0));
    try std.testing.expectEqual(@as(u64, 127), frameBytes(125));
    try std.testing.expectEqual(@as(u64, 130), frameBytes(126));
    try std.testing.expectEqual(@as(u64, 65539), frameBytes(65535));
    try std.testing.expectEqual(@as(u64, 65546), frameBytes(65536));
}

test "writes every counter as one JSON object, in the protocol's order" {
    var s: Stats = .{};
    s.inc("joins");
    s.add("deliveries", 36);
    s.inc("connections_current");
    s.dec("connections_current");
    s.inc("connections_total");
    s.inc("connections_total");
    s.inc("malformed");
    var buf: [512]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try s.writeJson("wsc-zig", 5123, &w);
    try std.testing.expectEqualStrings(
        "{\"server\":\"wsc-zig\",\"uptime_ms\":5123,\"connections_current\":0," ++
            "\"connections_total\":2,\"joins\":1,\"frames_in\":0,\"chat_in\":0," ++
            "\"chat_accepted\":0,\"deliveries\":36,\"dropped_ratelimit\":0," ++
            "\"dropped_slow\":0,\"malformed\":1,\"bytes_written\":0}",
        w.buffered(),
    );
}
