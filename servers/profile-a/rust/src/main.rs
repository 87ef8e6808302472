//! wsca-rust, the profile-A Rust chat server of wscbench: axum 0.8 and its
//! WebSocket extractor (`axum::extract::ws`) on tokio. It implements
//! docs/protocol.md; the shape (protocol, limiter, stats, hub, client)
//! matches the other five servers.

mod client;

use std::future::IntoFuture;
use std::process::ExitCode;
use std::sync::Arc;

use axum::Router;
use axum::extract::{State, WebSocketUpgrade};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum_server::accept::NoDelayAcceptor;
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use tokio::net::TcpListener;

use crate::client::Hub;

/// The image tag, reported as `server` in /stats.
pub const SERVER: &str = "wsca-rust";

const USAGE: &str = "usage: wsca-rust [--host ADDR] [--port PORT] [--duration SECONDS] \
                     [--tls-cert FILE --tls-key FILE]";

/// Why `--deflate` is refused: what the server's manifest says in `[not_offered]`.
const NO_DEFLATE: &str = "--deflate: not offered, axum::extract::ws (tungstenite) has no \
                          permessage-deflate (snapview/tungstenite-rs issue #2, open)";

/// `/ws`, `/health` and `/stats`; axum answers any other path with 404.
pub fn app(hub: Arc<Hub>) -> Router {
    Router::new()
        .route("/ws", get(upgrade))
        .route("/health", get(health))
        .route("/stats", get(stats))
        .with_state(hub)
}

async fn upgrade(upgrade: WebSocketUpgrade, State(hub): State<Arc<Hub>>) -> Response {
    client::configure(upgrade).on_upgrade(move |socket| client::serve(socket, hub))
}

async fn health() -> &'static str {
    "ok"
}

async fn stats(State(hub): State<Arc<Hub>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        hub.stats.to_json(),
    )
}

#[tokio::main]
async fn main() -> ExitCode {
    chat_core::process::main(SERVER, USAGE, NO_DEFLATE, serve).await
}

/// Serves the app on `listener`: with axum's own server over TCP, or over
/// TLS with axum-server's rustls acceptor (axum's documented way to TLS),
/// which runs each handshake in the connection's task. Chat messages are
/// small and latency is what the benchmark measures: TCP_NODELAY on both.
///
/// Not `with_graceful_shutdown`: that waits for HTTP connections, but an
/// upgraded WebSocket lives in a task of its own that axum does not track.
/// chat-core drops this future at the stop signal, which closes the
/// listener; the hub closes the rest.
async fn serve(
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    hub: Arc<Hub>,
) -> std::io::Result<()> {
    let app = app(hub);
    let Some(tls) = tls else {
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        return axum::serve(listener, app).into_future().await;
    };
    let acceptor = RustlsAcceptor::new(RustlsConfig::from_config(tls)).acceptor(NoDelayAcceptor);
    axum_server::from_tcp(listener.into_std()?)?
        .acceptor(acceptor)
        .serve(app.into_make_service())
        .await
}

#[cfg(test)]
mod tests {
    use chat_core::stats::Stats;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;

    /// The whole response to a one-shot `GET path`.
    async fn get(addr: std::net::SocketAddr, path: &str) -> String {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        tcp.read_to_string(&mut response).await.unwrap();
        response
    }

    #[tokio::test]
    async fn answers_health_stats_and_404() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let hub = Arc::new(Hub::new(Arc::new(Stats::new(SERVER))));
        tokio::spawn(axum::serve(listener, app(hub)).into_future());

        let health = get(addr, "/health").await;
        assert!(health.starts_with("HTTP/1.1 200 OK\r\n"), "{health}");
        assert!(health.ends_with("\r\n\r\nok"), "{health}");

        let stats = get(addr, "/stats").await;
        assert!(stats.starts_with("HTTP/1.1 200 OK\r\n"), "{stats}");
        assert!(
            stats
                .to_ascii_lowercase()
                .contains("content-type: application/json\r\n"),
            "{stats}"
        );
        let body = stats.split_once("\r\n\r\n").unwrap().1;
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["server"], SERVER);

        let missing = get(addr, "/no-such-path").await;
        assert!(
            missing.starts_with("HTTP/1.1 404 Not Found\r\n"),
            "{missing}"
        );
    }
}
