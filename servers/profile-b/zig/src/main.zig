//! wsc-zig: the profile-B chat server, Zig standard library only.
//!
//! main owns the process: flags, the listening socket, the HTTP routes that
//! come before the upgrade (/health, /stats, /ws), signal handling and the
//! shutdown sequence. Each accepted TCP connection gets a thread; after the
//! upgrade that thread becomes the connection's reader (see client.zig).
const std = @import("std");
const Io = std.Io;
const net = std.Io.net;
const linux = std.os.linux;

const Stats = @import("chat").Stats;
const client = @import("client.zig");
const Client = client.Client;
const Hub = @import("hub.zig").Hub;

/// The image tag, which /stats reports as `server`.
const server_tag = "wsc-zig";

pub const std_options: std.Options = .{
    .log_level = .info,
    // std gives every thread a 256 KiB alternate signal stack for its
    // segfault handler, as a thread-local array that thread start-up zeroes:
    // 256 KiB of resident memory per thread, 500 MiB at 1000 clients. Release
    // builds have no segfault handler to run on it.
    .signal_stack_size = null,
};

const log = std.log.scoped(.main);

/// Stack sizes of the two threads per connection. Both threads only need a
/// few KiB (the reader's largest frame is the 12 KiB JSON scratch buffer);
/// untouched stack pages cost address space, not memory.
const reader_stack_bytes = 256 * 1024;
const writer_stack_bytes = 128 * 1024;
/// Shutdown must finish within 2 s of the signal; this leaves room to print.
const shutdown_grace: Io.Duration = .fromMilliseconds(1500);

const usage =
    \\usage: wsc-zig [--host ADDR] [--port PORT] [--duration SECONDS]
    \\               [--sched batch|other] [--write-coalesce-ms MS]
    \\               [--write-coalesce-max-ms MS] [--flood-rate MESSAGES_PER_S]
    \\               [--no-utf8-check] [--one-thread]
    \\
;

const Options = struct {
    host: []const u8 = "0.0.0.0",
    port: u16 = 8080,
    duration_s: u64 = 0,
    /// The scheduling policy of every thread: SCHED_BATCH or SCHED_OTHER.
    sched_batch: bool = true,
    /// A busy connection's writer pauses this long between batches.
    write_coalesce_ms: u32 = 5,
    /// ... growing to this while its batches keep holding several frames.
    write_coalesce_max_ms: u32 = 20,
    /// ... when its connection gets at least this many messages a second.
    flood_rate: u64 = 0,
    /// Text messages are checked for UTF-8 unless `--no-utf8-check`.
    check_utf8: bool = true,
    /// One thread per WebSocket, reading and writing (`--one-thread`),
    /// instead of a reader and a writer.
    one_thread: bool = false,
};

/// Why this server refuses a transport flag the others take: what its
/// manifest says in `[not_offered]`.
fn notOffered(flag: []const u8) ?[]const u8 {
    if (std.mem.eql(u8, flag, "--tls-cert") or std.mem.eql(u8, flag, "--tls-key"))
        return "std.crypto.tls in Zig 0.17.1 holds a TLS client only (lib/std/crypto/tls/Client.zig), so std cannot serve wss";
    if (std.mem.eql(u8, flag, "--deflate"))
        return "std.http.Server's WebSocket in Zig 0.17.1 has no permessage-deflate (lib/std/http/Server.zig)";
    return null;
}

fn parseOptions(args: std.process.Args) !Options {
    var o: Options = .{};
    var it = args.iterate();
    _ = it.skip();
    while (it.next()) |arg| {
        var name: []const u8 = arg;
        var value: ?[]const u8 = null;
        if (std.mem.indexOfScalar(u8, arg, '=')) |eq| {
            name = arg[0..eq];
            value = arg[eq + 1 ..];
        }
        if (std.mem.eql(u8, name, "--help") or std.mem.eql(u8, name, "-h")) {
            std.debug.print("{s}", .{usage});
            std.process.exit(0);
        }
        if (notOffered(name)) |why| {
            std.debug.print("wsc-zig: {s}: not offered, {s}\n", .{ name, why });
            std.process.exit(2);
        }
        if (std.mem.eql(u8, name, "--no-utf8-check")) {
            o.check_utf8 = false;
            continue;
        }
        if (std.mem.eql(u8, name, "--one-thread")) {
            o.one_thread = true;
            continue;
        }
        const v = value orelse it.next() orelse return error.MissingValue;
        if (std.mem.eql(u8, name, "--host")) {
            o.host = v;
        } else if (std.mem.eql(u8, name, "--port")) {
            o.port = try std.fmt.parseInt(u16, v, 10);
        } else if (std.mem.eql(u8, name, "--duration")) {
            o.duration_s = try std.fmt.parseInt(u64, v, 10);
        } else if (std.mem.eql(u8, name, "--sched")) {
            if (std.mem.eql(u8, v, "batch")) {
                o.sched_batch = true;
            } else if (std.mem.eql(u8, v, "other")) {
                o.sched_batch = false;
            } else return error.BadSchedulingPolicy;
        } else if (std.mem.eql(u8, name, "--write-coalesce-ms")) {
            o.write_coalesce_ms = try std.fmt.parseInt(u32, v, 10);
        } else if (std.mem.eql(u8, name, "--write-coalesce-max-ms")) {
            o.write_coalesce_max_ms = try std.fmt.parseInt(u32, v, 10);
        } else if (std.mem.eql(u8, name, "--flood-rate")) {
            o.flood_rate = try std.fmt.parseInt(u64, v, 10);
        } else return error.UnknownFlag;
    }
    return o;
}

