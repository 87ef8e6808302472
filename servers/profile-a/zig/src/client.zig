//! One WebSocket connection and the libwebsockets callbacks that drive it.
//!
//! libwebsockets owns the socket and calls back on the connection's service
//! thread (one of as many as the server runs; the connection's hub is that
//! thread's, hub.zig): RECEIVE is the reader and SERVER_WRITEABLE is the writer. The reader
//! gathers a message's fragments, enforces the 4096-byte limit (close 1009)
//! and applies the protocol's rules. The writer is the only code that writes
//! to the socket, and only in a writable callback, as libwebsockets
//! requires: the bounded outbox, oldest first, until it is empty or a write
//! was left partly unsent (or a pending ping, or the close). Anything that queues for a connection asks for a
//! writable callback when the outbox goes from empty to non-empty, and the
//! writer asks again while messages remain, so a reader that stops reading
//! only ever costs its own outbox.
//!
//! Frame batching (`--frame-batch`, frames.zig; a variant, off by default):
//! instead of one lws_write per message, the writer frames the queued
//! messages itself into its hub's batch buffer and hands them to
//! libwebsockets as one raw write, so one send() carries many frames. A
//! connection that negotiated permessage-deflate keeps the per-frame writes:
//! its frames must go through the extension.
//!
//! Pacing (pacer.zig): after a writable callback that wrote a busy batch,
//! the next one is not requested at once but from a per-connection timer,
//! and pushes meanwhile only queue, so that they leave in one corked batch.
//!
//! Liveness (`sweep`, run every second): a ping every `ping_period_us`, and a
//! connection from which nothing (a data frame or a pong) has arrived for
//! `idle_timeout_us` is closed. A client's own WebSocket pings are answered
//! inside libwebsockets and never reach this code, so they do not count as
//! activity; answering our pings does.

const std = @import("std");
const lws = @import("lws");
const protocol = @import("chat").protocol;
const close_payload = @import("chat").close;
const TokenBucket = @import("chat").TokenBucket;
const outbox = @import("outbox.zig");
const frames = @import("frames.zig");
const Pacer = @import("pacer.zig").Pacer;
const Hub = @import("hub.zig").Hub;
const Server = @import("hub.zig").Server;
const Membership = @import("hub.zig").Membership;
const transport = @import("transport.zig");

pub const ping_period_us: i64 = 30 * std.time.us_per_s;
pub const idle_timeout_us: i64 = 60 * std.time.us_per_s;

/// What our pings carry (and pongs echo back).
const ping_payload = "wsca";

/// The only path that upgrades.
pub const ws_path = "/ws";

const close_normal: u16 = 1000;
const close_going_away: u16 = 1001;

/// libwebsockets' send limit per write (the chat protocol's `tx_packet_size`,
/// main.zig): more is kept and sent on later writable events.
pub const tx_packet_size = 64 * 1024;

/// A hub's frame batch buffer: LWS_PRE, as lws_write asks of any buffer, then a batch.
pub const frame_buffer_bytes = lws.LWS_PRE + tx_packet_size;

comptime {
    std.debug.assert(outbox.headroom >= lws.LWS_PRE);
    // Any one message fits a frame batch: `frames.fill` always takes the first.
    std.debug.assert(frames.headerLen(protocol.max_serialized_bytes) + protocol.max_serialized_bytes <= tx_packet_size);
}

