//! The room: the set of joined members and the broadcast.
//!
//! A broadcast is serialized once into a reference-counted `Message` and
//! appended to every recipient's bounded outbox. Appending never waits for a
//! writer, so the lock below is held only for that loop of appends, never
//! while writing to a socket. Chats take the lock shared, so several readers
//! can fan out at once; joins and leaves take it exclusively, so `online` and
//! the order "join ack before anything else" hold.
//!
//! The hub also keeps every open WebSocket (joined or not), so that shutdown
//! can send each one a close frame.
const std = @import("std");
const Io = std.Io;

const protocol = @import("chat").protocol;
const Stats = @import("chat").Stats;
const client = @import("client.zig");
const Client = client.Client;
const Message = client.Message;

const log = std.log.scoped(.hub);

pub const Hub = struct {
    io: Io,
    gpa: std.mem.Allocator,
    stats: *Stats,

    lock: Io.RwLock = .init,
    members: std.ArrayList(*Client) = .empty,

    conns_mutex: Io.Mutex = .init,
    conns: std.DoublyLinkedList = .{},
    /// Set by `closeAll`: connections that finish their upgrade later are
    /// closed at once.
    shutting_down: bool = false,

    pub fn init(io: Io, gpa: std.mem.Allocator, stats: *Stats) Hub {
        return .{ .io = io, .gpa = gpa, .stats = stats };
    }

    /// Adds `c` and announces it to every member, `c` included: its own copy
    /// is its acknowledgement, queued before any later broadcast.
    pub fn join(h: *Hub, c: *Client) void {
        var dropped: u64 = 0;
        {
            h.lock.lockUncancelable(h.io);
            defer h.lock.unlock(h.io);
            h.members.append(h.gpa, c) catch {
                log.err("out of memory adding a member", .{});
                return;
            };
            c.member_index = h.members.items.len - 1;
            c.joined = true;
            dropped = h.announce(protocol.writeJoin, c.user());
        }
        h.stats.inc("joins");
        h.stats.add("dropped_slow", dropped);
    }

    /// Removes `c` and tells the remaining members.
    pub fn leave(h: *Hub, c: *Client) void {
        var dropped: u64 = 0;
        {
            h.lock.lockUncancelable(h.io);
            defer h.lock.unlock(h.io);
            _ = h.members.swapRemove(c.member_index);
            if (c.member_index < h.members.items.len) h.members.items[c.member_index].member_index = c.member_index;
            c.joined = false;
            dropped = h.announce(protocol.writeLeave, c.user());
        }
        h.stats.add("dropped_slow", dropped);
    }

    /// Broadcasts a chat from `from` to every other member.
    pub fn chat(h: *Hub, from: *Client, text: []const u8, ts: ?[]const u8) void {
        // Serialized before taking the lock: only the fan-out needs it.
        const m = Message.print(h.gpa, true, protocol.writeChat, .{ from.user(), text, ts }) catch {
            log.err("out of memory serializing a chat", .{});
            return;
        };
        var dropped: u64 = 0;
        {
            h.lock.lockSharedUncancelable(h.io);
            defer h.lock.unlockShared(h.io);
            dropped = h.fanOut(m, from);
        }
        h.stats.add("dropped_slow", dropped);
    }

    /// Serializes a join or leave with the current member count and fans it
    /// out to every member. Called with the lock held exclusively.
    fn announce(h: *Hub, comptime write: anytype, user: []const u8) u64 {
        const m = Message.print(h.gpa, false, write, .{ user, h.members.items.len }) catch {
            log.err("out of memory serializing an announcement", .{});
            return 0;
        };
        return h.fanOut(m, null);
    }

    /// Hands `m` (whose one reference the caller gives up) to every member's
    /// outbox except `skip`. Returns how many outboxes were full.
    fn fanOut(h: *Hub, m: *Message, skip: ?*Client) u64 {
        const members = h.members.items;
        // Reserve a reference per member up front, so that a writer that sends
        // and releases early cannot free the message mid-loop; hand back the
        // unused ones (and the caller's) in one step at the end.
        m.refs.store(@intCast(members.len + 1), .release);
        var unused: u32 = 1;
        var full: u64 = 0;
        for (members) |c| {
            if (c == skip) {
                unused += 1;
                continue;
            }
            switch (c.outbox.push(h.io, m)) {
                .queued => {},
                .full => {
                    unused += 1;
                    full += 1;
                },
                .closed => unused += 1,
            }
        }
        m.release(h.gpa, unused);
        return full;
    }

    pub fn register(h: *Hub, c: *Client) void {
        h.conns_mutex.lockUncancelable(h.io);
        defer h.conns_mutex.unlock(h.io);
        h.conns.append(&c.conn_node);
        if (h.shutting_down) c.requestClose(1001);
    }

    pub fn unregister(h: *Hub, c: *Client) void {
        h.conns_mutex.lockUncancelable(h.io);
        defer h.conns_mutex.unlock(h.io);
        h.conns.remove(&c.conn_node);
    }

    /// Asks every open WebSocket to close with 1001 (going away).
    pub fn closeAll(h: *Hub) void {
        h.conns_mutex.lockUncancelable(h.io);
        defer h.conns_mutex.unlock(h.io);
        h.shutting_down = true;
        var node = h.conns.first;
        while (node) |n| : (node = n.next) {
            const c: *Client = @alignCast(@fieldParentPtr("conn_node", n));
            c.requestClose(1001);
        }
    }
};

