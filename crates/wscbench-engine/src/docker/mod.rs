//! Docker, behind one narrow interface: every container and image operation wscbench makes
//! (start, inspect, stats, stop, logs, removal, image build, inspect, list and removal) goes
//! through [`Engine`], so a fake engine can fail any one of them; [`daemon::DockerEngine`]
//! is the real one, bollard against a Docker daemon, and [`stats`] reads Docker's stats
//! responses (CPU, memory and its user-space and kernel parts) as the docker CLI does.
//! [`Hardening`] is what every container is started with unless told otherwise; the labels
//! and the CPU arithmetic every caller needs are here too, so none reaches past the trait.
//!
//! Uses no other folder of this crate (only [`crate::ErrorClass`]).

pub mod daemon;
pub mod stats;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;

/// The label every wscbench container and image carries.
pub const LABEL: &str = "wscbench";
/// The label naming the run a container belongs to ([`Engine::remove_run`] removes by it).
pub const RUN_LABEL: &str = "wscbench.run";

/// A CPU count (`--cpus 1.5`) in the billionths of a CPU that [`ContainerSpec::nano_cpus`]
/// (Docker's `NanoCpus`) takes.
pub fn nano_cpus(cpus: f64) -> i64 {
    (cpus * 1e9).round() as i64
}

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
    /// The security settings; [`Hardening::default`] is the hardened set every container gets.
    pub hardening: Hardening,
}

/// The user and group every hardened container runs as (`nobody:nogroup`). A bind-mounted
/// folder a container must write into (k6's `/out`) has to be owned by this user.
pub const CONTAINER_UID_GID: (u32, u32) = (65534, 65534);

/// Open files a container may hold: a container cannot be given more than the engine's own
/// hard limit, which is 20,000 on the machines this project runs on (`ulimit -Hn`; runc
/// refuses 65,536 there), so idle-capacity steps to 19,000 clients, a socket each on both
/// sides. (16,384 once capped every server's idle capacity at 16,376 clients.)
pub const NOFILE_LIMIT: u64 = 20_000;

/// Processes (threads included) a container may run. A thread-per-connection server (Zig
/// std: a reader and a writer thread per client) needs two per client; 4,096 once capped it
/// at 2,047 idle clients. 24,576 is three quarters of the default `kernel.pid_max` (32,768
/// here): room for 12,000 such clients, and still short of exhausting the host's pids.
pub const PIDS_LIMIT: i64 = 24_576;

/// How a container is confined. [`Hardening::default`] is hardened: a read-only root with a
/// small writable `/tmp`, no capabilities, no privilege gain, a non-root user, and limits on
/// processes and open files. [`Hardening::none`] is Docker's own defaults, for diagnosis only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hardening {
    /// Mount the image's root filesystem read-only (`--read-only`).
    pub read_only_root: bool,
    /// A writable tmpfs at `/tmp` of this many bytes (`--tmpfs /tmp:size=…`), so a read-only
    /// root still has a scratch folder (k6 writes there; `HOME=/tmp` in every image).
    pub tmp_bytes: Option<u64>,
    /// Drop every Linux capability (`--cap-drop ALL`).
    pub cap_drop_all: bool,
    /// Forbid gaining privileges through set-uid binaries (`--security-opt no-new-privileges`).
    pub no_new_privileges: bool,
    /// `uid:gid` to run as (`--user`), or `None` for the image's own (root in ours).
    pub user: Option<(u32, u32)>,
    /// Most processes and threads (`--pids-limit`).
    pub pids_limit: Option<i64>,
    /// Most open files, soft and hard (`--ulimit nofile=N:N`).
    pub nofile: Option<u64>,
}

impl Default for Hardening {
    fn default() -> Self {
        Self {
            read_only_root: true,
            tmp_bytes: Some(64 << 20),
            cap_drop_all: true,
            no_new_privileges: true,
            user: Some(CONTAINER_UID_GID),
            pids_limit: Some(PIDS_LIMIT),
            nofile: Some(NOFILE_LIMIT),
        }
    }
}

impl Hardening {
    /// Docker's defaults: nothing added. Not used by any command; for diagnosing a container
    /// that fails only when hardened.
    pub fn none() -> Self {
        Self {
            read_only_root: false,
            tmp_bytes: None,
            cap_drop_all: false,
            no_new_privileges: false,
            user: None,
            pids_limit: None,
            nofile: None,
        }
    }

