//! One connection: its socket, its bounded outbound queue (`Outbox`), and the
//! two threads that serve it once it is a WebSocket.
//!
//! The rule, as in gorilla's chat example: one reader and one writer per
//! connection. The reader (the thread that accepted the HTTP upgrade) applies
//! the size limit and the protocol rules and calls into the hub. The writer
//! drains the outbox, sends pings, enforces the idle timeout, and is the only
//! code that writes to the socket once the upgrade is done. Nobody holds a
//! lock while writing to a socket: the hub only appends to outboxes.
//!
//! Frames go through `std.http.Server.WebSocket`. Its `readSmallMessage` does
//! not answer close frames, skips pongs without telling the caller, and reports
//! a too-large frame without its length, so the reader peeks at each frame
//! header first and handles close frames and oversize frames itself.
const std = @import("std");
const Io = std.Io;
const net = std.Io.net;
const linux = std.os.linux;
const WebSocket = std.http.Server.WebSocket;

const protocol = @import("chat").protocol;
const close_payload = @import("chat").close;
const Stats = @import("chat").Stats;
const frameBytes = @import("chat").frameBytes;
const TokenBucket = @import("chat").TokenBucket;
const hub_mod = @import("hub.zig");
const Hub = hub_mod.Hub;
const Room = hub_mod.Room;
const Membership = hub_mod.Membership;

const log = std.log.scoped(.client);

/// Wakes a one-thread connection from ppoll(2) (see `Outbox.wake_tid`).
/// Blocked in every thread (main blocks it before starting any) except
/// inside that ppoll, so one sent meanwhile stays pending and ends the next
/// ppoll at once. Its handler does nothing. std's `Io.Threaded` uses SIGIO.
pub const wake_signal: linux.SIG = .USR1;

/// Messages waiting for one connection's writer; when full, more are dropped.
pub const outbox_capacity = 256;
/// How often the writer pings an otherwise quiet client.
pub const ping_period: Io.Duration = .fromSeconds(30);
/// A connection from which nothing arrived for this long is closed.
pub const idle_timeout: Io.Duration = .fromSeconds(60);
/// How long one side of a closing connection waits for the other (the peer's
/// close frame, or a writer stuck on a full socket) before cutting the TCP
/// connection.
pub const close_timeout: Io.Duration = .fromSeconds(2);
/// The same wait when the server itself is going away (close code 1001):
/// shutdown has 2 s in all, and a client that does not answer should not
/// take them all.
pub const going_away_timeout: Io.Duration = .fromMilliseconds(500);

/// What main's flags decide for every connection, handed to `Client.run` as
/// a value and kept in the client.
pub const Settings = struct {
    /// How an upgraded connection is served (`--one-thread`).
    threads: Client.Threads,
    /// On a busy connection (more than one message per batch, or sends less
    /// than this far apart) the writer pauses this long after each send
    /// before taking the next batch, so that it wakes once per batch instead
    /// of once per message. With a thread per connection every wake-up is a
    /// kernel context switch, and those were two thirds of the server's CPU
    /// time under load (see README.md). A quiet connection is never delayed:
    /// pausing there would add a timer wake-up to every message instead of
    /// saving one. `--write-coalesce-ms` (default 5); 0 turns the pause off.
    write_coalesce: Io.Duration = .fromMilliseconds(5),
    /// The pause doubles while batches keep holding several messages, up to
    /// this (`--write-coalesce-max-ms`, default 20); a batch of one sets it
    /// back to `write_coalesce`. At a thousand flooded connections, 5 ms
    /// meant 200k writer wake-ups a second, and the server spent its CPU
    /// switching threads (README.md, "Saturation"). It grows only on
    /// connections that get at least `flood_rate` messages a second, counted
    /// over 100 ms windows.
    write_coalesce_max: Io.Duration = .fromMilliseconds(20),
    /// Messages a second to one connection from which its pause may grow
    /// (`--flood-rate`, default 0: on every busy connection). The other
    /// servers pace only from 1,000 a second, because their runtimes gather
    /// frames anyway and pacing would only add latency there; here a
    /// writer's wake-up is a context switch at any rate: with growth held to
    /// floods, a burst's 1,000 writers woke 200 times a second each, and
    /// burst p95 went from 70 ms to 1.5 s at twice the CPU (README.md,
    /// "Saturation").
    flood_rate: u64 = 0,
    /// Whether a text message must be UTF-8 before it is read (RFC 6455
    /// section 8.1). `--no-utf8-check` clears it, for the variant that
    /// measures what the check costs; the close reason is checked either way.
    check_utf8: bool = true,
};

const rate_window: Io.Duration = .fromMilliseconds(100);

/// Also the largest HTTP request head accepted before the upgrade: the
/// std server parses the head in this buffer, and `readSmallMessage` accepts
/// payloads up to its size, which is exactly the protocol's 4096 bytes.
const read_buffer_bytes = protocol.max_message_bytes;
/// The writer batches queued frames here and sends them with one syscall.
const write_buffer_bytes = 4 * 1024;
/// The most frames the one-thread model writes per batch, once ppoll(2) has
/// said the socket is writable: the write buffer's worth, which a writable
/// TCP socket takes without blocking (see `Client.runAlone`).
const alone_batch_bytes = write_buffer_bytes;
/// Parse scratch on the reader's stack; larger needs go to the heap.
const small_scratch_bytes = 512;

/// A frame's payload, written once and shared by every recipient's outbox.
/// Reference-counted; the last writer to send it frees it.
pub const Message = struct {
    refs: std.atomic.Value(u32),
    opcode: WebSocket.Opcode,
    /// Chats are what `deliveries` counts.
    is_chat: bool,
    len: u32,

    const header_bytes = std.mem.alignForward(usize, @sizeOf(Message), @alignOf(Message));

    pub fn create(gpa: std.mem.Allocator, opcode: WebSocket.Opcode, is_chat: bool, len: usize) !*Message {
        const block = try gpa.alignedAlloc(u8, .fromByteUnits(@alignOf(Message)), header_bytes + len);
        const m: *Message = @ptrCast(block.ptr);
        m.* = .{ .refs = .init(1), .opcode = opcode, .is_chat = is_chat, .len = @intCast(len) };
        return m;
    }

    /// Serializes `write(writer, args...)` into a new text message of exactly
    /// the right size: one pass to count, one to write.
    pub fn print(gpa: std.mem.Allocator, is_chat: bool, comptime write: anytype, args: anytype) !*Message {
        var counter: Io.Writer.Discarding = .init(&.{});
        try @call(.auto, write, .{&counter.writer} ++ args);
        const m = try create(gpa, .text, is_chat, @intCast(counter.fullCount()));
        var w: Io.Writer = .fixed(m.bytes());
        @call(.auto, write, .{&w} ++ args) catch unreachable;
        return m;
    }

    pub fn bytes(m: *Message) []u8 {
        const base: [*]align(@alignOf(Message)) u8 = @ptrCast(m);
        return base[header_bytes..][0..m.len];
    }

    /// Drops `n` references at once (the hub drops the references it
    /// reserved for recipients whose outbox refused the message).
    pub fn release(m: *Message, gpa: std.mem.Allocator, n: u32) void {
        if (m.refs.fetchSub(n, .acq_rel) != n) return;
        const base: [*]align(@alignOf(Message)) u8 = @ptrCast(m);
        gpa.free(base[0 .. header_bytes + m.len]);
    }
};

