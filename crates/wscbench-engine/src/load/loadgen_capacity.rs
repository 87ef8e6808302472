//! The load generator's own limit: k6 on one pinned core receiving from the blaster (a
//! server that only sends prepared chat frames) on another, for one load path at a time.
//! The figure is chats received per CPU-second of the k6 process, so the sender need not
//! saturate k6 for the number to mean something. Over `wss` the blaster serves TLS with
//! the run's certificate and over the deflate transports it sends compressed frames, so the
//! figure is what k6 receives per CPU-second on that transport: the load-generator verdict
//! of a wss or deflate point compares against its own transport's figure.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use wscbench_results::{LoadPath, Transport};

use crate::catalog::local;
use crate::docker::{ContainerSpec, Engine, EngineError};
use crate::docker::{RUN_LABEL, nano_cpus};
use crate::load::k6;
use crate::load::native::NativeReport;

/// What to measure.
#[derive(Debug, Clone)]
pub struct CapacitySpec {
    /// An id for this measurement's containers and output folder.
    pub run_id: String,
    /// The k6 image (with the chat extension).
    pub k6_image: String,
    /// The blaster image.
    pub blaster_image: String,
    /// Host folder of the k6 scripts.
    pub scenarios_dir: PathBuf,
    /// Where each path's raw k6 output goes (`<out_dir>/<path>/`).
    pub out_dir: PathBuf,
    /// Connections k6 holds.
    pub clients: u32,
    /// How long k6 receives, in seconds.
    pub seconds: u32,
    /// The blaster's total frame rate against the native path (0 = as fast as it can).
    pub native_rate_per_s: f64,
    /// The blaster's total frame rate against the js path (0 = as fast as it can), bounded so
    /// that k6's unbounded inbound queue stays small.
    pub js_rate_per_s: f64,
    /// Cores for the blaster.
    pub cpuset_blaster: String,
    /// Cores for k6.
    pub cpuset_loadgen: String,
    /// Memory limit of k6.
    pub loadgen_memory_bytes: u64,
    /// How k6 reaches the blaster.
    pub transport: Transport,
    /// The certificate the blaster serves wss with (needed for the TLS transports).
    pub tls: Option<std::sync::Arc<crate::net::tls::RunCert>>,
}

impl CapacitySpec {
    /// The certificate of a TLS transport, or `None` in cleartext.
    fn cert(&self) -> Option<&crate::net::tls::RunCert> {
        self.tls.as_deref().filter(|_| self.transport.is_tls())
    }

    /// `native` or `native-wss+deflate`: a folder and container-name part per path and
    /// transport (`+` becomes `-` in container names).
    fn label(&self, path: LoadPath) -> String {
        match self.transport {
            t if t.is_ws() => path.to_string(),
            t => format!("{path}-{t}"),
        }
    }
}

/// What one load path received, and what it cost.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PathCapacity {
    /// The load path.
    pub load_path: LoadPath,
    /// How k6 reached the blaster.
    pub transport: Transport,
    /// Connections held.
    pub clients: u32,
    /// The blaster's rate limit (0 = none).
    pub sender_rate_limit_per_s: f64,
    /// Frames the blaster wrote, per second of its run (from its exit line).
    pub sender_frames_per_s: Option<f64>,
    /// Chats k6 counted as received.
    pub received: u64,
    /// Received per second of k6's run.
    pub received_per_s: f64,
    /// CPU time of the k6 process (getrusage, from the native report), in seconds.
    pub loadgen_cpu_s: f64,
    /// The same from docker stats (per-second percentages integrated), in seconds.
    pub loadgen_cpu_docker_s: f64,
    /// The figure: chats received per CPU-second of k6.
    pub received_per_cpu_s: f64,
    /// Peak memory of the k6 container, in bytes.
    pub loadgen_peak_mem_bytes: u64,
}

/// The file, in the set-up's cache, where `wscbench loadgen-capacity` keeps what it last
/// measured on each load path and transport, so `run` can refuse a load it knows k6 cannot
/// receive.
pub const SAVED_FILE: &str = "loadgen-capacity.json";

/// The measurements kept in [`SAVED_FILE`]: the latest of each load path and transport.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Saved {
    /// The measurements, one per load path and transport.
    pub paths: Vec<SavedPath>,
}

/// One kept measurement.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedPath {
    /// When it was measured (UTC, `YYYYMMDD-HHMMSS` as run ids read).
    pub measured_at: String,
    /// What was measured.
    pub capacity: PathCapacity,
}

