//! Outbound messages and the bounded per-connection queue.
//!
//! A broadcast is serialized once into a `Message`: one allocation holding a
//! reference count, `headroom` spare bytes and the JSON payload. libwebsockets
//! writes each frame's header into the bytes just before the payload (its
//! LWS_PRE rule), so every recipient's `lws_write` can send the very same
//! buffer without a copy: the header it writes is identical for all of them.
//!
//! Each connection owns an `Outbox` of at most `capacity` messages. Pushing to
//! a full outbox fails at once (the caller counts `dropped_slow`), so the
//! broadcaster never waits for a slow reader and memory stays bounded.
//!
//! Everything here runs on the event loop's single thread, so the reference
//! count is a plain integer.

const std = @import("std");

/// Bytes kept free in front of every payload for the WebSocket frame header.
/// Must be at least libwebsockets' LWS_PRE; client.zig checks at compile time.
pub const headroom = 16;

/// How many messages may wait for one connection before new ones are dropped.
pub const capacity = 256;

pub const Kind = enum(u8) {
    /// A chat broadcast: counted in `deliveries` when written.
    chat,
    /// join, leave and pong.
    control,
};

pub const Message = struct {
    refs: u32,
    len: u32,
    kind: Kind,

    const alignment: std.mem.Alignment = .@"16";
    const header = std.mem.alignForward(usize, @sizeOf(Message), 16);

    /// Copies `bytes` into a new message holding one reference (the caller's).
    pub fn create(gpa: std.mem.Allocator, kind: Kind, bytes: []const u8) error{OutOfMemory}!*Message {
        const mem = try gpa.alignedAlloc(u8, alignment, header + headroom + bytes.len);
        const m: *Message = @ptrCast(mem.ptr);
        m.* = .{ .refs = 1, .len = @intCast(bytes.len), .kind = kind };
        @memcpy(mem[header + headroom ..], bytes);
        return m;
    }

    fn allocation(m: *Message) []align(16) u8 {
        const base: [*]align(16) u8 = @ptrCast(@alignCast(m));
        return base[0 .. header + headroom + m.len];
    }

    /// The payload. The `headroom` bytes before it belong to the writer.
    pub fn payload(m: *Message) []u8 {
        return m.allocation()[header + headroom ..];
    }

    pub fn retain(m: *Message) void {
        m.refs += 1;
    }

    pub fn release(m: *Message, gpa: std.mem.Allocator) void {
        m.refs -= 1;
        if (m.refs == 0) gpa.free(m.allocation());
    }
};

/// A fixed ring of message references.
pub const Outbox = struct {
    items: [capacity]*Message = undefined,
    head: u16 = 0,
    len: u16 = 0,

    /// Queues `m`, taking a reference. Returns false, taking nothing, when full.
    pub fn push(self: *Outbox, m: *Message) bool {
        if (self.len == capacity) return false;
        self.items[(self.head + self.len) % capacity] = m;
        self.len += 1;
        m.retain();
        return true;
    }

    /// The oldest message; the caller now owns its reference.
    pub fn pop(self: *Outbox) ?*Message {
        if (self.len == 0) return null;
        const m = self.items[self.head];
        self.head = (self.head + 1) % capacity;
        self.len -= 1;
        return m;
    }

    /// The oldest message, left queued.
    pub fn peek(self: *const Outbox) ?*Message {
        return if (self.len == 0) null else self.items[self.head];
    }

    pub fn isEmpty(self: *const Outbox) bool {
        return self.len == 0;
    }

    /// Releases everything still queued (the connection is going away).
    pub fn clear(self: *Outbox, gpa: std.mem.Allocator) void {
        while (self.pop()) |m| m.release(gpa);
    }
};

const testing = std.testing;

test "a message keeps headroom before its payload and frees on the last release" {
    const m = try Message.create(testing.allocator, .chat, "{\"type\":\"chat\"}");
    try testing.expectEqualStrings("{\"type\":\"chat\"}", m.payload());
    const before: [*]u8 = m.payload().ptr - headroom;
    @memset(before[0..headroom], 0xAA); // lws may write here
    m.retain();
    m.release(testing.allocator);
    try testing.expectEqual(@as(u32, 1), m.refs);
    m.release(testing.allocator); // testing.allocator reports a leak otherwise
}

test "the outbox is bounded and drops when full" {
    const m = try Message.create(testing.allocator, .control, "x");
    defer m.release(testing.allocator);
    var box: Outbox = .{};
    for (0..capacity) |_| try testing.expect(box.push(m));
    try testing.expect(!box.push(m));
    try testing.expectEqual(@as(u32, 1 + capacity), m.refs);
    try testing.expect(box.pop() != null);
    m.release(testing.allocator);
    try testing.expect(box.push(m)); // room again after one left
    box.clear(testing.allocator);
    try testing.expect(box.isEmpty());
    try testing.expectEqual(@as(u32, 1), m.refs);
}

test "the outbox hands messages back in order across the ring's wrap" {
    var msgs: [3]*Message = undefined;
    for (&msgs, 0..) |*slot, i| slot.* = try Message.create(testing.allocator, .chat, &[_]u8{'a' + @as(u8, @intCast(i))});
    defer for (msgs) |m| m.release(testing.allocator);
    var box: Outbox = .{};
    box.head = capacity - 1; // start right at the end of the ring
    for (msgs) |m| try testing.expect(box.push(m));
    for (msgs) |m| {
        const got = box.pop().?;
        try testing.expectEqual(m, got);
        got.release(testing.allocator);
    }
    try testing.expect(box.pop() == null);
}
