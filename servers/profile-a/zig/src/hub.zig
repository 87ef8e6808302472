//! The room: who is connected, who has joined, and the broadcast, over one
//! `Hub` per libwebsockets service thread.
//!
//! A broadcast is serialized once into one `Message` and handed to every
//! recipient's bounded outbox; a full outbox drops the message for that
//! recipient (counted in `dropped_slow`) instead of waiting. Nothing here
//! writes to a socket: the hub only queues and asks libwebsockets for a
//! writable callback, and each connection's writer (client.zig) sends.
//!
//! libwebsockets serves each connection on one service thread (its `tsi`) and
//! a connection may only be touched there, so each thread has its own hub:
//! its connections and members, touched by that thread alone, without a
//! lock. A broadcast reaches the sender's own hub directly; every other hub
//! gets its own copy of the message in its inbox (the one thing under a
//! mutex) and, when that inbox was empty, a wake-up (`lws_cancel_service`),
//! after which its thread hands the message to its members
//! (`LWS_CALLBACK_EVENT_WAIT_CANCELLED` → `drainInbox`). This is what
//! libwebsockets' own SMP example (minimal-ws-server-threads-smp) does: shared
//! data under a mutex, `lws_cancel_service` to wake the other service
//! threads, and each thread asking for writable callbacks on its own
//! connections only. With one thread (Debian's build) there is no other hub,
//! and nothing is locked.

const std = @import("std");
const protocol = @import("chat").protocol;
const Stats = @import("chat").Stats;
const outbox = @import("outbox.zig");
const Client = @import("client.zig").Client;

/// What the hubs share: counters, the member count, and the way to each other.
pub const Room = struct {
    stats: *Stats,
    /// Monotonic time the server started, for `uptime_ms`.
    started_us: i64,
    /// One per service thread, indexed by libwebsockets' thread service index.
    hubs: []Hub = &.{},
    /// Wakes the other service threads (`lws_cancel_service`); tests count calls.
    wake: *const fn () void,
    /// Joined members over every hub: the `online` of join and leave.
    online: std.atomic.Value(usize) = .init(0),
    /// Set once shutdown starts: no new connections, no leave broadcasts.
    shutting_down: std.atomic.Value(bool) = .init(false),

    /// Milliseconds since start.
    pub fn uptimeMs(r: *const Room, now_us: i64) u64 {
        return @intCast(@divTrunc(@max(now_us - r.started_us, 0), 1000));
    }

    pub fn isShuttingDown(r: *const Room) bool {
        return r.shutting_down.load(.acquire);
    }
};