    /// The settings as `docker run` flags, e.g. `--cap-drop ALL`, for the record of a run.
    pub fn describe(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if self.read_only_root {
            flags.push("--read-only".to_string());
        }
        if let Some(bytes) = self.tmp_bytes {
            flags.push(format!(
                "--tmpfs /tmp:rw,nosuid,nodev,size={}m,mode=1777",
                bytes >> 20
            ));
        }
        if self.cap_drop_all {
            flags.push("--cap-drop ALL".to_string());
        }
        if self.no_new_privileges {
            flags.push("--security-opt no-new-privileges".to_string());
        }
        if let Some((uid, gid)) = self.user {
            flags.push(format!("--user {uid}:{gid}"));
        }
        if let Some(pids) = self.pids_limit {
            flags.push(format!("--pids-limit {pids}"));
        }
        if let Some(n) = self.nofile {
            flags.push(format!("--ulimit nofile={n}:{n}"));
        }
        flags
    }
}

/// An image as the engine knows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImageInfo {
    /// The image id (`sha256:…`).
    pub id: String,
    /// Its tags, e.g. `wsc-go:latest`.
    pub tags: Vec<String>,
    /// Its labels.
    pub labels: HashMap<String, String>,
    /// Its size, in bytes.
    pub size_bytes: u64,
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
    /// Of it, anonymous (user-space) memory, in bytes, where the cgroup says
    /// ([`stats::anon_bytes`]).
    pub anon_bytes: Option<u64>,
    /// Of it, the kernel's memory charged to the container (slab, sockets, stacks, page
    /// tables), in bytes, where the cgroup says ([`stats::kernel_bytes`]).
    pub kernel_bytes: Option<u64>,
    /// When the figures were read (Unix time, milliseconds): the CPU percent is that of the
    /// interval ending then. `None` where the source gives no time.
    pub read_epoch_ms: Option<u64>,
    /// CPU time used since the container started, in milliseconds, as of `read_epoch_ms`;
    /// `None` where the source gives none.
    pub cpu_used_ms: Option<f64>,
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
    /// A fake engine's injected failure (tests only).
    #[error("{action}: {message}")]
    Failed { action: String, message: String },
}

impl EngineError {
    /// An engine that does not answer is missing set-up; anything else it says is a failure.
    pub fn class(&self) -> crate::ErrorClass {
        use crate::ErrorClass::*;
        match self {
            Self::Unreachable { .. } => Setup,
            Self::Docker { .. } | Self::Build { .. } | Self::Failed { .. } => Failure,
        }
    }

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
    /// The container's CPU time used so far, in milliseconds, read now, where the engine can
    /// read it at once (its cgroup on this host); `None` leaves the CPU to [`Engine::usage`].
    fn cpu_used_ms_now(&self, id: &str) -> Option<f64> {
        let _ = id;
        None
    }
    /// SIGTERM, then SIGKILL after `grace`.
    fn stop<'a>(&'a self, id: &'a str, grace: Duration) -> BoxFuture<'a, Result<(), EngineError>>;
    /// Freezes a running container (the cgroup freezer): its processes stop being scheduled,
    /// its sockets stay open. Fault injection (`run --pause-server`).
    fn pause<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>>;
    /// Thaws a paused container; a container that is not paused is left as it is.
    fn unpause<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>>;
    /// The last `lines` lines of the container's output.
    fn logs<'a>(&'a self, id: &'a str, lines: usize) -> BoxFuture<'a, Result<String, EngineError>>;
    /// Removes a container, running or not.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>>;
    /// Removes every container labelled with this run id; returns how many.
    fn remove_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<usize, EngineError>>;
    /// Removes every container wscbench made, of any run; returns how many.
    fn remove_all_containers(&self) -> BoxFuture<'_, Result<usize, EngineError>>;
    /// Builds `tag` from a tar build context (Dockerfile at its root) with these labels,
    /// draining the build's output; a message carrying an error fails the build.
    fn build_image<'a>(
        &'a self,
        tag: &'a str,
        context: Vec<u8>,
        labels: &'a HashMap<String, String>,
    ) -> BoxFuture<'a, Result<(), EngineError>>;
    /// The image under this tag or id, or `None` when there is none.
    fn inspect_image<'a>(
        &'a self,
        tag: &'a str,
    ) -> BoxFuture<'a, Result<Option<ImageInfo>, EngineError>>;
    /// Every image wscbench built.
    fn list_images(&self) -> BoxFuture<'_, Result<Vec<ImageInfo>, EngineError>>;
    /// Removes an image by id or tag (forced); an image already gone is not an error.
    fn remove_image<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_hardening_reads_like_the_docker_flags() {
        assert_eq!(
            Hardening::default().describe(),
            [
                "--read-only",
                "--tmpfs /tmp:rw,nosuid,nodev,size=64m,mode=1777",
                "--cap-drop ALL",
                "--security-opt no-new-privileges",
                "--user 65534:65534",
                "--pids-limit 24576",
                "--ulimit nofile=20000:20000",
            ]
        );
        assert!(Hardening::none().describe().is_empty());
        assert_eq!(ContainerSpec::default().hardening, Hardening::default());
    }
}