impl Saved {
    /// Keeps `capacity` (measured at `at`) in place of an earlier one of its path and
    /// transport.
    pub fn keep(&mut self, capacity: PathCapacity, at: &str) {
        self.paths.retain(|p| {
            (p.capacity.load_path, p.capacity.transport) != (capacity.load_path, capacity.transport)
        });
        self.paths.push(SavedPath {
            measured_at: at.to_string(),
            capacity,
        });
    }

    /// The most chats per second k6 can receive on `path` over `transport` with `cores`
    /// whole cores to itself (its measured chats per CPU-second times the cores), with the
    /// measurement. `None` when that path and transport were never measured.
    pub fn ceiling(
        &self,
        path: LoadPath,
        transport: Transport,
        cores: f64,
    ) -> Option<(f64, &SavedPath)> {
        let saved = self
            .paths
            .iter()
            .find(|p| p.capacity.load_path == path && p.capacity.transport == transport)?;
        Some((saved.capacity.received_per_cpu_s * cores, saved))
    }
}

/// The offered loads (deliveries per second, each one chat k6 receives) above `ceiling`.
pub fn unreachable(levels: &[f64], ceiling: f64) -> Vec<f64> {
    levels.iter().copied().filter(|&l| l > ceiling).collect()
}

/// Why a measurement failed.
#[derive(Debug, thiserror::Error)]
pub enum CapacityError {
    /// A container operation failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The blaster never answered /health.
    #[error("the blaster did not answer /health within 10 s")]
    BlasterNotHealthy,
    /// k6 ran far past its time.
    #[error("k6 did not finish within {0} s")]
    TimedOut(u64),
    /// k6 left no usable output.
    #[error("k6 left no usable output in {}: {detail}", dir.display())]
    Output {
        /// The folder.
        dir: PathBuf,
        /// What was missing.
        detail: String,
    },
}

impl CapacityError {
    /// An engine error keeps its class; a blaster or k6 that misbehaves is a failure.
    pub fn class(&self) -> crate::ErrorClass {
        match self {
            Self::Engine(e) => e.class(),
            Self::BlasterNotHealthy | Self::TimedOut(_) | Self::Output { .. } => {
                crate::ErrorClass::Failure
            }
        }
    }
}

/// Measures one load path. Every container it starts is removed, whatever happens.
pub async fn measure<E: Engine>(
    engine: &E,
    spec: &CapacitySpec,
    path: LoadPath,
) -> Result<PathCapacity, CapacityError> {
    let mut started = Vec::new();
    let result = measure_inner(engine, spec, path, &mut started).await;
    for id in started {
        let _ = engine.remove(&id).await;
    }
    result
}

async fn measure_inner<E: Engine>(
    engine: &E,
    spec: &CapacitySpec,
    path: LoadPath,
    started: &mut Vec<String>,
) -> Result<PathCapacity, CapacityError> {
    let rate = match path {
        LoadPath::Native => spec.native_rate_per_s,
        LoadPath::Js => spec.js_rate_per_s,
    };
    let (blaster, addr) = start_blaster(engine, spec, path, rate).await?;
    started.push(blaster.clone());
    let out_dir = spec.out_dir.join(spec.label(path));
    let k6 = start_k6(engine, spec, path, &addr, &out_dir).await?;
    started.push(k6.clone());
    let followed = follow(engine, &k6, spec.seconds).await?;
    let _ = engine.stop(&blaster, Duration::from_secs(2)).await;
    let blaster_logs = engine.logs(&blaster, 5).await.unwrap_or_default();

    let (received, loadgen_cpu_s) = read_output(&out_dir, path)?;
    Ok(PathCapacity {
        load_path: path,
        transport: spec.transport,
        clients: spec.clients,
        sender_rate_limit_per_s: rate,
        sender_frames_per_s: blaster_frames(&blaster_logs)
            .map(|frames| frames as f64 / followed.seconds.max(0.001)),
        received,
        received_per_s: received as f64 / spec.seconds.max(1) as f64,
        loadgen_cpu_s,
        loadgen_cpu_docker_s: followed.cpu_s,
        received_per_cpu_s: if loadgen_cpu_s > 0.0 {
            received as f64 / loadgen_cpu_s
        } else {
            0.0
        },
        loadgen_peak_mem_bytes: followed.peak_mem_bytes,
    })
}

fn labels(spec: &CapacitySpec, role: &str) -> HashMap<String, String> {
    HashMap::from([
        (RUN_LABEL.to_string(), spec.run_id.clone()),
        ("wscbench.role".to_string(), role.to_string()),
    ])
}

