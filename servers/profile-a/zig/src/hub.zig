//! The rooms: who is connected, who is in which room, and the broadcast, over
//! one `Hub` per libwebsockets service thread.
//!
//! A broadcast is serialized once into one `Message` and handed to every
//! recipient's bounded outbox; a full outbox drops the message for that
//! recipient (counted in `dropped_slow`) instead of waiting. Nothing here
//! writes to a socket: the hub only queues and asks libwebsockets for a
//! writable callback, and each connection's writer (client.zig) sends.
//!
//! libwebsockets serves each connection on one service thread (its `tsi`) and
//! a connection may only be touched there, so each thread has its own hub:
//! its connections, and for each room its members there (a `Local`), touched
//! by that thread alone, without a lock. A broadcast in room R reaches the
//! sender's own hub's members of R directly; every other hub with a member of
//! R (a bit in the room's `hubs` mask) gets its own copy of the message in its
//! inbox, tagged with R's id (the inbox is under a mutex) and, when that inbox
//! was empty, a wake-up (`lws_cancel_service`), after which its thread hands
//! the message to its own members of R (`LWS_CALLBACK_EVENT_WAIT_CANCELLED` →
//! `drainInbox`). This is what libwebsockets' own SMP example
//! (minimal-ws-server-threads-smp) does: shared data under a mutex,
//! `lws_cancel_service` to wake the other service threads, and each thread
//! asking for writable callbacks on its own connections only.
//!
//! What the hubs share about a room (`Room`: its name, its `online` count over
//! every hub, which hubs have members) is in `Server.rooms`, under one small
//! mutex taken on join and leave only, never on a chat. A room with no member
//! left on any hub is forgotten there, and a hub forgets its `Local` of a room
//! when its last member there leaves. With one thread (Debian's build) there
//! is no other hub, and the mutex is never contended.

const Settings = @import("settings.zig").Settings;
const std = @import("std");
const protocol = @import("chat").protocol;
const Stats = @import("chat").Stats;
const outbox = @import("outbox.zig");
const Client = @import("client.zig").Client;
const frame_buffer_bytes = @import("client.zig").frame_buffer_bytes;

/// A room's `hubs` mask has a bit per hub.
pub const max_hubs = 64;

/// A room as every hub sees it: in `Server.rooms` while it has a member on any hub.
pub const Room = struct {
    name: protocol.RoomName,
    /// Never reused: posts between hubs name their room by it, so a room
    /// forgotten and then named again is another room to a late post.
    id: u64,
    /// Members over every hub: the `online` of join and leave. Under `Server.lock`.
    online: usize = 0,
    /// Bit `tsi` set while hub `tsi` has a member: written under
    /// `Server.lock`, read by broadcasts without it.
    hubs: std.atomic.Value(u64) = .init(0),
};

