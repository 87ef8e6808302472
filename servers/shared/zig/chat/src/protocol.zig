//! The chat protocol (docs/protocol.md): parsing and validating what clients
//! send, and serializing what the server broadcasts.
//!
//! Parsing walks the tokens of `std.json.Scanner` instead of building a
//! `std.json.Value` tree: a message has at most five interesting fields, a
//! chat costs no map and allocates only for strings that contain escapes, and
//! the scanner hands back `ts` as the number's text, which is echoed
//! verbatim so the load generator gets back exactly the timestamp it sent.
//!
//! Rooms: `parse` checks that every `room` it returns is a valid name (1 to 64
//! Unicode scalar values); membership (is the sender in that room, is this a
//! 17th room) is the hub's to decide, with `max_rooms`. `RoomName` holds a
//! name by value (no allocation) for hubs that must keep one past the
//! payload, and the serializers take the room they broadcast in.
const std = @import("std");
const Writer = std.Io.Writer;

/// The room every seed scenario uses.
pub const default_room = "public";
/// Payloads over this many bytes close the connection with 1009.
pub const max_message_bytes = 4096;
pub const max_user_chars = 64;
pub const max_room_chars = 64;
/// Rooms one connection may be in at once; a join to one more is malformed.
pub const max_rooms = 16;
/// The most UTF-8 bytes a valid user or room name can take.
pub const max_name_bytes = 4 * @max(max_user_chars, max_room_chars);

/// Enough for the largest broadcast: a 4096-byte text whose every byte is
/// escaped as \u00XX, a 64-character user name and a 64-character room name
/// escaped likewise, and a `ts` as long as a whole message.
pub const max_serialized_bytes = 6 * max_message_bytes + 6 * 4 * max_user_chars + 6 * 4 * max_room_chars + max_message_bytes + 128;

/// A valid message from a client. Slices point into the payload or into the
/// scratch allocator passed to `parse`: a hub that keeps a room name past the
/// message copies it (see `RoomName`). Every `room` is a valid name.
pub const Inbound = union(enum) {
    join: struct { room: []const u8, user: []const u8 },
    chat: struct { room: []const u8, text: []const u8, ts: ?[]const u8 },
    ping: struct { ts: ?[]const u8 },
    /// `room == null`: leave every room, then close 1000. Otherwise leave
    /// that room only and stay open.
    leave: struct { room: ?[]const u8 },
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
        const r = try expectName(f.room, max_room_chars);
        const user = try expectName(f.user, max_user_chars);
        return .{ .join = .{ .room = r, .user = user } };
    }
    if (std.mem.eql(u8, kind, "chat")) {
        const r = try expectName(f.room, max_room_chars);
        return .{ .chat = .{ .room = r, .text = f.text orelse return error.Malformed, .ts = f.ts } };
    }
    if (std.mem.eql(u8, kind, "ping")) return .{ .ping = .{ .ts = f.ts } };
    if (std.mem.eql(u8, kind, "leave")) {
        const r = if (f.room) |r| try expectName(r, max_room_chars) else null;
        return .{ .leave = .{ .room = r } };
    }
    return error.Malformed;
}

/// True when `s` is 1 to `max_chars` Unicode scalar values of valid UTF-8.
pub fn validName(s: []const u8, max_chars: usize) bool {
    if (s.len == 0 or s.len > 4 * max_chars) return false;
    // ASCII fast path: one byte, one scalar value.
    for (s) |b| {
        if (b >= 0x80) break;
    } else return s.len <= max_chars;
    const chars = std.unicode.utf8CountCodepoints(s) catch return false;
    return chars >= 1 and chars <= max_chars;
}

fn expectName(s: ?[]const u8, max_chars: usize) Error![]const u8 {
    const name = s orelse return error.Malformed;
    if (!validName(name, max_chars)) return error.Malformed;
    return name;
}