/// The bounded queue between the hub (and the reader) and one writer.
/// Pushing never blocks on the writer: a full outbox drops the message.
///
/// Lock-free: many broadcasters push, one writer takes. With a thread per
/// connection, a thousand clients are two thousand threads, and a lock that
/// a writer holds when the kernel preempts it stalls every broadcaster that
/// reaches its outbox until the writer runs again; under saturation that
/// convoy held the hub for seconds (README.md, "The lock convoy"). A push is
/// a compare-and-swap on `tail` and a store into the ring; the writer sleeps
/// on `wake` only when the ring is empty.
pub const Outbox = struct {
    /// Slot `i % outbox_capacity` holds the message pushed as number `i`, or
    /// null until its pusher has stored it (and again once taken).
    ring: [outbox_capacity]?*Message = @splat(null),
    /// Numbers reserved by pushers so far (wrapping).
    tail: std.atomic.Value(usize) = .init(0),
    /// Numbers taken by the writer so far (wrapping); only the writer stores it.
    head: std.atomic.Value(usize) = .init(0),
    /// Set by every push and request; the writer resets it before it sleeps.
    wake: Io.Event = .unset,
    /// The close frame to send after what is queued (0: none). The first
    /// request wins.
    close_code: std.atomic.Value(u16) = .init(0),
    /// The peer is gone: the writer stops without writing anything more.
    abandon: std.atomic.Value(bool) = .init(false),
    /// The writer has exited; pushes are refused and not counted as drops.
    closed: std.atomic.Value(bool) = .init(false),
    /// Pushes in progress, so that `close` can wait them out before it frees
    /// what is queued.
    pushing: std.atomic.Value(u32) = .init(0),
    /// In the one-thread model the connection's thread sleeps in ppoll(2) on
    /// its socket, not on `wake`: a push interrupts it with `wake_signal`
    /// sent to this thread id (0: two threads), and only when the thread has
    /// `armed` the outbox before sleeping, so a busy connection costs no
    /// syscall per message. A signal rather than an eventfd, because a file
    /// descriptor more per connection would halve the connections a file
    /// limit allows (the benchmark gives a server one per user plus 1,024).
    wake_tid: linux.pid_t = 0,
    armed: std.atomic.Value(bool) = .init(false),

    pub const Push = enum { queued, full, closed };

    /// On `.queued` the outbox owns one reference to `m`; otherwise the caller
    /// keeps it.
    pub fn push(o: *Outbox, io: Io, m: *Message) Push {
        _ = o.pushing.fetchAdd(1, .seq_cst);
        defer _ = o.pushing.fetchSub(1, .release);
        if (o.closed.load(.seq_cst)) return .closed;
        var t = o.tail.load(.monotonic);
        while (true) {
            if (t -% o.head.load(.acquire) >= outbox_capacity) return .full;
            t = o.tail.cmpxchgWeak(t, t +% 1, .monotonic, .monotonic) orelse break;
        }
        // The writer empties slot `t` before it moves `head` past `t - capacity`,
        // and the check above saw that move.
        @atomicStore(?*Message, &o.ring[t % outbox_capacity], m, .release);
        o.notify(io);
        return .queued;
    }

    pub fn requestClose(o: *Outbox, io: Io, code: u16) void {
        _ = o.close_code.cmpxchgStrong(0, code, .release, .monotonic);
        o.notify(io);
    }

    pub fn requestAbandon(o: *Outbox, io: Io) void {
        o.abandon.store(true, .release);
        o.notify(io);
    }

    fn notify(o: *Outbox, io: Io) void {
        o.wake.set(io);
        if (o.wake_tid != 0 and o.armed.swap(false, .seq_cst)) _ = linux.tkill(o.wake_tid, wake_signal);
    }

    /// One-thread model: called before the thread sleeps in ppoll(2). False
    /// when something is already waiting (then it must not sleep); otherwise
    /// the next push, close or abandon request signals `wake_tid`.
    fn arm(o: *Outbox) bool {
        o.armed.store(true, .seq_cst);
        if (!o.pending()) return true;
        o.armed.store(false, .monotonic);
        return false;
    }

    pub const Batch = struct {
        messages: []*Message,
        close_code: ?u16,
        abandon: bool,
    };

    /// Waits until something is queued, a close is requested, or `deadline`
    /// passes, then takes everything queued into `out`. Only the writer calls
    /// it.
    pub fn take(o: *Outbox, io: Io, deadline: ?Io.Clock.Timestamp, out: *[outbox_capacity]*Message) Batch {
        while (true) {
            // Read before the ring: what was pushed before the close request
            // is then in this batch, ahead of the close frame.
            const code = o.close_code.load(.acquire);
            const abandon = o.abandon.load(.acquire);
            const messages = o.drain(out);
            if (messages.len > 0 or code != 0 or abandon) return .{
                .messages = messages,
                .close_code = if (code == 0) null else code,
                .abandon = abandon,
            };
            const d = deadline orelse return .{ .messages = messages, .close_code = null, .abandon = false };
            // Reset, then look again: a push after the look sets `wake` anew.
            o.wake.reset();
            if (o.pending()) continue;
            o.wake.waitTimeout(io, .{ .deadline = d }) catch |err| switch (err) {
                error.Timeout, error.Canceled => return .{ .messages = messages, .close_code = null, .abandon = false },
            };
        }
    }

    /// One-thread model: takes, without waiting, what is queued up to about
    /// `max_bytes` of frames (always at least one message). The close
    /// request comes only with the batch that empties the ring.
    pub fn takeReady(o: *Outbox, out: *[outbox_capacity]*Message, max_bytes: usize) Batch {
        const code = o.close_code.load(.acquire);
        const abandon = o.abandon.load(.acquire);
        const messages = o.drainUpTo(out, max_bytes);
        const emptied = @atomicLoad(?*Message, &o.ring[o.head.raw % outbox_capacity], .acquire) == null;
        return .{
            .messages = messages,
            .close_code = if (code == 0 or !emptied) null else code,
            .abandon = abandon,
        };
    }

    /// Takes the messages stored so far, in order, up to the first slot
    /// whose pusher has not stored yet (its push sets `wake` when it has).
    fn drain(o: *Outbox, out: *[outbox_capacity]*Message) []*Message {
        return o.drainUpTo(out, std.math.maxInt(usize));
    }

    fn drainUpTo(o: *Outbox, out: *[outbox_capacity]*Message, max_bytes: usize) []*Message {
        var h = o.head.raw;
        var n: usize = 0;
        var bytes: usize = 0;
        while (n < outbox_capacity) : (n += 1) {
            const slot = &o.ring[h % outbox_capacity];
            const m = @atomicLoad(?*Message, slot, .acquire) orelse break;
            bytes +|= frameBytes(m.len);
            if (n > 0 and bytes > max_bytes) break;
            @atomicStore(?*Message, slot, null, .monotonic);
            out[n] = m;
            h +%= 1;
        }
        o.head.store(h, .release);
        return out[0..n];
    }

    fn pending(o: *Outbox) bool {
        return @atomicLoad(?*Message, &o.ring[o.head.raw % outbox_capacity], .acquire) != null or
            o.close_code.load(.acquire) != 0 or o.abandon.load(.acquire);
    }

    /// Refuses further pushes, waits out those in progress, and releases
    /// whatever is still queued.
    pub fn close(o: *Outbox, io: Io, gpa: std.mem.Allocator) void {
        _ = io;
        o.closed.store(true, .seq_cst);
        while (o.pushing.load(.seq_cst) != 0) std.Thread.yield() catch {};
        // Slot by slot rather than through `drain`: a batch array here would
        // sit in the writer's stack frame, and the calls below it would touch
        // another page of stack for every idle connection.
        var h = o.head.raw;
        while (@atomicLoad(?*Message, &o.ring[h % outbox_capacity], .acquire)) |m| : (h +%= 1) {
            @atomicStore(?*Message, &o.ring[h % outbox_capacity], null, .monotonic);
            m.release(gpa, 1);
        }
        o.head.store(h, .release);
    }
};