/// What the hubs share: counters, the rooms, and the way to each other.
pub const Server = struct {
    gpa: std.mem.Allocator,
    stats: *Stats,
    /// Monotonic time the server started, for `uptime_ms`.
    started_us: i64,
    /// One per service thread, indexed by libwebsockets' thread service index.
    hubs: []Hub = &.{},
    /// Wakes the other service threads (`lws_cancel_service`); tests count calls.
    wake: *const fn () void,
    /// How every connection reads and writes (the command line's settings).
    settings: Settings = .{},
    /// Rooms with at least one member, by name. Under `lock`.
    rooms: std.StringHashMapUnmanaged(*Room) = .empty,
    next_room_id: u64 = 0,
    /// Taken on join and leave only, for a few map and counter operations.
    lock: std.c.pthread_mutex_t = .{},
    /// Set once shutdown starts: no new connections, no leave broadcasts.
    shutting_down: std.atomic.Value(bool) = .init(false),

    pub fn deinit(s: *Server) void {
        var it = s.rooms.valueIterator();
        while (it.next()) |r| s.gpa.destroy(r.*);
        s.rooms.deinit(s.gpa);
    }

    /// Milliseconds since start.
    pub fn uptimeMs(s: *const Server, now_us: i64) u64 {
        return @intCast(@divTrunc(@max(now_us - s.started_us, 0), 1000));
    }

    pub fn isShuttingDown(s: *const Server) bool {
        return s.shutting_down.load(.acquire);
    }

    const Entered = struct { room: *Room, online: usize };

    /// One more member of room `name`, on hub `tsi`: the room (made if new)
    /// and its member count after the join.
    fn enter(s: *Server, name: []const u8, tsi: usize) error{OutOfMemory}!Entered {
        _ = std.c.pthread_mutex_lock(&s.lock);
        defer _ = std.c.pthread_mutex_unlock(&s.lock);
        const gop = try s.rooms.getOrPut(s.gpa, name);
        if (!gop.found_existing) {
            const r = s.gpa.create(Room) catch |err| {
                s.rooms.removeByPtr(gop.key_ptr);
                return err;
            };
            r.* = .{ .name = .init(name), .id = s.next_room_id };
            s.next_room_id += 1;
            // The key must outlive the payload `name` points into.
            gop.key_ptr.* = r.name.slice();
            gop.value_ptr.* = r;
        }
        const r = gop.value_ptr.*;
        r.online += 1;
        _ = r.hubs.fetchOr(bit(tsi), .release);
        return .{ .room = r, .online = r.online };
    }

    const Exited = struct { online: usize, hubs: u64 };

    /// One member fewer in `r`, from hub `tsi` (`last_here`: its last member
    /// there): the count after the leave and the hubs that still have members.
    /// A room left empty is forgotten; `r` is not to be touched after this.
    fn exit(s: *Server, r: *Room, tsi: usize, last_here: bool) Exited {
        _ = std.c.pthread_mutex_lock(&s.lock);
        r.online -= 1;
        const online = r.online;
        const hubs = if (last_here) r.hubs.fetchAnd(~bit(tsi), .release) & ~bit(tsi) else r.hubs.load(.monotonic);
        if (online == 0) _ = s.rooms.remove(r.name.slice());
        _ = std.c.pthread_mutex_unlock(&s.lock);
        if (online == 0) s.gpa.destroy(r);
        return .{ .online = online, .hubs = hubs };
    }

    /// The number of rooms with members (tests).
    pub fn roomCount(s: *Server) usize {
        _ = std.c.pthread_mutex_lock(&s.lock);
        defer _ = std.c.pthread_mutex_unlock(&s.lock);
        return s.rooms.count();
    }
};

fn bit(tsi: usize) u64 {
    return @as(u64, 1) << @intCast(tsi);
}

/// One room's members on one hub.
pub const Local = struct {
    /// Alive while this has members: each counts in its `online`.
    room: *Room,
    members: std.ArrayList(*Client) = .empty,
};

/// A connection's place in one of its rooms: the room's members on its hub,
/// and where in that list it is.
pub const Membership = struct {
    local: *Local,
    index: usize,
};

/// A message from another hub, for this hub's members of the room `room` (a `Room.id`).
const Post = struct {
    message: *outbox.Message,
    room: u64,
};

pub const JoinError = error{ TooManyRooms, OutOfMemory };

