//! The real engine: bollard against the local Docker daemon (or `DOCKER_HOST`), with the
//! API version negotiated so that Debian's engine 20.10 (API 1.41) works.

use std::collections::HashMap;
use std::time::Duration;

use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig, ResourcesUlimits};
use bollard::query_parameters::{
    BuildImageOptionsBuilder, CreateContainerOptionsBuilder, InspectContainerOptions,
    ListContainersOptionsBuilder, ListImagesOptionsBuilder, LogsOptionsBuilder,
    RemoveContainerOptionsBuilder, RemoveImageOptionsBuilder, StatsOptionsBuilder,
    StopContainerOptionsBuilder,
};
use futures_util::StreamExt;

use crate::docker::stats;
use crate::docker::{
    BoxFuture, ContainerSpec, ContainerState, Engine, EngineError, Hardening, ImageInfo, LABEL,
    RUN_LABEL, Usage, UsageStream,
};

/// How long the first exchange with the engine may take before it counts as unreachable: a
/// missing socket fails at once, but a wrong `DOCKER_HOST` address would otherwise hang.
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(1500);

/// Facts about the engine, recorded with every result.
#[derive(Debug, Clone, Default)]
pub struct EngineInfo {
    /// Engine version, e.g. `20.10.24+dfsg1`.
    pub version: String,
    /// API version in use after negotiation.
    pub api_version: String,
    /// Kernel release of the Docker host.
    pub kernel: String,
    /// CPUs of the Docker host.
    pub cpus: u32,
    /// cgroup version of the host (`1` or `2`).
    pub cgroup_version: String,
    /// Host name of the Docker host (two engines on one host report the same).
    pub host_name: String,
}

/// Exchanges [`DockerEngine::clock_offset`] makes, keeping the fastest.
pub const CLOCK_EXCHANGES: usize = 5;

/// An engine's clock against ours, from one exchange.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockOffset {
    /// The engine host's clock minus ours, in milliseconds, taking its reading as made
    /// halfway through the exchange.
    pub offset_ms: f64,
    /// The exchange's round trip, in milliseconds: the offset is known to ± half of it.
    pub rtt_ms: f64,
}

/// A connected, version-negotiated Docker client.
#[derive(Clone)]
pub struct DockerEngine {
    pub(crate) docker: Docker,
}

impl DockerEngine {
    /// Connects to `DOCKER_HOST` or the local socket and negotiates the API version.
    pub async fn connect() -> Result<Self, EngineError> {
        let endpoint =
            std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".into());
        let unreachable = |reason: String| EngineError::Unreachable {
            endpoint: endpoint.clone(),
            reason,
        };
        let docker = Docker::connect_with_defaults().map_err(|e| unreachable(e.to_string()))?;
        let docker = tokio::time::timeout(CONNECT_TIMEOUT, docker.negotiate_version())
            .await
            .map_err(|_| unreachable(format!("no answer within {CONNECT_TIMEOUT:?}")))?
            .map_err(|e| unreachable(e.to_string()))?;
        Ok(Self { docker })
    }

    /// Connects to an engine given as `DOCKER_HOST` is (`unix:///path` or `tcp://host:port`)
    /// and negotiates the API version.
    pub async fn connect_to(endpoint: &str) -> Result<Self, EngineError> {
        let unreachable = |reason: String| EngineError::Unreachable {
            endpoint: endpoint.to_string(),
            reason,
        };
        let timeout = 120;
        let version = bollard::API_DEFAULT_VERSION;
        let docker = if endpoint.starts_with("unix://") {
            Docker::connect_with_socket(endpoint, timeout, version)
        } else if endpoint.starts_with("tcp://") || endpoint.starts_with("http://") {
            Docker::connect_with_http(endpoint, timeout, version)
        } else {
            return Err(unreachable(
                "not an engine address: give unix:///path/to/docker.sock or tcp://host:port".into(),
            ));
        }
        .map_err(|e| unreachable(e.to_string()))?;
        let docker = tokio::time::timeout(CONNECT_TIMEOUT, docker.negotiate_version())
            .await
            .map_err(|_| unreachable(format!("no answer within {CONNECT_TIMEOUT:?}")))?
            .map_err(|e| unreachable(e.to_string()))?;
        Ok(Self { docker })
    }

