//! `zig build test`: the unit tests of the parts that do not touch
//! libwebsockets, so they build and run without linking it (the hub's
//! reach into it, a writable request, goes to lws_fake.zig).

test {
    _ = @import("outbox.zig");
    _ = @import("frames.zig");
    _ = @import("pacer.zig");
    _ = @import("hub.zig");
}
