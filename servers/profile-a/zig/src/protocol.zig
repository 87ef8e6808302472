//! The chat protocol (docs/protocol.md): parsing and validating what clients
//! send, and serializing what the server broadcasts.
//!
//! Parsing walks std.json's token scanner over the frame instead of building a
//! tree, so a chat costs no map and at most a few arena allocations (only for
//! strings that contain escapes). `ts` is kept as the number's text exactly as
//! received and copied back verbatim, so its value survives bit for bit.

const std = @import("std");
const json = std.json;

pub const room = "public";
/// Largest payload accepted; anything longer closes the connection with 1009.
pub const max_message_bytes = 4096;
pub const max_user_chars = 64;

/// Enough for the largest broadcast: a 4096-byte text whose every byte is
/// escaped as \u00XX, a 64-character user name escaped likewise, and a `ts`
/// as long as a whole message.
pub const max_serialized_bytes = 6 * max_message_bytes + 6 * 4 * max_user_chars + max_message_bytes + 128;

pub const Inbound = union(enum) {
    join: struct { user: []const u8 },
    chat: struct { text: []const u8, ts: ?[]const u8 },
    ping: struct { ts: ?[]const u8 },
    leave,
};

pub const Error = error{Malformed};

/// Parses one text frame. Anything the protocol calls invalid input is
/// `error.Malformed`. Slices in the result point into `bytes` or `arena`.
pub fn parse(arena: std.mem.Allocator, bytes: []const u8) Error!Inbound {
    return parseFields(arena, bytes) catch return error.Malformed;
}

const Fields = struct {
    type: ?[]const u8 = null,
    room: ?[]const u8 = null,
    user: ?[]const u8 = null,
    text: ?[]const u8 = null,
    ts: ?[]const u8 = null,
};

