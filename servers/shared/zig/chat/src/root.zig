//! The Zig servers' chat core, imported as the module "chat": everything of
//! docs/protocol.md that no WebSocket stack decides. profile-a/zig
//! (libwebsockets) and profile-b/zig (std) keep their own hub and client,
//! because one runs on a single event-loop thread and the other on a thread
//! per connection; what they both need is here.
pub const protocol = @import("protocol.zig");
pub const close = @import("close.zig");
pub const TokenBucket = @import("limiter.zig").TokenBucket;
pub const Stats = @import("stats.zig").Stats;
pub const frameBytes = @import("stats.zig").frameBytes;

test {
    _ = protocol;
    _ = close;
    _ = @import("limiter.zig");
    _ = @import("stats.zig");
}