pub const Hub = struct {
    gpa: std.mem.Allocator,
    stats: *Stats,
    server: *Server,
    /// This hub's thread service index (`lws_get_tsi`).
    tsi: usize,
    /// Every open WebSocket connection (for pings, idle checks and shutdown).
    conns: std.ArrayList(*Client) = .empty,
    /// This hub's members of each room that has some here, by `Room.id`.
    locals: std.AutoHashMapUnmanaged(u64, *Local) = .empty,
    /// Per-frame scratch for the parser, reset after every message.
    arena: std.heap.ArenaAllocator,
    /// Where a broadcast is serialized before it becomes one `Message`.
    scratch: []u8,
    /// Where `--frame-batch` writers frame a batch (LWS_PRE, then up to
    /// `client.tx_packet_size` bytes of frames); made on first use.
    frame_buffer: ?[]u8 = null,
    /// Broadcasts from other hubs' threads, each this hub's own copy; under `lock`.
    inbox: std.ArrayList(Post) = .empty,
    /// The inbox being handed out, swapped with `inbox` so the lock is held briefly.
    draining: std.ArrayList(Post) = .empty,
    lock: std.c.pthread_mutex_t = .{},

    pub fn init(gpa: std.mem.Allocator, server: *Server, tsi: usize) !Hub {
        std.debug.assert(tsi < max_hubs);
        return .{
            .gpa = gpa,
            .stats = server.stats,
            .server = server,
            .tsi = tsi,
            .arena = .init(gpa),
            .scratch = try gpa.alloc(u8, protocol.max_serialized_bytes),
        };
    }

    pub fn deinit(h: *Hub) void {
        for (h.inbox.items) |p| p.message.release(h.gpa);
        h.inbox.deinit(h.gpa);
        h.draining.deinit(h.gpa);
        h.conns.deinit(h.gpa);
        var it = h.locals.valueIterator();
        while (it.next()) |local| {
            local.*.members.deinit(h.gpa);
            h.gpa.destroy(local.*);
        }
        h.locals.deinit(h.gpa);
        h.arena.deinit();
        h.gpa.free(h.scratch);
        if (h.frame_buffer) |b| h.gpa.free(b);
    }

    /// The frame batch buffer (`frame_buffer`), made the first time a writer needs it.
    pub fn frameBuffer(h: *Hub) error{OutOfMemory}![]u8 {
        if (h.frame_buffer) |b| return b;
        const b = try h.gpa.alloc(u8, frame_buffer_bytes);
        h.frame_buffer = b;
        return b;
    }

    pub fn connect(h: *Hub, c: *Client) !void {
        try h.conns.append(h.gpa, c);
        c.conn_index = h.conns.items.len - 1;
    }

    /// The connection is gone: it leaves every room it is in, announced
    /// exactly as if it had sent `leave`.
    pub fn disconnect(h: *Hub, c: *Client) void {
        h.leaveAll(c);
        _ = h.conns.swapRemove(c.conn_index);
        if (c.conn_index < h.conns.items.len) h.conns.items[c.conn_index].conn_index = c.conn_index;
    }

    /// Adds `c` to room `name`, then announces it to every member of that
    /// room, `c` included: its own copy is the acknowledgement. The first
    /// join sets the connection's user name to `user`; later ones keep it.
    /// False, doing nothing, when `c` is already in the room.
    pub fn join(h: *Hub, c: *Client, name: []const u8, user: []const u8) JoinError!bool {
        if (c.roomIndex(name) != null) return false;
        if (c.room_count == protocol.max_rooms) return error.TooManyRooms;
        const entered = try h.server.enter(name, h.tsi);
        const room = entered.room;
        const local = h.localOf(room) catch |err| {
            _ = h.server.exit(room, h.tsi, true);
            return err;
        };
        local.members.append(h.gpa, c) catch |err| {
            const last_here = local.members.items.len == 0;
            if (last_here) h.forget(local);
            _ = h.server.exit(room, h.tsi, last_here);
            return err;
        };
        c.rooms[c.room_count] = .{ .local = local, .index = local.members.items.len - 1 };
        c.room_count += 1;
        if (c.user_len == 0) {
            @memcpy(c.user[0..user.len], user);
            c.user_len = user.len;
        }
        h.stats.inc("joins");
        var w: std.Io.Writer = .fixed(h.scratch);
        protocol.writeJoin(&w, room.name.slice(), c.userName(), entered.online) catch unreachable;
        h.broadcast(.control, w.buffered(), local, room.id, room.hubs.load(.acquire), null);
        return true;
    }

    /// This hub's members of `room`, made empty if it has none here yet.
    fn localOf(h: *Hub, room: *Room) error{OutOfMemory}!*Local {
        const gop = try h.locals.getOrPut(h.gpa, room.id);
        if (gop.found_existing) return gop.value_ptr.*;
        const local = h.gpa.create(Local) catch |err| {
            h.locals.removeByPtr(gop.key_ptr);
            return err;
        };
        local.* = .{ .room = room };
        gop.value_ptr.* = local;
        return local;
    }

    /// Drops an empty `Local`.
    fn forget(h: *Hub, local: *Local) void {
        _ = h.locals.remove(local.room.id);
        local.members.deinit(h.gpa);
        h.gpa.destroy(local);
    }

    /// Removes `c` from its room `c.rooms[slot]` and announces it to that
    /// room's remaining members. `c` stays connected, in its other rooms.
    pub fn leave(h: *Hub, c: *Client, slot: usize) void {
        const m = c.rooms[slot];
        c.room_count -= 1;
        c.rooms[slot] = c.rooms[c.room_count];
        const local = m.local;
        _ = local.members.swapRemove(m.index);
        if (m.index < local.members.items.len) {
            // The member moved into the freed place keeps its index right.
            const moved = local.members.items[m.index];
            for (moved.rooms[0..moved.room_count]) |*place| {
                if (place.local == local) place.index = m.index;
            }
        }
        const room = local.room;
        // Once this member is no longer counted, another hub may forget the
        // room: what the broadcast needs is copied first.
        const name = room.name;
        const id = room.id;
        const last_here = local.members.items.len == 0;
        if (last_here) h.forget(local);
        const after = h.server.exit(room, h.tsi, last_here);
        if (after.online == 0 or h.server.isShuttingDown()) return;
        var w: std.Io.Writer = .fixed(h.scratch);
        protocol.writeLeave(&w, name.slice(), c.userName(), after.online) catch unreachable;
        h.broadcast(.control, w.buffered(), if (last_here) null else local, id, after.hubs, null);
    }

    /// Removes `c` from every room it is in, announced in each.
    pub fn leaveAll(h: *Hub, c: *Client) void {
        while (c.room_count > 0) h.leave(c, c.room_count - 1);
    }

    /// Sends an accepted chat from `from` to every other member of its room
    /// `from.rooms[slot]`.
    pub fn chat(h: *Hub, from: *Client, slot: usize, text: []const u8, ts: ?[]const u8) void {
        const local = from.rooms[slot].local;
        const room = local.room; // alive: `from` counts in it
        var w: std.Io.Writer = .fixed(h.scratch);
        protocol.writeChat(&w, room.name.slice(), from.userName(), text, ts) catch unreachable;
        h.broadcast(.chat, w.buffered(), local, room.id, room.hubs.load(.acquire), from);
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
    /// this hub's members of the room (`local`, null when none is left here),
    /// and one copy posted to each other hub in `hubs` (a mask of `tsi` bits).
    fn broadcast(h: *Hub, kind: outbox.Kind, bytes: []const u8, local: ?*Local, room: u64, hubs: u64, except: ?*Client) void {
        if (local) |l| h.deliver(kind, bytes, l.members.items, except);
        var others = hubs & ~bit(h.tsi);
        if (others == 0) return;
        var wake = false;
        while (others != 0) : (others &= others - 1) {
            const i = @ctz(others);
            if (i < h.server.hubs.len and h.server.hubs[i].post(kind, bytes, room)) wake = true;
        }
        if (wake) h.server.wake();
    }

    /// Queues `bytes` for `members` but `except`.
    fn deliver(h: *Hub, kind: outbox.Kind, bytes: []const u8, members: []const *Client, except: ?*Client) void {
        const m = outbox.Message.create(h.gpa, kind, bytes) catch {
            // Out of memory: nobody gets it, as if every queue were full.
            for (members) |c| {
                if (c != except) h.stats.inc("dropped_slow");
            }
            return;
        };
        defer m.release(h.gpa);
        for (members) |c| {
            if (c != except) c.enqueue(m);
        }
    }

    /// From another hub's thread: puts a copy of `bytes` for room `room` in
    /// this hub's inbox. True when the inbox was empty, so this hub's thread
    /// must be woken.
    fn post(h: *Hub, kind: outbox.Kind, bytes: []const u8, room: u64) bool {
        // Out of memory: this hub's members miss it (not counted: their number
        // is this hub's thread's to read).
        const m = outbox.Message.create(h.gpa, kind, bytes) catch return false;
        _ = std.c.pthread_mutex_lock(&h.lock);
        defer _ = std.c.pthread_mutex_unlock(&h.lock);
        h.inbox.append(h.gpa, .{ .message = m, .room = room }) catch {
            m.release(h.gpa);
            return false;
        };
        return h.inbox.items.len == 1;
    }

    /// On this hub's thread, when woken: hands what other hubs posted to this
    /// hub's members of each post's room (none, if they all left meanwhile).
    pub fn drainInbox(h: *Hub) void {
        _ = std.c.pthread_mutex_lock(&h.lock);
        std.mem.swap(std.ArrayList(Post), &h.inbox, &h.draining);
        _ = std.c.pthread_mutex_unlock(&h.lock);
        for (h.draining.items) |p| {
            if (h.locals.get(p.room)) |local| {
                for (local.members.items) |c| c.enqueue(p.message);
            }
            p.message.release(h.gpa);
        }
        h.draining.clearRetainingCapacity();
    }
};

const testing = std.testing;

/// Hubs and connections without sockets: a hub only ever touches a client's
/// outbox (and asks for a writable callback), so the tests read the outboxes
/// directly. Clients 0-3 are on hub 0; with two hubs, 4-5 are on hub 1.
const TestServer = struct {
    stats: Stats = .{},
    server: Server = undefined,
    hubs: [2]Hub = undefined,
    clients: [6]Client = undefined,
    hub: *Hub = undefined,

    var wakes: usize = 0;
    fn countWake() void {
        wakes += 1;
    }

    /// Call on a server at its final address: the hubs and clients point into it.
    fn init(t: *TestServer) !void {
        try t.initHubs(1);
    }

    fn initHubs(t: *TestServer, n: usize) !void {
        wakes = 0;
        t.server = .{ .gpa = testing.allocator, .stats = &t.stats, .started_us = 0, .wake = countWake };
        for (t.hubs[0..n], 0..) |*h, i| h.* = try .init(testing.allocator, &t.server, i);
        t.server.hubs = t.hubs[0..n];
        t.hub = &t.hubs[0];
        for (&t.clients, 0..) |*c, i| {
            const h = &t.hubs[if (i < 4 or n == 1) 0 else 1];
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

    fn deinit(t: *TestServer) void {
        for (&t.clients) |*c| c.outbox.clear(testing.allocator);
        for (t.server.hubs) |*h| h.deinit();
        t.server.deinit();
    }

    /// Client `i` joins "public" as `name`.
    fn joined(t: *TestServer, i: usize, name: []const u8) !*Client {
        return t.joinedTo(i, "public", name);
    }

    fn joinedTo(t: *TestServer, i: usize, room: []const u8, name: []const u8) !*Client {
        const c = &t.clients[i];
        try testing.expect(try c.hub.join(c, room, name));
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

fn drainAll(cs: []const *Client) void {
    for (cs) |c| _ = drain(c);
}

test "a join reaches every member, the joiner included, with the online count" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = try t.joined(0, "alice");
    const bob = try t.joined(1, "bob");
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":1}");
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"bob\",\"online\":2}");
    try expectNext(bob, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"bob\",\"online\":2}");
    try testing.expect(t.clients[2].outbox.isEmpty()); // connected, never joined
    try testing.expectEqual(@as(u64, 2), t.stats.get("joins"));
}

test "a chat reaches every other member as one shared message, never the sender" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = try t.joined(0, "alice");
    const bob = try t.joined(1, "bob");
    const carol = try t.joined(2, "carol");
    drainAll(&.{ alice, bob, carol });
    t.hub.chat(alice, 0, "hi", "12.50");
    try testing.expect(alice.outbox.isEmpty());
    try testing.expect(t.clients[3].outbox.isEmpty());
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
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = try t.joined(0, "alice");
    const bob = try t.joined(1, "bob");
    const carol = try t.joined(2, "carol");
    drainAll(&.{ alice, bob, carol });
    t.hub.leaveAll(alice);
    try expectNext(bob, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":2}");
    try expectNext(carol, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":2}");
    try testing.expect(alice.outbox.isEmpty());
    // Alice's connection ending after her leave announces nothing more.
    t.hub.disconnect(alice);
    try testing.expect(bob.outbox.isEmpty());
    // Carol disconnects without leaving: the same broadcast.
    t.hub.disconnect(carol);
    try expectNext(bob, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"carol\",\"online\":1}");
    // A connection that never joined goes quietly.
    t.hub.disconnect(&t.clients[3]);
    try testing.expect(bob.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 1), t.hub.conns.items.len);
    try testing.expectEqual(@as(usize, 1), t.hub.locals.get(bob.rooms[0].local.room.id).?.members.items.len);
}

