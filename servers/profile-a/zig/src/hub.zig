//! The room: who is connected, who has joined, and the broadcast.
//!
//! A broadcast is serialized once into one `Message` and handed to every
//! recipient's bounded outbox; a full outbox drops the message for that
//! recipient (counted in `dropped_slow`) instead of waiting. Nothing here
//! writes to a socket: the hub only queues and asks libwebsockets for a
//! writable callback, and each connection's writer (client.zig) sends.
//!
//! The hub lives on the event loop's one thread, which is the only thread
//! that ever runs libwebsockets callbacks, so it needs no lock at all.

const std = @import("std");
const protocol = @import("chat").protocol;
const Stats = @import("chat").Stats;
const outbox = @import("outbox.zig");
const Client = @import("client.zig").Client;

pub const Hub = struct {
    gpa: std.mem.Allocator,
    stats: *Stats,
    /// Monotonic time the server started, for `uptime_ms`.
    started_us: i64,
    /// Every open WebSocket connection (for pings, idle checks and shutdown).
    conns: std.ArrayList(*Client) = .empty,
    /// Joined members, the recipients of broadcasts.
    members: std.ArrayList(*Client) = .empty,
    /// Set once shutdown starts: no new connections, no leave broadcasts.
    shutting_down: bool = false,
    /// Per-frame scratch for the parser, reset after every message.
    arena: std.heap.ArenaAllocator,
    /// Where a broadcast is serialized before it becomes one `Message`.
    scratch: []u8,

    pub fn init(gpa: std.mem.Allocator, stats: *Stats, started_us: i64) !Hub {
        return .{
            .gpa = gpa,
            .stats = stats,
            .started_us = started_us,
            .arena = .init(gpa),
            .scratch = try gpa.alloc(u8, protocol.max_serialized_bytes),
        };
    }

    pub fn deinit(h: *Hub) void {
        h.conns.deinit(h.gpa);
        h.members.deinit(h.gpa);
        h.arena.deinit();
        h.gpa.free(h.scratch);
    }

    pub fn connect(h: *Hub, c: *Client) !void {
        try h.conns.append(h.gpa, c);
        c.conn_index = h.conns.items.len - 1;
    }

    /// The connection is gone: a member that did not leave is announced as
    /// leaving, exactly as if it had sent `leave`.
    pub fn disconnect(h: *Hub, c: *Client) void {
        if (c.member_index != null) h.leave(c);
        swapRemove(&h.conns, c.conn_index, .conn);
    }

    /// Adds `c` as a member, then announces it to every member, `c` included:
    /// its own copy is the acknowledgement.
    pub fn join(h: *Hub, c: *Client) !void {
        try h.members.append(h.gpa, c);
        c.member_index = h.members.items.len - 1;
        h.stats.inc("joins");
        var w: std.Io.Writer = .fixed(h.scratch);
        protocol.writeJoin(&w, c.userName(), h.members.items.len) catch unreachable;
        h.broadcast(.control, w.buffered(), null);
    }

    /// Removes member `c` and announces it to the remaining members.
    pub fn leave(h: *Hub, c: *Client) void {
        swapRemove(&h.members, c.member_index.?, .member);
        c.member_index = null;
        if (h.shutting_down) return;
        var w: std.Io.Writer = .fixed(h.scratch);
        protocol.writeLeave(&w, c.userName(), h.members.items.len) catch unreachable;
        h.broadcast(.control, w.buffered(), null);
    }

    /// Sends an accepted chat from member `from` to every other member.
    pub fn chat(h: *Hub, from: *Client, text: []const u8, ts: ?[]const u8) void {
        var w: std.Io.Writer = .fixed(h.scratch);
        protocol.writeChat(&w, from.userName(), text, ts) catch unreachable;
        h.broadcast(.chat, w.buffered(), from);
    }

    /// Answers a ping to its sender only.
    pub fn pong(h: *Hub, to: *Client, ts: ?[]const u8) void {
        var w: std.Io.Writer = .fixed(h.scratch);
        protocol.writePong(&w, ts) catch unreachable;
        const m = outbox.Message.create(h.gpa, .control, w.buffered()) catch return;
        defer m.release(h.gpa);
        to.enqueue(m);
    }

    /// `bytes` is the broadcast's one serialization; it becomes one shared
    /// `Message` that every recipient's outbox references.
    fn broadcast(h: *Hub, kind: outbox.Kind, bytes: []const u8, except: ?*Client) void {
        const m = outbox.Message.create(h.gpa, kind, bytes) catch {
            // Out of memory: nobody gets it, as if every queue were full.
            for (h.members.items) |c| {
                if (c != except) h.stats.inc("dropped_slow");
            }
            return;
        };
        defer m.release(h.gpa);
        for (h.members.items) |c| {
            if (c != except) c.enqueue(m);
        }
    }

    /// Milliseconds since start.
    pub fn uptimeMs(h: *const Hub, now_us: i64) u64 {
        return @intCast(@divTrunc(@max(now_us - h.started_us, 0), 1000));
    }

    const Index = enum { conn, member };

    fn swapRemove(list: *std.ArrayList(*Client), i: usize, comptime which: Index) void {
        _ = list.swapRemove(i);
        if (i < list.items.len) {
            const moved = list.items[i];
            switch (which) {
                .conn => moved.conn_index = i,
                .member => moved.member_index = i,
            }
        }
    }
};

const testing = std.testing;

