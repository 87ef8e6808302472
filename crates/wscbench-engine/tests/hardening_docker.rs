//! Against the real engine (ignored by default; `cargo test -- --ignored`): a FROM-scratch
//! server image still starts, binds 127.0.0.1 and answers `/health` and `/stats` under the
//! default hardening, and the container is removed afterwards.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use wscbench_engine::catalog;
use wscbench_engine::catalog::{images, local};
use wscbench_engine::docker::RUN_LABEL;
use wscbench_engine::docker::daemon::DockerEngine;
use wscbench_engine::docker::{ContainerSpec, Engine, Hardening};
use wscbench_engine::net::http;

#[tokio::test]
#[ignore = "needs the Docker engine and every server's toolchain"]
async fn every_scratch_server_serves_under_the_default_hardening() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let engine = DockerEngine::connect().await.unwrap();
    for server in &catalog::discover(&root.join("servers")).unwrap() {
        serves_hardened(&engine, server).await;
    }
}

async fn serves_hardened(engine: &DockerEngine, server: &catalog::Server) {
    let image = images::build_server_image(engine, server, false)
        .await
        .unwrap();
    let port = local::free_port().unwrap();
    let spec = ContainerSpec {
        name: format!(
            "wscbench-hardening-test-{}-{}",
            std::process::id(),
            server.tag
        ),
        image: image.tag.clone(),
        cmd: ["--host", "127.0.0.1", "--port", &port.to_string()]
            .map(String::from)
            .to_vec(),
        labels: HashMap::from([(RUN_LABEL.to_string(), "hardening-test".to_string())]),
        memory_bytes: Some(512 << 20),
        ..Default::default()
    };
    assert_eq!(spec.hardening, Hardening::default());
    let id = engine.start(&spec).await.unwrap();
    let addr = format!("127.0.0.1:{port}");
    let started = Instant::now();
    let mut health = None;
    while started.elapsed() < Duration::from_secs(10) {
        if let Ok(r) = http::get(&addr, "/health", Duration::from_secs(1)).await
            && r.status == 200
        {
            health = Some(started.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let stats = http::get(&addr, "/stats", Duration::from_secs(1)).await;
    let logs = engine.logs(&id, 20).await.unwrap_or_default();
    let state = engine.state(&id).await;
    engine.remove(&id).await.unwrap();
    assert!(
        health.is_some(),
        "{}: no /health under hardening {:?}; state {state:?}; logs:\n{logs}",
        server.id,
        spec.hardening.describe()
    );
    assert_eq!(stats.map(|r| r.status).ok(), Some(200));
}
