//! wsca-zig: the wscbench chat server in Zig over libwebsockets 4.1.
//!
//! One libwebsockets context, one vhost, two protocols: "http" (index 0,
//! /health, /stats, 404) and "chat" (the default for WebSocket upgrades,
//! accepted on /ws only). libwebsockets' poll() event loop runs on as many
//! service threads as the process may use CPUs (`count_threads`, one
//! `lws_service_tsi` loop each), capped by the library's LWS_MAX_SMP: 8 in
//! the build scripts/build-libwebsockets makes, 1 in Debian's package;
//! `--threads N` sets it. See README.md.
//!
//! Usage: wsca-zig [--host ADDR] [--port PORT] [--duration SECONDS] [--threads N]
//!                 [--no-write-batch] [--frame-batch] [--write-coalesce-ms MS] [--write-coalesce-max-ms MS]
//!                 [--flood-rate N] [--tls-cert FILE --tls-key FILE] [--deflate] [--no-utf8-check]
//!
//! With --tls-cert and --tls-key the port serves TLS only; --deflate accepts
//! permessage-deflate (transport.zig).
//!
//! On SIGTERM/SIGINT or when --duration ends: stop accepting, close every
//! client with 1001, print the final /stats JSON as the last stdout line and
//! exit 0, all within 2 s.

const std = @import("std");
const lws = @import("lws");
const Stats = @import("chat").Stats;
const Hub = @import("hub.zig").Hub;
const Server = @import("hub.zig").Server;
const client = @import("client.zig");
const http = @import("http.zig");
const transport = @import("transport.zig");

const sweep_period_us: i64 = std.time.us_per_s;
/// How long shutdown waits for clients to take their 1001 close before the
/// context is destroyed under them; leaves margin inside the 2 s budget.
const shutdown_grace_us: i64 = 1200 * std.time.us_per_ms;
const shutdown_tick_us: i64 = 20 * std.time.us_per_ms;

const Options = struct {
    host: [:0]const u8 = "0.0.0.0",
    port: u16 = 8080,
    duration_s: u32 = 0,
    /// Service threads; 0, the default, is one per CPU the process may use.
    threads: u32 = 0,
    /// Cork the socket while a writable callback sends several frames
    /// (client.zig); off only to measure what that is worth.
    write_batch: bool = true,
    /// A busy connection's writer pauses this long between batches
    /// (client.zig, pacer.zig); 0, the default, never pauses: libwebsockets
    /// sends each frame with its own send() whatever is queued, so pausing
    /// saved this server nothing and cost it 5-10 % more CPU in saturation
    /// (README.md, "Tuning"). The other five servers pause 5 ms.
    write_coalesce_ms: u32 = 0,
    /// ... growing to this while its batches keep holding several messages.
    write_coalesce_max_ms: u32 = 20,
    /// ... on connections that get at least this many messages a second.
    flood_rate: u64 = 1000,
    /// Writers frame their batches themselves and write each as one
    /// (client.zig, frames.zig): a variant, to see what one send() per
    /// frame costs libwebsockets. Connections with permessage-deflate keep
    /// per-frame writes.
    frame_batch: bool = false,
    /// PEM certificate and key: with both, the port serves TLS only.
    tls_cert: ?[:0]const u8 = null,
    tls_key: ?[:0]const u8 = null,
    /// Accept permessage-deflate when a client offers it.
    deflate: bool = false,
    /// libwebsockets checks that text messages and close reasons are UTF-8
    /// (LWS_SERVER_OPTION_VALIDATE_UTF8, close 1007) as RFC 6455 section 8.1
    /// requires; off only in the variant that measures what that costs.
    check_utf8: bool = true,
};

/// Set by the signal handler (or the --duration timer); read by the loop.
var stop_requested = std.atomic.Value(bool).init(false);
/// For the signal handler and the timers; set once before they can fire.
var context: ?*lws.struct_lws_context = null;
var duration_timer: lws.lws_sorted_usec_list_t = .{};

/// The most service threads this link of libwebsockets allows.
const max_threads: usize = lws.LWS_MAX_SMP;

/// One hub per service thread, and each thread's timers on its own loop.
var hubs: [max_threads]Hub = undefined;
var sweep_timers: [max_threads]lws.lws_sorted_usec_list_t = @splat(.{});
var shutdown_timers: [max_threads]lws.lws_sorted_usec_list_t = @splat(.{});