/// A hub and connections without sockets: the hub only ever touches a
/// client's outbox (and asks for a writable callback), so the tests read the
/// outboxes directly.
const TestRoom = struct {
    stats: Stats = .{},
    hub: Hub = undefined,
    clients: [4]Client = undefined,

    /// Call on a room at its final address: the hub and clients point into it.
    fn init(r: *TestRoom) !void {
        r.hub = try .init(testing.allocator, &r.stats, 0);
        for (&r.clients) |*c| {
            c.* = .{
                .wsi = @ptrFromInt(0x1000),
                .hub = &r.hub,
                .bucket = .init(0),
                .last_rx_us = 0,
                .last_ping_us = 0,
            };
            try r.hub.connect(c);
        }
    }

    fn deinit(r: *TestRoom) void {
        for (&r.clients) |*c| c.outbox.clear(testing.allocator);
        r.hub.deinit();
    }

    fn joined(r: *TestRoom, i: usize, name: []const u8) !*Client {
        const c = &r.clients[i];
        @memcpy(c.user[0..name.len], name);
        c.user_len = name.len;
        try r.hub.join(c);
        return c;
    }
};

/// Pops the oldest queued message and checks its payload.
fn expectNext(c: *Client, expected: []const u8) !void {
    const m = c.outbox.pop() orelse return error.TestExpectedMessage;
    defer m.release(testing.allocator);
    try testing.expectEqualStrings(expected, m.payload());
}

fn drain(c: *Client) usize {
    var n: usize = 0;
    while (c.outbox.pop()) |m| : (n += 1) m.release(testing.allocator);
    return n;
}

test "a join reaches every member, the joiner included, with the online count" {
    var r: TestRoom = .{};
    try r.init();
    defer r.deinit();
    const alice = try r.joined(0, "alice");
    const bob = try r.joined(1, "bob");
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":1}");
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"bob\",\"online\":2}");
    try expectNext(bob, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"bob\",\"online\":2}");
    try testing.expect(r.clients[2].outbox.isEmpty()); // connected, never joined
    try testing.expectEqual(@as(u64, 2), r.stats.get("joins"));
}

test "a chat reaches every other member as one shared message, never the sender" {
    var r: TestRoom = .{};
    try r.init();
    defer r.deinit();
    const alice = try r.joined(0, "alice");
    const bob = try r.joined(1, "bob");
    const carol = try r.joined(2, "carol");
    for ([_]*Client{ alice, bob, carol }) |c| _ = drain(c);
    r.hub.chat(alice, "hi", "12.50");
    try testing.expect(alice.outbox.isEmpty());
    try testing.expect(r.clients[3].outbox.isEmpty());
    const to_bob = bob.outbox.pop().?;
    defer to_bob.release(testing.allocator);
    const to_carol = carol.outbox.pop().?;
    defer to_carol.release(testing.allocator);
    try testing.expectEqual(to_bob, to_carol);
    try testing.expectEqual(outbox.Kind.chat, to_bob.kind);
    try testing.expectEqualStrings(
        "{\"type\":\"chat\",\"room\":\"public\",\"user\":\"alice\",\"text\":\"hi\",\"ts\":12.50}",
        to_bob.payload(),
    );
}

test "a leave, or a member's disconnect, reaches the remaining members once" {
    var r: TestRoom = .{};
    try r.init();
    defer r.deinit();
    const alice = try r.joined(0, "alice");
    const bob = try r.joined(1, "bob");
    const carol = try r.joined(2, "carol");
    for ([_]*Client{ alice, bob, carol }) |c| _ = drain(c);
    r.hub.leave(alice);
    try expectNext(bob, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":2}");
    try expectNext(carol, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":2}");
    try testing.expect(alice.outbox.isEmpty());
    // Alice's connection ending after her leave announces nothing more.
    r.hub.disconnect(alice);
    try testing.expect(bob.outbox.isEmpty());
    // Carol disconnects without leaving: the same broadcast.
    r.hub.disconnect(carol);
    try expectNext(bob, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"carol\",\"online\":1}");
    // A connection that never joined goes quietly.
    r.hub.disconnect(&r.clients[3]);
    try testing.expect(bob.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 1), r.hub.conns.items.len);
    try testing.expectEqual(@as(usize, 1), r.hub.members.items.len);
}

test "a pong goes to its sender only" {
    var r: TestRoom = .{};
    try r.init();
    defer r.deinit();
    const bob = try r.joined(1, "bob");
    _ = drain(bob);
    r.hub.pong(&r.clients[0], "1732233445566");
    try expectNext(&r.clients[0], "{\"type\":\"pong\",\"ts\":1732233445566}");
    try testing.expect(bob.outbox.isEmpty());
}

test "a full outbox drops and counts without holding up the others" {
    var r: TestRoom = .{};
    try r.init();
    defer r.deinit();
    const alice = try r.joined(0, "alice");
    const slow = try r.joined(1, "slow");
    const fast = try r.joined(2, "fast");
    _ = drain(fast);
    // slow holds its join and fast's: 2 of its 256 slots.
    const chats = outbox.capacity + 50;
    for (0..chats) |_| {
        r.hub.chat(alice, "x", null);
        try testing.expectEqual(@as(usize, 1), drain(fast));
    }
    try testing.expectEqual(@as(usize, outbox.capacity), drain(slow));
    try testing.expectEqual(@as(u64, chats + 2 - outbox.capacity), r.stats.get("dropped_slow"));
}

test "once shutdown starts, leaves are not broadcast" {
    var r: TestRoom = .{};
    try r.init();
    defer r.deinit();
    const alice = try r.joined(0, "alice");
    const bob = try r.joined(1, "bob");
    _ = drain(alice);
    _ = drain(bob);
    r.hub.shutting_down = true;
    r.hub.disconnect(alice);
    try testing.expect(bob.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 1), r.hub.members.items.len);
}
