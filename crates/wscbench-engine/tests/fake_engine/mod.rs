//! The one fake of the engine's `Engine` trait that every test of the engine uses: its
//! containers are local processes (the real profile-b Go server, and a k6 stand-in that
//! writes a recorded summary), its images a map; it records every call and can fail a
//! chosen one, so a test can kill a server mid-run, interrupt a run, or stop an image build
//! or a clean-up halfway, and check what was recorded and that nothing is left running.

// Each test binary that includes this module uses a part of it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use wscbench_engine::docker::{
    BoxFuture, ContainerSpec, ContainerState, Engine, EngineError, ImageInfo, Usage, UsageStream,
};

/// The project's root folder.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Builds the profile-b Go server once per test binary.
pub fn go_server() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out = std::env::temp_dir()
                .join(format!("wscbench-fake-engine-go-{}", std::process::id()));
            let status = Command::new("go")
                .args(["build", "-o"])
                .arg(&out)
                .arg(".")
                .env("CGO_ENABLED", "0")
                .current_dir(root().join("servers/profile-b/go"))
                .status()
                .unwrap_or_else(|e| {
                    panic!("these tests build servers/profile-b/go and need the `go` toolchain on PATH ({e}); scripts/setup's machine has it")
                });
            assert!(status.success(), "go build of servers/profile-b/go failed: {status}");
            out
        })
        .clone()
}

/// What the fake does to the server container.
#[derive(Clone, Copy)]
pub enum Fault {
    None,
    /// The server process is killed this long after it starts, and reported OOM-killed.
    OomKillAfter(Duration),
    /// The server process is killed (SIGKILL, not for memory) this long after it starts.
    CrashAfter(Duration),
}

struct Container {
    child: Option<Child>,
    started: Instant,
    is_k6: bool,
    removed: bool,
    /// A paused k6's REST API stand-in (see [`serve_k6_api`]).
    api: Option<tokio::task::JoinHandle<()>>,
}

pub struct FakeEngine {
    /// The binary a server container runs; `None` for an engine that runs no server.
    server_binary: Option<PathBuf>,
    /// How long a k6 container runs.
    pub k6_runs_for: Duration,
    /// Whether k6 leaves its summary in /out.
    pub k6_writes_summary: bool,
    /// The native report k6 writes beside its summary, if any.
    pub k6_native: Option<String>,
    /// The native report k6 writes, made from the epoch ms at which its container starts
    /// (for windows on k6's clock); takes the place of `k6_native`.
    pub k6_native_at: Option<Box<dyn Fn(u64) -> String + Send + Sync>>,
    /// The exit code k6 reports when it ends (137: killed).
    pub k6_exit_code: i64,
    /// The stats stream ends after this many samples, as a dying engine stream would.
    pub usage_samples: Option<usize>,
    fault: Fault,
    /// The call that fails (by its method's name) and the time it fails, counting from 1.
    fail: Option<(&'static str, usize)>,
    /// Every call made, by its method's name, in order.
    calls: Mutex<Vec<String>>,
    /// The images held, by tag or id.
    pub images: Mutex<HashMap<String, ImageInfo>>,
    containers: Mutex<HashMap<String, Container>>,
    /// Every spec started, in order.
    pub specs: Mutex<Vec<ContainerSpec>>,
    /// Every container paused, once per pause.
    pub pauses: Mutex<Vec<String>>,
}

impl FakeEngine {
    /// An engine that runs the profile-b Go server (built once per test binary) and a k6
    /// that runs for 3 s, with `fault` done to the server.
    pub fn new(fault: Fault) -> Self {
        Self::with(Some(go_server()), fault, None)
    }

    /// An engine holding three images and three containers, of no process, that fails the
    /// call named `fail` the `nth` time it is made (counting from 1); it runs no server.
    pub fn failing(fail: &'static str, nth: usize) -> Self {
        let engine = Self::with(None, Fault::None, Some((fail, nth)));
        for i in 0..3 {
            let id = format!("sha256:{i}");
            engine.images.lock().unwrap().insert(
                id.clone(),
                ImageInfo {
                    id,
                    tags: vec![format!("wsc-{i}:latest")],
                    ..Default::default()
                },
            );
            engine.containers.lock().unwrap().insert(
                format!("held-{i}"),
                Container {
                    child: None,
                    started: Instant::now(),
                    is_k6: false,
                    removed: false,
                    api: None,
                },
            );
        }
        engine
    }