/// Per-connection state: libwebsockets allocates it (zeroed) as the chat
/// protocol's per-session data and hands it to every callback as `user`.
pub const Client = struct {
    wsi: *lws.struct_lws,
    hub: *Hub,
    /// False until ESTABLISHED succeeded: CLOSED for a half-made connection
    /// must not touch the hub or the counters.
    registered: bool = false,
    outbox: outbox.Outbox = .{},
    bucket: TokenBucket,
    user: [4 * protocol.max_user_chars]u8 = undefined,
    user_len: usize = 0,
    conn_index: usize = 0,
    /// The rooms this connection is in, the first `room_count` (hub.zig
    /// keeps them); none: as one that never joined.
    rooms: [protocol.max_rooms]Membership = undefined,
    room_count: usize = 0,
    /// Non-zero once the writer must close with this code instead of writing.
    close_code: u16 = 0,
    ping_due: bool = false,
    last_rx_us: i64,
    last_ping_us: i64,
    /// A message that arrives in several pieces is gathered here; allocated
    /// the first time it is needed.
    rx: ?*[protocol.max_message_bytes]u8 = null,
    rx_len: usize = 0,
    /// Set in ESTABLISHED from the server's `Settings`; the default never waits.
    pacer: Pacer = .init(0, 0, 0),
    /// While armed (`paused`), pushes only queue: its callback asks for the
    /// writable callback instead. Cancelled in CLOSED, before lws frees us.
    pace_timer: lws.lws_sorted_usec_list_t = .{},
    paused: bool = false,
    /// The writer frames batches itself (`--frame-batch`, and the connection
    /// did not negotiate permessage-deflate).
    frame_batch: bool = false,
    /// Each whole text message is checked for UTF-8 here: over
    /// permessage-deflate, libwebsockets 4.1.6 misses one that ends partway
    /// through a character (its "partial utf8" check in ops-ws.c waits for
    /// an inflater state that a compressed final frame does not reach).
    check_whole_utf8: bool = false,
    /// The connection negotiated permessage-deflate. A message longer than
    /// `deflate_one_pass_bytes` is the last of its writable callback: the
    /// extension may still be draining its deflated output after lws_write
    /// returns (and asserts `!tx.avail_in` in extension-permessage-deflate.c
    /// when handed the next one meanwhile); libwebsockets finishes the drain
    /// before it calls us again.
    deflate: bool = false,

    pub fn userName(self: *const Client) []const u8 {
        return self.user[0..self.user_len];
    }

    /// Where room `name` is in `rooms`, if this connection is in it.
    pub fn roomIndex(self: *const Client, name: []const u8) ?usize {
        for (self.rooms[0..self.room_count], 0..) |m, i| {
            if (m.local.room.name.eql(name)) return i;
        }
        return null;
    }

    /// Queues `m` for this connection, or drops it if the outbox is full.
    pub fn enqueue(self: *Client, m: *outbox.Message) void {
        if (!self.outbox.push(m)) {
            self.hub.stats.inc("dropped_slow");
            return;
        }
        // A non-empty outbox already has a writable callback coming, and a
        // paused one has its timer coming.
        if (self.outbox.len == 1 and !self.paused) self.wake();
    }

    fn wake(self: *Client) void {
        _ = lws.lws_callback_on_writable(self.wsi);
    }

    fn closeWith(self: *Client, code: u16) void {
        if (self.close_code != 0) return;
        self.close_code = code;
        self.wake();
    }

    // ---- reader ----

    fn onReceive(self: *Client, in: ?*anyopaque, len: usize) c_int {
        if (self.close_code != 0) return 0; // leaving: the rest is moot
        const wsi = self.wsi;
        self.last_rx_us = lws.lws_now_usecs();
        const bytes: []const u8 = if (len == 0) &.{} else @as([*]const u8, @ptrCast(in.?))[0..len];

        // The frame's unread remainder counts too: refuse a big message as
        // soon as its header says so, before reading it all. The close goes
        // through the writer, and the reader keeps reading (and dropping) what
        // follows: hanging up with unread input makes the kernel send a reset,
        // which can destroy the close frame before the peer reads it (seen
        // with a message in 5,000 one-byte fragments).
        const total = self.rx_len + len + lws.lws_remaining_packet_payload(wsi);
        if (total > protocol.max_message_bytes) {
            self.rx_len = 0;
            self.closeWith(lws.LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE);
            return 0;
        }

        const final = lws.lws_is_final_fragment(wsi) != 0;
        const binary = lws.lws_frame_is_binary(wsi) != 0;
        if (final and self.rx_len == 0) return self.onMessage(bytes, binary);

        const rx = self.rx orelse blk: {
            const buf = self.hub.gpa.create([protocol.max_message_bytes]u8) catch return -1;
            self.rx = buf;
            break :blk buf;
        };
        @memcpy(rx[self.rx_len..][0..len], bytes);
        self.rx_len += len;
        if (!final) return 0;
        const whole = rx[0..self.rx_len];
        self.rx_len = 0;
        return self.onMessage(whole, binary);
    }

    /// One complete data message, within the size limit.
    fn onMessage(self: *Client, bytes: []const u8, binary: bool) c_int {
        const hub = self.hub;
        const stats = hub.stats;
        stats.inc("frames_in");
        if (binary) {
            stats.inc("malformed");
            return 0;
        }
        if (self.check_whole_utf8 and !std.unicode.utf8ValidateSlice(bytes)) {
            self.closeWith(lws.LWS_CLOSE_STATUS_INVALID_PAYLOAD);
            return 0;
        }
        defer _ = hub.arena.reset(.retain_capacity);
        const msg = protocol.parse(hub.arena.allocator(), bytes) catch {
            stats.inc("malformed");
            return 0;
        };
        switch (msg) {
            // A second join to a room is ignored (false); a 17th is malformed.
            .join => |j| _ = hub.join(self, j.room, j.user) catch |err| switch (err) {
                error.TooManyRooms => {
                    stats.inc("malformed");
                    return 0;
                },
                error.OutOfMemory => return -1,
            },
            .chat => |chat| {
                // Only from a member of that room: a chat before any join is one case.
                const slot = self.roomIndex(chat.room) orelse {
                    stats.inc("malformed");
                    return 0;
                };
                stats.inc("chat_in");
                if (!self.bucket.allow(self.last_rx_us * std.time.ns_per_us)) {
                    stats.inc("dropped_ratelimit");
                    return 0;
                }
                stats.inc("chat_accepted");
                hub.chat(self, slot, chat.text, chat.ts);
            },
            .ping => |p| hub.pong(self, p.ts),
            .leave => |l| if (l.room) |name| {
                // That room only; the connection stays open, in its others.
                const slot = self.roomIndex(name) orelse {
                    stats.inc("malformed");
                    return 0;
                };
                hub.leave(self, slot);
            } else {
                // Every room, then close 1000.
                if (self.room_count == 0) {
                    stats.inc("malformed");
                    return 0;
                }
                hub.leaveAll(self);
                self.closeWith(close_normal);
            },
        }
        return 0;
    }

    // ---- writer ----

    fn onWritable(self: *Client) c_int {
        const wsi = self.wsi;
        if (self.close_code != 0) {
            lws.lws_close_reason(wsi, self.close_code, null, 0);
            return -1;
        }
        // Everything queued goes in this one callback: lws-ws-state.h allows
        // several lws_write calls per writable callback as long as none of
        // them was left partly unsent (lws_partial_buffered). libwebsockets
        // sends each frame with its own send(); with more than one queued,
        // the socket is corked meanwhile so that they leave together, as one
        // write would (docs/fairness.md).
        const corked = self.outbox.len > 1 and self.hub.server.settings.cork_batches and !self.frame_batch;
        if (corked) setCork(wsi, true);
        defer if (corked) setCork(wsi, false);
        if (self.ping_due) {
            self.ping_due = false;
            // The payload is not decoration: libwebsockets 4.1 swallows a pong
            // with an empty payload without calling RECEIVE_PONG, and then an
            // answering client would look idle.
            var frame: [lws.LWS_PRE + ping_payload.len]u8 = undefined;
            @memcpy(frame[lws.LWS_PRE..], ping_payload);
            if (transport.write(self.hub.stats, wsi, frame[lws.LWS_PRE..].ptr, ping_payload.len, lws.LWS_WRITE_PING) < 0) return -1;
        }
        var sent: usize = 0;
        if (self.frame_batch) {
            sent = self.writeBatches() orelse return -1;
        } else while (lws.lws_partial_buffered(wsi) == 0) {
            const m = self.outbox.pop() orelse break;
            defer m.release(self.hub.gpa);
            const payload = m.payload();
            if (transport.write(self.hub.stats, wsi, payload.ptr, payload.len, lws.LWS_WRITE_TEXT) < payload.len) return -1;
            if (m.kind == .chat) self.hub.stats.inc("deliveries");
            sent += 1;
            if (self.deflate and payload.len > deflate_one_pass_bytes) break;
        }
        const wait_ns = if (sent == 0) 0 else self.pacer.after(sent, lws.lws_now_usecs() * std.time.ns_per_us);
        if (wait_ns > 0) {
            self.paused = true;
            const wait_us: i64 = @intCast(wait_ns / std.time.ns_per_us);
            lws.lws_sul_schedule(lws.lws_get_context(wsi), @intCast(self.hub.tsi), &self.pace_timer, onPaceTimer, wait_us);
        } else if (!self.outbox.isEmpty()) self.wake();
        return 0;
    }

    /// `--frame-batch`: the outbox as whole frames, up to `tx_packet_size`
    /// bytes to a raw write (one send()), until it is empty or the socket
    /// took a write only in part (libwebsockets then holds the rest, sends
    /// it first at the next writable event, and only then calls us again).
    /// Returns the messages written; null when the connection must close.
    fn writeBatches(self: *Client) ?usize {
        const hub = self.hub;
        const buf = hub.frameBuffer() catch return null;
        var sent: usize = 0;
        while (lws.lws_partial_buffered(self.wsi) == 0) {
            const b = frames.fill(&self.outbox, buf[lws.LWS_PRE..], hub.gpa);
            if (b.messages == 0) break; // empty (any one message fits: see the comptime check)
            if (transport.writeRaw(hub.stats, self.wsi, buf[lws.LWS_PRE..].ptr, b.len) < b.len) return null;
            hub.stats.add("deliveries", b.chats);
            sent += b.messages;
        }
        return sent;
    }

    fn onPaceTimer(sul: [*c]lws.lws_sorted_usec_list_t) callconv(.c) void {
        const self: *Client = @fieldParentPtr("pace_timer", @as(*lws.lws_sorted_usec_list_t, sul));
        self.paused = false;
        if (!self.outbox.isEmpty()) self.wake();
    }
};

