//! Builds `wsca-zig`: the chat server in Zig over libwebsockets 4.1 (C),
//! linked fully statically against the system's glibc so the binary runs as
//! PID 1 in a FROM scratch image.
//!
//!   zig build -Doptimize=ReleaseFast   -> zig-out/bin/wsca-zig
//!   zig build test                     -> unit tests (no libwebsockets needed),
//!                                         the shared chat core's included
//!
//! Protocol, token bucket and stats come from the chat core shared with
//! profile-b/zig (../../shared/zig/chat, a path dependency in build.zig.zon).

const std = @import("std");

/// Static archives the binary links, in link order: libwebsockets and what
/// Debian's build of it (4.1.6) references: OpenSSL, libcap and zlib.
const static_libs = [_][]const u8{ "websockets", "ssl", "crypto", "cap", "z" };

/// Where Debian/Ubuntu (and most others) keep `lib*.a`; `-Dlib-dir` goes first.
const default_lib_dirs = [_][]const u8{
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
};

pub fn build(b: *std.Build) void {
    const target = b.standardTargetOptions(.{});
    const optimize = b.standardOptimizeOption(.{});
    const lib_dir = b.option([]const u8, "lib-dir", "Directory searched first for the static libraries");
    const chat = b.dependency("chat", .{ .target = target, .optimize = optimize }).module("chat");

    // libwebsockets.h, translated to Zig (`@cImport` is gone in Zig 0.17).
    const lws = b.addTranslateC(.{
        .root_source_file = b.path("src/lws.h"),
        .target = target,
        .optimize = optimize,
    });

    const exe_mod = b.createModule(.{
        .root_source_file = b.path("src/main.zig"),
        .target = target,
        .optimize = optimize,
        .link_libc = true,
        .strip = optimize != .debug,
        .imports = &.{.{ .name = "chat", .module = chat }},
    });
    exe_mod.addImport("lws", lws.createModule());
    // Archives are named by path rather than with linkSystemLibrary: with
    // `-static`, Zig 0.17 still resolves `-lwebsockets` to the .so and refuses
    // to link it, so the static search is done here.
    for (static_libs) |name| {
        exe_mod.addObjectFile(.{ .cwd_relative = findStaticLib(b, lib_dir, name) });
    }

    const exe = b.addExecutable(.{
        .name = "wsca-zig",
        .root_module = exe_mod,
        .linkage = .static,
    });
    b.installArtifact(exe);

    const tests_mod = b.createModule(.{
        .root_source_file = b.path("src/tests.zig"),
        .target = target,
        .optimize = optimize,
        .imports = &.{.{ .name = "chat", .module = chat }},
    });
    // The hub's tests reach client.zig, which imports "lws": they get a fake
    // of the one call they make (lws_fake.zig), so nothing links libwebsockets.
    tests_mod.addImport("lws", b.createModule(.{ .root_source_file = b.path("src/lws_fake.zig") }));
    const test_step = b.step("test", "Run the unit tests, the shared chat core's included");
    const tests = b.addTest(.{ .root_module = tests_mod });
    test_step.dependOn(&b.addRunArtifact(tests).step);
    const chat_tests = b.addTest(.{ .root_module = chat });
    test_step.dependOn(&b.addRunArtifact(chat_tests).step);
}

fn findStaticLib(b: *std.Build, first: ?[]const u8, name: []const u8) []const u8 {
    const file = b.fmt("lib{s}.a", .{name});
    var dirs: [default_lib_dirs.len + 1][]const u8 = undefined;
    var n: usize = 0;
    if (first) |d| {
        dirs[n] = d;
        n += 1;
    }
    for (default_lib_dirs) |d| {
        dirs[n] = d;
        n += 1;
    }
    for (dirs[0..n]) |dir| {
        const path = b.pathJoin(&.{ dir, file });
        std.Io.Dir.cwd().access(b.graph.io, path, .{}) catch continue;
        return path;
    }
    std.debug.panic("{s} not found (install libwebsockets-dev, libssl-dev, libcap-dev, zlib1g-dev, or pass -Dlib-dir=DIR)", .{file});
}