test "a pong goes to its sender only" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const bob = try t.joined(1, "bob");
    _ = drain(bob);
    t.hub.pong(&t.clients[0], "1732233445566");
    try expectNext(&t.clients[0], "{\"type\":\"pong\",\"ts\":1732233445566}");
    try testing.expect(bob.outbox.isEmpty());
}

test "a full outbox drops and counts without holding up the others" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = try t.joined(0, "alice");
    const slow = try t.joined(1, "slow");
    const fast = try t.joined(2, "fast");
    _ = drain(fast);
    // slow holds its join and fast's: 2 of its 256 slots.
    const chats = outbox.capacity + 50;
    for (0..chats) |_| {
        t.hub.chat(alice, 0, "x", null);
        try testing.expectEqual(@as(usize, 1), drain(fast));
    }
    try testing.expectEqual(@as(usize, outbox.capacity), drain(slow));
    try testing.expectEqual(@as(u64, chats + 2 - outbox.capacity), t.stats.get("dropped_slow"));
}

test "once shutdown starts, leaves are not broadcast but still counted" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = try t.joined(0, "alice");
    const bob = try t.joined(1, "bob");
    drainAll(&.{ alice, bob });
    t.server.shutting_down.store(true, .release);
    t.hub.disconnect(alice);
    try testing.expect(bob.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 1), bob.rooms[0].local.room.online);
    t.hub.disconnect(bob);
    try testing.expectEqual(@as(usize, 0), t.server.roomCount());
}