/// The deflate extension's inflate buffer, as a power of 2: 4096 bytes, the
/// protocol's message limit (libwebsockets caps it at `rx_buffer_size`, the
/// same), so any chat comes out of inflate in one pass. At libwebsockets'
/// default of 1 KiB a larger chat inflates over several passes, and the
/// passes after the first wait behind any deflated output still draining to
/// that connection (ops-ws.c services tx_draining_ext before
/// rx_draining_ext): from a client that stopped reading, its last chats then
/// stayed unread for good: verify's slow_consumer over ws+deflate lost 1-9
/// of ~1,600 chats in 13 of 22 runs before this, and none in 14 after.
const deflate_rx_buf_pwr2 = std.math.log2_int(usize, protocol.max_message_bytes);

/// The deflate extension's output buffer, as a power of 2: 8 KiB, where
/// libwebsockets' default is 1 KiB. A message deflates in one pass when its
/// output fits (deflate adds at most 5 bytes per 16 KiB stored block, and a
/// sync flush a few more), and then nothing is left draining: the writer may
/// hand the extension the next message in the same callback, as it does over
/// ws. (That is not what makes deflate dear here: with one message per
/// callback libwebsockets served 22,352 ± 9,936 deliveries/s at saturation
/// over ws+deflate in run 20261126-221921, with this 27,414 ± 8,611 in run
/// 20261126-230229, within noise; the extension sets up a zlib stream for
/// every message to every recipient, docs/transports.md.) Allocated at the
/// connection's first message, before which ESTABLISHED sets it.
const deflate_tx_buf_pwr2 = 13;
/// The longest message that surely deflates in one pass into that buffer.
const deflate_one_pass_bytes = (1 << deflate_tx_buf_pwr2) - 64;

