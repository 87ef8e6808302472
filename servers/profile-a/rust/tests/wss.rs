//! The server as a process, over wss: it serves TLS only with the
//! certificate it is given (made here, per run), chats over it, counts the
//! bytes it writes, and refuses certificate files it cannot serve.

const BINARY: &str = env!("CARGO_BIN_EXE_wsca-rust");

// The checks are shared with the other Rust server (servers/shared/rust/chat-core).
include!("../../../shared/rust/chat-core/server-tests/wss.rs");
