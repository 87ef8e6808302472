//! The runtime-image assembly against the real engine: `extra/node-ws`'s image, made from the
//! host's Node.js, its libraries and the server's files, starts under the hardening every
//! server gets and answers `/health`. Ignored by a plain `cargo test`; `scripts/test` runs it
//! with `--ignored`.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use assert_cmd::prelude::*;
use common::wscbench;
use wscbench_engine::docker::Hardening;

/// Removes the container however the test ends.
struct Container(String);

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("docker").args(["rm", "-f", &self.0]).output();
    }
}

#[test]
#[ignore = "needs Docker and Node.js with servers/extra/node-ws's packages: run by scripts/test"]
fn the_node_image_assembled_from_the_host_runtime_starts_hardened_and_answers_health() {
    wscbench()
        .args(["build", "--server", "extra/node-ws"])
        .assert()
        .success();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let name = format!("wscbench-test-runtime-{}", std::process::id());
    let container = Container(name.clone());
    let mut args: Vec<String> = [
        "run",
        "-d",
        "--name",
        &name,
        "--label",
        "wscbench=1",
        "--network",
        "host",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for flag in Hardening::default().describe() {
        args.extend(flag.split(' ').map(str::to_string));
    }
    args.extend(["wscx-node-ws", "--host", "127.0.0.1", "--port"].map(str::to_string));
    args.push(port.to_string());
    let started = Command::new("docker").args(&args).output().unwrap();
    assert!(
        started.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&started.stderr)
    );

    let deadline = Instant::now() + Duration::from_secs(15);
    let mut body = String::new();
    while Instant::now() < deadline {
        if let Ok(out) = Command::new("curl")
            .args(["-s", "-m", "1", &format!("http://127.0.0.1:{port}/health")])
            .output()
        {
            body = String::from_utf8_lossy(&out.stdout).into_owned();
            if body == "ok" {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let logs = Command::new("docker")
        .args(["logs", &container.0])
        .output()
        .unwrap();
    assert_eq!(
        body,
        "ok",
        "logs: {}",
        String::from_utf8_lossy(&logs.stderr)
    );
    let user = Command::new("docker")
        .args([
            "inspect",
            "-f",
            "{{.Config.User}} {{.HostConfig.ReadonlyRootfs}}",
            &container.0,
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&user.stdout).trim(),
        "65534:65534 true"
    );
}
