//! Idle memory: a server's resident memory before, with N idle joined clients, and after they
//! leave; and a container's memory split into its user-space and its kernel part.

use std::time::Duration;

use bollard::models::ContainerStatsResponse;

use futures_util::StreamExt;
use serde::Serialize;
use serde_json::json;

use crate::local::LocalServer;
use crate::verify::Target;
use crate::verify::client::Member;

/// The three readings, in bytes of VmRSS.
#[derive(Debug, Clone, Serialize)]
pub struct IdleMemory {
    /// Clients that joined.
    pub clients: usize,
    /// Before any client connected.
    pub before_bytes: u64,
    /// With every client joined and idle.
    pub joined_bytes: u64,
    /// After every client left.
    pub after_bytes: u64,
}

/// Why a measurement failed.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The process' memory could not be read.
    #[error("could not read the server's resident memory from /proc")]
    NoRss,
    /// Clients could not join.
    #[error("client {index} of {clients} could not join: {reason}")]
    Join {
        index: usize,
        clients: usize,
        reason: String,
    },
}

impl MemoryError {
    /// Every way a measurement fails is a failure.
    pub fn class(&self) -> crate::ErrorClass {
        match self {
            Self::NoRss | Self::Join { .. } => crate::ErrorClass::Failure,
        }
    }
}

/// How long to let the server settle before each reading.
const SETTLE: Duration = Duration::from_secs(2);
/// Clients that connect at the same time.
const BATCH: usize = 100;

/// Joins `clients` idle members to `server`, reading its memory before, during and after.
/// Each client drains what it is sent, so the server's queues stay empty: this is idle cost.
pub async fn measure(
    server: &LocalServer,
    clients: usize,
    mut progress: impl FnMut(&str),
) -> Result<IdleMemory, MemoryError> {
    let target = Target::loopback(server.port);
    tokio::time::sleep(SETTLE / 2).await;
    let before_bytes = server.rss_bytes().ok_or(MemoryError::NoRss)?;
    let mut sinks = Vec::with_capacity(clients);
    let mut drains = Vec::with_capacity(clients);
    for start in (0..clients).step_by(BATCH) {
        let end = (start + BATCH).min(clients);
        let joins = (start..end).map(|i| Member::join(&target, format!("idle-{i}")));
        for (offset, joined) in futures_util::future::join_all(joins)
            .await
            .into_iter()
            .enumerate()
        {
            let member = joined.map_err(|reason| MemoryError::Join {
                index: start + offset,
                clients,
                reason,
            })?;
            let (sink, mut stream) = member.ws.split();
            drains.push(tokio::spawn(async move {
                while let Some(Ok(_)) = stream.next().await {}
            }));
            sinks.push(sink);
        }
        progress(&format!("{end}/{clients} joined"));
    }
    tokio::time::sleep(SETTLE).await;
    let joined_bytes = server.rss_bytes().ok_or(MemoryError::NoRss)?;
    progress("all joined; leaving");
    let leave = json!({"type": "leave"}).to_string();
    for batch in sinks.chunks_mut(BATCH) {
        futures_util::future::join_all(batch.iter_mut().map(|sink| {
            use futures_util::SinkExt;
            sink.send(tokio_tungstenite::tungstenite::Message::text(leave.clone()))
        }))
        .await;
    }
    // The server closes each connection after its leave; the drains end with them.
    let _ = tokio::time::timeout(
        Duration::from_secs(10),
        futures_util::future::join_all(drains),
    )
    .await;
    drop(sinks);
    tokio::time::sleep(SETTLE).await;
    let after_bytes = server.rss_bytes().ok_or(MemoryError::NoRss)?;
    Ok(IdleMemory {
        clients,
        before_bytes,
        joined_bytes,
        after_bytes,
    })
}

/// A `memory.stat` counter of a Docker stats response, by its v2 or its v1 (hierarchical
/// first) name.
fn stat(stats: &ContainerStatsResponse, names: &[&str]) -> Option<u64> {
    let detail = stats.memory_stats.as_ref()?.stats.as_ref()?;
    names.iter().find_map(|n| detail.get(*n).copied())
}

/// The container's anonymous (user-space) memory: what its processes allocated, in bytes:
/// `anon` on cgroup v2, `total_rss` (or `rss`) on v1.
pub fn anon_bytes(stats: &ContainerStatsResponse) -> Option<u64> {
    stat(stats, &["anon", "total_rss", "rss"])
}

/// The kernel's memory charged to the container, in bytes: on cgroup v2 its `kernel`
/// counter (kernels from 5.18), else `slab` + `sock` + `kernel_stack` + `pagetables` +
/// `percpu`; on v1, whose `memory.stat` has no kernel line, what the cgroup is charged
/// beyond anonymous memory and page cache (`usage` − `total_rss` − `total_cache`), which on
/// the kernels that charge kernel memory to v1 cgroups is slab, stacks and page tables
/// (sockets' buffers only where `memory.kmem.tcp` accounting is on).
pub fn kernel_bytes(stats: &ContainerStatsResponse) -> Option<u64> {
    let detail = stats.memory_stats.as_ref()?.stats.as_ref()?;
    if detail.contains_key("anon") {
        if let Some(k) = detail.get("kernel") {
            return Some(*k);
        }
        let parts = ["slab", "sock", "kernel_stack", "pagetables", "percpu"];
        return Some(parts.iter().filter_map(|n| detail.get(*n)).sum());
    }
    let usage = stats.memory_stats.as_ref()?.usage?;
    let rss = stat(stats, &["total_rss", "rss"])?;
    let cache = stat(stats, &["total_cache", "cache"])?;
    Some(usage.saturating_sub(rss + cache))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bollard::models::ContainerMemoryStats;
    use std::collections::HashMap;

    fn response(usage: u64, stat: &[(&str, u64)]) -> ContainerStatsResponse {
        ContainerStatsResponse {
            memory_stats: Some(ContainerMemoryStats {
                usage: Some(usage),
                stats: Some(
                    stat.iter()
                        .map(|(k, v)| (k.to_string(), *v))
                        .collect::<HashMap<_, _>>(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn cgroup_v2_names_its_anonymous_and_kernel_memory() {
        let r = response(
            100,
            &[("anon", 60), ("kernel", 30), ("slab", 20), ("file", 10)],
        );
        assert_eq!((anon_bytes(&r), kernel_bytes(&r)), (Some(60), Some(30)));
        let older = response(
            100,
            &[("anon", 60), ("slab", 20), ("sock", 4), ("kernel_stack", 2)],
        );
        assert_eq!(kernel_bytes(&older), Some(26));
    }

    #[test]
    fn on_cgroup_v1_the_kernels_part_is_what_is_neither_anonymous_nor_cache() {
        let r = response(100, &[("total_rss", 50), ("rss", 49), ("total_cache", 20)]);
        assert_eq!((anon_bytes(&r), kernel_bytes(&r)), (Some(50), Some(30)));
        assert_eq!(
            kernel_bytes(&response(10, &[("total_rss", 50), ("total_cache", 20)])),
            Some(0)
        );
    }

    #[test]
    fn no_memory_stat_says_nothing() {
        let r = ContainerStatsResponse::default();
        assert_eq!((anon_bytes(&r), kernel_bytes(&r)), (None, None));
    }
}
