//! The chat protocol (docs/protocol.md): parsing and validating what clients
//! send, and serializing what the server broadcasts.
//!
//! Parsing walks the tokens of `std.json.Scanner` instead of building a
//! `std.json.Value` tree: a message has at most five interesting fields, a
//! chat costs no map and allocates only for strings that contain escapes, and
//! the scanner hands back `ts` as the number's text, which is echoed
//! verbatim so the load generator gets back exactly the timestamp it sent.
const std = @import("std");
const Writer = std.Io.Writer;

pub const room = "public";
/// Payloads over this many bytes close the connection with 1009.
pub const max_message_bytes = 4096;
pub const max_user_chars = 64;

/// Enough for the largest broadcast: a 4096-byte text whose every byte is
/// escaped as \u00XX, a 64-character user name escaped likewise, and a `ts`
/// as long as a whole message.
pub const max_serialized_bytes = 6 * max_message_bytes + 6 * 4 * max_user_chars + max_message_bytes + 128;

/// A valid message from a client. Slices point into the payload or into the
/// scratch allocator passed to `parse`.
pub const Inbound = union(enum) {
    join: struct { user: []const u8 },
    chat: struct { text: []const u8, ts: ?[]const u8 },
    ping: struct { ts: ?[]const u8 },
    leave,
};

/// `Malformed` is everything the protocol calls invalid input; the caller
/// counts it in `malformed` and keeps the connection open. `OutOfMemory` means
/// the scratch allocator was too small for this message's escaped strings.
pub const Error = error{ Malformed, OutOfMemory };

const Fields = struct {
    type: ?[]const u8 = null,
    room: ?[]const u8 = null,
    user: ?[]const u8 = null,
    text: ?[]const u8 = null,
    ts: ?[]const u8 = null,
};

/// Parses one text payload. `scratch` holds unescaped strings and the
/// scanner's nesting stack; 2 x the payload size is always enough.
pub fn parse(scratch: std.mem.Allocator, payload: []const u8) Error!Inbound {
    const f = scanFields(scratch, payload) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return error.Malformed,
    };
    const kind = f.type orelse return error.Malformed;
    if (std.mem.eql(u8, kind, "join")) {
        try expectRoom(f.room);
        const user = f.user orelse return error.Malformed;
        const chars = std.unicode.utf8CountCodepoints(user) catch return error.Malformed;
        if (chars < 1 or chars > max_user_chars) return error.Malformed;
        return .{ .join = .{ .user = user } };
    }
    if (std.mem.eql(u8, kind, "chat")) {
        try expectRoom(f.room);
        return .{ .chat = .{ .text = f.text orelse return error.Malformed, .ts = f.ts } };
    }
    if (std.mem.eql(u8, kind, "ping")) return .{ .ping = .{ .ts = f.ts } };
    if (std.mem.eql(u8, kind, "leave")) return .leave;
    return error.Malformed;
}

/// Join and chat must name the one room. A missing room counts as a wrong
/// one: every message the protocol shows carries it.
fn expectRoom(r: ?[]const u8) Error!void {
    if (!std.mem.eql(u8, r orelse return error.Malformed, room)) return error.Malformed;
}

const ScanError = std.json.Scanner.AllocError || std.json.Scanner.PeekError || error{WrongType};

/// Collects the known fields of a top-level object, checking each one's JSON
/// type and skipping fields the protocol does not know.
fn scanFields(scratch: std.mem.Allocator, payload: []const u8) ScanError!Fields {
    var scanner = std.json.Scanner.initCompleteInput(scratch, payload);
    if (try scanner.next() != .object_begin) return error.WrongType;
    var f: Fields = .{};
    while (true) {
        const key = switch (try scanner.nextAlloc(scratch, .alloc_if_needed)) {
            .object_end => break,
            .string, .allocated_string => |s| s,
            else => return error.SyntaxError,
        };
        const slot: ?*?[]const u8 = inline for (comptime std.meta.fieldNames(Fields)) |name| {
            if (std.mem.eql(u8, key, name)) break &@field(f, name);
        } else null;
        const target = slot orelse {
            try scanner.skipValue();
            continue;
        };
        const want: std.json.TokenType = if (target == &f.ts) .number else .string;
        if (try scanner.peekNextTokenType() != want) return error.WrongType;
        target.* = switch (try scanner.nextAlloc(scratch, .alloc_if_needed)) {
            inline .string, .allocated_string, .number, .allocated_number => |s| s,
            else => unreachable,
        };
    }
    if (try scanner.next() != .end_of_document) return error.SyntaxError;
    return f;
}