/// Sets one of the deflate extension's buffer sizes (`rx_buf_size`,
/// `tx_buf_size`) to 2^`pwr2` bytes, as the option's decimal text.
fn setDeflateBuffer(wsi: *lws.struct_lws, comptime option: [:0]const u8, comptime pwr2: usize) void {
    _ = lws.lws_set_extension_option(wsi, "permessage-deflate", option, std.fmt.comptimePrint("{d}", .{pwr2}));
}

/// Holds back (or releases) the socket's partial TCP segments: TCP_CORK.
fn setCork(wsi: *lws.struct_lws, on: bool) void {
    const flag: c_int = @intFromBool(on);
    _ = lws.setsockopt(lws.lws_get_socket_fd(wsi), lws.IPPROTO_TCP, lws.TCP_CORK, &flag, @sizeOf(c_int));
}

/// The chat protocol's libwebsockets callback.
pub fn callback(
    wsi_or_null: ?*lws.struct_lws,
    reason: lws.enum_lws_callback_reasons,
    user: ?*anyopaque,
    in: ?*anyopaque,
    len: usize,
) callconv(.c) c_int {
    const wsi = wsi_or_null orelse return 0;
    switch (reason) {
        lws.LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION => {
            // Upgrades happen on /ws only; anything else is not found.
            var path: [ws_path.len + 1]u8 = undefined;
            const n = lws.lws_hdr_copy(wsi, &path, path.len, lws.WSI_TOKEN_GET_URI);
            if (serverOf(wsi).isShuttingDown()) return -1;
            transport.handshakeStarts();
            if (n < 0 or !std.mem.eql(u8, path[0..@intCast(n)], ws_path)) {
                _ = lws.lws_return_http_status(wsi, lws.HTTP_STATUS_NOT_FOUND, null);
                return -1;
            }
            return 0;
        },
        lws.LWS_CALLBACK_ESTABLISHED => {
            const hub = hubOf(wsi);
            if (hub.server.isShuttingDown()) return -1;
            const self = clientOf(user) orelse return -1;
            const now = lws.lws_now_usecs();
            const took_deflate = transport.tookDeflate(wsi); // once: it clears what it reads
            const settings = hub.server.settings;
            self.* = .{
                .wsi = wsi,
                .hub = hub,
                .bucket = .init(now * std.time.ns_per_us),
                .last_rx_us = now,
                .last_ping_us = now,
                .pacer = .init(settings.write_coalesce_ns, settings.write_coalesce_max_ns, settings.flood_rate),
                .frame_batch = settings.frame_batch and !took_deflate,
                .check_whole_utf8 = settings.check_utf8 and took_deflate,
                .deflate = took_deflate,
            };
            if (took_deflate) {
                setDeflateBuffer(wsi, "rx_buf_size", deflate_rx_buf_pwr2);
                setDeflateBuffer(wsi, "tx_buf_size", deflate_tx_buf_pwr2);
            }
            hub.connect(self) catch return -1;
            self.registered = true;
            hub.stats.inc("connections_current");
            hub.stats.inc("connections_total");
            return 0;
        },
        lws.LWS_CALLBACK_RECEIVE => {
            const self = registeredClient(user) orelse return -1;
            return self.onReceive(in, len);
        },
        // libwebsockets 4.1.6 echoes a peer's close payload as it came, a
        // 1-byte one and codes that may not be sent (5000 and up) included;
        // it rewrites only some of those to 1002 (lib/roles/ws/ops-ws.c).
        // RFC 6455 section 7.4 asks to fail the connection instead: with
        // the reason set and nonzero returned, libwebsockets sends our close
        // frame rather than the echo.
        lws.LWS_CALLBACK_WS_PEER_INITIATED_CLOSE => {
            const payload: []const u8 = if (len == 0) &.{} else @as([*]const u8, @ptrCast(in.?))[0..len];
            _ = close_payload.code(payload) catch |err| {
                lws.lws_close_reason(wsi, close_payload.failWith(err), null, 0);
                return -1;
            };
            return 0;
        },
        lws.LWS_CALLBACK_RECEIVE_PONG => {
            const self = registeredClient(user) orelse return -1;
            self.last_rx_us = lws.lws_now_usecs();
            return 0;
        },
        lws.LWS_CALLBACK_SERVER_WRITEABLE => {
            const self = registeredClient(user) orelse return -1;
            return self.onWritable();
        },
        // lws_cancel_service from another service thread (or the signal
        // handler): hand out what other hubs posted to this thread's hub.
        lws.LWS_CALLBACK_EVENT_WAIT_CANCELLED => {
            hubOf(wsi).drainInbox();
            return 0;
        },
        lws.LWS_CALLBACK_CLOSED => {
            const self = registeredClient(user) orelse return 0;
            const hub = self.hub;
            self.registered = false;
            lws.lws_sul_cancel(&self.pace_timer);
            hub.disconnect(self);
            self.outbox.clear(hub.gpa);
            if (self.rx) |rx| hub.gpa.destroy(rx);
            self.rx = null;
            hub.stats.dec("connections_current");
            return 0;
        },
        else => return 0,
    }
}