    /// The engine host's clock against ours: `SystemTime` from the engine's info, taken as
    /// read halfway through the request, from the fastest of [`CLOCK_EXCHANGES`] exchanges
    /// (the least room for the reading to sit off the midpoint). `None` when the engine gives
    /// no readable time.
    pub async fn clock_offset(&self) -> Option<ClockOffset> {
        let mut best: Option<ClockOffset> = None;
        for _ in 0..CLOCK_EXCHANGES {
            let sent = std::time::SystemTime::now();
            let started = std::time::Instant::now();
            let info = self.docker.info().await.ok()?;
            let rtt = started.elapsed();
            let theirs = humantime::parse_rfc3339_weak(info.system_time.as_deref()?).ok()?;
            let midpoint = sent + rtt / 2;
            let offset_ms = match theirs.duration_since(midpoint) {
                Ok(ahead) => ahead.as_secs_f64() * 1000.0,
                Err(behind) => -behind.duration().as_secs_f64() * 1000.0,
            };
            let this = ClockOffset {
                offset_ms,
                rtt_ms: rtt.as_secs_f64() * 1000.0,
            };
            if best.is_none_or(|b| this.rtt_ms < b.rtt_ms) {
                best = Some(this);
            }
        }
        best
    }

    /// Version, kernel and CPUs of the engine.
    pub async fn info(&self) -> Result<EngineInfo, EngineError> {
        let version = self
            .docker
            .version()
            .await
            .map_err(|e| EngineError::docker("version", e))?;
        let info = self
            .docker
            .info()
            .await
            .map_err(|e| EngineError::docker("info", e))?;
        Ok(EngineInfo {
            version: version.version.unwrap_or_default(),
            api_version: self.docker.client_version().to_string(),
            kernel: info.kernel_version.unwrap_or_default(),
            cpus: info.ncpu.unwrap_or(0).max(0) as u32,
            cgroup_version: info
                .cgroup_version
                .map(|v| v.to_string())
                .unwrap_or_default(),
            host_name: info.name.unwrap_or_default(),
        })
    }

