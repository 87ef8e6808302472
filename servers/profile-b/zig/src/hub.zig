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

const protocol = @import("protocol.zig");
const client = @import("client.zig");
const Client = client.Client;
const Message = client.Message;
const Stats = @import("stats.zig").Stats;

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
