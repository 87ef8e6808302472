//! What a close frame's payload may hold (RFC 6455 sections 5.5.1 and 7.4):
//! nothing, or a code that may be sent followed by a UTF-8 reason. Both Zig
//! servers check it where their stack leaves it to them: profile-b/zig on
//! every close frame it reads, profile-a/zig in libwebsockets'
//! PEER_INITIATED_CLOSE callback.
const std = @import("std");

/// Why a close payload fails the connection, each with the close code RFC
/// 6455 names: `ProtocolError` 1002, `InvalidPayload` 1007.
pub const Error = error{ ProtocolError, InvalidPayload };

/// The code of an unmasked close payload, null if there is none.
pub fn code(payload: []const u8) Error!?u16 {
    if (payload.len == 0) return null;
    if (payload.len == 1) return error.ProtocolError;
    const c = std.mem.readInt(u16, payload[0..2], .big);
    if (!maySend(c)) return error.ProtocolError;
    if (!std.unicode.utf8ValidateSlice(payload[2..])) return error.InvalidPayload;
    return c;
}

/// The close code that fails the connection for `err`.
pub fn failWith(err: Error) u16 {
    return switch (err) {
        error.ProtocolError => 1002,
        error.InvalidPayload => 1007,
    };
}

/// Codes a peer may send: the registered ones but 1004-1006 and 1015, which
/// are reserved or stand for no frame at all, and 3000-4999 for libraries
/// and applications.
fn maySend(c: u16) bool {
    return switch (c) {
        1000...1003, 1007...1014, 3000...4999 => true,
        else => false,
    };
}

test "a close payload is empty, or a code that may be sent and a UTF-8 reason" {
    try std.testing.expectEqual(@as(?u16, null), try code(""));
    try std.testing.expectEqual(@as(?u16, 1000), try code("\x03\xe8"));
    try std.testing.expectEqual(@as(?u16, 3000), try code("\x0b\xb8bye"));
    try std.testing.expectError(error.ProtocolError, code("\x03"));
    for ([_]u16{ 0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000 }) |c| {
        var payload: [2]u8 = undefined;
        std.mem.writeInt(u16, &payload, c, .big);
        try std.testing.expectError(error.ProtocolError, code(&payload));
    }
    try std.testing.expectError(error.InvalidPayload, code("\x03\xe8\xff"));
}
