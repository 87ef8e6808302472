//! Builds `wsc-zig`, the profile-B chat server (Zig standard library only).
//! `zig build test` runs the unit tests of every module, the shared chat
//! core's (../../shared/zig/chat, a path dependency in build.zig.zon) included.
const std = @import("std");

pub fn build(b: *std.Build) void {
    const target = b.standardTargetOptions(.{});
    const optimize = b.standardOptimizeOption(.{});
    const chat = b.dependency("chat", .{ .target = target, .optimize = optimize }).module("chat");

    const exe = b.addExecutable(.{
        .name = "wsc-zig",
        .root_module = b.createModule(.{
            .root_source_file = b.path("src/main.zig"),
            .target = target,
            .optimize = optimize,
            .imports = &.{.{ .name = "chat", .module = chat }},
        }),
    });
    b.installArtifact(exe);

    const run_cmd = b.addRunArtifact(exe);
    run_cmd.step.dependOn(b.getInstallStep());
    run_cmd.addPassthruArgs();
    b.step("run", "Run the server").dependOn(&run_cmd.step);

    const test_step = b.step("test", "Run the unit tests, the shared chat core's included");
    const tests = b.addTest(.{ .root_module = exe.root_module });
    test_step.dependOn(&b.addRunArtifact(tests).step);
    const chat_tests = b.addTest(.{ .root_module = chat });
    test_step.dependOn(&b.addRunArtifact(chat_tests).step);
}