/// The blaster on its core, answering `/health`; returns its container and address.
async fn start_blaster<E: Engine>(
    engine: &E,
    spec: &CapacitySpec,
    path: LoadPath,
    rate: f64,
) -> Result<(String, String), CapacityError> {
    let port = local::free_port().map_err(|e| EngineError::Unreachable {
        endpoint: "127.0.0.1".into(),
        reason: e.to_string(),
    })?;
    let mut cmd: Vec<String> = vec![
        "--host".into(),
        "127.0.0.1".into(),
        "--port".into(),
        port.to_string(),
        "--rate".into(),
        rate.to_string(),
    ];
    let mut binds = Vec::new();
    if let Some(cert) = spec.cert() {
        cmd.extend(cert.server_args());
        binds.push(cert.bind());
    }
    if spec.transport.is_deflate() {
        cmd.push("--deflate".into());
    }
    let id = engine
        .start(&ContainerSpec {
            name: format!(
                "wscbench-{}-blaster-{}",
                spec.run_id,
                spec.label(path).replace('+', "-")
            ),
            image: spec.blaster_image.clone(),
            cmd,
            binds,
            labels: labels(spec, "blaster"),
            nano_cpus: Some(nano_cpus(1.0)),
            cpuset: Some(spec.cpuset_blaster.clone()),
            ..Default::default()
        })
        .await?;
    let addr = format!("127.0.0.1:{port}");
    let tls = spec.cert().map(|c| c.client_config());
    if crate::net::http::wait_healthy_over(
        &addr,
        tls.as_ref(),
        Duration::from_secs(10),
        async || None::<()>,
    )
    .await
    .is_err()
    {
        let _ = engine.remove(&id).await;
        return Err(CapacityError::BlasterNotHealthy);
    }
    Ok((id, addr))
}

/// k6 on its core, running `loadgen-capacity.js` against the blaster.
async fn start_k6<E: Engine>(
    engine: &E,
    spec: &CapacitySpec,
    path: LoadPath,
    addr: &str,
    out_dir: &std::path::Path,
) -> Result<String, CapacityError> {
    let _ = std::fs::remove_dir_all(out_dir);
    std::fs::create_dir_all(out_dir).map_err(|e| CapacityError::Output {
        dir: out_dir.to_owned(),
        detail: e.to_string(),
    })?;
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(out_dir, std::fs::Permissions::from_mode(0o777));
    }
    let out = std::path::absolute(out_dir).unwrap_or(out_dir.to_owned());
    let scheme = if spec.cert().is_some() { "wss" } else { "ws" };
    let mut env: Vec<String> = vec![
        "K6_NO_USAGE_REPORT=true".into(),
        "K6_AUTO_EXTENSION_RESOLUTION=false".into(),
        format!("WS_URL={scheme}://{addr}/ws"),
        format!("LOADGEN={path}"),
        format!("CLIENTS={}", spec.clients),
        format!("SECONDS={}", spec.seconds),
        "SUMMARY_PATH=/out/summary.json".into(),
        "NATIVE_PATH=/out/native.json".into(),
    ];
    let mut binds = vec![
        format!("{}:/scenarios:ro", spec.scenarios_dir.display()),
        format!("{}:/out", out.display()),
    ];
    if let Some(cert) = spec.cert() {
        env.push(format!(
            "TLS_CA_FILE={}/{}",
            crate::net::tls::CONTAINER_DIR,
            crate::net::tls::CERT_FILE
        ));
        binds.push(cert.bind());
    }
    if spec.transport.is_deflate() {
        env.push("DEFLATE=1".into());
    }
    Ok(engine
        .start(&ContainerSpec {
            name: format!(
                "wscbench-{}-k6-{}",
                spec.run_id,
                spec.label(path).replace('+', "-")
            ),
            image: spec.k6_image.clone(),
            cmd: [
                "run",
                "--quiet",
                "--no-color",
                "--no-usage-report",
                "/scenarios/loadgen-capacity.js",
            ]
            .map(String::from)
            .to_vec(),
            env,
            binds,
            labels: labels(spec, "loadgen"),
            memory_bytes: Some(spec.loadgen_memory_bytes as i64),
            cpuset: Some(spec.cpuset_loadgen.clone()),
            ..Default::default()
        })
        .await?)
}

/// What docker stats said of k6 until it exited.
struct Followed {
    seconds: f64,
    cpu_s: f64,
    peak_mem_bytes: u64,
}