test "rooms are isolated: joins, chats and online counts stay in their room" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = try t.joined(0, "alice");
    const bob = try t.joined(1, "bob");
    const carol = try t.joinedTo(2, "lobby", "carol");
    // Carol's join is hers alone: public's members never see it, and her
    // room counts one member while public counts two.
    try expectNext(carol, "{\"type\":\"join\",\"room\":\"lobby\",\"user\":\"carol\",\"online\":1}");
    drainAll(&.{ alice, bob });
    const dave = try t.joinedTo(3, "lobby", "dave");
    try expectNext(carol, "{\"type\":\"join\",\"room\":\"lobby\",\"user\":\"dave\",\"online\":2}");
    try expectNext(dave, "{\"type\":\"join\",\"room\":\"lobby\",\"user\":\"dave\",\"online\":2}");
    try testing.expect(alice.outbox.isEmpty() and bob.outbox.isEmpty());

    t.hub.chat(carol, 0, "in the lobby", null);
    try expectNext(dave, "{\"type\":\"chat\",\"room\":\"lobby\",\"user\":\"carol\",\"text\":\"in the lobby\"}");
    try testing.expect(alice.outbox.isEmpty() and bob.outbox.isEmpty() and carol.outbox.isEmpty());
    t.hub.chat(alice, 0, "in public", null);
    try expectNext(bob, "{\"type\":\"chat\",\"room\":\"public\",\"user\":\"alice\",\"text\":\"in public\"}");
    try testing.expect(carol.outbox.isEmpty() and dave.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 2), t.server.roomCount());
}

