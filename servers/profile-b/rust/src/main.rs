//! wsc-rust, the profile-B Rust chat server of wscbench: tokio and
//! tokio-tungstenite used directly, with the HTTP upgrade done by hand in
//! `http`. It implements docs/protocol.md; the shape (protocol, limiter,
//! stats, hub, client) matches the other five servers.

mod client;
mod http;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::time::{self, timeout};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

use crate::client::Hub;

/// The image tag, reported as `server` in /stats.
pub const SERVER: &str = "wsc-rust";

/// How long a client may take over its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

const USAGE: &str = "usage: wsc-rust [--host ADDR] [--port PORT] [--duration SECONDS] \
                     [--tls-cert FILE --tls-key FILE]";

/// Why `--deflate` is refused: what the server's manifest says in `[not_offered]`.
const NO_DEFLATE: &str = "--deflate: not offered, tungstenite has no permessage-deflate \
                          (snapview/tungstenite-rs issue #2, open)";

#[tokio::main]
async fn main() -> ExitCode {
    chat_core::process::main(SERVER, USAGE, NO_DEFLATE, serve).await
}

/// Accepts connections on `listener` and serves each in a task of its own,
/// over TLS with `tls`. chat-core drops this future at the stop signal,
/// which closes the listener; the hub closes the WebSockets.
async fn serve(
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    hub: Arc<Hub>,
) -> std::io::Result<()> {
    let tls = tls.map(TlsAcceptor::from);
    loop {
        match listener.accept().await {
            Ok((tcp, _)) => {
                // Chat messages are small and latency is what the benchmark measures.
                let _ = tcp.set_nodelay(true);
                let hub = Arc::clone(&hub);
                match tls.clone() {
                    None => tokio::spawn(http::handle(tcp, hub)),
                    Some(tls) => tokio::spawn(async move {
                        // A failed or stalled handshake ends the connection.
                        if let Ok(Ok(stream)) = timeout(HANDSHAKE_TIMEOUT, tls.accept(tcp)).await {
                            http::handle(stream, hub).await;
                        }
                    }),
                };
            }
            Err(error) => {
                // Out of file descriptors, say: wait instead of spinning.
                eprintln!("{SERVER}: accept: {error}");
                time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}
