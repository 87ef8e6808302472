//! The narrow container interface the runner needs, so that a run can be tested with a
//! fake engine; [`crate::docker::DockerEngine`] is the real one.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;

/// What to start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContainerSpec {
    /// Container name.
    pub name: String,
    /// Image tag.
    pub image: String,
    /// Arguments to the image's entrypoint.
    pub cmd: Vec<String>,
    /// `KEY=value` environment.
    pub env: Vec<String>,
    /// `host:container[:ro]` bind mounts.
    pub binds: Vec<String>,
    /// Labels; every wscbench container carries `wscbench.run`.
    pub labels: HashMap<String, String>,
    /// CPU limit in billionths of a CPU (`--cpus 2` = 2_000_000_000).
    pub nano_cpus: Option<i64>,
    /// Memory limit in bytes; swap is disabled at the same limit.
    pub memory_bytes: Option<i64>,
    /// Cores to pin to, e.g. `0` or `0-1`.
    pub cpuset: Option<String>,
}

/// A container's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContainerState {
    /// Still running.
    pub running: bool,
    /// Exit code, once exited.
    pub exit_code: Option<i64>,
    /// Killed by the kernel's OOM killer.
    pub oom_killed: bool,
}

/// One resource sample of one container.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// CPU in percent of one core.
    pub cpu_percent: f64,
    /// Memory without page cache, in bytes.
    pub mem_bytes: u64,
}

/// A failed container operation.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The engine refused or failed an operation.
    #[error("docker: {action}: {source}")]
    Docker {
        action: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// No engine answered.
    #[error(
        "no Docker engine answers at {endpoint} ({reason}); start one with scripts/setup, or set DOCKER_HOST"
    )]
    Unreachable { endpoint: String, reason: String },
    /// An image build reported an error.
    #[error("building image {tag}: {message}")]
    Build { tag: String, message: String },
}

impl EngineError {
    pub(crate) fn docker(
        action: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Docker {
            action: action.into(),
            source: Box::new(source),
        }
    }
}

/// A boxed future, so the trait stays usable behind generics without extra crates.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
/// A stream of per-second usage samples for one container.
pub type UsageStream = Pin<Box<dyn Stream<Item = Usage> + Send>>;

/// The container operations a run needs, and nothing more.
pub trait Engine: Send + Sync {
    /// Creates and starts a container with host networking; returns its id.
    fn start<'a>(&'a self, spec: &'a ContainerSpec) -> BoxFuture<'a, Result<String, EngineError>>;
    /// The container's current state.
    fn state<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<ContainerState, EngineError>>;
    /// Per-second usage samples until the container stops.
    fn usage(&self, id: &str) -> UsageStream;
    /// SIGTERM, then SIGKILL after `grace`.
    fn stop<'a>(&'a self, id: &'a str, grace: Duration) -> BoxFuture<'a, Result<(), EngineError>>;
    /// The last `lines` lines of the container's output.
    fn logs<'a>(&'a self, id: &'a str, lines: usize) -> BoxFuture<'a, Result<String, EngineError>>;
    /// Removes a container, running or not.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>>;
    /// Removes every container labelled with this run id; returns how many.
    fn remove_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<usize, EngineError>>;
}