/// Wraps the socket reader to note when bytes last arrived. Pongs count as
/// activity but `readSmallMessage` swallows them, so the reader cannot stamp
/// them itself; this sits below it and sees every byte.
const ActivityReader = struct {
    net: net.Stream.Reader,
    net_vtable: *const Io.Reader.VTable,
    vtable: Io.Reader.VTable,
    last_read_ns: std.atomic.Value(i64),

    fn init(a: *ActivityReader, stream: net.Stream, io: Io, buffer: []u8) void {
        a.net = stream.reader(io, buffer);
        a.net_vtable = a.net.interface.vtable;
        a.vtable = a.net_vtable.*;
        a.vtable.stream = streamStamped;
        a.vtable.readVec = readVecStamped;
        a.net.interface.vtable = &a.vtable;
        a.last_read_ns = .init(nowNs(io));
    }

    fn of(r: *Io.Reader) *ActivityReader {
        const n: *net.Stream.Reader = @alignCast(@fieldParentPtr("interface", r));
        return @fieldParentPtr("net", n);
    }

    fn stamp(a: *ActivityReader) void {
        a.last_read_ns.store(nowNs(a.net.io), .monotonic);
    }

    fn streamStamped(r: *Io.Reader, w: *Io.Writer, limit: Io.Limit) Io.Reader.StreamError!usize {
        const a = of(r);
        const n = try a.net_vtable.stream(r, w, limit);
        a.stamp();
        return n;
    }

    fn readVecStamped(r: *Io.Reader, data: [][]u8) Io.Reader.Error!usize {
        const a = of(r);
        const n = try a.net_vtable.readVec(r, data);
        a.stamp();
        return n;
    }
};

pub fn nowNs(io: Io) i64 {
    return @intCast(Io.Clock.awake.now(io).nanoseconds);
}

/// A connection's state is a few pages (mostly its two buffers). Mapping it
/// straight from the OS gives it back when the connection ends; from the
/// general-purpose allocator it would stay resident after a crowd leaves.
const connection_allocator = std.heap.page_allocator;