// Serialization of what the server sends. Each broadcast is written once into
// a shared buffer, so these only ever see a `Writer`.

pub fn writeJoin(w: *Writer, user: []const u8, online: usize) Writer.Error!void {
    return writePresence(w, "join", user, online);
}

pub fn writeLeave(w: *Writer, user: []const u8, online: usize) Writer.Error!void {
    return writePresence(w, "leave", user, online);
}

fn writePresence(w: *Writer, comptime kind: []const u8, user: []const u8, online: usize) Writer.Error!void {
    try w.writeAll("{\"type\":\"" ++ kind ++ "\",\"room\":\"public\",\"user\":");
    try std.json.Stringify.encodeJsonString(user, .{}, w);
    try w.print(",\"online\":{d}}}", .{online});
}

pub fn writeChat(w: *Writer, user: []const u8, text: []const u8, ts: ?[]const u8) Writer.Error!void {
    try w.writeAll("{\"type\":\"chat\",\"room\":\"public\",\"user\":");
    try std.json.Stringify.encodeJsonString(user, .{}, w);
    try w.writeAll(",\"text\":");
    try std.json.Stringify.encodeJsonString(text, .{}, w);
    try writeTs(w, ts);
    try w.writeByte('}');
}

pub fn writePong(w: *Writer, ts: ?[]const u8) Writer.Error!void {
    try w.writeAll("{\"type\":\"pong\"");
    try writeTs(w, ts);
    try w.writeByte('}');
}

fn writeTs(w: *Writer, ts: ?[]const u8) Writer.Error!void {
    if (ts) |t| {
        try w.writeAll(",\"ts\":");
        try w.writeAll(t);
    }
}

// Tests

const testing = std.testing;

fn parseTest(payload: []const u8) Error!Inbound {
    const S = struct {
        var buf: [2 * max_message_bytes]u8 = undefined;
    };
    var fba: std.heap.FixedBufferAllocator = .init(&S.buf);
    return parse(fba.allocator(), payload);
}

test "parses a join" {
    const m = try parseTest("{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\"}");
    try testing.expectEqualStrings("alice", m.join.user);
}

test "parses a chat and keeps ts as the number's text" {
    const m = try parseTest("{\"type\":\"chat\",\"room\":\"public\",\"text\":\"hello\",\"ts\":1732233445566.25}");
    try testing.expectEqualStrings("hello", m.chat.text);
    try testing.expectEqualStrings("1732233445566.25", m.chat.ts.?);
}

test "ts keeps exponent notation and sign exactly" {
    const m = try parseTest("{\"type\":\"ping\",\"ts\":1.5e3}");
    try testing.expectEqualStrings("1.5e3", m.ping.ts.?);
    const negative = try parseTest("{\"type\":\"ping\",\"ts\":-1.5e3}");
    try testing.expectEqualStrings("-1.5e3", negative.ping.ts.?);
}

test "a chat without ts has none" {
    const m = try parseTest("{\"type\":\"chat\",\"room\":\"public\",\"text\":\"\"}");
    try testing.expectEqual(@as(?[]const u8, null), m.chat.ts);
}

test "field order and unknown fields do not matter" {
    const m = try parseTest("{\"extra\":[1,{\"a\":null}],\"user\":\"bob\",\"room\":\"public\",\"type\":\"join\"}");
    try testing.expectEqualStrings("bob", m.join.user);
}

test "escaped strings are unescaped" {
    const m = try parseTest("{\"type\":\"chat\",\"room\":\"public\",\"text\":\"a\\\"b\\u00e9\\n\"}");
    try testing.expectEqualStrings("a\"b\u{e9}\n", m.chat.text);
}

test "too little scratch is OutOfMemory, not Malformed, so the caller can retry with more" {
    const text = comptime repeat("\\n", 300); // 600 bytes escaped, 300 unescaped
    const payload = "{\"type\":\"chat\",\"room\":\"public\",\"text\":\"" ++ text ++ "\"}";
    var small: [128]u8 = undefined;
    var fba: std.heap.FixedBufferAllocator = .init(&small);
    try testing.expectError(error.OutOfMemory, parse(fba.allocator(), payload));
    const m = try parseTest(payload);
    try testing.expectEqual(@as(usize, 300), m.chat.text.len);
}

test "ping and leave need no other field" {
    try testing.expectEqual(@as(?[]const u8, null), (try parseTest("{\"type\":\"ping\"}")).ping.ts);
    try testing.expect((try parseTest("{\"type\":\"leave\"}")) == .leave);
}

