//! The rooms: each room's members, and the broadcast within one room.
//!
//! A map from room name to `Room`; a room holds its members and is forgotten
//! (freed, its map entry removed) when its last member leaves, so memory
//! follows the rooms in use, not every name ever joined. A broadcast walks its
//! own room's members only. It is serialized once into a reference-counted
//! `Message` and appended to every recipient's bounded outbox. Appending never
//! waits for a writer, so the lock below is held only for that loop of
//! appends, never while writing to a socket. Chats take the lock shared, so
//! several readers can fan out at once, in one room or several; joins and
//! leaves take it exclusively, so `online` and the order "join ack before
//! anything else" hold.
//!
//! A connection's rooms are in the client (`Client.rooms`, up to
//! `protocol.max_rooms`): only its own reader adds or removes them (under the
//! lock), so the reader looks up its rooms without the lock, and a chat
//! reaches the hub already holding its `*Room`, which cannot be freed while
//! the sender is in it.
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

pub const Room = struct {
    /// Also the room's key in `Hub.rooms`, which points at these bytes.
    name: protocol.RoomName,
    /// Guarded by the hub's lock.
    members: std.ArrayList(*Client) = .empty,
};

/// One of a connection's rooms. `room` is written only by the connection's
/// reader (under the hub's lock). `index` is the connection's place in
/// `room.members`; other connections' leaves move it, under the lock.
pub const Membership = struct {
    room: *Room,
    index: usize,
};