const testing = std.testing;

/// A hub and connections without sockets: the hub only ever touches a
/// client's outbox, name and places in its lists, so the tests set those and
/// read the outboxes directly.
const TestRoom = struct {
    stats: Stats = .{},
    hub: Hub = undefined,
    clients: [4]Client = undefined,

    /// Call on a room at its final address: the hub and clients point into it.
    fn init(r: *TestRoom) void {
        r.hub = .init(testing.io, testing.allocator, &r.stats);
        for (&r.clients) |*c| {
            c.io = testing.io;
            c.outbox = .{};
            c.conn_node = .{};
            c.joined = false;
            c.user_len = 0;
            c.member_index = 0;
            r.hub.register(c);
        }
    }

    fn deinit(r: *TestRoom) void {
        for (&r.clients) |*c| c.outbox.close(testing.io, testing.allocator);
        r.hub.members.deinit(testing.allocator);
    }

    fn joined(r: *TestRoom, i: usize, name: []const u8) *Client {
        const c = &r.clients[i];
        @memcpy(c.user_buf[0..name.len], name);
        c.user_len = name.len;
        r.hub.join(c);
        return c;
    }
};

/// Takes everything queued for `c`; the caller releases each message.
fn take(c: *Client, out: *[client.outbox_capacity]*Message) []*Message {
    return c.outbox.take(testing.io, null, out).messages;
}

/// Checks that `c` holds exactly `expected`, in order, and empties it.
fn expectQueued(c: *Client, expected: []const []const u8) !void {
    var out: [client.outbox_capacity]*Message = undefined;
    const got = take(c, &out);
    defer for (got) |m| m.release(testing.allocator, 1);
    try testing.expectEqual(expected.len, got.len);
    for (expected, got) |want, m| try testing.expectEqualStrings(want, m.bytes());
}

fn drain(c: *Client) usize {
    var out: [client.outbox_capacity]*Message = undefined;
    const got = take(c, &out);
    for (got) |m| m.release(testing.allocator, 1);
    return got.len;
}

