//! Plain HTTP on the same port: GET /health, GET /stats, and 404 for every
//! other path. WebSocket upgrades never come here; /ws without an upgrade
//! gets 400.
//!
//! libwebsockets wants headers and body written in separate callbacks: the
//! HTTP callback writes the headers and parks the body on the connection
//! (its opaque user pointer); the writable callback sends it.

const std = @import("std");
const lws = @import("lws");
const client = @import("client.zig");
const ws_path = client.ws_path;
const serverOf = client.serverOf;

pub const server_name = "wsca-zig";

const pre: usize = lws.LWS_PRE;

/// A response body waiting for its writable callback.
const Body = struct {
    len: usize = 0,
    bytes: [pre + 512]u8 = undefined,

    fn slice(b: *Body) []u8 {
        return b.bytes[pre..][0..b.len];
    }
};

/// The HTTP protocol's libwebsockets callback.
pub fn callback(
    wsi_or_null: ?*lws.struct_lws,
    reason: lws.enum_lws_callback_reasons,
    user: ?*anyopaque,
    in: ?*anyopaque,
    len: usize,
) callconv(.c) c_int {
    const wsi = wsi_or_null orelse return 0;
    switch (reason) {
        lws.LWS_CALLBACK_HTTP => {
            const path: []const u8 = if (in) |p| @as([*]const u8, @ptrCast(p))[0..len] else "";
            return respond(wsi, path) catch -1;
        },
        lws.LWS_CALLBACK_HTTP_WRITEABLE => {
            const body = takeBody(wsi) orelse return 0;
            defer std.heap.c_allocator.destroy(body);
            const bytes = body.slice();
            if (lws.lws_write(wsi, bytes.ptr, bytes.len, lws.LWS_WRITE_HTTP_FINAL) < bytes.len) return -1;
            // Keep-alive: ready for the next request, or close if not.
            return if (lws.lws_http_transaction_completed(wsi) != 0) -1 else 0;
        },
        lws.LWS_CALLBACK_CLOSED_HTTP => {
            if (takeBody(wsi)) |body| std.heap.c_allocator.destroy(body);
            return lws.lws_callback_http_dummy(wsi, reason, user, in, len);
        },
        else => return lws.lws_callback_http_dummy(wsi, reason, user, in, len),
    }
}

fn respond(wsi: *lws.struct_lws, path: []const u8) !c_int {
    const server = serverOf(wsi);
    const gpa = std.heap.c_allocator;
    const body = try gpa.create(Body);
    errdefer gpa.destroy(body);
    body.* = .{};
    var w: std.Io.Writer = .fixed(body.bytes[pre..]);
    var status: c_uint = lws.HTTP_STATUS_OK;
    var content_type: [*:0]const u8 = "text/plain";
    if (std.mem.eql(u8, path, "/health")) {
        try w.writeAll("ok");
    } else if (std.mem.eql(u8, path, "/stats")) {
        content_type = "application/json";
        try server.stats.writeJson(server_name, server.uptimeMs(lws.lws_now_usecs()), &w);
    } else if (std.mem.eql(u8, path, ws_path)) {
        status = lws.HTTP_STATUS_BAD_REQUEST;
        try w.writeAll("expected a WebSocket upgrade");
    } else {
        status = lws.HTTP_STATUS_NOT_FOUND;
        try w.writeAll("not found");
    }
    body.len = w.buffered().len;

    var headers: [pre + 256]u8 = undefined;
    const start: [*c]u8 = headers[pre..].ptr;
    var p: [*c]u8 = start;
    const end: [*c]u8 = start + (headers.len - pre - 1);
    if (lws.lws_add_http_common_headers(wsi, status, content_type, body.len, &p, end) != 0) return error.HeadersTooLong;
    if (lws.lws_finalize_write_http_header(wsi, start, &p, end) != 0) return error.WriteFailed;
    lws.lws_set_opaque_user_data(wsi, body);
    _ = lws.lws_callback_on_writable(wsi);
    return 0;
}

fn takeBody(wsi: *lws.struct_lws) ?*Body {
    const body: *Body = @ptrCast(@alignCast(lws.lws_get_opaque_user_data(wsi) orelse return null));
    lws.lws_set_opaque_user_data(wsi, null);
    return body;
}