    async fn remove_labelled(&self, label_filter: &str) -> Result<usize, EngineError> {
        let filters = HashMap::from([("label", vec![label_filter])]);
        let list = self
            .docker
            .list_containers(Some(
                ListContainersOptionsBuilder::new()
                    .all(true)
                    .filters(&filters)
                    .build(),
            ))
            .await
            .map_err(|e| EngineError::docker("listing containers", e))?;
        let mut removed = 0;
        for container in list {
            if let Some(id) = container.id {
                self.remove(&id).await?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}

impl Engine for DockerEngine {
    fn start<'a>(&'a self, spec: &'a ContainerSpec) -> BoxFuture<'a, Result<String, EngineError>> {
        Box::pin(async move {
            let mut labels = spec.labels.clone();
            labels.insert(LABEL.into(), "1".into());
            let host_config = HostConfig {
                network_mode: Some("host".into()),
                nano_cpus: spec.nano_cpus,
                memory: spec.memory_bytes,
                memory_swap: spec.memory_bytes,
                cpuset_cpus: spec.cpuset.clone(),
                binds: (!spec.binds.is_empty()).then(|| spec.binds.clone()),
                ..hardened(&spec.hardening)
            };
            let body = ContainerCreateBody {
                image: Some(spec.image.clone()),
                user: spec.hardening.user.map(|(uid, gid)| format!("{uid}:{gid}")),
                cmd: Some(spec.cmd.clone()),
                env: Some(spec.env.clone()),
                labels: Some(labels),
                host_config: Some(host_config),
                ..Default::default()
            };
            let options = CreateContainerOptionsBuilder::new()
                .name(&spec.name)
                .build();
            let created = self
                .docker
                .create_container(Some(options), body)
                .await
                .map_err(|e| {
                    EngineError::docker(format!("creating {} from {}", spec.name, spec.image), e)
                })?;
            if let Err(e) = self
                .docker
                .start_container(
                    &created.id,
                    None::<bollard::query_parameters::StartContainerOptions>,
                )
                .await
            {
                let _ = self.remove(&created.id).await;
                return Err(EngineError::docker(format!("starting {}", spec.name), e));
            }
            Ok(created.id)
        })
    }

    fn state<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<ContainerState, EngineError>> {
        Box::pin(async move {
            let inspect = self
                .docker
                .inspect_container(id, None::<InspectContainerOptions>)
                .await
                .map_err(|e| EngineError::docker(format!("inspecting {id}"), e))?;
            let state = inspect.state.unwrap_or_default();
            let running = state.running.unwrap_or(false);
            Ok(ContainerState {
                running,
                exit_code: if running { None } else { state.exit_code },
                oom_killed: state.oom_killed.unwrap_or(false),
            })
        })
    }

    fn usage(&self, id: &str) -> UsageStream {
        let docker = self.docker.clone();
        let id = id.to_string();
        let options = StatsOptionsBuilder::new()
            .stream(true)
            .one_shot(false)
            .build();
        Box::pin(usage_stream(docker, id, options))
    }

    fn cpu_used_ms_now(&self, id: &str) -> Option<f64> {
        stats::cgroup_cpu_used_ms(std::path::Path::new("/sys/fs/cgroup"), id)
    }

    fn stop<'a>(&'a self, id: &'a str, grace: Duration) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            let options = StopContainerOptionsBuilder::new()
                .signal("SIGTERM")
                .t(grace.as_secs().max(1) as i32)
                .build();
            match self.docker.stop_container(id, Some(options)).await {
                Ok(()) => Ok(()),
                // 304: already stopped.
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 304, ..
                }) => Ok(()),
                Err(e) => Err(EngineError::docker(format!("stopping {id}"), e)),
            }
        })
    }

    fn pause<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            self.docker
                .pause_container(id)
                .await
                .map_err(|e| EngineError::docker(format!("pausing {id}"), e))
        })
    }

    fn unpause<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            match self.docker.unpause_container(id).await {
                Ok(()) => Ok(()),
                // 409: not paused (or no longer running): nothing to thaw.
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 409, ..
                }) => Ok(()),
                Err(e) => Err(EngineError::docker(format!("unpausing {id}"), e)),
            }
        })
    }

    fn logs<'a>(&'a self, id: &'a str, lines: usize) -> BoxFuture<'a, Result<String, EngineError>> {
        Box::pin(async move {
            let options = LogsOptionsBuilder::new()
                .stdout(true)
                .stderr(true)
                .tail(&lines.to_string())
                .build();
            let mut stream = self.docker.logs(id, Some(options));
            let mut text = String::new();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| EngineError::docker(format!("logs of {id}"), e))?;
                text.push_str(&chunk.to_string());
            }
            Ok(text)
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            let options = RemoveContainerOptionsBuilder::new()
                .force(true)
                .v(true)
                .build();
            match self.docker.remove_container(id, Some(options)).await {
                Ok(()) => Ok(()),
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => Ok(()),
                Err(e) => Err(EngineError::docker(format!("removing {id}"), e)),
            }
        })
    }

    fn remove_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<usize, EngineError>> {
        Box::pin(async move { self.remove_labelled(&format!("{RUN_LABEL}={run_id}")).await })
    }

    fn remove_all_containers(&self) -> BoxFuture<'_, Result<usize, EngineError>> {
        Box::pin(self.remove_labelled(LABEL))
    }

    fn build_image<'a>(
        &'a self,
        tag: &'a str,
        context: Vec<u8>,
        labels: &'a HashMap<String, String>,
    ) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            let options = BuildImageOptionsBuilder::new()
                .t(tag)
                .rm(true)
                .forcerm(true)
                .labels(labels)
                .build();
            let mut stream =
                self.docker
                    .build_image(options, None, Some(bollard::body_full(context.into())));
            while let Some(message) = stream.next().await {
                let info =
                    message.map_err(|e| EngineError::docker(format!("building image {tag}"), e))?;
                if let Some(error) = info.error {
                    return Err(EngineError::Build {
                        tag: tag.into(),
                        message: error,
                    });
                }
            }
            Ok(())
        })
    }

    fn inspect_image<'a>(
        &'a self,
        tag: &'a str,
    ) -> BoxFuture<'a, Result<Option<ImageInfo>, EngineError>> {
        Box::pin(async move {
            match self.docker.inspect_image(tag).await {
                Ok(inspect) => Ok(Some(ImageInfo {
                    id: inspect.id.unwrap_or_default(),
                    tags: inspect.repo_tags.unwrap_or_default(),
                    labels: inspect.config.and_then(|c| c.labels).unwrap_or_default(),
                    size_bytes: inspect.size.unwrap_or(0).max(0) as u64,
                })),
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => Ok(None),
                Err(e) => Err(EngineError::docker(format!("inspecting image {tag}"), e)),
            }
        })
    }

    fn list_images(&self) -> BoxFuture<'_, Result<Vec<ImageInfo>, EngineError>> {
        Box::pin(async move {
            let filters = HashMap::from([("label", vec![LABEL])]);
            let images = self
                .docker
                .list_images(Some(
                    ListImagesOptionsBuilder::new().filters(&filters).build(),
                ))
                .await
                .map_err(|e| EngineError::docker("listing images", e))?;
            Ok(images
                .into_iter()
                .map(|i| ImageInfo {
                    id: i.id,
                    tags: i.repo_tags,
                    labels: i.labels,
                    size_bytes: i.size.max(0) as u64,
                })
                .collect())
        })
    }

    fn remove_image<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            let options = RemoveImageOptionsBuilder::new().force(true).build();
            match self.docker.remove_image(id, Some(options), None).await {
                Ok(_) => Ok(()),
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => Ok(()),
                Err(e) => Err(EngineError::docker(format!("removing image {id}"), e)),
            }
        })
    }
}

