//! GET `/health` and `/stats` on loopback (and k6's REST API for a split run), through
//! hyper's HTTP/1.1 client connection (the hyper that bollard already brings in), with a
//! time-out around the whole exchange.

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// A failed GET.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Connecting failed.
    #[error("GET http://{addr}{path}: {source}")]
    Io {
        addr: String,
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// No answer in time.
    #[error("GET http://{addr}{path}: no answer within {timeout:?}")]
    Timeout {
        addr: String,
        path: String,
        timeout: Duration,
    },
    /// The exchange was not valid HTTP/1.1.
    #[error("GET http://{addr}{path}: {source}")]
    Http {
        addr: String,
        path: String,
        #[source]
        source: hyper::Error,
    },
}

/// A response: status code and body.
#[derive(Debug, Clone)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

/// `GET http://{addr}{path}` with `Connection: close`, within `timeout`.
pub async fn get(addr: &str, path: &str, timeout: Duration) -> Result<Response, HttpError> {
    request(hyper::Method::GET, addr, path, Vec::new(), timeout).await
}

/// The TLS client configuration of an `https` server (a wss run's), `None` for `http`.
pub type Tls<'a> = Option<&'a std::sync::Arc<rustls::ClientConfig>>;

/// [`get`], over TLS when `tls` is given (`https://{addr}{path}`).
pub async fn get_over(
    addr: &str,
    tls: Tls<'_>,
    path: &str,
    timeout: Duration,
) -> Result<Response, HttpError> {
    exchange(hyper::Method::GET, addr, tls, path, Vec::new(), timeout).await
}

/// `{method} http://{addr}{path}` with a JSON `body` (empty: none) and `Connection: close`,
/// within `timeout`.
pub async fn request(
    method: hyper::Method,
    addr: &str,
    path: &str,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Response, HttpError> {
    exchange(method, addr, None, path, body, timeout).await
}

async fn exchange(
    method: hyper::Method,
    addr: &str,
    tls: Tls<'_>,
    path: &str,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Response, HttpError> {
    let http = |source| HttpError::Http {
        addr: addr.into(),
        path: path.into(),
        source,
    };
    let exchange = async {
        let io = |source| HttpError::Io {
            addr: addr.into(),
            path: path.into(),
            source,
        };
        let tcp = TcpStream::connect(addr).await.map_err(io)?;
        let stream = crate::net::tls::Stream::over(tcp, tls).await.map_err(io)?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(http)?;
        // The connection task ends with the exchange (Connection: close) or with this call.
        let driver = tokio::spawn(connection);
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header(hyper::header::HOST, addr)
            .header(hyper::header::CONNECTION, "close")
            .header(hyper::header::USER_AGENT, "wscbench");
        if !body.is_empty() {
            request = request.header(hyper::header::CONTENT_TYPE, "application/json");
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .expect("a request for a path is valid");
        let result = async {
            let response = sender.send_request(request).await.map_err(http)?;
            let status = response.status().as_u16();
            let body = response.into_body().collect().await.map_err(http)?;
            Ok(Response {
                status,
                body: body.to_bytes().to_vec(),
            })
        }
        .await;
        driver.abort();
        result
    };
    match tokio::time::timeout(timeout, exchange).await {
        Ok(result) => result,
        Err(_) => Err(HttpError::Timeout {
            addr: addr.into(),
            path: path.into(),
            timeout,
        }),
    }
}

/// Why a server never answered `/health`.
#[derive(Debug)]
pub enum NotHealthy<T> {
    /// The server ended first; what `gone` said about it.
    Gone(T),
    /// No 200 within the time allowed.
    TimedOut,
}

/// Polls `GET http://{addr}/health` every 50 ms until it answers 200. Between polls, `gone`
/// says whether the server has ended (and why), so a dead server is not waited out.
pub async fn wait_healthy<T>(
    addr: &str,
    timeout: Duration,
    gone: impl AsyncFnMut() -> Option<T>,
) -> Result<(), NotHealthy<T>> {
    wait_healthy_over(addr, None, timeout, gone).await
}

/// [`wait_healthy`], over TLS when `tls` is given.
pub async fn wait_healthy_over<T>(
    addr: &str,
    tls: Tls<'_>,
    timeout: Duration,
    mut gone: impl AsyncFnMut() -> Option<T>,
) -> Result<(), NotHealthy<T>> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Ok(r) = get_over(addr, tls, "/health", Duration::from_millis(500)).await
            && r.status == 200
        {
            return Ok(());
        }
        if let Some(why) = gone().await {
            return Err(NotHealthy::Gone(why));
        }
        if tokio::time::Instant::now() > deadline {
            return Err(NotHealthy::TimedOut);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// A one-shot server that answers the first request with `raw`.
    async fn answer_once(raw: &'static [u8]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 1024];
            let _ = socket.read(&mut request).await;
            let _ = socket.write_all(raw).await;
        });
        addr
    }

    #[tokio::test]
    async fn reads_content_length_and_chunked_bodies() {
        let addr = answer_once(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").await;
        let plain = get(&addr, "/health", Duration::from_secs(2)).await.unwrap();
        assert_eq!((plain.status, plain.body.as_slice()), (200, &b"ok"[..]));
        let addr = answer_once(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n2\r\n\"}\r\n0\r\n\r\n",
        )
        .await;
        let chunked = get(&addr, "/stats", Duration::from_secs(2)).await.unwrap();
        assert_eq!(chunked.body, b"{\"a\"}");
    }

    #[tokio::test]
    async fn garbage_and_silence_are_errors_not_panics() {
        let addr = answer_once(b"hello\r\n\r\n").await;
        assert!(matches!(
            get(&addr, "/health", Duration::from_secs(2)).await,
            Err(HttpError::Http { .. })
        ));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let silent = listener.local_addr().unwrap().to_string();
        assert!(matches!(
            get(&silent, "/health", Duration::from_millis(200)).await,
            Err(HttpError::Timeout { .. })
        ));
    }
}