pub fn main(init: std.process.Init.Minimal) u8 {
    const opts = parseArgs(init.args) catch |err| {
        logf("wsca-zig: {s}\nusage: wsca-zig [--host ADDR] [--port PORT] [--duration SECONDS] [--threads N] [--no-write-batch] [--frame-batch] [--write-coalesce-ms MS] [--write-coalesce-max-ms MS] [--flood-rate N] [--tls-cert FILE --tls-key FILE] [--deflate] [--no-utf8-check]\n", .{@errorName(err)});
        return 2;
    };
    return run(opts) catch |err| {
        logf("wsca-zig: {s}\n", .{@errorName(err)});
        return 1;
    };
}

fn run(opts: Options) !u8 {
    const gpa = std.heap.c_allocator;
    raiseFileLimit();
    lws.lws_set_log_level(lws.LLL_ERR | lws.LLL_WARN, null);

    var stats: Stats = .{};
    var server: Server = .{ .gpa = gpa, .stats = &stats, .started_us = lws.lws_now_usecs(), .wake = wakeAll, .settings = .{
        .cork_batches = opts.write_batch,
        .frame_batch = opts.frame_batch,
        .write_coalesce_ns = @as(u64, opts.write_coalesce_ms) * std.time.ns_per_ms,
        .write_coalesce_max_ns = @as(u64, opts.write_coalesce_max_ms) * std.time.ns_per_ms,
        .flood_rate = opts.flood_rate,
        .check_utf8 = opts.check_utf8,
    } };
    defer server.deinit();
    const wanted = if (opts.threads > 0) opts.threads else cpuCount();

    const protocols = [_]lws.struct_lws_protocols{
        .{ .name = "http", .callback = http.callback, .user = &server },
        .{
            .name = "chat",
            .callback = client.callback,
            .per_session_data_size = @sizeOf(client.Client),
            // A whole maximum-size message arrives in one RECEIVE when the
            // socket has it all; bigger ones are refused by client.zig.
            .rx_buffer_size = @import("chat").protocol.max_message_bytes,
            // 0 would cap each send() at rx_buffer_size and buffer the rest;
            // an escaped chat broadcast can exceed 4 KiB, so send it whole.
            .tx_packet_size = client.tx_packet_size,
            .user = &server,
        },
        .{}, // terminator
    };
    // Make "chat" the protocol for upgrades that name none (k6 names none).
    const chat_default = lws.struct_lws_protocol_vhost_options{ .name = "default", .value = "" };
    const chat_options = lws.struct_lws_protocol_vhost_options{ .name = "chat", .options = &chat_default, .value = "" };
    // libwebsockets' own ping/hang-up policy stays off: liveness follows the
    // protocol's rules in client.sweep.
    const no_validity_checks = lws.lws_retry_bo_t{ .secs_since_valid_ping = 0, .secs_since_valid_hangup = 0 };

    var info: lws.struct_lws_context_creation_info = .{};
    info.port = opts.port;
    // libwebsockets binds every address when iface is NULL.
    info.iface = if (std.mem.eql(u8, opts.host, "0.0.0.0")) null else opts.host.ptr;
    info.protocols = &protocols;
    info.pvo = &chat_options;
    info.retry_and_idle_policy = &no_validity_checks;
    info.gid = -1;
    info.uid = -1;
    info.options = lws.LWS_SERVER_OPTION_DISABLE_IPV6 | lws.LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
    // libwebsockets 4.1 leaves text unchecked unless asked (lws-context-vhost.h).
    if (opts.check_utf8) info.options |= lws.LWS_SERVER_OPTION_VALIDATE_UTF8;
    if (opts.tls_cert) |cert| {
        var reason: [256:0]u8 = @splat(0);
        transport.check(cert, opts.tls_key.?, &reason) catch |err| {
            logf("wsca-zig: TLS certificate {s} with key {s}: {s} {s}\n", .{ cert, opts.tls_key.?, @errorName(err), std.mem.sliceTo(&reason, 0) });
            return err;
        };
    }
    transport.configure(&info, opts.tls_cert, opts.tls_key, opts.deflate, &stats);
    // libwebsockets caps it at LWS_MAX_SMP itself; asked back below.
    info.count_threads = @intCast(@min(wanted, max_threads));
    // The hubs exist before the context: its creation already calls back.
    for (hubs[0..max_threads], 0..) |*h, i| h.* = try Hub.init(gpa, &server, i);
    defer for (&hubs) |*h| h.deinit();
    server.hubs = hubs[0..@intCast(info.count_threads)];
    const ctx = lws.lws_create_context(&info) orelse {
        // libwebsockets has logged why: the port, or a certificate or key OpenSSL refused.
        if (opts.tls_cert) |cert| logf("wsca-zig: could not serve TLS with {s} and {s}, or bind the port\n", .{ cert, opts.tls_key.? });
        return error.CannotListen;
    };
    context = ctx;
    const threads: usize = @intCast(lws.lws_get_count_threads(ctx));
    server.hubs = hubs[0..threads];

    installSignalHandlers();
    if (opts.duration_s > 0) {
        lws.lws_sul_schedule(ctx, 0, &duration_timer, onDuration, @as(i64, opts.duration_s) * std.time.us_per_s);
    }
    logf("wsca-zig: listening on {s}:{d} (libwebsockets {s}, {d} service thread(s), LWS_MAX_SMP {d}{s})\n", .{ opts.host, opts.port, std.mem.span(lws.lws_get_library_version()), threads, max_threads, if (opts.frame_batch) ", frame batches" else "" });

    // Thread 0 is this one; the others are started here and joined after.
    var others: [max_threads]?std.Thread = @splat(null);
    for (1..threads) |tsi| {
        others[tsi] = std.Thread.spawn(.{ .stack_size = 1024 * 1024 }, serve, .{ ctx, tsi }) catch |err| blk: {
            logf("wsca-zig: service thread {d} did not start ({s}); its connections go unserved\n", .{ tsi, @errorName(err) });
            requestStop();
            break :blk null;
        };
    }
    serve(ctx, 0);
    for (others[1..threads]) |t| if (t) |thread| thread.join();

    const uptime_ms = server.uptimeMs(lws.lws_now_usecs());
    context = null;
    lws.lws_context_destroy(ctx);

    var line: [1024]u8 = undefined;
    var w: std.Io.Writer = .fixed(&line);
    try stats.writeJson(http.server_name, uptime_ms, &w);
    try w.writeByte('\n');
    writeAll(1, w.buffered());
    return 0;
}