pub const Hub = struct {
    io: Io,
    gpa: std.mem.Allocator,
    stats: *Stats,

    lock: Io.RwLock = .init,
    /// Every room with at least one member.
    rooms: std.StringArrayHashMapUnmanaged(*Room) = .empty,

    conns_mutex: Io.Mutex = .init,
    conns: std.DoublyLinkedList = .{},
    /// Set by `closeAll`: connections that finish their upgrade later are
    /// closed at once.
    shutting_down: bool = false,

    pub fn init(io: Io, gpa: std.mem.Allocator, stats: *Stats) Hub {
        return .{ .io = io, .gpa = gpa, .stats = stats };
    }

    /// Frees the rooms left (only tests end with members still in).
    pub fn deinit(h: *Hub) void {
        for (h.rooms.values()) |room| {
            room.members.deinit(h.gpa);
            h.gpa.destroy(room);
        }
        h.rooms.deinit(h.gpa);
    }

    pub const JoinResult = enum {
        joined,
        /// Already a member: ignored, not malformed.
        already,
        /// Already in `protocol.max_rooms` rooms: malformed.
        too_many,
        out_of_memory,
    };

    /// Adds `c` (whose user name is set) to the room `name` and announces it
    /// to every member, `c` included: its own copy is its acknowledgement,
    /// queued before any later broadcast in that room. Only `c`'s reader
    /// calls it.
    pub fn join(h: *Hub, c: *Client, name: []const u8) JoinResult {
        if (c.roomNamed(name) != null) return .already;
        if (c.room_count == protocol.max_rooms) return .too_many;
        var dropped: u64 = 0;
        {
            h.lock.lockUncancelable(h.io);
            defer h.lock.unlock(h.io);
            const room = h.roomFor(name) orelse {
                log.err("out of memory adding a room", .{});
                return .out_of_memory;
            };
            room.members.append(h.gpa, c) catch {
                log.err("out of memory adding a member", .{});
                if (room.members.items.len == 0) h.forget(room);
                return .out_of_memory;
            };
            c.rooms[c.room_count] = .{ .room = room, .index = room.members.items.len - 1 };
            c.room_count += 1;
            dropped = h.announce(room, protocol.writeJoin, c.user());
        }
        h.stats.inc("joins");
        h.stats.add("dropped_slow", dropped);
        return .joined;
    }

    /// Removes `c` from the room `name` and tells its remaining members; `c`
    /// stays in its other rooms. False (malformed) when `c` is not in it.
    pub fn leave(h: *Hub, c: *Client, name: []const u8) bool {
        const slot = c.slotNamed(name) orelse return false;
        var dropped: u64 = 0;
        {
            h.lock.lockUncancelable(h.io);
            defer h.lock.unlock(h.io);
            dropped = h.leaveSlot(c, slot);
        }
        h.stats.add("dropped_slow", dropped);
        return true;
    }

    /// Removes `c` from every room it is in, telling each room's remaining
    /// members (a leave without room, or a connection that ends).
    pub fn leaveAll(h: *Hub, c: *Client) void {
        if (c.room_count == 0) return;
        var dropped: u64 = 0;
        {
            h.lock.lockUncancelable(h.io);
            defer h.lock.unlock(h.io);
            while (c.room_count > 0) dropped += h.leaveSlot(c, c.room_count - 1);
        }
        h.stats.add("dropped_slow", dropped);
    }

    /// Broadcasts a chat from `from` to every other member of `room`, one of
    /// `from`'s rooms (`Client.roomNamed`).
    pub fn chat(h: *Hub, from: *Client, room: *Room, text: []const u8, ts: ?[]const u8) void {
        // Serialized before taking the lock: only the fan-out needs it.
        const m = Message.print(h.gpa, true, protocol.writeChat, .{ room.name.slice(), from.user(), text, ts }) catch {
            log.err("out of memory serializing a chat", .{});
            return;
        };
        var dropped: u64 = 0;
        {
            h.lock.lockSharedUncancelable(h.io);
            defer h.lock.unlockShared(h.io);
            dropped = h.fanOut(room, m, from);
        }
        h.stats.add("dropped_slow", dropped);
    }

    /// The room `name`, created if no one is in it. Called with the lock held
    /// exclusively.
    fn roomFor(h: *Hub, name: []const u8) ?*Room {
        const gop = h.rooms.getOrPut(h.gpa, name) catch return null;
        if (gop.found_existing) return gop.value_ptr.*;
        const room = h.gpa.create(Room) catch {
            h.rooms.swapRemoveAt(gop.index);
            return null;
        };
        room.* = .{ .name = .init(name) };
        // The key was the caller's bytes; the room's own copy outlives them.
        gop.key_ptr.* = room.name.slice();
        gop.value_ptr.* = room;
        return room;
    }

    /// Frees an empty room and its map entry. Called with the lock held
    /// exclusively.
    fn forget(h: *Hub, room: *Room) void {
        std.debug.assert(room.members.items.len == 0);
        _ = h.rooms.swapRemove(room.name.slice());
        room.members.deinit(h.gpa);
        h.gpa.destroy(room);
    }

    /// Takes `c` out of its room at `slot`, and announces the leave there or
    /// forgets the room if it is now empty. Returns how many outboxes were
    /// full. Called with the lock held exclusively.
    fn leaveSlot(h: *Hub, c: *Client, slot: usize) u64 {
        const m = c.rooms[slot];
        const room = m.room;
        _ = room.members.swapRemove(m.index);
        if (m.index < room.members.items.len) {
            const moved = room.members.items[m.index];
            moved.rooms[moved.slotOf(room)].index = m.index;
        }
        c.room_count -= 1;
        c.rooms[slot] = c.rooms[c.room_count];
        if (room.members.items.len == 0) {
            h.forget(room);
            return 0;
        }
        return h.announce(room, protocol.writeLeave, c.user());
    }

    /// Serializes a join or leave with the room's current member count and
    /// fans it out to every member. Called with the lock held exclusively.
    fn announce(h: *Hub, room: *Room, comptime write: anytype, user: []const u8) u64 {
        const m = Message.print(h.gpa, false, write, .{ room.name.slice(), user, room.members.items.len }) catch {
            log.err("out of memory serializing an announcement", .{});
            return 0;
        };
        return h.fanOut(room, m, null);
    }

    /// Hands `m` (whose one reference the caller gives up) to the outbox of
    /// every member of `room` except `skip`. Returns how many outboxes were
    /// full.
    fn fanOut(h: *Hub, room: *Room, m: *Message, skip: ?*Client) u64 {
        const members = room.members.items;
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
/// client's outbox, name and rooms, so the tests set those and read the
/// outboxes directly.
const TestHub = struct {
    stats: Stats = .{},
    hub: Hub = undefined,
    clients: [4]Client = undefined,

    /// Call on a hub at its final address: the hub and clients point into it.
    fn init(r: *TestHub) void {
        r.hub = .init(testing.io, testing.allocator, &r.stats);
        for (&r.clients) |*c| {
            c.io = testing.io;
            c.outbox = .{};
            c.conn_node = .{};
            c.user_len = 0;
            c.room_count = 0;
            r.hub.register(c);
        }
    }

    fn deinit(r: *TestHub) void {
        for (&r.clients) |*c| c.outbox.close(testing.io, testing.allocator);
        r.hub.deinit();
    }

    /// Names client `i` (if it has no name yet) and joins it to `room`.
    fn joinRoom(r: *TestHub, i: usize, name: []const u8, room: []const u8) !*Client {
        const c = &r.clients[i];
        if (c.user_len == 0) {
            @memcpy(c.user_buf[0..name.len], name);
            c.user_len = name.len;
        }
        try testing.expectEqual(Hub.JoinResult.joined, r.hub.join(c, room));
        return c;
    }

    fn joined(r: *TestHub, i: usize, name: []const u8) !*Client {
        return r.joinRoom(i, name, "public");
    }

    /// Checks that every member's recorded place in each of its rooms is
    /// where it is.
    fn expectConsistent(r: *TestHub) !void {
        for (r.hub.rooms.keys(), r.hub.rooms.values()) |key, room| {
            try testing.expectEqualStrings(room.name.slice(), key);
            try testing.expect(room.members.items.len > 0);
            for (room.members.items, 0..) |c, i| {
                try testing.expectEqual(i, c.rooms[c.slotOf(room)].index);
            }
        }
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
    if (expected.len != got.len) {
        for (got) |m| std.debug.print("queued: {s}\n", .{m.bytes()});
    }
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
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    const alice = try r.joined(0, "alice");
    const bob = try r.joined(1, "bob");
    const bob_join = "{\"type\":\"join\",\"room\":\"public\",\"user\":\"bob\",\"online\":2}";
    try expectQueued(alice, &.{ "{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":1}", bob_join });
    try expectQueued(bob, &.{bob_join});
    try expectQueued(&r.clients[2], &.{}); // connected, never joined
    try testing.expectEqual(@as(u64, 2), r.stats.get("joins"));
}

test "a chat reaches every other member as one shared message, never the sender" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    const alice = try r.joined(0, "alice");
    const bob = try r.joined(1, "bob");
    const carol = try r.joined(2, "carol");
    for ([_]*Client{ alice, bob, carol }) |c| _ = drain(c);
    r.hub.chat(alice, alice.roomNamed("public").?, "hi", "12.50");
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
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    const alice = try r.joined(0, "alice");
    const bob = try r.joined(1, "bob");
    const carol = try r.joined(2, "carol");
    for ([_]*Client{ alice, bob, carol }) |c| _ = drain(c);
    r.hub.leaveAll(alice); // the first member: carol moves into its slot
    try testing.expectEqual(@as(usize, 0), alice.room_count);
    try expectQueued(bob, &.{"{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":2}"});
    try expectQueued(carol, &.{"{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":2}"});
    try expectQueued(alice, &.{});
    try r.expectConsistent();
    r.hub.leaveAll(carol);
    try expectQueued(bob, &.{"{\"type\":\"leave\",\"room\":\"public\",\"user\":\"carol\",\"online\":1}"});
    const public = bob.roomNamed("public").?;
    try testing.expectEqual(@as(usize, 1), public.members.items.len);
    try r.expectConsistent();
}

test "rooms are isolated: joins, chats and leaves reach only their own room's members" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    const alice = try r.joinRoom(0, "alice", "public");
    const bob = try r.joinRoom(1, "bob", "public");
    const carol = try r.joinRoom(2, "carol", "lobby");
    try expectQueued(carol, &.{"{\"type\":\"join\",\"room\":\"lobby\",\"user\":\"carol\",\"online\":1}"});
    for ([_]*Client{ alice, bob }) |c| _ = drain(c);

    r.hub.chat(alice, alice.roomNamed("public").?, "to public", null);
    try expectQueued(bob, &.{"{\"type\":\"chat\",\"room\":\"public\",\"user\":\"alice\",\"text\":\"to public\"}"});
    try expectQueued(carol, &.{});

    _ = try r.joinRoom(1, "bob", "lobby"); // bob is in both rooms now
    const bob_in_lobby = "{\"type\":\"join\",\"room\":\"lobby\",\"user\":\"bob\",\"online\":2}";
    try expectQueued(carol, &.{bob_in_lobby});
    try expectQueued(bob, &.{bob_in_lobby});
    try expectQueued(alice, &.{});

    r.hub.chat(carol, carol.roomNamed("lobby").?, "to lobby", null);
    try expectQueued(bob, &.{"{\"type\":\"chat\",\"room\":\"lobby\",\"user\":\"carol\",\"text\":\"to lobby\"}"});
    try expectQueued(alice, &.{});
    try testing.expectEqual(@as(?*Room, null), carol.roomNamed("public"));
}

test "online counts the members of that room only" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    _ = try r.joinRoom(0, "alice", "a");
    _ = try r.joinRoom(1, "bob", "a");
    _ = try r.joinRoom(2, "carol", "a");
    const dave = try r.joinRoom(3, "dave", "b");
    try expectQueued(dave, &.{"{\"type\":\"join\",\"room\":\"b\",\"user\":\"dave\",\"online\":1}"});
    _ = try r.joinRoom(3, "dave", "a");
    try expectQueued(dave, &.{"{\"type\":\"join\",\"room\":\"a\",\"user\":\"dave\",\"online\":4}"});
}

test "a later join to another room carries the connection's first name" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    const alice = try r.joinRoom(0, "alice", "a");
    _ = drain(alice);
    _ = try r.joinRoom(0, "someone-else", "b");
    try expectQueued(alice, &.{"{\"type\":\"join\",\"room\":\"b\",\"user\":\"alice\",\"online\":1}"});
}

test "leaving one room keeps the others, and the leave reaches that room's remaining members" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    const alice = try r.joinRoom(0, "alice", "a");
    _ = try r.joinRoom(0, "alice", "b");
    const bob = try r.joinRoom(1, "bob", "a");
    const carol = try r.joinRoom(2, "carol", "b");
    for ([_]*Client{ alice, bob, carol }) |c| _ = drain(c);

    try testing.expect(r.hub.leave(alice, "a"));
    try expectQueued(bob, &.{"{\"type\":\"leave\",\"room\":\"a\",\"user\":\"alice\",\"online\":1}"});
    try expectQueued(carol, &.{});
    try expectQueued(alice, &.{});
    try testing.expectEqual(@as(usize, 1), alice.room_count);
    try testing.expect(alice.roomNamed("b") != null);
    try testing.expect(alice.roomNamed("a") == null);
    // Still in b: a chat there reaches carol; no close was asked for.
    r.hub.chat(alice, alice.roomNamed("b").?, "still here", null);
    try expectQueued(carol, &.{"{\"type\":\"chat\",\"room\":\"b\",\"user\":\"alice\",\"text\":\"still here\"}"});
    var out: [client.outbox_capacity]*Message = undefined;
    try testing.expectEqual(@as(?u16, null), alice.outbox.take(testing.io, null, &out).close_code);
    try r.expectConsistent();
}

test "leaving a room one is not in is refused" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    const alice = try r.joinRoom(0, "alice", "a");
    const bob = try r.joinRoom(1, "bob", "b");
    _ = drain(bob);
    try testing.expect(!r.hub.leave(alice, "b"));
    try testing.expect(!r.hub.leave(&r.clients[2], "a")); // never joined
    try expectQueued(bob, &.{});
    try testing.expectEqual(@as(usize, 1), alice.room_count);
}

