//! Test only: what `zig build test` gives `@import("lws")` in place of the
//! translated libwebsockets.h. The hub reaches libwebsockets only through
//! `Client.enqueue` asking for a writable callback (and a Client holds a
//! timer), so this is all the hub's tests need, and they build and run
//! without libwebsockets.

/// libwebsockets' LWS_PRE on 64-bit targets (client.zig checks the headroom against it).
pub const LWS_PRE = 16;

pub const struct_lws = opaque {};

/// Only a field of Client in the tests; never scheduled.
pub const lws_sorted_usec_list_t = struct {};

/// Asks for nothing: the tests read the outboxes, and count the hubs' wake-ups
/// through `Server.wake`.
pub fn lws_callback_on_writable(wsi: ?*struct_lws) c_int {
    _ = wsi;
    return 0;
}