test "a member of two rooms gets both rooms' chats, under the name of its first join" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = try t.joined(0, "alice");
    // Her second join carries another (valid) user, which is not used.
    try testing.expect(try t.hub.join(alice, "lobby", "someone-else"));
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":1}");
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"lobby\",\"user\":\"alice\",\"online\":1}");
    const bob = try t.joined(1, "bob");
    const carol = try t.joinedTo(2, "lobby", "carol");
    drainAll(&.{ alice, bob, carol });
    t.hub.chat(bob, 0, "p", null);
    t.hub.chat(carol, 0, "l", null);
    try expectNext(alice, "{\"type\":\"chat\",\"room\":\"public\",\"user\":\"bob\",\"text\":\"p\"}");
    try expectNext(alice, "{\"type\":\"chat\",\"room\":\"lobby\",\"user\":\"carol\",\"text\":\"l\"}");
    try testing.expectEqual(@as(usize, 1), alice.roomIndex("lobby").?);
    try testing.expectEqual(@as(?usize, null), alice.roomIndex("elsewhere"));
}

test "a second join to the same room is ignored: no broadcast, no count" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = try t.joined(0, "alice");
    _ = drain(alice);
    try testing.expect(!try t.hub.join(alice, "public", "alice"));
    try testing.expect(alice.outbox.isEmpty());
    try testing.expectEqual(@as(u64, 1), t.stats.get("joins"));
    try testing.expectEqual(@as(usize, 1), alice.room_count);
    try testing.expectEqual(@as(usize, 1), alice.rooms[0].local.room.online);
}