test "a second join to the same room is ignored" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    const alice = try r.joinRoom(0, "alice", "a");
    _ = drain(alice);
    try testing.expectEqual(Hub.JoinResult.already, r.hub.join(alice, "a"));
    try expectQueued(alice, &.{});
    try testing.expectEqual(@as(u64, 1), r.stats.get("joins"));
    try testing.expectEqual(@as(usize, 1), alice.roomNamed("a").?.members.items.len);
}

test "a connection joins up to 16 rooms; the 17th is refused" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    const alice = &r.clients[0];
    var name_buf: [8]u8 = undefined;
    for (0..protocol.max_rooms) |i| {
        _ = try r.joinRoom(0, "alice", try std.fmt.bufPrint(&name_buf, "r{d}", .{i}));
    }
    try testing.expectEqual(@as(usize, 16), alice.room_count);
    try testing.expectEqual(Hub.JoinResult.too_many, r.hub.join(alice, "r16"));
    try testing.expectEqual(@as(usize, 16), r.hub.rooms.count());
    try testing.expectEqual(@as(u64, 16), r.stats.get("joins"));
    // A room it is already in is still "already", not "too many".
    try testing.expectEqual(Hub.JoinResult.already, r.hub.join(alice, "r3"));
    // Leaving one makes room for another.
    try testing.expect(r.hub.leave(alice, "r3"));
    _ = try r.joinRoom(0, "alice", "r16");
    try r.expectConsistent();
    r.hub.leaveAll(alice);
    try testing.expectEqual(@as(usize, 0), r.hub.rooms.count());
}

