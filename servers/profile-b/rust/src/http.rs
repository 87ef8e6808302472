//! The little HTTP/1.1 this server speaks, by hand: `GET /ws` upgrades to
//! WebSocket, `/health` and `/stats` answer, any other path is 404. Plain
//! responses close the TCP connection (`Connection: close`): they are rare
//! (health checks, stats sampling) and keep-alive would only add code. The
//! request head is parsed with httparse, the parser tungstenite itself uses.
//! The connection is TCP, or TLS over it (`--tls-cert`); the same code serves
//! both. After the upgrade, `Counted` adds what the WebSocket writes to the
//! `bytes_written` counter.

use std::io::IoSlice;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::time::timeout;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::client::{self, Hub};

/// The longest request head read.
const MAX_HEAD_BYTES: usize = 8 * 1024;
/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// What a request asks for.
#[derive(Debug, PartialEq)]
enum Route {
    /// A valid WebSocket upgrade, with its `Sec-WebSocket-Accept` value.
    Upgrade(String),
    Health,
    Stats,
    BadRequest,
    NotFound,
}

/// Serves one accepted connection, TCP or TLS.
pub async fn handle<S>(mut tcp: S, hub: Arc<Hub>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Ok(Ok(Some((mut head, head_len)))) = timeout(HEAD_TIMEOUT, read_head(&mut tcp)).await
    else {
        return;
    };
    match route(&head[..head_len]) {
        Route::Upgrade(accept) => {
            let response = format!(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                 Sec-WebSocket-Accept: {accept}\r\n\r\n"
            );
            if tcp.write_all(response.as_bytes()).await.is_err() {
                return;
            }
            // Bytes read past the head already belong to the WebSocket stream.
            let early = head.split_off(head_len);
            drop(head);
            let counted = Counted {
                inner: tcp,
                written: Arc::clone(&hub.stats),
            };
            let socket = WebSocketStream::from_partially_read(
                counted,
                early,
                Role::Server,
                Some(client::config()),
            )
            .await;
            client::serve(socket, hub).await;
        }
        Route::Health => respond(&mut tcp, "200 OK", "text/plain", "ok").await,
        Route::Stats => respond(&mut tcp, "200 OK", "application/json", &hub.stats.to_json()).await,
        Route::BadRequest => {
            respond(&mut tcp, "400 Bad Request", "text/plain", "bad request").await
        }
        Route::NotFound => respond(&mut tcp, "404 Not Found", "text/plain", "not found").await,
    }
}

/// Reads until the blank line that ends the head. Returns what was read and
/// the head's length, or `None` if the peer left or the head is too long.
async fn read_head<S: AsyncRead + Unpin>(tcp: &mut S) -> std::io::Result<Option<(Vec<u8>, usize)>> {
    let mut buffer = Vec::with_capacity(1024);
    loop {
        if tcp.read_buf(&mut buffer).await? == 0 {
            return Ok(None);
        }
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            return Ok(Some((buffer, end + 4)));
        }
        if buffer.len() >= MAX_HEAD_BYTES {
            return Ok(None);
        }
    }
}

/// An upgraded connection's stream, counting the bytes written through it:
/// WebSocket frames as tungstenite hands them to the socket or to TLS.
struct Counted<S> {
    inner: S,
    written: Arc<chat_core::stats::Stats>,
}

impl<S> Counted<S> {
    fn count(&self, written: Poll<std::io::Result<usize>>) -> Poll<std::io::Result<usize>> {
        if let Poll::Ready(Ok(n)) = written {
            add_bytes(&self.written.bytes_written, n);
        }
        written
    }
}

fn add_bytes(counter: &AtomicU64, n: usize) {
    counter.fetch_add(n as u64, Relaxed);
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.count(written)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.count(written)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

fn route(head: &[u8]) -> Route {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut request = httparse::Request::new(&mut headers);
    let Ok(httparse::Status::Complete(_)) = request.parse(head) else {
        return Route::BadRequest;
    };
    let path = request.path.unwrap_or("/");
    let path = path.split_once('?').map_or(path, |(path, _query)| path);
    match path {
        "/ws" => upgrade(&request).map_or(Route::BadRequest, Route::Upgrade),
        "/health" => Route::Health,
        "/stats" => Route::Stats,
        _ => Route::NotFound,
    }
}

/// The `Sec-WebSocket-Accept` value for a valid upgrade request (RFC 6455, 4.2.1).
fn upgrade(request: &httparse::Request) -> Option<String> {
    let header = |name: &str| {
        let value = request
            .headers
            .iter()
            .find(|header| header.name.eq_ignore_ascii_case(name))?
            .value;
        std::str::from_utf8(value).ok().map(str::trim)
    };
    let has_token = |name: &str, token: &str| {
        header(name).is_some_and(|value| {
            value
                .split(',')
                .any(|part| part.trim().eq_ignore_ascii_case(token))
        })
    };
    let valid = request.method == Some("GET")
        && has_token("Upgrade", "websocket")
        && has_token("Connection", "upgrade")
        && header("Sec-WebSocket-Version") == Some("13");
    let key = header("Sec-WebSocket-Key").filter(|key| !key.is_empty())?;
    valid.then(|| derive_accept_key(key.as_bytes()))
}

async fn respond<S: AsyncWrite + Unpin>(tcp: &mut S, status: &str, content_type: &str, body: &str) {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tcp.write_all(response.as_bytes()).await;
    let _ = tcp.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    const UPGRADE: &str = "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\
                           Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

    #[test]
    fn routes_paths() {
        assert_eq!(
            route(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"),
            Route::Health
        );
        assert_eq!(route(b"GET /stats?x=1 HTTP/1.1\r\n\r\n"), Route::Stats);
        assert_eq!(route(b"GET / HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(route(b"GET /wss HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(route(b"nonsense\r\n\r\n"), Route::BadRequest);
    }

    #[test]
    fn upgrades_with_the_rfc_accept_key() {
        // The example key and answer of RFC 6455, section 1.3.
        assert_eq!(
            route(UPGRADE.as_bytes()),
            Route::Upgrade("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".to_owned())
        );
    }

    #[test]
    fn refuses_an_incomplete_upgrade() {
        for (from, to) in [
            ("Upgrade: websocket\r\n", ""),
            ("keep-alive, Upgrade", "keep-alive"),
            ("Version: 13", "Version: 8"),
            ("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", ""),
            ("GET", "POST"),
        ] {
            assert_eq!(
                route(UPGRADE.replace(from, to).as_bytes()),
                Route::BadRequest,
                "without {from}"
            );
        }
    }
}
