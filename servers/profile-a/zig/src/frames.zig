//! Server frames built by hand, several to a buffer: `--frame-batch`.
//!
//! libwebsockets 4.1.6 frames each `lws_write` itself and sends it with its
//! own send(). With `--frame-batch` the writer frames the queued messages
//! here instead, as a server frames them (unmasked, FIN and the text opcode,
//! a 7-, 16- or 64-bit length, then the payload), one after another into one
//! buffer, and hands the buffer to libwebsockets in one `LWS_WRITE_RAW`
//! write, which the ws role passes through unframed (`send_raw` in
//! rops_write_role_protocol_ws) to the TLS layer or the socket. A batch is
//! whole frames only, so whatever the socket does not take (kept by
//! libwebsockets as one buffered remainder) never splits a frame between
//! this write and a later one's.

const std = @import("std");
const outbox = @import("outbox.zig");

/// FIN and the text opcode: the first byte of every frame made here.
const fin_text: u8 = 0x80 | 0x1;

/// The bytes of a server frame's header for a payload of `len` bytes.
pub fn headerLen(len: usize) usize {
    return if (len <= 125) 2 else if (len <= 0xffff) 4 else 10;
}

/// Writes the header of an unmasked final text frame carrying `len` bytes
/// to the front of `out` (at least `headerLen(len)` long); returns its length.
pub fn writeHeader(out: []u8, len: usize) usize {
    out[0] = fin_text;
    if (len <= 125) {
        out[1] = @intCast(len);
        return 2;
    }
    if (len <= 0xffff) {
        out[1] = 126;
        std.mem.writeInt(u16, out[2..4], @intCast(len), .big);
        return 4;
    }
    out[1] = 127;
    std.mem.writeInt(u64, out[2..10], len, .big);
    return 10;
}

/// What `fill` put into the buffer.
pub const Batch = struct {
    /// Bytes of frames, headers included.
    len: usize = 0,
    /// Messages framed (each taken off the outbox and released).
    messages: usize = 0,
    /// Of those, chats: `deliveries` once the batch is written.
    chats: usize = 0,
};

/// Frames messages from the front of `box` into `buf`, oldest first, while
/// the next one fits whole; each framed one leaves the outbox and its
/// reference is released. A message too big for an empty `buf` is left
/// queued (`messages` 0): the caller writes it on its own.
pub fn fill(box: *outbox.Outbox, buf: []u8, gpa: std.mem.Allocator) Batch {
    var b: Batch = .{};
    while (box.peek()) |m| {
        const payload = m.payload();
        const need = headerLen(payload.len) + payload.len;
        if (need > buf.len - b.len) break;
        b.len += writeHeader(buf[b.len..], payload.len);
        @memcpy(buf[b.len..][0..payload.len], payload);
        b.len += payload.len;
        b.messages += 1;
        if (m.kind == .chat) b.chats += 1;
        _ = box.pop();
        m.release(gpa);
    }
    return b;
}

const testing = std.testing;
const frameBytes = @import("chat").frameBytes;

test "a header says FIN and text, and the length in 7, 16 or 64 bits" {
    var h: [10]u8 = undefined;
    try testing.expectEqual(@as(usize, 2), writeHeader(&h, 125));
    try testing.expectEqualSlices(u8, &.{ 0x81, 125 }, h[0..2]);
    try testing.expectEqual(@as(usize, 4), writeHeader(&h, 126));
    try testing.expectEqualSlices(u8, &.{ 0x81, 126, 0, 126 }, h[0..4]);
    try testing.expectEqual(@as(usize, 4), writeHeader(&h, 0xffff));
    try testing.expectEqualSlices(u8, &.{ 0x81, 126, 0xff, 0xff }, h[0..4]);
    try testing.expectEqual(@as(usize, 10), writeHeader(&h, 0x10000));
    try testing.expectEqualSlices(u8, &.{ 0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0 }, h[0..10]);
}

test "a header is as long as the counters say a frame's header is" {
    for ([_]usize{ 0, 1, 125, 126, 4096, 0xffff, 0x10000 }) |len| {
        var h: [10]u8 = undefined;
        try testing.expectEqual(frameBytes(len), writeHeader(&h, len) + len);
        try testing.expectEqual(headerLen(len), writeHeader(&h, len));
    }
}

/// Reads back the frames in `bytes` as a client would, into `out`; fails on a
/// frame that is not a final unmasked text frame or runs past the end.
fn parseFrames(bytes: []const u8, out: [][]const u8) ![]const []const u8 {
    var i: usize = 0;
    var n: usize = 0;
    while (i < bytes.len) : (n += 1) {
        if (bytes.len - i < 2 or bytes[i] != 0x81 or bytes[i + 1] & 0x80 != 0) return error.BadFrame;
        var len: usize = bytes[i + 1];
        i += 2;
        if (len == 126) {
            len = std.mem.readInt(u16, bytes[i..][0..2], .big);
            i += 2;
        } else if (len == 127) {
            len = @intCast(std.mem.readInt(u64, bytes[i..][0..8], .big));
            i += 8;
        }
        if (len > bytes.len - i) return error.BadFrame;
        out[n] = bytes[i..][0..len];
        i += len;
    }
    return out[0..n];
}

test "a batch is the queued messages as whole frames, in order, and counts the chats" {
    const gpa = testing.allocator;
    const big = try gpa.alloc(u8, 300);
    defer gpa.free(big);
    @memset(big, 'x');
    const texts = [_][]const u8{ "{\"type\":\"join\"}", big, "{\"type\":\"chat\"}" };
    const kinds = [_]outbox.Kind{ .control, .chat, .chat };
    var box: outbox.Outbox = .{};
    for (texts, kinds) |t, k| {
        const m = try outbox.Message.create(gpa, k, t);
        try testing.expect(box.push(m));
        m.release(gpa); // the outbox holds the only reference now
    }
    var buf: [1024]u8 = undefined;
    const b = fill(&box, &buf, gpa);
    try testing.expectEqual(@as(usize, 3), b.messages);
    try testing.expectEqual(@as(usize, 2), b.chats);
    try testing.expect(box.isEmpty());
    var total: u64 = 0;
    for (texts) |t| total += frameBytes(t.len);
    try testing.expectEqual(total, b.len);
    var got: [3][]const u8 = undefined;
    const frames = try parseFrames(buf[0..b.len], &got);
    try testing.expectEqual(@as(usize, 3), frames.len);
    for (texts, frames) |want, frame| try testing.expectEqualStrings(want, frame);
}

test "a batch stops before a frame that does not fit and leaves it queued" {
    const gpa = testing.allocator;
    var box: outbox.Outbox = .{};
    for ([_][]const u8{ "0123456789", "abcdefghij", "ABCDEFGHIJ" }) |t| {
        const m = try outbox.Message.create(gpa, .chat, t);
        try testing.expect(box.push(m));
        m.release(gpa);
    }
    defer box.clear(gpa);
    // Room for two 12-byte frames and part of a third.
    var buf: [30]u8 = undefined;
    const b = fill(&box, &buf, gpa);
    try testing.expectEqual(@as(usize, 2), b.messages);
    try testing.expectEqual(@as(usize, 24), b.len);
    try testing.expectEqual(@as(u16, 1), box.len);
    try testing.expectEqualStrings("ABCDEFGHIJ", box.peek().?.payload());
    // A message bigger than an empty buffer is not framed at all.
    var tiny: [8]u8 = undefined;
    try testing.expectEqual(@as(usize, 0), fill(&box, &tiny, gpa).messages);
    try testing.expectEqual(@as(u16, 1), box.len);
}
