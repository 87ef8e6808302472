//! A WebSocket spoken by hand, for frames a client library will not send: non-UTF-8 text,
//! stray continuations, reserved bits and opcodes, unmasked frames, declared-oversize
//! headers, half frames. Shared by the hostile checks and the conformance cases; over ws or
//! wss, with permessage-deflate offered when the target asks for it.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use super::Target;
use super::client::DEFLATE_OFFER;

/// The mask key of every raw client frame.
pub(crate) const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// The FIN bit of a frame's first byte.
pub(crate) const FIN: u8 = 0x80;
/// The RSV1 bit (permessage-deflate's "compressed").
pub(crate) const RSV1: u8 = 0x40;
/// The RSV2 bit.
pub(crate) const RSV2: u8 = 0x20;
/// The RSV3 bit.
pub(crate) const RSV3: u8 = 0x10;

/// A masked client frame: FIN bit, opcode, payload.
pub(crate) fn frame(opcode: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
    frame_bits((if fin { FIN } else { 0 }) | opcode, true, payload)
}

/// A client frame whose first byte is `first` (FIN, RSV bits and opcode as given), masked
/// or not.
pub(crate) fn frame_bits(first: u8, masked: bool, payload: &[u8]) -> Vec<u8> {
    let mut out = header_bits(first, masked, payload.len() as u64);
    if masked {
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ MASK[i % 4]));
    } else {
        out.extend_from_slice(payload);
    }
    out
}

/// A masked client frame's header (with mask key) announcing `len` bytes of payload.
pub(crate) fn header(opcode: u8, fin: bool, len: u64) -> Vec<u8> {
    header_bits((if fin { FIN } else { 0 }) | opcode, true, len)
}

fn header_bits(first: u8, masked: bool, len: u64) -> Vec<u8> {
    let mask_bit = if masked { 0x80 } else { 0 };
    let mut out = vec![first];
    match len {
        0..=125 => out.push(mask_bit | len as u8),
        126..=65535 => {
            out.push(mask_bit | 126);
            out.extend((len as u16).to_be_bytes());
        }
        _ => {
            out.push(mask_bit | 127);
            out.extend(len.to_be_bytes());
        }
    }
    if masked {
        out.extend(MASK);
    }
    out
}

/// The path of the target's WebSocket URL, e.g. `/ws`.
pub(crate) fn ws_path(target: &Target) -> &str {
    target
        .ws_url
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]))
        .unwrap_or("/ws")
}

fn upgrade_request(target: &Target) -> String {
    let extensions = if target.deflate {
        format!("Sec-WebSocket-Extensions: {DEFLATE_OFFER}\r\n")
    } else {
        String::new()
    };
    format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extensions}\r\n",
        ws_path(target),
        target.addr
    )
}

/// A TCP connection to the target (no TLS, no upgrade).
pub(crate) async fn tcp(target: &Target, recv_buffer: Option<u32>) -> Result<TcpStream, String> {
    let addr: std::net::SocketAddr = target.addr.parse().map_err(|e| format!("{e}"))?;
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(|e| format!("socket: {e}"))?;
    if let Some(size) = recv_buffer {
        socket.set_recv_buffer_size(size).ok();
    }
    tokio::time::timeout(Duration::from_secs(3), socket.connect(addr))
        .await
        .map_err(|_| "connect timed out".to_string())?
        .map_err(|e| format!("connect: {e}"))
}

/// What reading a raw connection gave.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawEvent {
    /// One whole server frame: its opcode and payload.
    Frame(u8, Vec<u8>),
    /// The connection ended (EOF or an error) before a whole frame.
    Ended(String),
    /// Nothing whole arrived in time.
    Quiet,
}

/// A raw WebSocket connection after a successful upgrade.
pub(crate) struct Raw {
    pub(crate) stream: crate::net::tls::Stream,
    buf: Vec<u8>,
    /// Whether the server accepted the permessage-deflate offer.
    pub(crate) deflate: bool,
}

impl Raw {
    /// Connects (TLS when the target has it), upgrades, and offers permessage-deflate when
    /// the target asks for it.
    pub(crate) async fn upgrade(target: &Target, recv_buffer: Option<u32>) -> Result<Self, String> {
        let tcp = tcp(target, recv_buffer).await?;
        tcp.set_nodelay(true).ok();
        let mut stream = tokio::time::timeout(
            Duration::from_secs(3),
            crate::net::tls::Stream::over(tcp, target.tls.as_ref()),
        )
        .await
        .map_err(|_| "TLS handshake timed out".to_string())?
        .map_err(|e| format!("TLS handshake: {e}"))?;
        stream
            .write_all(upgrade_request(target).as_bytes())
            .await
            .map_err(|e| format!("writing the upgrade: {e}"))?;
        let mut buf = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 1024];
            let left = deadline.saturating_duration_since(Instant::now());
            let n = tokio::time::timeout(left, stream.read(&mut chunk))
                .await
                .map_err(|_| "no upgrade response within 5 s".to_string())?
                .map_err(|e| format!("reading the upgrade response: {e}"))?;
            if n == 0 {
                return Err("the connection closed during the upgrade".into());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        if !buf.starts_with(b"HTTP/1.1 101") {
            return Err(format!(
                "upgrade refused: {}",
                head.lines().next().unwrap_or_default()
            ));
        }
        let deflate = head.lines().any(|l| {
            let l = l.to_ascii_lowercase();
            l.starts_with("sec-websocket-extensions:") && l.contains("permessage-deflate")
        });
        buf.drain(..end);
        Ok(Self {
            stream,
            buf,
            deflate,
        })
    }