pub const Client = struct {
    gpa: std.mem.Allocator,
    io: Io,
    stream: net.Stream,
    in: ActivityReader,
    out: net.Stream.Writer,
    read_buffer: [read_buffer_bytes]u8,
    write_buffer: [write_buffer_bytes]u8,

    // Set once the connection is a WebSocket.
    hub: *Hub,
    stats: *Stats,
    settings: Settings,
    ws: WebSocket,
    outbox: Outbox,
    bucket: TokenBucket,
    reader_done: Io.Event,
    writer_done: Io.Event,

    // A fragmented message being reassembled, owned by the reader. std's
    // readSmallMessage cannot reassemble fragments, so the reader does it here,
    // bounded by the same 4096 bytes as a whole message.
    // Allocated on the first fragmented message and kept until the connection
    // ends: most clients never fragment, and 4 KiB inside every connection's
    // state would be a resident page per idle client.
    frag_buf: ?*[protocol.max_message_bytes]u8,
    frag_len: usize,
    frag_opcode: ?WebSocket.Opcode,
    /// Set when a fragmented message went over the limit: its remaining
    /// fragments are read and dropped while the close handshake runs.
    frag_dropping: bool,

    // Owned by the reader; the hub reads `user` while the reader is inside
    // `Hub.join` or a leave. Set by the first successful join (0: none yet),
    // and kept after the connection leaves its last room.
    user_buf: [protocol.max_user_chars * 4]u8,
    user_len: usize,

    /// The rooms this connection is in, the first `room_count` (0: as one
    /// that never joined). Changed only by this connection's reader, under
    /// the hub's lock, so the reader reads them without it; the hub moves
    /// `index` on other connections' leaves (see `Membership`).
    rooms: [protocol.max_rooms]Membership,
    room_count: usize,
    /// Guarded by the hub's connection-list mutex.
    conn_node: std.DoublyLinkedList.Node,

    /// Allocates the connection's state; `reader()`/`writer()` serve the HTTP
    /// exchange that precedes the upgrade.
    pub fn create(gpa: std.mem.Allocator, io: Io, stream: net.Stream) !*Client {
        const c = try connection_allocator.create(Client);
        c.gpa = gpa;
        c.io = io;
        c.stream = stream;
        c.in.init(stream, io, &c.read_buffer);
        c.out = stream.writer(io, &c.write_buffer);
        c.frag_buf = null;
        return c;
    }

    /// Closes the socket and frees the connection.
    pub fn destroy(c: *Client) void {
        c.stream.close(c.io);
        if (c.frag_buf) |b| c.gpa.destroy(b);
        connection_allocator.destroy(c);
    }

    pub fn reader(c: *Client) *Io.Reader {
        return &c.in.net.interface;
    }

    pub fn writer(c: *Client) *Io.Writer {
        return &c.out.interface;
    }

    pub fn user(c: *const Client) []const u8 {
        return c.user_buf[0..c.user_len];
    }

    /// This connection's room `name`, if it is in it. The reader's own view:
    /// no lock.
    pub fn roomNamed(c: *const Client, name: []const u8) ?*Room {
        const slot = c.slotNamed(name) orelse return null;
        return c.rooms[slot].room;
    }

    pub fn slotNamed(c: *const Client, name: []const u8) ?usize {
        for (c.rooms[0..c.room_count], 0..) |m, i| {
            if (m.room.name.eql(name)) return i;
        }
        return null;
    }

    /// Where `room` is in `rooms`; the connection must be in it. Called
    /// under the hub's lock.
    pub fn slotOf(c: *const Client, room: *const Room) usize {
        for (c.rooms[0..c.room_count], 0..) |m, i| {
            if (m.room == room) return i;
        }
        unreachable;
    }

    /// How an upgraded connection is served.
    pub const Threads = union(enum) {
        /// The calling thread reads; a writer thread of this stack size
        /// writes (the default).
        reader_and_writer: usize,
        /// The calling thread does both, waiting in ppoll(2) for the socket
        /// or the outbox (`--one-thread`; see `runAlone`).
        one,
    };

    /// Serves an upgraded connection until it closes, on the calling thread
    /// (the reader), with a writer thread of its own or alone
    /// (`settings.threads`). Returns once both are done; the caller then
    /// destroys the client.
    pub fn run(c: *Client, ws: WebSocket, hub: *Hub, stats: *Stats, settings: Settings) void {
        c.hub = hub;
        c.stats = stats;
        c.settings = settings;
        c.ws = ws;
        c.frag_len = 0;
        c.frag_opcode = null;
        c.frag_dropping = false;
        c.outbox = .{};
        c.bucket = .init(nowNs(c.io));
        c.reader_done = .unset;
        c.writer_done = .unset;
        c.room_count = 0;
        c.user_len = 0;

        const writer_stack_bytes = switch (settings.threads) {
            .reader_and_writer => |bytes| bytes,
            .one => return c.runAlone(),
        };
        const writer_thread = std.Thread.spawn(.{ .stack_size = writer_stack_bytes }, writeLoop, .{c}) catch |err| {
            log.err("cannot start a writer thread: {t}", .{err});
            return;
        };
        stats.inc("connections_total");
        stats.inc("connections_current");
        hub.register(c);

        const peer_gone = c.readLoop();

        hub.leaveAll(c);
        c.reader_done.set(c.io);
        if (peer_gone) {
            c.outbox.requestAbandon(c.io);
            c.cutTcp();
        }
        c.writer_done.waitTimeout(c.io, .{ .deadline = .fromNow(c.io, .{ .raw = close_timeout, .clock = .awake }) }) catch c.cutTcp();
        writer_thread.join();

        hub.unregister(c);
        c.outbox.close(c.io, c.gpa);
        stats.dec("connections_current");
    }

    /// Asks the writer to send a close frame after what is queued (server
    /// shutdown uses this from another thread).
    pub fn requestClose(c: *Client, code: u16) void {
        c.outbox.requestClose(c.io, code);
    }

    /// Ends the TCP connection in both directions, which wakes a reader
    /// blocked in read and fails a writer blocked in write.
    fn cutTcp(c: *Client) void {
        c.stream.shutdown(c.io, .both) catch {};
    }

    const Frame = union(enum) {
        message: WebSocket.SmallMessage,
        /// The close code the peer sent, or null if it sent none.
        close: ?u16,
        /// Over the size limit; carries how many bytes of the frame are still
        /// to be skipped once the close has been asked for (0: none).
        oversize: u64,
        /// A fragment of a message not yet complete.
        fragment,
    };

    /// ProtocolError fails the connection with 1002, InvalidPayload with 1007.
    const FrameError = error{Gone} || close_payload.Error;

    fn nextFrame(c: *Client) FrameError!Frame {
        const in = c.ws.input;
        const h = in.peekArray(2) catch return error.Gone;
        const h0: WebSocket.Header0 = @bitCast(h[0]);
        const h1: WebSocket.Header1 = @bitCast(h[1]);
        if (!h1.mask) return error.ProtocolError;
        // No extension is ever negotiated, so a reserved bit has no meaning
        // (RFC 6455 section 5.2: MUST fail the connection).
        if (h0.rsv1 != 0 or h0.rsv2 != 0 or h0.rsv3 != 0) return error.ProtocolError;
        const ext: usize = switch (h1.payload_len) {
            .len16 => 2,
            .len64 => 8,
            else => 0,
        };
        const head = in.peek(2 + ext + 4) catch return error.Gone;
        const len: u64 = switch (h1.payload_len) {
            .len16 => std.mem.readInt(u16, head[2..4], .big),
            .len64 => std.mem.readInt(u64, head[2..10], .big),
            else => @intFromEnum(h1.payload_len),
        };
        if (h0.opcode == .connection_close) {
            if (len > 125 or !h0.fin) return error.ProtocolError;
            const mask = head[2 + ext ..][0..4].*;
            in.toss(2 + ext + 4);
            const payload = in.take(@intCast(len)) catch return error.Gone;
            for (payload, 0..) |*b, i| b.* ^= mask[i % 4];
            return .{ .close = try close_payload.code(payload) };
        }
        if (len > protocol.max_message_bytes) {
            // The reader asks for the 1009 close first and skips the frame after,
            // so a peer announcing a huge frame and sending it slowly is closed
            // at once rather than once it has sent it all.
            return .{ .oversize = (2 + ext + 4) +| len };
        }
        const control = @intFromEnum(h0.opcode) >= 8;
        if (control and (!h0.fin or len > 125)) return error.ProtocolError;
        const mask = head[2 + ext ..][0..4].*;
        in.toss(2 + ext + 4);
        const payload = in.take(@intCast(len)) catch return error.Gone;
        for (payload, 0..) |*b, i| b.* ^= mask[i % 4];
        switch (h0.opcode) {
            .ping, .pong => return .{ .message = .{ .opcode = h0.opcode, .data = payload } },
            .text, .binary => {
                if (c.frag_opcode != null) return error.ProtocolError;
                if (h0.fin) return .{ .message = .{ .opcode = h0.opcode, .data = payload } };
                if (c.frag_buf == null) c.frag_buf = c.gpa.create([protocol.max_message_bytes]u8) catch return error.Gone;
                @memcpy(c.frag_buf.?[0..payload.len], payload);
                c.frag_len = payload.len;
                c.frag_opcode = h0.opcode;
                return .fragment;
            },
            .continuation => {
                const opcode = c.frag_opcode orelse return error.ProtocolError;
                if (c.frag_dropping or c.frag_len + payload.len > protocol.max_message_bytes) {
                    const first = !c.frag_dropping;
                    c.frag_dropping = !h0.fin;
                    if (h0.fin) c.frag_opcode = null;
                    return if (first) .{ .oversize = 0 } else .fragment;
                }
                const buf = c.frag_buf.?; // set by the first fragment
                @memcpy(buf[c.frag_len..][0..payload.len], payload);
                c.frag_len += payload.len;
                if (!h0.fin) return .fragment;
                c.frag_opcode = null;
                return .{ .message = .{ .opcode = opcode, .data = buf[0..c.frag_len] } };
            },
            else => return error.ProtocolError,
        }
    }

    /// Reads frames until the connection ends. Returns true if the peer went
    /// away without a close handshake, so nothing more should be written.
    fn readLoop(c: *Client) bool {
        // Set once this side has asked for a close frame; data frames after
        // it are ignored while waiting for the peer's close frame.
        var closing = false;
        while (true) {
            switch (c.readFrame(&closing)) {
                .more => {},
                .skip => |n| c.ws.input.discardAll64(n) catch return true,
                .done => |peer_gone| return peer_gone,
            }
        }
    }

    const ReadStep = union(enum) {
        /// Go on reading.
        more,
        /// An oversize frame: the close is asked for, and this many bytes are
        /// to be discarded before the next frame.
        skip: u64,
        /// The reading is over; true if the peer went away without a close
        /// handshake, so nothing more should be written.
        done: bool,
    };

    /// Reads one frame and acts on it.
    fn readFrame(c: *Client, closing: *bool) ReadStep {
        const frame = c.nextFrame() catch |err| switch (err) {
            error.Gone => return .{ .done = true },
            error.ProtocolError, error.InvalidPayload => |e| {
                c.requestClose(close_payload.failWith(e));
                return .{ .done = false };
            },
        };
        switch (frame) {
            .close => |code| {
                // Answer with the peer's code, as RFC 6455 suggests
                // (close_payload.code has refused every code that may not be sent).
                c.hub.leaveAll(c);
                c.requestClose(code orelse 1000);
                return .{ .done = false };
            },
            .oversize => |skip| {
                if (!closing.*) {
                    closing.* = true;
                    c.hub.leaveAll(c);
                    c.requestClose(1009);
                }
                return .{ .skip = skip };
            },
            .fragment => {},
            .message => |msg| switch (msg.opcode) {
                .ping => c.sendControl(.pong, msg.data),
                .text => if (!closing.*) {
                    // RFC 6455 section 8.1: a text message that is not
                    // UTF-8 MUST fail the connection. std reads frames
                    // and leaves the payload unchecked.
                    if (c.settings.check_utf8 and !std.unicode.utf8ValidateSlice(msg.data)) {
                        c.requestClose(1007);
                        return .{ .done = false };
                    }
                    c.stats.inc("frames_in");
                    if (c.handleText(msg.data) == .leave) {
                        closing.* = true;
                        c.hub.leaveAll(c);
                        c.requestClose(1000);
                    }
                },
                .binary => if (!closing.*) {
                    c.stats.inc("frames_in");
                    c.stats.inc("malformed");
                },
                else => {},
            },
        }
        return .more;
    }

    fn handleText(c: *Client, payload: []const u8) enum { stay, leave } {
        // Unescaped strings and the scanner's nesting stack (see protocol.parse).
        // Strings without escapes are slices of the payload, so most messages
        // fit a small stack buffer; one that needs more is parsed again with
        // heap scratch. A stack page once touched stays resident for the life
        // of the thread, so the reader's stack is kept to a page or two.
        var small: [small_scratch_bytes]u8 = undefined;
        var fba: std.heap.FixedBufferAllocator = .init(&small);
        var arena: std.heap.ArenaAllocator = .init(c.gpa);
        defer arena.deinit();
        const msg = protocol.parse(fba.allocator(), payload) catch |err| switch (err) {
            error.OutOfMemory => protocol.parse(arena.allocator(), payload),
            error.Malformed => err,
        } catch {
            c.stats.inc("malformed");
            return .stay;
        };
        switch (msg) {
            .join => |j| {
                // The first successful join names the connection; later
                // joins are announced with that name.
                const first = c.user_len == 0;
                if (first) {
                    @memcpy(c.user_buf[0..j.user.len], j.user);
                    c.user_len = j.user.len;
                }
                switch (c.hub.join(c, j.room)) {
                    .joined, .already => {},
                    .too_many => c.stats.inc("malformed"),
                    .out_of_memory => if (first) {
                        c.user_len = 0;
                    },
                }
            },
            .chat => |chat| {
                // Only a member of the room may chat in it.
                const room = c.roomNamed(chat.room) orelse {
                    c.stats.inc("malformed");
                    return .stay;
                };
                c.stats.inc("chat_in");
                if (!c.bucket.allow(nowNs(c.io))) {
                    c.stats.inc("dropped_ratelimit");
                    return .stay;
                }
                c.stats.inc("chat_accepted");
                c.hub.chat(c, room, chat.text, chat.ts);
            },
            .ping => |p| {
                const m = Message.print(c.gpa, false, protocol.writePong, .{p.ts}) catch return .stay;
                c.sendOwn(m);
            },
            .leave => |l| {
                if (l.room) |name| {
                    // That room only; the connection stays open.
                    if (!c.hub.leave(c, name)) c.stats.inc("malformed");
                    return .stay;
                }
                if (c.room_count == 0) {
                    c.stats.inc("malformed");
                    return .stay;
                }
                return .leave;
            },
        }
        return .stay;
    }

    fn sendControl(c: *Client, opcode: WebSocket.Opcode, payload: []const u8) void {
        const m = Message.create(c.gpa, opcode, false, payload.len) catch return;
        @memcpy(m.bytes(), payload);
        c.sendOwn(m);
    }

    /// Queues a reply for this connection only.
    fn sendOwn(c: *Client, m: *Message) void {
        switch (c.outbox.push(c.io, m)) {
            .queued => {},
            .full => {
                c.stats.inc("dropped_slow");
                m.release(c.gpa, 1);
            },
            .closed => m.release(c.gpa, 1),
        }
    }

    fn writeLoop(c: *Client) void {
        const io = c.io;
        var batch: [outbox_capacity]*Message = undefined;
        var sender: Sender = .init(c);
        var failed = false;
        while (true) {
            const got = c.outbox.take(io, sender.wakeAt(c), &batch);
            switch (sender.send(c, got)) {
                .failed => {
                    failed = true;
                    break;
                },
                .abandoned => break,
                .sent => |pause| if (pause.nanoseconds > 0) io.sleep(pause, .awake) catch {},
            }
            if (got.close_code) |code| {
                const wait = c.sendClose(code) catch {
                    failed = true;
                    break;
                };
                // Give the peer time to answer; the reader finishes when its
                // close frame (or EOF) arrives.
                c.reader_done.waitTimeout(io, .{ .deadline = .fromNow(io, .{ .raw = wait, .clock = .awake }) }) catch c.cutTcp();
                break;
            }
        }
        if (failed) c.cutTcp();
        c.outbox.close(io, c.gpa);
        c.writer_done.set(io);
    }

    /// Sends the close frame; returns how long to wait for the peer's.
    fn sendClose(c: *Client, code: u16) Io.Writer.Error!Io.Duration {
        var payload: [2]u8 = undefined;
        std.mem.writeInt(u16, &payload, code, .big);
        try c.ws.writeMessage(&payload, .connection_close);
        return if (code == 1001) going_away_timeout else close_timeout;
    }

    /// The writer's side of a connection between batches: pings, the idle
    /// rule and the pacing of busy connections. Used by the writer thread and
    /// by the one-thread model alike.
    const Sender = struct {
        next_ping: Io.Timestamp,
        last_send: Io.Timestamp = .zero,
        pause: Io.Duration,
        // Messages sent in the current rate window, and the last window's rate.
        window_start: Io.Timestamp,
        window_count: u64 = 0,
        rate: u64 = 0,

        fn init(c: *const Client) Sender {
            const now = Io.Clock.awake.now(c.io);
            return .{ .next_ping = now.addDuration(ping_period), .pause = c.settings.write_coalesce, .window_start = now };
        }

        /// When the writer must wake even if nothing is queued: the next
        /// ping or the idle deadline, whichever is first.
        fn wakeAt(s: *const Sender, c: *Client) Io.Clock.Timestamp {
            const idle_deadline: Io.Timestamp = .{ .nanoseconds = c.in.last_read_ns.load(.monotonic) + idle_timeout.nanoseconds };
            return .{ .raw = if (s.next_ping.nanoseconds < idle_deadline.nanoseconds) s.next_ping else idle_deadline, .clock = .awake };
        }

        const Sent = union(enum) {
            /// The socket failed, or the connection is idle: cut it.
            failed,
            /// The peer is gone: nothing was written.
            abandoned,
            /// Written and flushed; the pause to take before the next batch
            /// (0: none).
            sent: Io.Duration,
        };

        /// Writes a batch (and a ping when one is due) with one flush, and
        /// releases the batch's messages. The close frame is the caller's.
        fn send(s: *Sender, c: *Client, got: Outbox.Batch) Sent {
            var failed = false;
            var chats: u64 = 0;
            var bytes: u64 = 0; // frames as they go to the socket (no TLS, no compression here)
            for (got.messages) |m| {
                if (!failed and !got.abandon) {
                    c.ws.writeMessageUnflushed(m.bytes(), m.opcode) catch {
                        failed = true;
                    };
                    if (m.is_chat) chats += 1;
                    bytes += frameBytes(m.bytes().len);
                }
                m.release(c.gpa, 1);
            }
            if (failed) return .failed;
            if (got.abandon) return .abandoned;

            const now = Io.Clock.awake.now(c.io);
            const last_read = c.in.last_read_ns.load(.monotonic);
            if (now.nanoseconds - last_read >= idle_timeout.nanoseconds) {
                log.info("closing a connection idle for {d} s", .{@divTrunc(now.nanoseconds - last_read, std.time.ns_per_s)});
                return .failed;
            }
            if (now.nanoseconds >= s.next_ping.nanoseconds) {
                c.ws.writeMessageUnflushed("", .ping) catch return .failed;
                bytes += frameBytes(0);
                s.next_ping = now.addDuration(ping_period);
            }
            c.ws.flush() catch return .failed;
            c.stats.add("deliveries", chats);
            c.stats.add("bytes_written", bytes);
            var pause: Io.Duration = .zero;
            if (got.messages.len > 0) {
                const pacing = &c.settings;
                const busy = got.messages.len > 1 or
                    now.nanoseconds - s.last_send.nanoseconds < pacing.write_coalesce.nanoseconds;
                s.last_send = now;
                s.window_count += got.messages.len;
                const elapsed: u64 = @intCast(@max(1, now.nanoseconds - s.window_start.nanoseconds));
                if (elapsed >= rate_window.nanoseconds) {
                    s.rate = s.window_count * std.time.ns_per_s / elapsed;
                    s.window_start = now;
                    s.window_count = 0;
                }
                if (busy and got.close_code == null and s.pause.nanoseconds > 0) pause = s.pause;
                s.pause = if (got.messages.len > 1 and s.rate >= pacing.flood_rate)
                    .{ .nanoseconds = @min(s.pause.nanoseconds * 2, pacing.write_coalesce_max.nanoseconds) }
                else
                    pacing.write_coalesce;
            }
            return .{ .sent = pause };
        }
    };

    /// The one-thread model (`--one-thread`): the connection's one thread
    /// reads and writes, sleeping in ppoll(2) on the socket until it is
    /// ready, a push to the outbox signals the thread (`wake_signal`), or the
    /// next ping, idle deadline or pacing pause is due. One kernel task per connection
    /// instead of two. Frames are read with the same `nextFrame` and written
    /// with the same `Sender` as in the two-thread model. The thread must
    /// never block in a write, or a client that stops reading would also
    /// stop being read: a batch is written only once ppoll(2) has said the
    /// socket is writable, and holds at most `alone_batch_bytes` of frames,
    /// so a client that does not read fills its outbox and its messages are
    /// dropped, as with a writer thread blocked in its write. Only a frame
    /// whose header and payload would not fit the read buffer together
    /// (payload over 4082 bytes) is read to its end in a blocking read.
    fn runAlone(c: *Client) void {
        const io = c.io;
        // The thread's mask with `wake_signal` let through, for ppoll.
        var wait_mask: linux.sigset_t = undefined;
        _ = linux.sigprocmask(linux.SIG.BLOCK, null, &wait_mask);
        linux.sigdelset(&wait_mask, wake_signal);
        c.outbox.wake_tid = linux.gettid();
        c.stats.inc("connections_total");
        c.stats.inc("connections_current");
        c.hub.register(c);

        var batch: [outbox_capacity]*Message = undefined;
        var sender: Sender = .init(c);
        var closing = false;
        var reading = true;
        var peer_gone = false;
        var failed = false;
        // Poll(2) said the socket can take a batch; cleared by each batch.
        var writable = true;
        // Bytes of an oversize frame still to discard.
        var skip: u64 = 0;
        // No batch is taken before this (the pacing pause of a busy connection).
        var write_after: i64 = 0;
        // Once this side's close frame is sent: when to stop waiting for the peer's.
        var close_by: ?i64 = null;
        while (true) {
            // Every frame already buffered, without blocking.
            while (reading) {
                const in = c.ws.input;
                if (skip > 0) {
                    const n: usize = @intCast(@min(skip, in.bufferedLen()));
                    in.toss(n);
                    skip -= n;
                    if (skip > 0) break;
                }
                if (!c.frameBuffered()) break;
                switch (c.readFrame(&closing)) {
                    .more => {},
                    .skip => |n| skip = n,
                    .done => |gone| {
                        reading = false;
                        peer_gone = gone;
                        c.hub.leaveAll(c);
                    },
                }
            }
            if (peer_gone) break;
            if (!reading and close_by != null) break; // the peer answered our close

            var now = nowNs(io);
            const idle_at = c.in.last_read_ns.load(.monotonic) + @as(i64, @intCast(idle_timeout.nanoseconds));
            if (now >= idle_at) {
                log.info("closing a connection idle for {d} s", .{@divTrunc(now - c.in.last_read_ns.load(.monotonic), std.time.ns_per_s)});
                failed = true;
                break;
            }
            var wake_at: i64 = @intCast(sender.wakeAt(c).raw.nanoseconds);
            if (close_by == null and now >= write_after and writable and (c.outbox.pending() or now >= wake_at)) {
                const got = c.outbox.takeReady(&batch, alone_batch_bytes);
                switch (sender.send(c, got)) {
                    .failed => {
                        failed = true;
                        break;
                    },
                    .abandoned => break,
                    .sent => |pause| if (pause.nanoseconds > 0) {
                        write_after = nowNs(io) + @as(i64, @intCast(pause.nanoseconds));
                    },
                }
                if (got.close_code) |code| {
                    const wait = c.sendClose(code) catch {
                        failed = true;
                        break;
                    };
                    if (!reading) break; // this was the answer to the peer's close
                    close_by = nowNs(io) + @as(i64, @intCast(wait.nanoseconds));
                }
                writable = false;
                now = nowNs(io);
                wake_at = @intCast(sender.wakeAt(c).raw.nanoseconds);
            }
            if (close_by) |t| if (now >= t) {
                failed = true;
                break;
            };

            // Sleep until the socket, a push or a deadline wakes us.
            var deadline = wake_at;
            var watch_writable = false;
            if (close_by) |t| {
                deadline = t;
            } else if (now < write_after) {
                if (c.outbox.pending() or !c.outbox.arm()) deadline = @min(deadline, write_after);
            } else if (c.outbox.pending() or now >= wake_at) {
                if (writable) continue; // queued since the look above
                watch_writable = true;
                deadline = idle_at;
            } else {
                if (!c.outbox.arm()) continue; // queued since the look above
            }
            var events: i16 = 0;
            if (reading) events |= linux.POLL.IN;
            if (watch_writable) events |= linux.POLL.OUT;
            var fds = [1]linux.pollfd{
                .{ .fd = if (events != 0) c.stream.socket.handle else -1, .events = events, .revents = 0 },
            };
            const wait_ns = @max(0, deadline - now);
            var timeout: linux.timespec = .{ .sec = @divFloor(wait_ns, std.time.ns_per_s), .nsec = @mod(wait_ns, std.time.ns_per_s) };
            // Only an armed outbox sends the signal; one left pending by an
            // earlier push ends this wait at once, which is harmless.
            const rc = linux.ppoll(&fds, fds.len, &timeout, &wait_mask);
            c.outbox.armed.store(false, .monotonic);
            if (linux.errno(rc) != .SUCCESS) continue; // EINTR: woken by a push
            const sock = fds[0].revents;
            if (sock & (linux.POLL.OUT | linux.POLL.ERR | linux.POLL.HUP) != 0) writable = true;
            if (reading and sock & (linux.POLL.IN | linux.POLL.ERR | linux.POLL.HUP) != 0) {
                c.ws.input.fillMore() catch {
                    reading = false;
                    peer_gone = true;
                    c.hub.leaveAll(c);
                };
            }
        }
        if (peer_gone or failed) c.cutTcp();
        c.hub.leaveAll(c);
        c.hub.unregister(c);
        c.outbox.close(io, c.gpa);
        c.stats.dec("connections_current");
    }

    /// Whether the read buffer holds a whole frame, so that `nextFrame` will
    /// not block: or at least as much of one as `nextFrame` needs to reject
    /// it, or a frame too big to fit with its header (read blocking).
    fn frameBuffered(c: *Client) bool {
        const b = c.ws.input.buffered();
        if (b.len < 2) return false;
        const h0: WebSocket.Header0 = @bitCast(b[0]);
        const h1: WebSocket.Header1 = @bitCast(b[1]);
        if (!h1.mask or h0.rsv1 != 0 or h0.rsv2 != 0 or h0.rsv3 != 0) return true;
        const ext: usize = switch (h1.payload_len) {
            .len16 => 2,
            .len64 => 8,
            else => 0,
        };
        const head = 2 + ext + 4;
        if (b.len < head) return false;
        const len: u64 = switch (h1.payload_len) {
            .len16 => std.mem.readInt(u16, b[2..4], .big),
            .len64 => std.mem.readInt(u64, b[2..10], .big),
            else => @intFromEnum(h1.payload_len),
        };
        if (len > protocol.max_message_bytes) return true; // oversize: the header is enough
        return b.len >= head + len or head + len > c.read_buffer.len;
    }
};