test "an empty room is forgotten, and a room name can be used again" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    var name_buf: [16]u8 = undefined;
    // Many names one after another: the hub holds only the rooms in use.
    for (0..1000) |i| {
        const name = try std.fmt.bufPrint(&name_buf, "room-{d}", .{i});
        const alice = try r.joinRoom(0, "alice", name);
        try testing.expectEqual(@as(usize, 1), r.hub.rooms.count());
        try testing.expect(r.hub.leave(alice, name));
        try testing.expectEqual(@as(usize, 0), r.hub.rooms.count());
        _ = drain(alice);
    }
    try testing.expect(r.hub.rooms.capacity() < 100);
    // Left its last room: as one that never joined, with its name kept.
    const alice = &r.clients[0];
    try testing.expectEqual(@as(usize, 0), alice.room_count);
    try testing.expectEqual(@as(?*Room, null), alice.roomNamed("room-999"));
    _ = try r.joinRoom(0, "ignored", "room-999");
    try expectQueued(alice, &.{"{\"type\":\"join\",\"room\":\"room-999\",\"user\":\"alice\",\"online\":1}"});
}

test "leaving every room announces the leave in each, to its remaining members" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    const alice = try r.joinRoom(0, "alice", "a");
    _ = try r.joinRoom(0, "alice", "b");
    _ = try r.joinRoom(0, "alice", "c"); // alone in c
    const bob = try r.joinRoom(1, "bob", "a");
    const carol = try r.joinRoom(2, "carol", "b");
    for ([_]*Client{ alice, bob, carol }) |c| _ = drain(c);
    r.hub.leaveAll(alice);
    try expectQueued(bob, &.{"{\"type\":\"leave\",\"room\":\"a\",\"user\":\"alice\",\"online\":1}"});
    try expectQueued(carol, &.{"{\"type\":\"leave\",\"room\":\"b\",\"user\":\"alice\",\"online\":1}"});
    try expectQueued(alice, &.{});
    try testing.expectEqual(@as(usize, 2), r.hub.rooms.count()); // c was forgotten
    try r.expectConsistent();
}

test "a full outbox drops and counts without holding up the others" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    const alice = try r.joined(0, "alice");
    const slow = try r.joined(1, "slow");
    const fast = try r.joined(2, "fast");
    _ = drain(fast);
    const public = alice.roomNamed("public").?;
    // slow holds its join and fast's: 2 of its 256 slots.
    const chats = client.outbox_capacity + 50;
    for (0..chats) |_| {
        r.hub.chat(alice, public, "x", null);
        try testing.expectEqual(@as(usize, 1), drain(fast));
    }
    try testing.expectEqual(@as(usize, client.outbox_capacity), drain(slow));
    try testing.expectEqual(@as(u64, chats + 2 - client.outbox_capacity), r.stats.get("dropped_slow"));
}

test "closeAll asks every connection to close with 1001, later ones too" {
    var r: TestHub = .{};
    r.init();
    defer r.deinit();
    _ = try r.joined(0, "alice");
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