    fn with(
        server_binary: Option<PathBuf>,
        fault: Fault,
        fail: Option<(&'static str, usize)>,
    ) -> Self {
        Self {
            server_binary,
            k6_runs_for: Duration::from_secs(3),
            k6_writes_summary: true,
            k6_native: None,
            k6_native_at: None,
            k6_exit_code: 0,
            usage_samples: None,
            fault,
            fail,
            calls: Mutex::new(Vec::new()),
            images: Mutex::new(HashMap::new()),
            containers: Mutex::new(HashMap::new()),
            specs: Mutex::new(Vec::new()),
            pauses: Mutex::new(Vec::new()),
        }
    }

    /// Records the call; fails it if it is the chosen one.
    fn call(&self, name: &str) -> Result<(), EngineError> {
        let mut calls = self.calls.lock().unwrap();
        calls.push(name.to_string());
        let made = calls.iter().filter(|c| *c == name).count();
        match self.fail {
            Some((fail, nth)) if fail == name && made == nth => Err(EngineError::Failed {
                action: name.to_string(),
                message: "injected failure".into(),
            }),
            _ => Ok(()),
        }
    }

    /// Every call made so far, by its method's name.
    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }

    /// Kills a container's process and stops its k6 API: what `remove` does, unrecorded.
    fn remove_container(&self, id: &str) {
        if let Some(c) = self.containers.lock().unwrap().get_mut(id) {
            if let Some(child) = c.child.as_mut() {
                let _ = child.kill();
                let _ = child.wait();
            }
            if let Some(api) = c.api.take() {
                api.abort();
            }
            c.removed = true;
        }
    }

    /// Removes every container not removed yet; how many.
    fn remove_live(&self) -> usize {
        let ids: Vec<String> = self
            .containers
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, c)| !c.removed)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &ids {
            self.remove_container(id);
        }
        ids.len()
    }

    /// Sends `signal` to a container's process, if it has one.
    fn signal(&self, id: &str, signal: &str) {
        if let Some(child) = self
            .containers
            .lock()
            .unwrap()
            .get_mut(id)
            .and_then(|c| c.child.as_mut())
        {
            let _ = Command::new("kill")
                .args([signal, &child.id().to_string()])
                .status();
        }
    }

    /// Containers started and not removed.
    pub fn live(&self) -> usize {
        self.containers
            .lock()
            .unwrap()
            .values()
            .filter(|c| !c.removed)
            .count()
    }

    /// Containers started by the code under test.
    pub fn started(&self) -> usize {
        self.specs.lock().unwrap().len()
    }
}

impl Drop for FakeEngine {
    fn drop(&mut self) {
        for c in self.containers.lock().unwrap().values_mut() {
            if let Some(child) = c.child.as_mut() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

impl Engine for FakeEngine {
    fn start<'a>(&'a self, spec: &'a ContainerSpec) -> BoxFuture<'a, Result<String, EngineError>> {
        Box::pin(async move {
            self.call("start")?;
            self.specs.lock().unwrap().push(spec.clone());
            let mut containers = self.containers.lock().unwrap();
            let id = format!("fake-{}", containers.len());
            let is_k6 = spec.image == "fake-k6";
            let mut api = None;
            let child = if is_k6 {
                let out = spec
                    .binds
                    .iter()
                    .find_map(|b| b.strip_suffix(":/out"))
                    .expect("k6 gets /out");
                if self.k6_writes_summary {
                    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("tests/fixtures/k6/steady-smoke.json");
                    std::fs::copy(fixture, Path::new(out).join("summary.json")).unwrap();
                }
                if let Some(native) = &self.k6_native {
                    std::fs::write(Path::new(out).join("native.json"), native).unwrap();
                }
                if let Some(native_at) = &self.k6_native_at {
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                        .as_millis() as u64;
                    std::fs::write(Path::new(out).join("native.json"), native_at(now)).unwrap();
                }
                if spec.cmd.iter().any(|a| a == "--paused") {
                    let at = spec.cmd.iter().position(|a| a == "--address").unwrap();
                    api = Some(serve_k6_api(&spec.cmd[at + 1]));
                }
                None
            } else {
                Some(
                    Command::new(
                        self.server_binary
                            .as_ref()
                            .expect("this fake engine runs no server"),
                    )
                    .args(&spec.cmd)
                    .envs(spec.env.iter().filter_map(|e| e.split_once('=')))
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap(),
                )
            };
            containers.insert(
                id.clone(),
                Container {
                    child,
                    started: Instant::now(),
                    is_k6,
                    removed: false,
                    api,
                },
            );
            Ok(id)
        })
    }

    fn state<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<ContainerState, EngineError>> {
        Box::pin(async move {
            self.call("state")?;
            let mut containers = self.containers.lock().unwrap();
            let c = containers.get_mut(id).expect("known container");
            if c.is_k6 {
                let running = c.started.elapsed() < self.k6_runs_for && !c.removed;
                return Ok(ContainerState {
                    running,
                    exit_code: (!running).then_some(self.k6_exit_code),
                    oom_killed: false,
                });
            }
            if let Fault::CrashAfter(after) = self.fault
                && c.started.elapsed() >= after
                && let Some(child) = c.child.as_mut()
            {
                let _ = child.kill();
                let _ = child.wait();
            }
            if let Fault::OomKillAfter(after) = self.fault
                && c.started.elapsed() >= after
            {
                if let Some(child) = c.child.as_mut() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                return Ok(ContainerState {
                    running: false,
                    exit_code: Some(137),
                    oom_killed: true,
                });
            }
            let exited = c.child.as_mut().and_then(|ch| ch.try_wait().ok().flatten());
            Ok(ContainerState {
                running: exited.is_none(),
                exit_code: exited.and_then(|s| s.code()).map(i64::from),
                oom_killed: false,
            })
        })
    }

    fn usage(&self, _id: &str) -> UsageStream {
        let ticks = tokio_stream_interval(Duration::from_millis(500));
        let samples = futures_util::StreamExt::map(ticks, |_| Usage {
            cpu_percent: 40.0,
            mem_bytes: 8 << 20,
            ..Usage::default()
        });
        match self.usage_samples {
            Some(n) => Box::pin(futures_util::StreamExt::take(samples, n)),
            None => Box::pin(samples),
        }
    }

    fn stop<'a>(&'a self, id: &'a str, _grace: Duration) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            self.call("stop")?;
            if let Some(child) = self
                .containers
                .lock()
                .unwrap()
                .get_mut(id)
                .and_then(|c| c.child.as_mut())
            {
                let _ = Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .status();
            }
            Ok(())
        })
    }