// Tests

const testing = std.testing;

fn testMessage(byte: u8) !*Message {
    const m = try Message.create(testing.allocator, .text, false, 1);
    m.bytes()[0] = byte;
    return m;
}

test "the outbox holds 256 messages and refuses the 257th" {
    const io = testing.io;
    var o: Outbox = .{};
    for (0..outbox_capacity) |i| {
        try testing.expectEqual(Outbox.Push.queued, o.push(io, try testMessage(@truncate(i))));
    }
    const extra = try testMessage(0);
    try testing.expectEqual(Outbox.Push.full, o.push(io, extra));
    extra.release(testing.allocator, 1);

    var out: [outbox_capacity]*Message = undefined;
    const got = o.take(io, null, &out);
    try testing.expectEqual(@as(usize, outbox_capacity), got.messages.len);
    for (got.messages, 0..) |m, i| {
        try testing.expectEqual(@as(u8, @truncate(i)), m.bytes()[0]);
        m.release(testing.allocator, 1);
    }
}

test "the outbox accepts again once the writer has drained it, in order" {
    const io = testing.io;
    var o: Outbox = .{};
    var out: [outbox_capacity]*Message = undefined;
    for (0..3) |round| {
        for (0..outbox_capacity - 1) |i| _ = o.push(io, try testMessage(@truncate(i + round)));
        const got = o.take(io, null, &out);
        try testing.expectEqual(@as(usize, outbox_capacity - 1), got.messages.len);
        for (got.messages, 0..) |m, i| {
            try testing.expectEqual(@as(u8, @truncate(i + round)), m.bytes()[0]);
            m.release(testing.allocator, 1);
        }
    }
}

