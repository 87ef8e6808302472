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
const protocol = @import("protocol.zig");
const outbox = @import("outbox.zig");
const Stats = @import("stats.zig").Stats;
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
        Stats.inc(&h.stats.joins);
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
                if (c != except) Stats.inc(&h.stats.dropped_slow);
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