/// One service thread's loop (`tsi`): its sweep, then service until stopped;
/// then its hub's clients are closed with 1001 and the loop keeps turning
/// until they are gone or time is up.
fn serve(ctx: *lws.struct_lws_context, tsi: usize) void {
    const t: c_int = @intCast(tsi);
    lws.lws_sul_schedule(ctx, t, &sweep_timers[tsi], onSweep, sweep_period_us);
    while (!stop_requested.load(.acquire)) {
        if (lws.lws_service_tsi(ctx, 0, t) < 0) break;
    }
    const hub = &hubs[tsi];
    client.closeAll(hub);
    const deadline = lws.lws_now_usecs() + shutdown_grace_us;
    lws.lws_sul_schedule(ctx, t, &shutdown_timers[tsi], onShutdownTick, shutdown_tick_us);
    while (hub.conns.items.len > 0 and lws.lws_now_usecs() < deadline) {
        if (lws.lws_service_tsi(ctx, 0, t) < 0) break;
    }
    lws.lws_sul_cancel(&sweep_timers[tsi]);
    lws.lws_sul_cancel(&shutdown_timers[tsi]);
}

/// The hubs' wake-up: every service thread gets LWS_CALLBACK_EVENT_WAIT_CANCELLED.
fn wakeAll() void {
    if (context) |ctx| lws.lws_cancel_service(ctx);
}

/// CPUs this process may run on (its affinity mask: a container's cpuset).
fn cpuCount() u32 {
    return @intCast(std.Thread.getCpuCount() catch 1);
}

fn timerIndex(timers: *[max_threads]lws.lws_sorted_usec_list_t, sul: [*c]lws.lws_sorted_usec_list_t) usize {
    return (@intFromPtr(sul) - @intFromPtr(&timers[0])) / @sizeOf(lws.lws_sorted_usec_list_t);
}

fn onSweep(sul: [*c]lws.lws_sorted_usec_list_t) callconv(.c) void {
    const ctx = context orelse return;
    const tsi = timerIndex(&sweep_timers, sul);
    client.sweep(&hubs[tsi], lws.lws_now_usecs());
    lws.lws_sul_schedule(ctx, @intCast(tsi), &sweep_timers[tsi], onSweep, sweep_period_us);
}

fn onDuration(_: [*c]lws.lws_sorted_usec_list_t) callconv(.c) void {
    requestStop();
}

/// Only wakes the loop so it can check its exit condition.
fn onShutdownTick(sul: [*c]lws.lws_sorted_usec_list_t) callconv(.c) void {
    const ctx = context orelse return;
    const tsi = timerIndex(&shutdown_timers, sul);
    lws.lws_sul_schedule(ctx, @intCast(tsi), &shutdown_timers[tsi], onShutdownTick, shutdown_tick_us);
}