test "an empty outbox with a deadline in the past returns nothing" {
    const io = testing.io;
    var o: Outbox = .{};
    var out: [outbox_capacity]*Message = undefined;
    const got = o.take(io, Io.Clock.Timestamp.now(io, .awake), &out);
    try testing.expectEqual(@as(usize, 0), got.messages.len);
    try testing.expectEqual(@as(?u16, null), got.close_code);
}

test "a close request wakes the writer and keeps the first code" {
    const io = testing.io;
    var o: Outbox = .{};
    o.requestClose(io, 1009);
    o.requestClose(io, 1001);
    var out: [outbox_capacity]*Message = undefined;
    try testing.expectEqual(@as(?u16, 1009), o.take(io, null, &out).close_code);
}

test "the one-thread model takes a byte budget at a time, and the close request with the last batch" {
    const io = testing.io;
    var o: Outbox = .{};
    for (0..3) |i| {
        const m = try Message.create(testing.allocator, .text, false, 1000);
        m.bytes()[0] = @intCast(i);
        _ = o.push(io, m);
    }
    o.requestClose(io, 1000);
    var out: [outbox_capacity]*Message = undefined;
    const first = o.takeReady(&out, 2100);
    try testing.expectEqual(@as(usize, 2), first.messages.len);
    try testing.expectEqual(@as(?u16, null), first.close_code);
    for (first.messages) |m| m.release(testing.allocator, 1);
    const second = o.takeReady(&out, 10);
    try testing.expectEqual(@as(usize, 1), second.messages.len);
    try testing.expectEqual(@as(u8, 2), second.messages[0].bytes()[0]);
    try testing.expectEqual(@as(?u16, 1000), second.close_code);
    for (second.messages) |m| m.release(testing.allocator, 1);
}

