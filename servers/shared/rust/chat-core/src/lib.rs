//! The chat core that profile-a/rust (axum) and profile-b/rust
//! (tokio-tungstenite) share: everything of docs/protocol.md that does not
//! depend on the WebSocket stack. Each server keeps its `main` and its
//! `client` (the upgrade, and its stack's messages as a [`client::Stack`],
//! whose `Utf8Bytes` is the hub's shared text buffer).
//!
//! Reading order, after a server's README, `main` and `client`: [`client`]
//! (the reader and the writer), [`hub`], then [`protocol`]; [`limiter`],
//! [`pacer`] and [`stats`] are leaves, [`tls`] is the servers'
//! `--tls-cert`/`--tls-key` configuration, [`cli`] their command line and
//! stop signal, and [`process`] the process around them (serve until the
//! stop signal, then shut down).

pub mod cli;
pub mod client;
pub mod hub;
pub mod limiter;
pub mod pacer;
pub mod process;
pub mod protocol;
pub mod stats;
pub mod tls;