    pub(crate) async fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.stream
            .write_all(bytes)
            .await
            .map_err(|e| format!("write: {e}"))?;
        self.stream.flush().await.map_err(|e| format!("write: {e}"))
    }

    pub(crate) async fn send_text(&mut self, text: &str) -> Result<(), String> {
        self.send(&frame(1, true, text.as_bytes())).await
    }

    /// The next whole server frame, waiting at most `timeout`.
    pub(crate) async fn next(&mut self, timeout: Duration) -> RawEvent {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some((opcode, payload, used)) = parse(&self.buf) {
                self.buf.drain(..used);
                return RawEvent::Frame(opcode, payload);
            }
            let mut chunk = [0u8; 8192];
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.stream.read(&mut chunk)).await {
                Err(_) => return RawEvent::Quiet,
                Ok(Ok(0)) => return RawEvent::Ended("the connection ended".into()),
                Ok(Err(e)) => return RawEvent::Ended(format!("the connection broke ({e})")),
                Ok(Ok(n)) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// Reads frames until a close frame (its code) or the end of the connection (`Err`).
    pub(crate) async fn expect_close(&mut self, timeout: Duration) -> Result<Option<u16>, String> {
        let deadline = Instant::now() + timeout;
        loop {
            match self
                .next(deadline.saturating_duration_since(Instant::now()))
                .await
            {
                RawEvent::Frame(8, payload) => return Ok(close_code(&payload)),
                RawEvent::Frame(..) => {}
                RawEvent::Quiet => return Err(format!("no close frame within {timeout:?}")),
                RawEvent::Ended(why) => return Err(format!("{why} without a close frame")),
            }
        }
    }

    /// Ends the connection with a TCP reset rather than a close handshake.
    pub(crate) fn reset(self) {
        let tcp = match &self.stream {
            crate::net::tls::Stream::Plain(s) => s,
            crate::net::tls::Stream::Tls(s) => s.get_ref().0,
        };
        tcp.set_zero_linger().ok();
        drop(self.stream);
    }
}

/// The status code of a close frame's payload, if it has one.
pub(crate) fn close_code(payload: &[u8]) -> Option<u16> {
    (payload.len() >= 2).then(|| u16::from_be_bytes([payload[0], payload[1]]))
}

/// One unmasked server frame at the start of `buf`: (opcode, payload, bytes used).
pub(crate) fn parse(buf: &[u8]) -> Option<(u8, Vec<u8>, usize)> {
    if buf.len() < 2 {
        return None;
    }
    let opcode = buf[0] & 0x0f;
    let (len, start) = match buf[1] & 0x7f {
        126 => (u16::from_be_bytes([*buf.get(2)?, *buf.get(3)?]) as usize, 4),
        127 => (
            u64::from_be_bytes(buf.get(2..10)?.try_into().ok()?) as usize,
            10,
        ),
        n => (n as usize, 2),
    };
    let payload = buf.get(start..start + len)?;
    Some((opcode, payload.to_vec(), start + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_frames_are_masked_and_parse_back() {
        let f = frame(1, true, b"hi");
        assert_eq!(&f[..2], &[0x81, 0x82]);
        let unmasked = [0x88, 0x02, 0x03, 0xf1];
        assert_eq!(parse(&unmasked), Some((8, vec![0x03, 0xf1], 4)));
        assert_eq!(header(1, true, 1 << 20)[1], 0x80 | 127);
    }

    #[test]
    fn an_unmasked_frame_carries_its_payload_as_is_with_the_bits_given() {
        let f = frame_bits(FIN | RSV2 | 1, false, b"hi");
        assert_eq!(f, vec![0xa1, 0x02, b'h', b'i']);
    }

    #[test]
    fn the_upgrade_path_is_read_from_ws_and_wss_urls() {
        let t = Target {
            ws_url: "wss://127.0.0.1:9/chat".into(),
            ..Target::loopback(9)
        };
        assert_eq!(ws_path(&t), "/chat");
        assert_eq!(ws_path(&Target::loopback(9)), "/ws");
        assert!(upgrade_request(&Target::loopback(9).with_deflate()).contains(DEFLATE_OFFER));
    }
}