test "invalid input is malformed" {
    const cases = [_][]const u8{
        "",
        "not json",
        "{\"type\":\"chat\"", // truncated
        "[1,2]",
        "\"join\"",
        "{}",
        "{\"type\":\"dance\"}",
        "{\"type\":\"shout\"}",
        "{\"type\":7}",
        "{\"type\":\"join\",\"room\":\"public\",\"user\":5}",
        "{\"type\":\"join\",\"room\":\"public\",\"user\":\"\"}",
        "{\"type\":\"join\",\"room\":\"lobby\",\"user\":\"a\"}",
        "{\"type\":\"join\",\"user\":\"a\"}",
        "{\"type\":\"join\",\"room\":1,\"user\":\"a\"}",
        "{\"type\":\"chat\",\"room\":\"public\",\"text\":1}",
        "{\"type\":\"chat\",\"room\":\"public\"}",
        "{\"type\":\"chat\",\"room\":\"public\",\"text\":\"x\",\"ts\":\"1\"}",
        "{\"type\":\"chat\",\"room\":\"public\",\"text\":\"x\",\"ts\":null}",
        "{\"type\":\"chat\",\"room\":\"lobby\",\"text\":\"x\"}",
        "{\"type\":\"chat\",\"room\":1,\"text\":\"x\"}",
        "{\"type\":\"ping\",\"ts\":null}",
        "{\"type\":\"ping\",\"ts\":true}",
        "{\"type\":\"leave\"} {}",
    };
    for (cases) |c| {
        if (parseTest(c)) |_| {
            std.debug.print("accepted: {s}\n", .{c});
            return error.TestUnexpectedResult;
        } else |err| try testing.expectEqual(error.Malformed, err);
    }
}

fn repeat(comptime s: []const u8, comptime n: usize) []const u8 {
    comptime var out: []const u8 = "";
    inline for (0..n) |_| out = out ++ s;
    return out;
}

test "user length counts Unicode scalar values, 1 to 64" {
    const sixty_four_e_acute = comptime repeat("\u{e9}", 64); // 128 bytes, 64 characters
    const ok = try parseTest("{\"type\":\"join\",\"room\":\"public\",\"user\":\"" ++ sixty_four_e_acute ++ "\"}");
    try testing.expectEqualStrings(sixty_four_e_acute, ok.join.user);
    try testing.expectError(error.Malformed, parseTest("{\"type\":\"join\",\"room\":\"public\",\"user\":\"" ++ comptime repeat("a", 65) ++ "\"}"));
}

test "serializes broadcasts" {
    var buf: [256]u8 = undefined;
    var w: Writer = .fixed(&buf);
    try writeChat(&w, "al\"ice", "hi\n", "1732233445566.25");
    try testing.expectEqualStrings(
        "{\"type\":\"chat\",\"room\":\"public\",\"user\":\"al\\\"ice\",\"text\":\"hi\\n\",\"ts\":1732233445566.25}",
        w.buffered(),
    );
    w = .fixed(&buf);
    try writeJoin(&w, "alice", 3);
    try testing.expectEqualStrings("{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":3}", w.buffered());
    w = .fixed(&buf);
    try writeLeave(&w, "alice", 2);
    try testing.expectEqualStrings("{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":2}", w.buffered());
    w = .fixed(&buf);
    try writePong(&w, null);
    try testing.expectEqualStrings("{\"type\":\"pong\"}", w.buffered());
    w = .fixed(&buf);
    try writeChat(&w, "a", "b", null);
    try testing.expectEqualStrings("{\"type\":\"chat\",\"room\":\"public\",\"user\":\"a\",\"text\":\"b\"}", w.buffered());
}

test "the worst-case chat fits the serialization buffer" {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    // Every text byte a control character that must be escaped as \u00XX.
    const prefix = "{\"type\":\"chat\",\"room\":\"public\",\"text\":\"";
    const suffix = "\"}";
    const body_len = (max_message_bytes - prefix.len - suffix.len) / 6;
    var frame: std.ArrayList(u8) = .empty;
    try frame.appendSlice(a, prefix);
    for (0..body_len) |_| try frame.appendSlice(a, "\\u0001");
    try frame.appendSlice(a, suffix);
    const msg = try parse(a, frame.items);
    const buf = try a.alloc(u8, max_serialized_bytes);
    var w: Writer = .fixed(buf);
    try writeChat(&w, comptime repeat("\u{e9}", max_user_chars), msg.chat.text, null);
}
