//! Builds `wsca-zig`: the chat server in Zig over libwebsockets 4.1 (C),
//! linked fully statically against the system's glibc so the binary runs as
//! PID 1 in a FROM scratch image. Two links of the same source:
//!
//!   zig-out/bin/wsca-zig              libwebsockets built from Debian's source
//!                                     package with LWS_MAX_SMP 8 by
//!                                     scripts/build-libwebsockets (one service
//!                                     thread per CPU); the server's default
//!   zig-out/bin/wsca-zig-debian-lws   Debian's libwebsockets-dev (LWS_MAX_SMP 1:
//!                                     one service thread); variant `debian-lws`
//!
//!   zig build -Doptimize=ReleaseFast   -> both binaries
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
    const smp_dir = b.option([]const u8, "lws-smp-dir", "libwebsockets built with LWS_MAX_SMP > 1 (include/, lib/) [default: $WSCBENCH_CACHE/libwebsockets/smp]") orelse defaultSmpDir(b);
    const chat = b.dependency("chat", .{ .target = target, .optimize = optimize }).module("chat");

    // Debian's build: headers from /usr/include, archives from the system.
    addServer(b, "wsca-zig-debian-lws", null, lib_dir, chat, target, optimize);
    // The multi-threaded build: its own lws_config.h (LWS_MAX_SMP 8) and archive.
    const smp_lib = b.pathJoin(&.{ smp_dir, "lib" });
    // Missing, it fails the build (not `zig build test`, which needs no libwebsockets).
    if (std.Io.Dir.cwd().access(b.graph.io, b.pathJoin(&.{ smp_lib, "libwebsockets.a" }), .{})) |_| {
        addServer(b, "wsca-zig", smp_dir, smp_lib, chat, target, optimize);
    } else |_| {
        const fail = b.addFail(b.fmt("{s}/libwebsockets.a not found: scripts/setup builds it (scripts/build-libwebsockets), or pass -Dlws-smp-dir=DIR", .{smp_lib}));
        b.getInstallStep().dependOn(&fail.step);
    }

    const tests_mod = b.createModule(.{
        .root_source_file = b.path("src/tests.zig"),
        .target = target,
        .optimize = optimize,
        // The hubs' inbox lock is a pthread mutex.
        .link_libc = true,
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

/// One link of the server: `lws_prefix` (its include/) and `first_lib_dir` go
/// before the system's headers and archives.
fn addServer(
    b: *std.Build,
    name: []const u8,
    lws_prefix: ?[]const u8,
    first_lib_dir: ?[]const u8,
    chat: *std.Build.Module,
    target: std.Build.ResolvedTarget,
    optimize: std.builtin.OptimizeMode,
) void {
    // libwebsockets.h, translated to Zig (`@cImport` is gone in Zig 0.17).
    const lws = b.addTranslateC(.{
        .root_source_file = b.path("src/lws.h"),
        .target = target,
        .optimize = optimize,
    });
    if (lws_prefix) |p| lws.addIncludePath(.{ .cwd_relative = b.pathJoin(&.{ p, "include" }) });

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
    for (static_libs) |lib| {
        exe_mod.addObjectFile(.{ .cwd_relative = findStaticLib(b, first_lib_dir, lib) });
    }
    const exe = b.addExecutable(.{
        .name = name,
        .root_module = exe_mod,
        .linkage = .static,
    });
    b.installArtifact(exe);
}

/// Where scripts/build-libwebsockets leaves its build: as scripts/env says.
fn defaultSmpDir(b: *std.Build) []const u8 {
    const env = &b.graph.environ_map;
    if (env.get("WSCBENCH_CACHE")) |cache| return b.pathJoin(&.{ cache, "libwebsockets", "smp" });
    if (env.get("XDG_CACHE_HOME")) |xdg| return b.pathJoin(&.{ xdg, "wscbench", "libwebsockets", "smp" });
    const home = env.get("HOME") orelse "/root";
    return b.pathJoin(&.{ home, ".cache", "wscbench", "libwebsockets", "smp" });
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