pub const Hub = struct {
    gpa: std.mem.Allocator,
    stats: *Stats,
    room: *Room,
    /// This hub's thread service index (`lws_get_tsi`).
    tsi: usize,
    /// Every open WebSocket connection (for pings, idle checks and shutdown).
    conns: std.ArrayList(*Client) = .empty,
    /// Joined members, the recipients of broadcasts.
    members: std.ArrayList(*Client) = .empty,
    /// Per-frame scratch for the parser, reset after every message.
    arena: std.heap.ArenaAllocator,
    /// Where a broadcast is serialized before it becomes one `Message`.
    scratch: []u8,
    /// Broadcasts from other hubs' threads, each this hub's own copy; under `lock`.
    inbox: std.ArrayList(*outbox.Message) = .empty,
    /// The inbox being handed out, swapped with `inbox` so the lock is held briefly.
    draining: std.ArrayList(*outbox.Message) = .empty,
    lock: std.c.pthread_mutex_t = .{},

    pub fn init(gpa: std.mem.Allocator, room: *Room, tsi: usize) !Hub {
        return .{
            .gpa = gpa,
            .stats = room.stats,
            .room = room,
            .tsi = tsi,
            .arena = .init(gpa),
            .scratch = try gpa.alloc(u8, protocol.max_serialized_bytes),
        };
    }

    pub fn deinit(h: *Hub) void {
        for (h.inbox.items) |m| m.release(h.gpa);
        h.inbox.deinit(h.gpa);
        h.draining.deinit(h.gpa);
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
        const online = h.room.online.fetchAdd(1, .monotonic) + 1;
        h.stats.inc("joins");
        var w: std.Io.Writer = .fixed(h.scratch);
        protocol.writeJoin(&w, c.userName(), online) catch unreachable;
        h.broadcast(.control, w.buffered(), null);
    }

    /// Removes member `c` and announces it to the remaining members.
    pub fn leave(h: *Hub, c: *Client) void {
        swapRemove(&h.members, c.member_index.?, .member);
        c.member_index = null;
        const online = h.room.online.fetchSub(1, .monotonic) - 1;
        if (h.room.isShuttingDown()) return;
        var w: std.Io.Writer = .fixed(h.scratch);
        protocol.writeLeave(&w, c.userName(), online) catch unreachable;
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

    /// `bytes` is the broadcast's one serialization: one shared `Message` for
    /// this hub's members, and one copy posted to each other hub.
    fn broadcast(h: *Hub, kind: outbox.Kind, bytes: []const u8, except: ?*Client) void {
        h.deliver(kind, bytes, except);
        var wake = false;
        for (h.room.hubs) |*other| {
            if (other != h and other.post(kind, bytes)) wake = true;
        }
        if (wake) h.room.wake();
    }

    /// Queues `bytes` for this hub's members but `except`.
    fn deliver(h: *Hub, kind: outbox.Kind, bytes: []const u8, except: ?*Client) void {
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

    /// From another hub's thread: puts a copy of `bytes` in this hub's inbox.
    /// True when the inbox was empty, so this hub's thread must be woken.
    fn post(h: *Hub, kind: outbox.Kind, bytes: []const u8) bool {
        // Out of memory: this hub's members miss it (not counted: their number
        // is this hub's thread's to read).
        const m = outbox.Message.create(h.gpa, kind, bytes) catch return false;
        _ = std.c.pthread_mutex_lock(&h.lock);
        defer _ = std.c.pthread_mutex_unlock(&h.lock);
        h.inbox.append(h.gpa, m) catch {
            m.release(h.gpa);
            return false;
        };
        return h.inbox.items.len == 1;
    }

    /// On this hub's thread, when woken: hands what other hubs posted to the members.
    pub fn drainInbox(h: *Hub) void {
        _ = std.c.pthread_mutex_lock(&h.lock);
        std.mem.swap(std.ArrayList(*outbox.Message), &h.inbox, &h.draining);
        _ = std.c.pthread_mutex_unlock(&h.lock);
        for (h.draining.items) |m| {
            for (h.members.items) |c| c.enqueue(m);
            m.release(h.gpa);
        }
        h.draining.clearRetainingCapacity();
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

/// Hubs and connections without sockets: a hub only ever touches a client's
/// outbox (and asks for a writable callback), so the tests read the outboxes
/// directly. Clients 0-3 are on hub 0; with two hubs, 4-5 are on hub 1.
const TestRoom = struct {
    stats: Stats = .{},
    room: Room = undefined,
    hubs: [2]Hub = undefined,
    clients: [6]Client = undefined,
    hub: *Hub = undefined,

    var wakes: usize = 0;
    fn countWake() void {
        wakes += 1;
    }

    /// Call on a room at its final address: the hubs and clients point into it.
    fn init(r: *TestRoom) !void {
        try r.initHubs(1);
    }

    fn initHubs(r: *TestRoom, n: usize) !void {
        wakes = 0;
        r.room = .{ .stats = &r.stats, .started_us = 0, .wake = countWake };
        for (r.hubs[0..n], 0..) |*h, i| h.* = try .init(testing.allocator, &r.room, i);
        r.room.hubs = r.hubs[0..n];
        r.hub = &r.hubs[0];
        for (&r.clients, 0..) |*c, i| {
            const h = &r.hubs[if (i < 4 or n == 1) 0 else 1];
            c.* = .{
                .wsi = @ptrFromInt(0x1000),
                .hub = h,
                .bucket = .init(0),
                .last_rx_us = 0,
                .last_ping_us = 0,
            };
            if (i < 4 or n > 1) try h.connect(c);
        }
    }

    fn deinit(r: *TestRoom) void {
        for (&r.clients) |*c| c.outbox.clear(testing.allocator);
        for (r.room.hubs) |*h| h.deinit();
    }

    fn joined(r: *TestRoom, i: usize, name: []const u8) !*Client {
        const c = &r.clients[i];
        @memcpy(c.user[0..name.len], name);
        c.user_len = name.len;
        try c.hub.join(c);
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
    r.room.shutting_down.store(true, .release);
    r.hub.disconnect(alice);
    try testing.expect(bob.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 1), r.hub.members.items.len);
}

test "a chat reaches the members of every service thread's hub, woken once per empty inbox" {
    var r: TestRoom = .{};
    try r.initHubs(2);
    defer r.deinit();
    const alice = try r.joined(0, "alice");
    const bob = try r.joined(1, "bob");
    const dave = try r.joined(4, "dave");
    // Dave's own join, the acknowledgement, is on his hub at once; alice's and
    // bob's wait in its inbox, posted with one wake-up (the second post found
    // the inbox not yet drained), and dave's join woke alice's hub.
    try expectNext(dave, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"dave\",\"online\":3}");
    try testing.expect(dave.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 2), TestRoom.wakes);
    r.hubs[1].drainInbox();
    try expectNext(dave, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":1}");
    try expectNext(dave, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"bob\",\"online\":2}");
    r.hubs[0].drainInbox();
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":1}");
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"bob\",\"online\":2}");
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"dave\",\"online\":3}");
    _ = drain(bob);

    r.hub.chat(alice, "hi", null);
    r.hub.chat(alice, "again", null);
    try testing.expect(alice.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 2), drain(bob));
    // Two posts, one wake: the second found the inbox not yet drained.
    try testing.expectEqual(@as(usize, 3), TestRoom.wakes);
    r.hubs[1].drainInbox();
    try expectNext(dave, "{\"type\":\"chat\",\"room\":\"public\",\"user\":\"alice\",\"text\":\"hi\"}");
    try expectNext(dave, "{\"type\":\"chat\",\"room\":\"public\",\"user\":\"alice\",\"text\":\"again\"}");
    try testing.expect(r.hubs[1].inbox.items.len == 0);

    // A member leaving on hub 1 is announced on hub 0 with the room's count.
    r.hubs[1].leave(dave);
    r.hubs[0].drainInbox();
    try expectNext(alice, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"dave\",\"online\":2}");
    try expectNext(bob, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"dave\",\"online\":2}");
}