test "a join reaches every member, the joiner included, with the online count" {
    var r: TestRoom = .{};
    r.init();
    defer r.deinit();
    const alice = r.joined(0, "alice");
    const bob = r.joined(1, "bob");
    const bob_join = "{\"type\":\"join\",\"room\":\"public\",\"user\":\"bob\",\"online\":2}";
    try expectQueued(alice, &.{ "{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":1}", bob_join });
    try expectQueued(bob, &.{bob_join});
    try expectQueued(&r.clients[2], &.{}); // connected, never joined
    try testing.expectEqual(@as(u64, 2), r.stats.get("joins"));
}

test "a chat reaches every other member as one shared message, never the sender" {
    var r: TestRoom = .{};
    r.init();
    defer r.deinit();
    const alice = r.joined(0, "alice");
    const bob = r.joined(1, "bob");
    const carol = r.joined(2, "carol");
    for ([_]*Client{ alice, bob, carol }) |c| _ = drain(c);
    r.hub.chat(alice, "hi", "12.50");
    try expectQueued(alice, &.{});
    var out_bob: [client.outbox_capacity]*Message = undefined;
    var out_carol: [client.outbox_capacity]*Message = undefined;
    const to_bob = take(bob, &out_bob);
    const to_carol = take(carol, &out_carol);
    defer for ([_][]*Message{ to_bob, to_carol }) |got| for (got) |m| m.release(testing.allocator, 1);
    try testing.expectEqual(@as(usize, 1), to_bob.len);
    try testing.expectEqual(@as(usize, 1), to_carol.len);
    try testing.expectEqual(to_bob[0], to_carol[0]);
    try testing.expect(to_bob[0].is_chat);
    try testing.expectEqualStrings(
        "{\"type\":\"chat\",\"room\":\"public\",\"user\":\"alice\",\"text\":\"hi\",\"ts\":12.50}",
        to_bob[0].bytes(),
    );
}

test "a leave reaches the remaining members, and the member list stays consistent" {
    var r: TestRoom = .{};
    r.init();
    defer r.deinit();
    const alice = r.joined(0, "alice");
    const bob = r.joined(1, "bob");
    const carol = r.joined(2, "carol");
    for ([_]*Client{ alice, bob, carol }) |c| _ = drain(c);
    r.hub.leave(alice); // the first member: carol moves into its slot
    try testing.expect(!alice.joined);
    try expectQueued(bob, &.{"{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":2}"});
    try expectQueued(carol, &.{"{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":2}"});
    try expectQueued(alice, &.{});
    r.hub.leave(carol);
    try expectQueued(bob, &.{"{\"type\":\"leave\",\"room\":\"public\",\"user\":\"carol\",\"online\":1}"});
    try testing.expectEqual(@as(usize, 1), r.hub.members.items.len);
    try testing.expectEqual(bob, r.hub.members.items[bob.member_index]);
}

test "a full outbox drops and counts without holding up the others" {
    var r: TestRoom = .{};
    r.init();
    defer r.deinit();
    const alice = r.joined(0, "alice");
    const slow = r.joined(1, "slow");
    const fast = r.joined(2, "fast");
    _ = drain(fast);
    // slow holds its join and fast's: 2 of its 256 slots.
    const chats = client.outbox_capacity + 50;
    for (0..chats) |_| {
        r.hub.chat(alice, "x", null);
        try testing.expectEqual(@as(usize, 1), drain(fast));
    }
    try testing.expectEqual(@as(usize, client.outbox_capacity), drain(slow));
    try testing.expectEqual(@as(u64, chats + 2 - client.outbox_capacity), r.stats.get("dropped_slow"));
}

test "closeAll asks every connection to close with 1001, later ones too" {
    var r: TestRoom = .{};
    r.init();
    defer r.deinit();
    _ = r.joined(0, "alice");
    r.hub.closeAll();
    var out: [client.outbox_capacity]*Message = undefined;
    for (r.clients[0..3]) |*c| {
        const batch = c.outbox.take(testing.io, null, &out);
        for (batch.messages) |m| m.release(testing.allocator, 1);
        try testing.expectEqual(@as(?u16, 1001), batch.close_code);
    }
    // A connection that finishes its upgrade after shutdown began.
    const late = &r.clients[3];
    r.hub.unregister(late);
    late.outbox = .{};
    r.hub.register(late);
    try testing.expectEqual(@as(?u16, 1001), late.outbox.take(testing.io, null, &out).close_code);
}