/// A room (or user) name held by value: no allocation, for a hub or client
/// that keeps a name after the payload it came in is gone. Built only from a
/// name `parse` returned (at most `max_name_bytes`).
pub const RoomName = struct {
    bytes: [max_name_bytes]u8 = undefined,
    len: u16 = 0,

    pub fn init(name: []const u8) RoomName {
        std.debug.assert(name.len <= max_name_bytes);
        var r: RoomName = .{ .len = @intCast(name.len) };
        @memcpy(r.bytes[0..name.len], name);
        return r;
    }

    pub fn slice(r: *const RoomName) []const u8 {
        return r.bytes[0..r.len];
    }

    pub fn eql(r: *const RoomName, name: []const u8) bool {
        return std.mem.eql(u8, r.slice(), name);
    }
};

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

pub fn writeJoin(w: *Writer, room: []const u8, user: []const u8, online: usize) Writer.Error!void {
    return writePresence(w, "join", room, user, online);
}

pub fn writeLeave(w: *Writer, room: []const u8, user: []const u8, online: usize) Writer.Error!void {
    return writePresence(w, "leave", room, user, online);
}

fn writePresence(w: *Writer, comptime kind: []const u8, room: []const u8, user: []const u8, online: usize) Writer.Error!void {
    try w.writeAll("{\"type\":\"" ++ kind ++ "\",");
    try writeRoom(w, room);
    try w.writeAll(",\"user\":");
    try std.json.Stringify.encodeJsonString(user, .{}, w);
    try w.print(",\"online\":{d}}}", .{online});
}

pub fn writeChat(w: *Writer, room: []const u8, user: []const u8, text: []const u8, ts: ?[]const u8) Writer.Error!void {
    try w.writeAll("{\"type\":\"chat\",");
    try writeRoom(w, room);
    try w.writeAll(",\"user\":");
    try std.json.Stringify.encodeJsonString(user, .{}, w);
    try w.writeAll(",\"text\":");
    try std.json.Stringify.encodeJsonString(text, .{}, w);
    try writeTs(w, ts);
    try w.writeByte('}');
}

/// `"room":"…"`, with the seed's room written as one constant.
fn writeRoom(w: *Writer, room: []const u8) Writer.Error!void {
    if (std.mem.eql(u8, room, default_room)) return w.writeAll("\"room\":\"" ++ default_room ++ "\"");
    try w.writeAll("\"room\":");
    try std.json.Stringify.encodeJsonString(room, .{}, w);
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
    try testing.expectEqualStrings("public", m.join.room);
    try testing.expectEqualStrings("alice", m.join.user);
}

test "any room of 1 to 64 characters is accepted on join, chat and leave" {
    const j = try parseTest("{\"type\":\"join\",\"room\":\"lobby\",\"user\":\"a\"}");
    try testing.expectEqualStrings("lobby", j.join.room);
    const c = try parseTest("{\"type\":\"chat\",\"room\":\"caf\\u00e9\",\"text\":\"x\"}");
    try testing.expectEqualStrings("caf\u{e9}", c.chat.room);
    const l = try parseTest("{\"type\":\"leave\",\"room\":\"lobby\"}");
    try testing.expectEqualStrings("lobby", l.leave.room.?);
    const sixty_four_e_acute = comptime repeat("\u{e9}", 64);
    const long = try parseTest("{\"type\":\"join\",\"room\":\"" ++ sixty_four_e_acute ++ "\",\"user\":\"a\"}");
    try testing.expectEqualStrings(sixty_four_e_acute, long.join.room);
    const sixty_four_a = comptime repeat("a", 64);
    _ = try parseTest("{\"type\":\"chat\",\"room\":\"" ++ sixty_four_a ++ "\",\"text\":\"x\"}");
}

test "a leave without room leaves every room" {
    const l = try parseTest("{\"type\":\"leave\"}");
    try testing.expectEqual(@as(?[]const u8, null), l.leave.room);
}

test "a room name is kept by value" {
    var r: RoomName = .init("lobby");
    try testing.expectEqualStrings("lobby", r.slice());
    try testing.expect(r.eql("lobby"));
    try testing.expect(!r.eql("lobb"));
    r = .init(comptime repeat("\u{10348}", 64)); // 4-byte characters: the longest valid name
    try testing.expectEqual(@as(usize, max_name_bytes), r.slice().len);
}

