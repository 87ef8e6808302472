//! wss and permessage-deflate, as libwebsockets offers them, and the
//! `bytes_written` counter.
//!
//! TLS is libwebsockets' own over OpenSSL: the vhost's `ssl_cert_filepath`
//! and `ssl_private_key_filepath` (`--tls-cert`, `--tls-key`). With them the
//! port serves TLS only (no LWS_SERVER_OPTION_ALLOW_NON_SSL_ON_SSL_PORT).
//! `check` refuses, before the context is made, files OpenSSL cannot load,
//! a key that is not the certificate's and a certificate outside its
//! validity period.
//!
//! permessage-deflate is libwebsockets' extension
//! (`lws_extension_callback_pm_deflate`, `--deflate`), with its defaults.
//!
//! Counting: `write` is every frame the writer sends, and adds its bytes to
//! the `Stats` it is given as they go to the socket or to TLS: the frame
//! header and the payload, or the payload as the extension compressed it.
//! `deflateCounted` is the extension in a wrapper that sees the compressed
//! length; what it compresses outside a `write` it adds to the context's
//! `Stats` (the context's user data, which `configure` sets). `writeRaw` is
//! a batch of frames the writer made itself (`--frame-batch`, frames.zig):
//! its bytes are the frames'.
//!
//! The same wrapper tells, per connection, whether the handshake took the
//! extension (`tookDeflate`): `--frame-batch` must not bypass it there.
const std = @import("std");
const lws = @import("lws");
const Stats = @import("chat").Stats;
const frameBytes = @import("chat").frameBytes;

/// What the extension issued during the current `write` on this thread:
/// null when it did not run (the connection did not negotiate it).
threadlocal var deflated_bytes: ?u64 = null;
threadlocal var in_write = false;

/// lws_write, counting the frame's bytes in `stats`.
pub fn write(stats: *Stats, wsi: *lws.struct_lws, payload: [*]u8, len: usize, protocol: lws.enum_lws_write_protocol) c_int {
    in_write = true;
    deflated_bytes = null;
    const n = lws.lws_write(wsi, payload, len, protocol);
    in_write = false;
    if (n >= 0) stats.add("bytes_written", deflated_bytes orelse frameBytes(len));
    return n;
}

/// `len` bytes of whole frames made by the caller, through libwebsockets
/// unframed (LWS_WRITE_RAW: the ws role's `send_raw`, then TLS or the
/// socket, whatever the socket does not take kept and sent first next
/// time), counting them in `stats`. Never on a connection that negotiated
/// permessage-deflate: the extension would not see them.
pub fn writeRaw(stats: *Stats, wsi: *lws.struct_lws, frames: [*]u8, len: usize) c_int {
    const n = lws.lws_write(wsi, frames, len, lws.LWS_WRITE_RAW);
    if (n >= 0) stats.add("bytes_written", len);
    return n;
}

/// The connection whose handshake, on this thread, constructed the
/// extension. libwebsockets runs a server upgrade's FILTER_PROTOCOL_CONNECTION,
/// the extensions' CONSTRUCT and ESTABLISHED in one call
/// (lws_process_ws_upgrade2, 4.1.6) on the connection's thread, so
/// `handshakeStarts` in the first and `tookDeflate` in the last see exactly
/// that connection's outcome.
threadlocal var deflate_taken: ?*lws.struct_lws = null;

/// A WebSocket upgrade begins on this thread (FILTER_PROTOCOL_CONNECTION).
pub fn handshakeStarts() void {
    deflate_taken = null;
}

/// Whether `wsi`'s handshake, just done on this thread, took permessage-deflate
/// (called from ESTABLISHED).
pub fn tookDeflate(wsi: *lws.struct_lws) bool {
    defer deflate_taken = null;
    return deflate_taken == wsi;
}

/// libwebsockets' private `struct lws_ext_pm_deflate_rx_ebufs`
/// (lib/roles/ws/private-lib-roles-ws.h, 4.1.6): what LWS_EXT_CB_PAYLOAD_TX
/// hands the extension as `in`. Only `eb_out` is read: the compressed
/// payload the library frames and sends next.
const PmdBuffers = extern struct {
    eb_in: lws.struct_lws_tokens,
    eb_out: lws.struct_lws_tokens,
};

