//! How connections read and write, as the command line sets it (main.zig):
//! one value the server holds (`hub.Server.settings`) and each connection
//! reads when it is established (client.zig).
const std = @import("std");

pub const Settings = struct {
    /// Text must be UTF-8 (RFC 6455 section 8.1): libwebsockets checks it
    /// (LWS_SERVER_OPTION_VALIDATE_UTF8, main.zig), and client.zig checks
    /// what it misses over permessage-deflate. `--no-utf8-check` clears it.
    check_utf8: bool = true,
    /// Whether onWritable corks a batch of several frames (`--no-write-batch`
    /// clears it).
    cork_batches: bool = true,
    /// Whether writers frame their batches themselves (`--frame-batch`).
    frame_batch: bool = false,
    /// A busy connection's writer pauses this long between batches
    /// (pacer.zig); `--write-coalesce-ms`, 0 (the default, see main.zig)
    /// turns pacing off.
    write_coalesce_ns: u64 = 0,
    /// ... doubling up to this while its batches keep holding several
    /// messages (`--write-coalesce-max-ms`).
    write_coalesce_max_ns: u64 = 20 * std.time.ns_per_ms,
    /// Messages a second to one connection from which it is paced at all
    /// (`--flood-rate`).
    flood_rate: u64 = 1000,
};