fn ignoreSignal(_: std.posix.SIG) callconv(.c) void {}

test "an armed outbox signals its thread on the next push, and only then" {
    const io = testing.io;
    const act: std.posix.Sigaction = .{ .handler = .{ .handler = ignoreSignal }, .mask = std.posix.sigemptyset(), .flags = 0 };
    var old_act: std.posix.Sigaction = undefined;
    std.posix.sigaction(wake_signal, &act, &old_act);
    defer std.posix.sigaction(wake_signal, &old_act, null);
    var block = linux.sigemptyset();
    linux.sigaddset(&block, wake_signal);
    var old_mask: linux.sigset_t = undefined;
    _ = linux.sigprocmask(linux.SIG.BLOCK, &block, &old_mask);
    defer _ = linux.sigprocmask(linux.SIG.SETMASK, &old_mask, null);
    var wait_mask = old_mask;
    linux.sigdelset(&wait_mask, wake_signal);
    var none: [0]linux.pollfd = .{};
    var zero: linux.timespec = .{ .sec = 0, .nsec = 0 };

    var o: Outbox = .{ .wake_tid = linux.gettid() };
    _ = o.push(io, try testMessage(1)); // not armed: no signal
    try testing.expectEqual(linux.E.SUCCESS, linux.errno(linux.ppoll(&none, 0, &zero, &wait_mask)));
    var out: [outbox_capacity]*Message = undefined;
    for (o.takeReady(&out, 1 << 20).messages) |m| m.release(testing.allocator, 1);

    try testing.expect(o.arm());
    _ = o.push(io, try testMessage(2));
    try testing.expect(!o.armed.load(.monotonic));
    try testing.expectEqual(linux.E.INTR, linux.errno(linux.ppoll(&none, 0, &zero, &wait_mask)));
    try testing.expect(!o.arm()); // something is queued: do not sleep
    o.close(io, testing.allocator);
}