/// Runs every second on the loop: sends due pings and drops idle connections.
pub fn sweep(hub: *Hub, now_us: i64) void {
    for (hub.conns.items) |self| {
        if (self.close_code != 0) continue;
        if (now_us - self.last_rx_us >= idle_timeout_us) {
            // Nothing to say to a peer that says nothing: close the socket.
            lws.lws_set_timeout(self.wsi, lws.PENDING_TIMEOUT_USER_OK, lws.LWS_TO_KILL_ASYNC);
            continue;
        }
        if (now_us - self.last_ping_us >= ping_period_us) {
            self.last_ping_us = now_us;
            self.ping_due = true;
            self.wake();
        }
    }
}

/// Shutdown, on `hub`'s thread: every connection's writer closes it with
/// 1001 at its next turn.
pub fn closeAll(hub: *Hub) void {
    hub.server.shutting_down.store(true, .release);
    for (hub.conns.items) |self| self.closeWith(close_going_away);
}

/// Both protocols carry the server as their `user` pointer.
pub fn serverOf(wsi: *lws.struct_lws) *Server {
    return @ptrCast(@alignCast(lws.lws_get_protocol(wsi).*.user));
}

/// The hub of the service thread `wsi` belongs to (the one running this callback).
fn hubOf(wsi: *lws.struct_lws) *Hub {
    return &serverOf(wsi).hubs[@intCast(lws.lws_get_tsi(wsi))];
}

fn clientOf(user: ?*anyopaque) ?*Client {
    return @ptrCast(@alignCast(user orelse return null));
}

fn registeredClient(user: ?*anyopaque) ?*Client {
    const self = clientOf(user) orelse return null;
    return if (self.registered) self else null;
}
