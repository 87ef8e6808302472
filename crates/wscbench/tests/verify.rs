//! `wscbench verify` end to end against real servers: a correct one passes, a broken one
//! fails the named check, and nothing listening is a clear failure rather than a panic.

use std::process::Command;

mod common;

use assert_cmd::prelude::*;
use common::{root, wscbench};
use predicates::prelude::*;
use serde_json::Value;

fn checks(output: &[u8]) -> Vec<(String, bool)> {
    let reports: Value = serde_json::from_slice(output).expect("verify --json prints JSON");
    reports[0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["passed"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn verify_fails_the_chat_check_of_a_server_that_echoes_chat_to_its_sender() {
    let dir = root().join("servers/profile-b/go");
    let binary = std::env::temp_dir().join(format!("wsc-go-fault-echo-{}", std::process::id()));
    let built = Command::new("go")
        .args(["build", "-tags", "fault_echo", "-o"])
        .arg(&binary)
        .arg(".")
        .env("CGO_ENABLED", "0")
        .current_dir(&dir)
        .status()
        .unwrap_or_else(|e| panic!("this test builds servers/profile-b/go and needs the `go` toolchain on PATH ({e}); scripts/setup's machine has it"));
    assert!(built.success(), "building the fault_echo variant");

    let output = wscbench()
        .args(["verify", "--server", "profile-b/go", "--json", "--binary"])
        .arg(&binary)
        .args([
            "--only",
            "health",
            "--only",
            "chat_broadcast",
            "--only",
            "join_ack",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&binary);
    assert_eq!(output.status.code(), Some(1), "a failed check exits 1");
    let checks = checks(&output.stdout);
    assert_eq!(
        checks,
        [
            ("health".to_string(), true),
            ("join_ack".to_string(), true),
            ("chat_broadcast".to_string(), false)
        ]
    );
}

#[test]
fn verify_against_nothing_listening_fails_every_check_without_panicking() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    wscbench()
        .args([
            "verify",
            "--url",
            &format!("ws://127.0.0.1:{port}/ws"),
            "--only",
            "health",
            "--only",
            "ping_pong",
        ])
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("FAIL health")
                .and(predicate::str::contains("0 passed, 2 failed")),
        );
}

#[test]
fn verify_refuses_a_url_that_is_not_ws() {
    wscbench()
        .args(["verify", "--url", "http://127.0.0.1:80/ws"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a ws:// URL"));
}

#[test]
fn verify_refuses_an_unknown_check_name_and_lists_the_real_ones() {
    wscbench()
        .args(["verify", "--url", "ws://127.0.0.1:1/ws", "--only", "chatt"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("unknown check \"chatt\"")
                .and(predicate::str::contains("chat_broadcast")),
        );
}

#[test]
fn verify_conformance_against_nothing_listening_fails_the_first_case_and_runs_no_other() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    wscbench()
        .args([
            "verify",
            "--url",
            &format!("ws://127.0.0.1:{port}/ws"),
            "--conformance",
            "--only",
            "ping_empty",
            "--only",
            "close_1000_answered",
        ])
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("FAILED     ping_empty")
                .and(predicate::str::contains("NOT RUN    close_1000_answered"))
                .and(predicate::str::contains("RFC 6455 conformance"))
                .and(predicate::str::contains("passed, ").not()),
        );
}

#[test]
fn verify_refuses_an_unknown_conformance_case_and_lists_the_real_ones() {
    wscbench()
        .args([
            "verify",
            "--url",
            "ws://127.0.0.1:1/ws",
            "--conformance",
            "--only",
            "rsv9",
        ])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("unknown check \"rsv9\"").and(predicate::str::contains(
                "the conformance cases are: chat_7bit_length",
            )),
        );
}

#[test]
fn verify_of_an_unknown_server_names_the_known_ones() {
    wscbench()
        .args(["verify", "--server", "profile-c/cobol"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("profile-c/cobol")
                .and(predicate::str::contains("profile-b/go")),
        );
}

#[test]
fn list_shows_both_go_servers() {
    wscbench()
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("profile-a/go").and(predicate::str::contains("wsca-go")))
        .stdout(predicate::str::contains("profile-b/go").and(predicate::str::contains("wsc-go")));
}