/// What every connection thread shares.
const App = struct {
    io: Io,
    gpa: std.mem.Allocator,
    stats: Stats = .{},
    hub: Hub,
    started: Io.Timestamp,
    /// Every connection's settings, from the flags.
    settings: client.Settings,

    fn uptimeMs(app: *const App) u64 {
        const d = app.started.durationTo(Io.Clock.awake.now(app.io));
        return @intCast(@max(0, d.toMilliseconds()));
    }

    fn writeStats(app: *const App, w: *Io.Writer) Io.Writer.Error!void {
        try app.stats.writeJson(server_tag, app.uptimeMs(), w);
    }
};

// Signals. The handler may only do async-signal-safe things: it records that
// a stop was asked for and shuts the listening socket down, which makes the
// blocked accept() in main return.
var listen_fd: std.atomic.Value(i32) = .init(-1);
var stop_requested: std.atomic.Value(bool) = .init(false);

fn requestStop() void {
    stop_requested.store(true, .release);
    const fd = listen_fd.load(.acquire);
    if (fd >= 0) _ = linux.shutdown(fd, linux.SHUT.RDWR);
}

fn onSignal(_: std.posix.SIG) callconv(.c) void {
    requestStop();
}

fn installSignalHandlers() void {
    const act: std.posix.Sigaction = .{
        .handler = .{ .handler = onSignal },
        .mask = std.posix.sigemptyset(),
        .flags = 0,
    };
    std.posix.sigaction(.TERM, &act, null);
    std.posix.sigaction(.INT, &act, null);
}

/// The one-thread model's wake-up (`client.wake_signal`): a handler that
/// does nothing, so that the signal ends a connection's ppoll, and blocked
/// in this thread before any other starts, so that every thread inherits
/// the block and receives it only inside its ppoll.
fn installWakeSignal() void {
    const act: std.posix.Sigaction = .{
        .handler = .{ .handler = onWake },
        .mask = std.posix.sigemptyset(),
        .flags = 0,
    };
    std.posix.sigaction(client.wake_signal, &act, null);
    var block = std.posix.sigemptyset();
    std.posix.sigaddset(&block, client.wake_signal);
    std.posix.sigprocmask(linux.SIG.BLOCK, &block, null);
}

fn onWake(_: std.posix.SIG) callconv(.c) void {}

/// Puts the process (and so every thread it starts later) under SCHED_BATCH.
/// A broadcast wakes one writer thread per recipient; under the default
/// policy each woken writer may preempt the broadcaster on the spot, which
/// then sits descheduled in the middle of its fan-out, often holding the hub
/// lock. Batch threads share the CPU exactly as before but do not preempt on
/// wake-up. Measured in README.md; unprivileged and allowed in containers.
fn useBatchScheduling() void {
    const param: linux.sched_param = .{ .priority = 0 };
    const err = linux.errno(linux.sched_setscheduler(0, .{ .mode = .BATCH }, &param));
    if (err != .SUCCESS) log.warn("cannot switch to SCHED_BATCH ({t}); using the default policy", .{err});
}

fn stopAfter(io: Io, seconds: u64) void {
    io.sleep(.fromSeconds(@intCast(seconds)), .awake) catch {};
    requestStop();
}