fn onSignal(_: std.posix.SIG) callconv(.c) void {
    requestStop();
}

/// Safe from a signal handler: an atomic store, then lws_cancel_service,
/// which only writes to the loop's event fd. The wake-up matters even on the
/// loop thread: timers run before poll(), which would otherwise sleep on.
fn requestStop() void {
    stop_requested.store(true, .release);
    if (context) |ctx| lws.lws_cancel_service(ctx);
}

fn installSignalHandlers() void {
    const stop_action: std.posix.Sigaction = .{
        .handler = .{ .handler = onSignal },
        .mask = std.posix.sigemptyset(),
        .flags = 0,
    };
    std.posix.sigaction(.TERM, &stop_action, null);
    std.posix.sigaction(.INT, &stop_action, null);
    // A peer that vanished mid-write must not kill the process.
    const ignore: std.posix.Sigaction = .{
        .handler = .{ .handler = std.posix.SIG.IGN },
        .mask = std.posix.sigemptyset(),
        .flags = 0,
    };
    std.posix.sigaction(.PIPE, &ignore, null);
}

/// libwebsockets sizes its fd tables from RLIMIT_NOFILE; lift the soft limit
/// to the hard one, as Go's runtime does for the Go servers.
fn raiseFileLimit() void {
    var lim = std.posix.getrlimit(.NOFILE) catch return;
    if (lim.cur >= lim.max) return;
    lim.cur = lim.max;
    std.posix.setrlimit(.NOFILE, lim) catch {};
}

fn parseArgs(args: std.process.Args) !Options {
    var opts: Options = .{};
    var it = args.iterate();
    _ = it.skip();
    while (it.next()) |arg| {
        if (std.mem.eql(u8, arg, "--host")) {
            opts.host = it.next() orelse return error.MissingValue;
        } else if (std.mem.eql(u8, arg, "--port")) {
            opts.port = std.fmt.parseInt(u16, it.next() orelse return error.MissingValue, 10) catch return error.BadPort;
        } else if (std.mem.eql(u8, arg, "--duration")) {
            opts.duration_s = std.fmt.parseInt(u32, it.next() orelse return error.MissingValue, 10) catch return error.BadDuration;
        } else if (std.mem.eql(u8, arg, "--threads")) {
            opts.threads = std.fmt.parseInt(u32, it.next() orelse return error.MissingValue, 10) catch return error.BadThreads;
        } else if (std.mem.eql(u8, arg, "--no-write-batch")) {
            opts.write_batch = false;
        } else if (std.mem.eql(u8, arg, "--frame-batch")) {
            opts.frame_batch = true;
        } else if (std.mem.eql(u8, arg, "--write-coalesce-ms")) {
            opts.write_coalesce_ms = std.fmt.parseInt(u32, it.next() orelse return error.MissingValue, 10) catch return error.BadWriteCoalesce;
        } else if (std.mem.eql(u8, arg, "--write-coalesce-max-ms")) {
            opts.write_coalesce_max_ms = std.fmt.parseInt(u32, it.next() orelse return error.MissingValue, 10) catch return error.BadWriteCoalesce;
        } else if (std.mem.eql(u8, arg, "--flood-rate")) {
            opts.flood_rate = std.fmt.parseInt(u64, it.next() orelse return error.MissingValue, 10) catch return error.BadFloodRate;
        } else if (std.mem.eql(u8, arg, "--tls-cert")) {
            opts.tls_cert = it.next() orelse return error.MissingValue;
        } else if (std.mem.eql(u8, arg, "--tls-key")) {
            opts.tls_key = it.next() orelse return error.MissingValue;
        } else if (std.mem.eql(u8, arg, "--deflate")) {
            opts.deflate = true;
        } else if (std.mem.eql(u8, arg, "--no-utf8-check")) {
            opts.check_utf8 = false;
        } else {
            return error.UnknownArgument;
        }
    }
    if ((opts.tls_cert == null) != (opts.tls_key == null)) return error.TlsCertAndKeyGoTogether;
    return opts;
}

fn logf(comptime fmt: []const u8, args: anytype) void {
    var buf: [512]u8 = undefined;
    writeAll(2, std.fmt.bufPrint(&buf, fmt, args) catch return);
}

fn writeAll(fd: std.posix.fd_t, bytes: []const u8) void {
    var rest = bytes;
    while (rest.len > 0) {
        const n = std.c.write(fd, rest.ptr, rest.len);
        if (n <= 0) return;
        rest = rest[@intCast(n)..];
    }
}