fn parseFields(arena: std.mem.Allocator, bytes: []const u8) !Inbound {
    var scanner = json.Scanner.initCompleteInput(arena, bytes);
    if (try scanner.next() != .object_begin) return error.Malformed;

    var f: Fields = .{};
    while (true) {
        const key = switch (try scanner.nextAlloc(arena, .alloc_if_needed)) {
            .object_end => break,
            .string, .allocated_string => |s| s,
            else => return error.Malformed,
        };
        if (std.mem.eql(u8, key, "type")) {
            f.type = try expectString(&scanner, arena);
        } else if (std.mem.eql(u8, key, "room")) {
            f.room = try expectString(&scanner, arena);
        } else if (std.mem.eql(u8, key, "user")) {
            f.user = try expectString(&scanner, arena);
        } else if (std.mem.eql(u8, key, "text")) {
            f.text = try expectString(&scanner, arena);
        } else if (std.mem.eql(u8, key, "ts")) {
            f.ts = switch (try scanner.nextAlloc(arena, .alloc_if_needed)) {
                .number, .allocated_number => |n| n,
                else => return error.Malformed,
            };
        } else {
            try scanner.skipValue();
        }
    }
    if (try scanner.next() != .end_of_document) return error.Malformed;

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

fn expectString(scanner: *json.Scanner, arena: std.mem.Allocator) ![]const u8 {
    return switch (try scanner.nextAlloc(arena, .alloc_if_needed)) {
        .string, .allocated_string => |s| s,
        else => error.Malformed,
    };
}

fn expectRoom(r: ?[]const u8) Error!void {
    if (!std.mem.eql(u8, r orelse return error.Malformed, room)) return error.Malformed;
}

// Serialization of what the server sends. Each writes one JSON object.

const Writer = std.Io.Writer;

fn string(w: *Writer, s: []const u8) Writer.Error!void {
    try json.Stringify.encodeJsonString(s, .{}, w);
}

/// {"type":"join","room":"public","user":…,"online":N}
pub fn writeJoin(w: *Writer, user: []const u8, online: usize) Writer.Error!void {
    try w.writeAll("{\"type\":\"join\",\"room\":\"public\",\"user\":");
    try string(w, user);
    try w.print(",\"online\":{d}}}", .{online});
}

/// {"type":"leave","room":"public","user":…,"online":N}
pub fn writeLeave(w: *Writer, user: []const u8, online: usize) Writer.Error!void {
    try w.writeAll("{\"type\":\"leave\",\"room\":\"public\",\"user\":");
    try string(w, user);
    try w.print(",\"online\":{d}}}", .{online});
}

/// {"type":"chat","room":"public","user":…,"text":…[,"ts":…]}
pub fn writeChat(w: *Writer, user: []const u8, text: []const u8, ts: ?[]const u8) Writer.Error!void {
    try w.writeAll("{\"type\":\"chat\",\"room\":\"public\",\"user\":");
    try string(w, user);
    try w.writeAll(",\"text\":");
    try string(w, text);
    if (ts) |t| {
        try w.writeAll(",\"ts\":");
        try w.writeAll(t);
    }
    try w.writeByte('}');
}

/// {"type":"pong"[,"ts":…]}
pub fn writePong(w: *Writer, ts: ?[]const u8) Writer.Error!void {
    try w.writeAll("{\"type\":\"pong\"");
    if (ts) |t| {
        try w.writeAll(",\"ts\":");
        try w.writeAll(t);
    }
    try w.writeByte('}');
}

const testing = std.testing;

/// `s` repeated `n` times, at compile time.
fn repeat(comptime s: []const u8, comptime n: usize) *const [s.len * n]u8 {
    comptime {
        var out: [s.len * n]u8 = undefined;
        for (0..n) |i| @memcpy(out[i * s.len ..][0..s.len], s);
        const final = out;
        return &final;
    }
}

fn isMalformed(bytes: []const u8) bool {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    _ = parse(arena.allocator(), bytes) catch return true;
    return false;
}

test "valid messages parse" {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();

    const join = try parse(a, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\"}");
    try testing.expectEqualStrings("alice", join.join.user);

    const chat = try parse(a, "{\"type\":\"chat\",\"room\":\"public\",\"text\":\"hi \\\"you\\\"\",\"ts\":1732233445566.25}");
    try testing.expectEqualStrings("hi \"you\"", chat.chat.text);
    try testing.expectEqualStrings("1732233445566.25", chat.chat.ts.?);

    const untimed = try parse(a, "{\"room\":\"public\",\"text\":\"\",\"type\":\"chat\"}");
    try testing.expect(untimed.chat.ts == null);

    const ping = try parse(a, "{\"type\":\"ping\",\"ts\":-1.5e3}");
    try testing.expectEqualStrings("-1.5e3", ping.ping.ts.?);
    try testing.expect((try parse(a, "{\"type\":\"ping\"}")).ping.ts == null);
    try testing.expect(try parse(a, "{\"type\":\"leave\"}") == .leave);
    // Unknown fields are ignored, whatever their shape.
    try testing.expect(try parse(a, "{\"type\":\"leave\",\"x\":[1,{\"y\":null}]}") == .leave);
}

test "user length counts Unicode scalar values, 1 to 64" {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const sixty_four_e_acute = comptime repeat("é", 64); // 128 bytes, 64 characters
    const ok = try parse(a, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"" ++ sixty_four_e_acute ++ "\"}");
    try testing.expectEqualStrings(sixty_four_e_acute, ok.join.user);
    try testing.expectError(error.Malformed, parse(a, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"" ++ comptime repeat("a", 65) ++ "\"}"));
    try testing.expectError(error.Malformed, parse(a, "{\"type\":\"join\",\"room\":\"public\",\"user\":\"\"}"));
}

test "invalid input is malformed" {
    const cases = [_][]const u8{
        "",
        "not json",
        "{\"type\":\"join\"",
        "[1,2]",
        "\"join\"",
        "{}",
        "{\"type\":5}",
        "{\"type\":\"shout\"}",
        "{\"type\":\"join\",\"room\":\"public\"}",
        "{\"type\":\"join\",\"room\":\"lobby\",\"user\":\"a\"}",
        "{\"type\":\"join\",\"user\":\"a\"}",
        "{\"type\":\"join\",\"room\":\"public\",\"user\":7}",
        "{\"type\":\"chat\",\"room\":\"public\"}",
        "{\"type\":\"chat\",\"room\":\"public\",\"text\":1}",
        "{\"type\":\"chat\",\"room\":\"public\",\"text\":\"x\",\"ts\":\"1\"}",
        "{\"type\":\"chat\",\"room\":\"public\",\"text\":\"x\",\"ts\":null}",
        "{\"type\":\"chat\",\"room\":\"other\",\"text\":\"x\"}",
        "{\"type\":\"chat\",\"room\":1,\"text\":\"x\"}",
        "{\"type\":\"ping\",\"ts\":true}",
        "{\"type\":\"leave\"} {}",
    };
    for (cases) |case| {
        if (!isMalformed(case)) {
            std.debug.print("accepted: {s}\n", .{case});
            return error.TestUnexpectedResult;
        }
    }
}

test "broadcasts serialize as the protocol shows" {
    var buf: [256]u8 = undefined;
    var w: Writer = .fixed(&buf);
    try writeJoin(&w, "alice", 3);
    try testing.expectEqualStrings("{\"type\":\"join\",\"room\":\"public\",\"user\":\"alice\",\"online\":3}", w.buffered());

    w = .fixed(&buf);
    try writeLeave(&w, "alice", 2);
    try testing.expectEqualStrings("{\"type\":\"leave\",\"room\":\"public\",\"user\":\"alice\",\"online\":2}", w.buffered());

    w = .fixed(&buf);
    try writeChat(&w, "al\"ice", "line\nbreak", "1732233445566.25");
    try testing.expectEqualStrings("{\"type\":\"chat\",\"room\":\"public\",\"user\":\"al\\\"ice\",\"text\":\"line\\nbreak\",\"ts\":1732233445566.25}", w.buffered());

    w = .fixed(&buf);
    try writeChat(&w, "bob", "hi", null);
    try testing.expectEqualStrings("{\"type\":\"chat\",\"room\":\"public\",\"user\":\"bob\",\"text\":\"hi\"}", w.buffered());

    w = .fixed(&buf);
    try writePong(&w, "1732233445566");
    try testing.expectEqualStrings("{\"type\":\"pong\",\"ts\":1732233445566}", w.buffered());

    w = .fixed(&buf);
    try writePong(&w, null);
    try testing.expectEqualStrings("{\"type\":\"pong\"}", w.buffered());
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
    try writeChat(&w, comptime repeat("é", 64), msg.chat.text, null);
}
