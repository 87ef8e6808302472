//! The Zig servers' chat core as a package: the module "chat" (src/root.zig),
//! which profile-a/zig and profile-b/zig take as a path dependency in their
//! build.zig.zon. Each server's `zig build test` runs this module's tests too;
//! `zig build test` here runs them alone.
const std = @import("std");

pub fn build(b: *std.Build) void {
    const target = b.standardTargetOptions(.{});
    const optimize = b.standardOptimizeOption(.{});

    const chat = b.addModule("chat", .{
        .root_source_file = b.path("src/root.zig"),
        .target = target,
        .optimize = optimize,
    });

    const tests = b.addTest(.{ .root_module = chat });
    b.step("test", "Run the unit tests").dependOn(&b.addRunArtifact(tests).step);
}
