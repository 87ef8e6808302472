//! `zig build test`: the unit tests of the parts that do not touch
//! libwebsockets, so they build and run without linking it.

test {
    _ = @import("protocol.zig");
    _ = @import("limiter.zig");
    _ = @import("outbox.zig");
    _ = @import("stats.zig");
}
