//! Idle memory (`wscbench idle-memory`): a local server's resident memory before, with N idle
//! joined clients, and after they leave.

use std::time::Duration;

use futures_util::StreamExt;
use serde::Serialize;
use serde_json::json;

use crate::catalog::local::LocalServer;
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