    fn pause<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            self.call("pause")?;
            self.signal(id, "-STOP");
            self.pauses.lock().unwrap().push(id.to_string());
            Ok(())
        })
    }

    fn unpause<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            self.call("unpause")?;
            self.signal(id, "-CONT");
            Ok(())
        })
    }

    fn logs<'a>(
        &'a self,
        _id: &'a str,
        _lines: usize,
    ) -> BoxFuture<'a, Result<String, EngineError>> {
        Box::pin(async { self.call("logs").map(|()| String::new()) })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            self.call("remove")?;
            self.remove_container(id);
            Ok(())
        })
    }

    fn remove_run<'a>(&'a self, _run_id: &'a str) -> BoxFuture<'a, Result<usize, EngineError>> {
        Box::pin(async move { self.call("remove_run").map(|()| self.remove_live()) })
    }

    fn remove_all_containers(&self) -> BoxFuture<'_, Result<usize, EngineError>> {
        Box::pin(async move {
            self.call("remove_all_containers")
                .map(|()| self.remove_live())
        })
    }

    fn build_image<'a>(
        &'a self,
        tag: &'a str,
        _context: Vec<u8>,
        labels: &'a HashMap<String, String>,
    ) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            self.call("build_image")?;
            self.images.lock().unwrap().insert(
                tag.to_string(),
                ImageInfo {
                    id: format!("sha256:{tag}"),
                    tags: vec![tag.to_string()],
                    labels: labels.clone(),
                    size_bytes: 1,
                },
            );
            Ok(())
        })
    }

    fn inspect_image<'a>(
        &'a self,
        tag: &'a str,
    ) -> BoxFuture<'a, Result<Option<ImageInfo>, EngineError>> {
        Box::pin(async move {
            self.call("inspect_image")?;
            Ok(self.images.lock().unwrap().get(tag).cloned())
        })
    }

    fn list_images(&self) -> BoxFuture<'_, Result<Vec<ImageInfo>, EngineError>> {
        Box::pin(async {
            self.call("list_images")?;
            let mut images: Vec<_> = self.images.lock().unwrap().values().cloned().collect();
            images.sort_by(|a, b| a.id.cmp(&b.id));
            Ok(images)
        })
    }

    fn remove_image<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            self.call("remove_image")?;
            self.images.lock().unwrap().remove(id);
            Ok(())
        })
    }
}

/// k6's REST API as a split run uses it: `GET /v1/status` says paused before the run
/// (status 4) and `PATCH /v1/status` resumes, on the address k6 was given.
pub fn serve_k6_api(address: &str) -> tokio::task::JoinHandle<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = std::net::TcpListener::bind(address).unwrap();
    listener.set_nonblocking(true).unwrap();
    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = vec![0u8; 4096];
            let _ = socket.read(&mut request).await;
            let body = r#"{"data":{"type":"status","id":"default","attributes":{"status":4,"paused":true}}}"#;
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(answer.as_bytes()).await;
        }
    })
}

fn tokio_stream_interval(period: Duration) -> impl futures_util::Stream<Item = ()> + Send {
    futures_util::stream::unfold((), move |()| async move {
        tokio::time::sleep(period).await;
        Some(((), ()))
    })
}