test "a join to a 17th room is refused and changes nothing" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = &t.clients[0];
    var name_buf: [8]u8 = undefined;
    for (0..protocol.max_rooms) |i| {
        const name = try std.fmt.bufPrint(&name_buf, "room{d}", .{i});
        try testing.expect(try t.hub.join(alice, name, "alice"));
    }
    try testing.expectEqual(@as(usize, protocol.max_rooms), drain(alice));
    try testing.expectError(error.TooManyRooms, t.hub.join(alice, "one-more", "alice"));
    try testing.expect(alice.outbox.isEmpty());
    try testing.expectEqual(@as(usize, protocol.max_rooms), t.server.roomCount());
    try testing.expectEqual(@as(u64, protocol.max_rooms), t.stats.get("joins"));
    // One of the 16 again is still the ignored second join, not a 17th.
    try testing.expect(!try t.hub.join(alice, "room3", "alice"));
}

test "leaving one room announces it there only and keeps the member in its others" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = try t.joined(0, "alice");
    try testing.expect(try t.hub.join(alice, "lobby", "alice"));
    const bob = try t.joined(1, "bob");
    const carol = try t.joinedTo(2, "lobby", "carol");
    drainAll(&.{ alice, bob, carol });
    t.hub.leave(alice, alice.roomIndex("lobby").?);
    try expectNext(carol, "{\"type\":\"leave\",\"room\":\"lobby\",\"user\":\"alice\",\"online\":1}");
    try testing.expect(bob.outbox.isEmpty() and alice.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 1), alice.room_count);
    try testing.expectEqual(@as(?usize, null), alice.roomIndex("lobby"));
    // Still in public, both ways.
    t.hub.chat(bob, 0, "still here?", null);
    try expectNext(alice, "{\"type\":\"chat\",\"room\":\"public\",\"user\":\"bob\",\"text\":\"still here?\"}");
    t.hub.chat(carol, 0, "gone", null);
    try testing.expect(alice.outbox.isEmpty());
    // Having left her last room she is as one that never joined, name kept.
    t.hub.leave(alice, 0);
    try expectNext(bob, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":1}");
    try testing.expectEqual(@as(usize, 0), alice.room_count);
    try testing.expectEqualStrings("alice", alice.userName());
    try testing.expectEqual(@as(usize, 1), bob.rooms[0].local.room.online);
}

test "leave without a room, or a disconnect, is announced in every room the member was in" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = try t.joined(0, "alice");
    try testing.expect(try t.hub.join(alice, "lobby", "alice"));
    const bob = try t.joined(1, "bob");
    const carol = try t.joinedTo(2, "lobby", "carol");
    drainAll(&.{ alice, bob, carol });
    t.hub.disconnect(alice);
    try expectNext(bob, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":1}");
    try expectNext(carol, "{\"type\":\"leave\",\"room\":\"lobby\",\"user\":\"alice\",\"online\":1}");
    try testing.expect(bob.outbox.isEmpty() and carol.outbox.isEmpty());
}