/// Follows k6's usage until it exits, integrating CPU as the runner does.
async fn follow<E: Engine>(engine: &E, k6: &str, seconds: u32) -> Result<Followed, CapacityError> {
    let limit = Duration::from_secs(seconds as u64 + 60);
    let begun = Instant::now();
    let mut usage = engine.usage(k6);
    let (mut cpu_s, mut peak_mem_bytes, mut last) = (0.0, 0u64, Instant::now());
    loop {
        let next = tokio::time::timeout(Duration::from_secs(2), usage.next()).await;
        if let Ok(Some(sample)) = next {
            cpu_s += sample.cpu_percent / 100.0 * last.elapsed().as_secs_f64();
            peak_mem_bytes = peak_mem_bytes.max(sample.mem_bytes);
        }
        last = Instant::now();
        if !engine.state(k6).await?.running {
            return Ok(Followed {
                seconds: begun.elapsed().as_secs_f64(),
                cpu_s,
                peak_mem_bytes,
            });
        }
        if begun.elapsed() > limit {
            return Err(CapacityError::TimedOut(limit.as_secs()));
        }
    }
}

/// Chats received (the native report's count, or k6's summary on the js path) and the k6
/// process's CPU seconds.
fn read_output(out_dir: &std::path::Path, path: LoadPath) -> Result<(u64, f64), CapacityError> {
    let output = |detail: String| CapacityError::Output {
        dir: out_dir.to_owned(),
        detail,
    };
    let summary = std::fs::read_to_string(out_dir.join("summary.json"))
        .map_err(|e| output(format!("summary.json: {e}")))?;
    let summary = k6::parse_summary(&summary).map_err(|e| output(e.to_string()))?;
    let native = std::fs::read_to_string(out_dir.join("native.json"))
        .map_err(|e| output(format!("native.json: {e}")))?;
    let native = NativeReport::from_json(&native).map_err(|e| output(e.to_string()))?;
    let received = match path {
        LoadPath::Native => native.counters.chat_received,
        LoadPath::Js => summary.metrics.chat_received,
    };
    Ok((received, native.process_cpu_ns as f64 / 1e9))
}

/// The blaster's exit line: `blaster: N frames sent`.
fn blaster_frames(logs: &str) -> Option<u64> {
    logs.lines()
        .rev()
        .find_map(|line| {
            line.trim()
                .strip_prefix("blaster: ")?
                .strip_suffix(" frames sent")
        })
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_blasters_exit_line_gives_its_frame_count() {
        assert_eq!(
            blaster_frames("2026/11/23 blaster on 127.0.0.1:1\nblaster: 123456 frames sent\n"),
            Some(123_456)
        );
        assert_eq!(blaster_frames("killed"), None);
    }

    fn measured(path: LoadPath, per_cpu_s: f64) -> PathCapacity {
        PathCapacity {
            load_path: path,
            transport: Transport::Ws,
            clients: 50,
            sender_rate_limit_per_s: 0.0,
            sender_frames_per_s: None,
            received: 1,
            received_per_s: 1.0,
            loadgen_cpu_s: 1.0,
            loadgen_cpu_docker_s: 1.0,
            received_per_cpu_s: per_cpu_s,
            loadgen_peak_mem_bytes: 1,
        }
    }

    #[test]
    fn the_latest_measurement_of_a_path_sets_its_ceiling_and_levels_above_it_are_unreachable() {
        let mut saved = Saved::default();
        assert!(
            saved
                .ceiling(LoadPath::Native, Transport::Ws, 2.0)
                .is_none()
        );
        saved.keep(measured(LoadPath::Native, 300_000.0), "20261128-010000");
        saved.keep(measured(LoadPath::Js, 40_000.0), "20261128-010000");
        saved.keep(measured(LoadPath::Native, 250_000.0), "20261128-020000");
        assert_eq!(saved.paths.len(), 2);
        let (ceiling, at) = saved.ceiling(LoadPath::Native, Transport::Ws, 2.0).unwrap();
        assert_eq!(
            (ceiling, at.measured_at.as_str()),
            (500_000.0, "20261128-020000")
        );
        assert!(
            saved
                .ceiling(LoadPath::Native, Transport::Wss, 2.0)
                .is_none()
        );
        assert_eq!(
            unreachable(&[50_000.0, 400_000.0, 800_000.0, 1_600_000.0], ceiling),
            [800_000.0, 1_600_000.0]
        );
        let text = serde_json::to_string(&saved).unwrap();
        assert_eq!(serde_json::from_str::<Saved>(&text).unwrap(), saved);
    }
}