/// The host configuration [`Hardening`] asks for; every other field is left to the caller.
fn hardened(hardening: &Hardening) -> HostConfig {
    HostConfig {
        readonly_rootfs: hardening.read_only_root.then_some(true),
        tmpfs: hardening.tmp_bytes.map(|bytes| {
            HashMap::from([(
                "/tmp".to_string(),
                format!("rw,nosuid,nodev,size={bytes},mode=1777"),
            )])
        }),
        cap_drop: hardening.cap_drop_all.then(|| vec!["ALL".to_string()]),
        security_opt: hardening
            .no_new_privileges
            .then(|| vec!["no-new-privileges".to_string()]),
        pids_limit: hardening.pids_limit,
        ulimits: hardening.nofile.map(|n| {
            vec![ResourcesUlimits {
                name: Some("nofile".into()),
                soft: Some(n as i64),
                hard: Some(n as i64),
            }]
        }),
        ..Default::default()
    }
}

/// Docker's own stats stream: one response per second, each carrying the previous
/// CPU reading, so each item yields a CPU percent the way `docker stats` does. A stopped
/// container reports no memory usage: that ends the stream rather than adding a zero sample.
fn usage_stream(
    docker: Docker,
    id: String,
    options: bollard::query_parameters::StatsOptions,
) -> impl futures_util::Stream<Item = Usage> + Send {
    docker
        .stats(&id, Some(options))
        .take_while(|response| {
            let running = matches!(response, Ok(r) if r.memory_stats.as_ref().and_then(|m| m.usage).is_some());
            std::future::ready(running)
        })
        .filter_map(|response| std::future::ready(response.ok()))
        .map(|response| Usage {
            cpu_percent: stats::cpu_percent(&response),
            mem_bytes: stats::memory_bytes(&response),
            anon_bytes: stats::anon_bytes(&response),
            kernel_bytes: stats::kernel_bytes(&response),
            read_epoch_ms: response.read.as_deref().and_then(epoch_ms),
            cpu_used_ms: stats::cpu_used_ms(&response),
        })
}

/// An RFC 3339 time as Docker writes it (`2026-11-28T02:33:19.123456789Z`), in Unix
/// milliseconds; `None` for Docker's zero time or anything unreadable.
fn epoch_ms(time: &str) -> Option<u64> {
    let at = humantime::parse_rfc3339(time).ok()?;
    let ms = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as u64;
    (ms > 0).then_some(ms)
}