test "a room with no members left is forgotten, on its hub and by the server" {
    var t: TestServer = .{};
    try t.init();
    defer t.deinit();
    const alice = &t.clients[0];
    // Many names, one at a time: what is kept never grows with them.
    var name_buf: [16]u8 = undefined;
    for (0..1000) |i| {
        const name = try std.fmt.bufPrint(&name_buf, "room{d}", .{i});
        try testing.expect(try t.hub.join(alice, name, "alice"));
        try testing.expectEqual(@as(usize, 1), t.server.roomCount());
        t.hub.leave(alice, 0);
        try testing.expectEqual(@as(usize, 0), t.server.roomCount());
        try testing.expectEqual(@as(usize, 0), t.hub.locals.count());
        _ = drain(alice);
    }
    // A room named again starts over at one member.
    _ = try t.joined(0, "alice");
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":1}");
}

test "a chat reaches the members of every service thread's hub, woken once per empty inbox" {
    var t: TestServer = .{};
    try t.initHubs(2);
    defer t.deinit();
    const alice = try t.joined(0, "alice");
    const bob = try t.joined(1, "bob");
    const dave = try t.joined(4, "dave");
    // Dave's own join, the acknowledgement, is on his hub at once; hub 1 had
    // no member of public before him, so alice's and bob's joins were never
    // posted to it, and dave's join woke alice's hub.
    try expectNext(dave, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"dave\",\"online\":3}");
    try testing.expect(dave.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 0), t.hubs[1].inbox.items.len);
    try testing.expectEqual(@as(usize, 1), TestServer.wakes);
    t.hubs[0].drainInbox();
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":1}");
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"bob\",\"online\":2}");
    try expectNext(alice, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"dave\",\"online\":3}");
    _ = drain(bob);

    t.hub.chat(alice, 0, "hi", null);
    t.hub.chat(alice, 0, "again", null);
    try testing.expect(alice.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 2), drain(bob));
    // Two posts, one wake: the second found the inbox not yet drained.
    try testing.expectEqual(@as(usize, 2), TestServer.wakes);
    t.hubs[1].drainInbox();
    try expectNext(dave, "{\"type\":\"chat\",\"room\":\"public\",\"user\":\"alice\",\"text\":\"hi\"}");
    try expectNext(dave, "{\"type\":\"chat\",\"room\":\"public\",\"user\":\"alice\",\"text\":\"again\"}");
    try testing.expect(t.hubs[1].inbox.items.len == 0);

    // A member leaving on hub 1 is announced on hub 0 with the room's count.
    t.hubs[1].leaveAll(dave);
    t.hubs[0].drainInbox();
    try expectNext(alice, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"dave\",\"online\":2}");
    try expectNext(bob, "{\"type\":\"leave\",\"room\":\"public\",\"user\":\"dave\",\"online\":2}");
    // Hub 1 has no member of public left: chats there post nothing to it.
    t.hub.chat(alice, 0, "alone", null);
    try testing.expectEqual(@as(usize, 0), t.hubs[1].inbox.items.len);
    _ = drain(bob);
}

test "a room's chats cross to another hub only when that hub has a member of the room" {
    var t: TestServer = .{};
    try t.initHubs(2);
    defer t.deinit();
    const alice = try t.joinedTo(0, "lobby", "alice");
    const bob = try t.joinedTo(1, "lobby", "bob");
    const dave = try t.joined(4, "dave"); // public, on hub 1
    const erin = try t.joinedTo(5, "lobby", "erin"); // lobby, on hub 1
    t.hubs[0].drainInbox();
    t.hubs[1].drainInbox();
    drainAll(&.{ alice, bob, dave, erin });
    t.hub.chat(alice, 0, "hey", null);
    t.hubs[1].drainInbox();
    try expectNext(erin, "{\"type\":\"chat\",\"room\":\"lobby\",\"user\":\"alice\",\"text\":\"hey\"}");
    try testing.expect(dave.outbox.isEmpty());
    try testing.expectEqual(@as(usize, 2), t.server.roomCount());
    // A post that arrives after its hub's members of the room all left is dropped.
    t.hub.chat(alice, 0, "late", null);
    t.hubs[1].leaveAll(erin);
    t.hubs[1].drainInbox();
    try testing.expect(erin.outbox.isEmpty());
    _ = drain(bob);
}