/// The extension, counting what it makes: called inside `write`, it
/// reports its output there; for the rest of a long message, which the
/// library drains on later writable events, it adds it to the context's
/// `Stats` itself.
fn deflateCounted(
    context: ?*lws.struct_lws_context,
    ext: [*c]const lws.struct_lws_extension,
    wsi: ?*lws.struct_lws,
    reason: lws.enum_lws_extension_callback_reasons,
    user: ?*anyopaque,
    in: ?*anyopaque,
    len: usize,
) callconv(.c) c_int {
    const n = lws.lws_extension_callback_pm_deflate(context, ext, wsi, reason, user, in, len);
    // Non-zero: the library drops the extension from this connection.
    if (reason == lws.LWS_EXT_CB_CONSTRUCT and n == 0) deflate_taken = wsi;
    if (reason != lws.LWS_EXT_CB_PAYLOAD_TX or n < 0) return n;
    const buffers: *const PmdBuffers = @ptrCast(@alignCast(in orelse return n));
    const out: usize = @intCast(@max(buffers.eb_out.len, 0));
    const bytes = if (out > 0) frameBytes(out) else 0;
    if (in_write) {
        deflated_bytes = (deflated_bytes orelse 0) + bytes;
    } else if (lws.lws_context_user(context)) |context_user| {
        const stats: *Stats = @ptrCast(@alignCast(context_user));
        stats.add("bytes_written", bytes);
    }
    return n;
}

/// The extensions the server accepts with `--deflate`.
const deflate_extensions = [_]lws.struct_lws_extension{
    .{ .name = "permessage-deflate", .callback = deflateCounted, .client_offer = "permessage-deflate" },
    .{}, // terminator
};

/// Sets `info` up for TLS with `cert` and `key` (both or neither) and for
/// permessage-deflate if `deflate`, whose extension counts in `stats` (the
/// context's user data).
pub fn configure(info: *lws.struct_lws_context_creation_info, cert: ?[:0]const u8, key: ?[:0]const u8, deflate: bool, stats: *Stats) void {
    info.user = stats;
    if (cert != null and key != null) {
        info.options |= lws.LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.ssl_cert_filepath = cert.?.ptr;
        info.ssl_private_key_filepath = key.?.ptr;
        // WebSocket upgrades are HTTP/1.1 requests.
        info.alpn = "http/1.1";
    }
    if (deflate) info.extensions = &deflate_extensions;
}

/// Why `check` refused the files, for the log line.
pub const Refusal = error{ CertificateRefused, KeyRefused, KeyNotTheCertificates, CertificateExpired, CertificateNotYetValid };

/// Refuses `cert` and `key` before libwebsockets sees them: files OpenSSL
/// cannot load, a key that is not the certificate's, and a certificate
/// outside its validity period (which OpenSSL loads without a word).
/// libwebsockets makes the first two checks itself, but when they fail in
/// the multi-threaded build (LWS_MAX_SMP 8) its clean-up aborts on a lock
/// assertion, and its own validity dates (lws_tls_vhost_cert_info) are a day
/// early: 4.1.6's lws_tls_openssl_asn1time_to_unix subtracts 1 from the day
/// of the month. OpenSSL's reason goes to `reason`.
pub fn check(cert: [:0]const u8, key: [:0]const u8, reason: []u8) Refusal!void {
    const ctx = lws.SSL_CTX_new(lws.TLS_server_method()) orelse return error.CertificateRefused;
    defer lws.SSL_CTX_free(ctx);
    lws.ERR_clear_error();
    if (lws.SSL_CTX_use_certificate_chain_file(ctx, cert.ptr) != 1) return opensslError(reason, error.CertificateRefused);
    if (lws.SSL_CTX_use_PrivateKey_file(ctx, key.ptr, lws.SSL_FILETYPE_PEM) != 1) return opensslError(reason, error.KeyRefused);
    if (lws.SSL_CTX_check_private_key(ctx) != 1) return opensslError(reason, error.KeyNotTheCertificates);
    const x509 = lws.SSL_CTX_get0_certificate(ctx) orelse return error.CertificateRefused;
    // X509_cmp_current_time: -1, the time is before now; 1, after; 0, an error.
    if (lws.X509_cmp_current_time(lws.X509_get0_notAfter(x509)) < 0) return error.CertificateExpired;
    if (lws.X509_cmp_current_time(lws.X509_get0_notBefore(x509)) > 0) return error.CertificateNotYetValid;
}

/// Puts the first error OpenSSL queued into `reason` and fails with `err`.
fn opensslError(reason: []u8, err: Refusal) Refusal {
    lws.ERR_error_string_n(lws.ERR_peek_error(), reason.ptr, reason.len);
    return err;
}