test "validName counts scalar values" {
    try testing.expect(validName("a", 64));
    try testing.expect(!validName("", 64));
    try testing.expect(validName(comptime repeat("a", 64), 64));
    try testing.expect(!validName(comptime repeat("a", 65), 64));
    try testing.expect(validName(comptime repeat("\u{10348}", 64), 64));
    try testing.expect(!validName(comptime repeat("\u{10348}", 65), 64));
    try testing.expect(!validName("\xff", 64));
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
    try testing.expect((try parseTest("{\"type\":\"leave\",\"room\":\"r\"}")) == .leave);
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
        "{\"type\":\"join\",\"room\":\"\",\"user\":\"a\"}",
        "{\"type\":\"join\",\"room\":\"" ++ comptime repeat("a", 65) ++ "\",\"user\":\"a\"}",
        "{\"type\":\"join\",\"room\":\"" ++ comptime repeat("\u{e9}", 65) ++ "\",\"user\":\"a\"}",
        "{\"type\":\"join\",\"room\":null,\"user\":\"a\"}",
        "{\"type\":\"join\",\"user\":\"a\"}",
        "{\"type\":\"join\",\"room\":1,\"user\":\"a\"}",
        "{\"type\":\"chat\",\"room\":\"public\",\"text\":1}",
        "{\"type\":\"chat\",\"room\":\"public\"}",
        "{\"type\":\"chat\",\"room\":\"public\",\"text\":\"x\",\"ts\":\"1\"}",
        "{\"type\":\"chat\",\"room\":\"public\",\"text\":\"x\",\"ts\":null}",
        "{\"type\":\"chat\",\"text\":\"x\"}",
        "{\"type\":\"chat\",\"room\":\"\",\"text\":\"x\"}",
        "{\"type\":\"leave\",\"room\":\"\"}",
        "{\"type\":\"leave\",\"room\":7}",
        "{\"type\":\"leave\",\"room\":null}",
        "{\"type\":\"leave\",\"room\":\"" ++ comptime repeat("a", 65) ++ "\"}",
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
    try writeChat(&w, "public", "al\"ice", "hi\n", "1732233445566.25");
    try testing.expectEqualStrings(
        "{\"type\":\"chat\",\"room\":\"public\",\"user\":\"al\\\"ice\",\"text\":\"hi\\n\",\"ts\":1732233445566.25}",
        w.buffered(),
    );
    w = .fixed(&buf);
    try writeJoin(&w, "public", "alice", 3);
    try testing.expectEqualStrings("{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":3}", w.buffered());
    w = .fixed(&buf);
    try writeLeave(&w, "public", "alice", 2);
    try testing.expectEqualStrings("{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":2}", w.buffered());
    w = .fixed(&buf);
    try writePong(&w, null);
    try testing.expectEqualStrings("{\"type\":\"pong\"}", w.buffered());
    w = .fixed(&buf);
    try writeChat(&w, "public", "a", "b", null);
    try testing.expectEqualStrings("{\"type\":\"chat\",\"room\":\"public\",\"user\":\"a\",\"text\":\"b\"}", w.buffered());
    w = .fixed(&buf);
    try writeChat(&w, "lo\"bby", "a", "b", null);
    try testing.expectEqualStrings("{\"type\":\"chat\",\"room\":\"lo\\\"bby\",\"user\":\"a\",\"text\":\"b\"}", w.buffered());
    w = .fixed(&buf);
    try writeJoin(&w, "lobby", "alice", 1);
    try testing.expectEqualStrings("{\"type\":\"join\",\"room\":\"lobby\",\"user\":\"alice\",\"online\":1}", w.buffered());
    w = .fixed(&buf);
    try writeLeave(&w, "lobby", "alice", 0);
    try testing.expectEqualStrings("{\"type\":\"leave\",\"room\":\"lobby\",\"user\":\"alice\",\"online\":0}", w.buffered());
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
    try writeChat(&w, comptime repeat("\x01", max_room_chars), comptime repeat("\x01", max_user_chars), msg.chat.text, null);
}
