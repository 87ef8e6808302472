//! A deliberately tiny HTTP/1.1 GET client for `/health` and `/stats` on loopback.
//!
//! The servers answer these with small bodies; pulling in a full HTTP client for
//! two GETs would cost more compile time than it saves.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A failed GET.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Connecting, writing or reading failed.
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
    /// The answer was not HTTP.
    #[error("GET http://{addr}{path}: malformed response")]
    Malformed { addr: String, path: String },
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
    let fut = async {
        let io = |source| HttpError::Io {
            addr: addr.into(),
            path: path.into(),
            source,
        };
        let mut stream = TcpStream::connect(addr).await.map_err(io)?;
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nUser-Agent: wscbench\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.map_err(io)?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.map_err(io)?;
        parse(&raw).ok_or_else(|| HttpError::Malformed {
            addr: addr.into(),
            path: path.into(),
        })
    };
    match tokio::time::timeout(timeout, fut).await {
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
    mut gone: impl AsyncFnMut() -> Option<T>,
) -> Result<(), NotHealthy<T>> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Ok(r) = get(addr, "/health", Duration::from_millis(500)).await
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

fn parse(raw: &[u8]) -> Option<Response> {
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..head_end]).ok()?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked") {
            chunked = true;
        } else if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        }
    }
    let rest = &raw[head_end + 4..];
    let body = if chunked {
        dechunk(rest)?
    } else {
        match length {
            Some(n) if n <= rest.len() => rest[..n].to_vec(),
            Some(_) => return None,
            None => rest.to_vec(),
        }
    };
    Some(Response { status, body })
}

fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_content_length_and_chunked_bodies() {
        let plain = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").unwrap();
        assert_eq!((plain.status, plain.body.as_slice()), (200, &b"ok"[..]));
        let chunked = parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n2\r\n\"}\r\n0\r\n\r\n").unwrap();
        assert_eq!(chunked.body, b"{\"a\"}");
        let until_eof = parse(b"HTTP/1.0 404 Not Found\r\n\r\nnope").unwrap();
        assert_eq!(
            (until_eof.status, until_eof.body.as_slice()),
            (404, &b"nope"[..])
        );
    }

    #[test]
    fn garbage_is_not_a_response() {
        assert!(parse(b"hello").is_none());
        assert!(parse(b"HTTP/1.1 abc\r\n\r\n").is_none());
        assert!(parse(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort").is_none());
    }
}