test "a closed outbox refuses pushes and frees what was queued" {
    const io = testing.io;
    var o: Outbox = .{};
    _ = o.push(io, try testMessage(1));
    o.close(io, testing.allocator);
    const m = try testMessage(2);
    try testing.expectEqual(Outbox.Push.closed, o.push(io, m));
    m.release(testing.allocator, 1);
}

test "a shared message is freed by its last reference" {
    const m = try Message.print(testing.allocator, true, protocol.writePong, .{@as(?[]const u8, "12")});
    try testing.expectEqualStrings("{\"type\":\"pong\",\"ts\":12}", m.bytes());
    _ = m.refs.fetchAdd(2, .monotonic);
    m.release(testing.allocator, 2);
    m.release(testing.allocator, 1); // testing.allocator reports a leak if this did not free
}

test "four pushers and one writer: every message is taken once or refused as full, in each pusher's order" {
    const io = testing.io;
    const per_pusher = 20_000;
    const Pusher = struct {
        fn run(o: *Outbox, id: u8, full: *std.atomic.Value(u64)) void {
            for (0..per_pusher) |seq| {
                const m = Message.create(testing.allocator, .text, false, 5) catch unreachable;
                m.bytes()[0] = id;
                std.mem.writeInt(u32, m.bytes()[1..5], @intCast(seq), .little);
                switch (o.push(testing.io, m)) {
                    .queued => {},
                    .full, .closed => {
                        _ = full.fetchAdd(1, .monotonic);
                        m.release(testing.allocator, 1);
                    },
                }
            }
        }
    };
    var o: Outbox = .{};
    var full: std.atomic.Value(u64) = .init(0);
    var threads: [4]std.Thread = undefined;
    for (&threads, 0..) |*t, i| t.* = try std.Thread.spawn(.{}, Pusher.run, .{ &o, @as(u8, @intCast(i)), &full });

    var taken: u64 = 0;
    var next: [4]u32 = @splat(0);
    var out: [outbox_capacity]*Message = undefined;
    while (taken + full.load(.monotonic) < 4 * per_pusher) {
        const soon = Io.Clock.Timestamp.fromNow(io, .{ .raw = .fromMilliseconds(1), .clock = .awake });
        for (o.take(io, soon, &out).messages) |m| {
            const id = m.bytes()[0];
            const seq = std.mem.readInt(u32, m.bytes()[1..5], .little);
            try testing.expect(seq >= next[id]);
            next[id] = seq + 1;
            taken += 1;
            m.release(testing.allocator, 1);
        }
    }
    for (threads) |t| t.join();
    o.close(io, testing.allocator);
    try testing.expectEqual(@as(u64, 4 * per_pusher), taken + full.load(.monotonic));
    try testing.expect(taken > 0);
}
