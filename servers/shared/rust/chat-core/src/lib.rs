//! The chat core that profile-a/rust (axum) and profile-b/rust
//! (tokio-tungstenite) share: everything of docs/protocol.md that does not
//! depend on the WebSocket stack. Each server keeps its `main` and its
//! `client` (the upgrade, the reader and the writer) and brings its own
//! shared text buffer type (its stack's `Utf8Bytes`) to the hub.
//!
//! Reading order, after a server's README, `main` and `client`: [`hub`],
//! then [`protocol`]; [`limiter`] and [`stats`] are leaves, [`tls`] is
//! the servers' `--tls-cert`/`--tls-key` configuration, and [`cli`] their
//! command line and stop signal.

pub mod cli;
pub mod hub;
pub mod limiter;
pub mod pacer;
pub mod protocol;
pub mod stats;
pub mod tls;