pub fn main(init: std.process.Init) !void {
    const io = init.io;
    const opts = parseOptions(init.minimal.args) catch |err| {
        std.debug.print("wsc-zig: {t}\n{s}", .{ err, usage });
        std.process.exit(2);
    };

    const app = try init.gpa.create(App);
    app.* = .{
        .io = io,
        .gpa = init.gpa,
        .hub = undefined,
        .started = Io.Clock.awake.now(io),
        .settings = .{
            .threads = if (opts.one_thread) .one else .{ .reader_and_writer = writer_stack_bytes },
            .write_coalesce = .fromMilliseconds(opts.write_coalesce_ms),
            .write_coalesce_max = .fromMilliseconds(@max(opts.write_coalesce_ms, opts.write_coalesce_max_ms)),
            .flood_rate = opts.flood_rate,
            .check_utf8 = opts.check_utf8,
        },
    };
    app.hub = .init(io, init.gpa, &app.stats);

    installSignalHandlers();
    if (opts.one_thread) installWakeSignal();
    if (opts.sched_batch) useBatchScheduling();
    const address = try net.IpAddress.parse(opts.host, opts.port);
    var server = try address.listen(io, .{ .reuse_address = true, .kernel_backlog = 1024 });
    listen_fd.store(server.socket.handle, .release);
    // A signal that arrived before the store above found no socket to shut.
    if (stop_requested.load(.acquire)) requestStop();
    log.info("wsc-zig listening on {f}", .{address});

    if (opts.duration_s > 0) {
        const t = try std.Thread.spawn(.{ .stack_size = 64 * 1024 }, stopAfter, .{ io, opts.duration_s });
        t.detach();
    }

    while (!stop_requested.load(.acquire)) {
        const stream = server.accept(io) catch |err| switch (err) {
            error.SocketNotListening => break,
            error.ConnectionAborted => continue,
            else => {
                log.err("accept: {t}", .{err});
                io.sleep(.fromMilliseconds(10), .awake) catch {};
                continue;
            },
        };
        const thread = std.Thread.spawn(.{ .stack_size = reader_stack_bytes }, serveConnection, .{ app, stream }) catch |err| {
            log.err("cannot start a connection thread: {t}", .{err});
            stream.close(io);
            continue;
        };
        thread.detach();
    }

    // Stop: close every WebSocket with 1001, wait for them, print the stats.
    const deadline = Io.Clock.awake.now(io).addDuration(shutdown_grace);
    app.hub.closeAll();
    while (app.stats.get("connections_current") > 0 and
        Io.Clock.awake.now(io).nanoseconds < deadline.nanoseconds)
    {
        io.sleep(.fromMilliseconds(10), .awake) catch {};
    }
    log.info("stopped with {d} connection(s) still open", .{app.stats.get("connections_current")});

    var buf: [1024]u8 = undefined;
    var stdout = Io.File.stdout().writerStreaming(io, &buf);
    try app.writeStats(&stdout.interface);
    try stdout.interface.writeByte('\n');
    try stdout.interface.flush();
    // Connection threads may still be finishing; they hold nothing that
    // needs saving.
    std.process.exit(0);
}

/// Serves one TCP connection: plain HTTP requests until it upgrades to a
/// WebSocket or closes.
fn serveConnection(app: *App, stream: net.Stream) void {
    const c = Client.create(app.gpa, app.io, stream) catch {
        stream.close(app.io);
        return;
    };
    defer c.destroy();

    var http = std.http.Server.init(c.reader(), c.writer());
    while (true) {
        var req = http.receiveHead() catch return;
        const target = req.head.target;
        const path = target[0 .. std.mem.indexOfScalar(u8, target, '?') orelse target.len];

        if (std.mem.eql(u8, path, "/ws")) {
            const key = switch (req.upgradeRequested()) {
                .websocket => |k| k,
                else => null,
            } orelse {
                req.respond("expected a WebSocket upgrade\n", .{ .status = .bad_request, .keep_alive = false }) catch {};
                return;
            };
            var ws = req.respondWebSocket(.{ .key = key }) catch return;
            ws.flush() catch return;
            c.run(ws, &app.hub, &app.stats, app.settings);
            return;
        } else if (std.mem.eql(u8, path, "/health")) {
            req.respond("ok", .{}) catch return;
        } else if (std.mem.eql(u8, path, "/stats")) {
            var body_buf: [1024]u8 = undefined;
            var body: Io.Writer = .fixed(&body_buf);
            app.writeStats(&body) catch unreachable;
            req.respond(body.buffered(), .{
                .extra_headers = &.{.{ .name = "content-type", .value = "application/json" }},
            }) catch return;
        } else {
            req.respond("not found\n", .{ .status = .not_found }) catch return;
        }
        // std answered "connection: close"; the client waits for EOF.
        if (!req.head.keep_alive) return;
    }
}

test {
    _ = @import("hub.zig");
    _ = @import("client.zig");
}
