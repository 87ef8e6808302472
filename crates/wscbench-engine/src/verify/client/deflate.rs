//! permessage-deflate (RFC 7692) for the verifier's client, below tungstenite, which has no
//! extension support: a stream wrapper that, once the handshake has negotiated the
//! extension, compresses each whole data message tungstenite writes (RSV1 set, a fresh
//! context per message) and inflates each compressed message the server sends into the
//! plain frame tungstenite expects. Control frames and uncompressed messages pass as they are.

use std::io::{self, Write};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use flate2::{Decompress, FlushDecompress, Status};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use wscbench_results::DeflateParams;

/// What the client offers, as gorilla's client (the load generator's) does.
pub const OFFER: &str =
    "permessage-deflate; server_no_context_takeover; client_no_context_takeover";

/// A frame longer than this is handed to tungstenite as it is, and the codec stops: its own
/// size limit (64 MiB) then decides, as without the extension.
const MAX_FRAME: u64 = 64 << 20;
/// An inflated message longer than this is an error (tungstenite's message limit).
const MAX_MESSAGE: usize = 64 << 20;
/// Output buffered for the socket before a write waits for it to drain.
const MAX_PENDING_OUT: usize = 256 << 10;
/// The four bytes a sync flush ends with, which the sender strips (RFC 7692 section 7.2.1).
const TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// A byte stream that applies permessage-deflate to the WebSocket frames crossing it, once
/// [`Deflating::enable`] is called; until then (the HTTP handshake) bytes pass unchanged.
#[derive(Debug)]
pub struct Deflating<S> {
    inner: S,
    codec: Option<Codec>,
    /// Bytes read from the socket that do not make a whole frame yet.
    in_raw: Vec<u8>,
    /// Frames for tungstenite, and how much of them it has read.
    in_ready: Vec<u8>,
    in_taken: usize,
    eof: bool,
    /// Bytes tungstenite wrote that do not make a whole frame yet.
    out_raw: Vec<u8>,
    /// Frames for the socket.
    out_ready: Vec<u8>,
}

/// The extension's state once negotiated.
struct Codec {
    params: DeflateParams,
    inflater: Decompress,
    /// A compressed message arriving in fragments: its opcode and payload so far.
    assembling: Option<(u8, Vec<u8>)>,
    /// Compressed messages received and sent.
    inflated: u64,
    deflated: u64,
}

impl std::fmt::Debug for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Codec")
            .field("params", &self.params)
            .field("inflated", &self.inflated)
            .field("deflated", &self.deflated)
            .finish_non_exhaustive()
    }
}

impl<S> Deflating<S> {
    /// `inner`, with the extension off.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            codec: None,
            in_raw: Vec::new(),
            in_ready: Vec::new(),
            in_taken: 0,
            eof: false,
            out_raw: Vec::new(),
            out_ready: Vec::new(),
        }
    }

    /// Applies the extension from now on, as the server's answer `params` set it up.
    pub fn enable(&mut self, params: DeflateParams) {
        self.codec = Some(Codec {
            params,
            inflater: Decompress::new(false),
            assembling: None,
            inflated: 0,
            deflated: 0,
        });
    }

    /// The negotiated parameters, and how many compressed messages were received and sent;
    /// `None` without the extension.
    pub fn negotiated(&self) -> Option<(&DeflateParams, u64, u64)> {
        self.codec
            .as_ref()
            .map(|c| (&c.params, c.inflated, c.deflated))
    }

    /// The stream below.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// Moves every whole frame in `in_raw` to `in_ready`, inflated.
    fn decode(&mut self) -> io::Result<()> {
        let mut at = 0;
        while let Some(codec) = self.codec.as_mut() {
            let Some(header) = Header::parse(&self.in_raw[at..]) else {
                break;
            };
            if header.payload_len > MAX_FRAME {
                self.codec = None;
                break;
            }
            let end = at + header.len + header.payload_len as usize;
            if end > self.in_raw.len() {
                break;
            }
            codec.inbound(&self.in_raw[at..end], &header, &mut self.in_ready)?;
            at = end;
        }
        if self.codec.is_none() {
            // Without the codec every byte passes as it is.
            self.in_ready.extend_from_slice(&self.in_raw[at..]);
            at = self.in_raw.len();
        }
        self.in_raw.drain(..at);
        Ok(())
    }

    /// Moves every whole frame in `out_raw` to `out_ready`, compressed.
    fn encode(&mut self) -> io::Result<()> {
        let mut at = 0;
        if let Some(codec) = self.codec.as_mut() {
            while let Some(header) = Header::parse(&self.out_raw[at..]) {
                let end = at + header.len + header.payload_len as usize;
                if end > self.out_raw.len() {
                    break;
                }
                codec.outbound(&self.out_raw[at..end], &header, &mut self.out_ready)?;
                at = end;
            }
        } else {
            at = self.out_raw.len();
            self.out_ready.extend_from_slice(&self.out_raw);
        }
        self.out_raw.drain(..at);
        Ok(())
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Deflating<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.codec.is_none() && this.in_taken == this.in_ready.len() {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        loop {
            if this.in_taken < this.in_ready.len() {
                let n = buf.remaining().min(this.in_ready.len() - this.in_taken);
                buf.put_slice(&this.in_ready[this.in_taken..this.in_taken + n]);
                this.in_taken += n;
                if this.in_taken == this.in_ready.len() {
                    this.in_ready.clear();
                    this.in_taken = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 16 << 10];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                // The end: what is left of a frame goes up as it is, for tungstenite to judge.
                this.eof = true;
                let rest = std::mem::take(&mut this.in_raw);
                this.in_ready.extend_from_slice(&rest);
                continue;
            }
            this.in_raw.extend_from_slice(read.filled());
            this.decode()?;
        }
    }
}

impl<S: AsyncWrite + Unpin> Deflating<S> {
    /// Writes out what is ready; `Pending` only when nothing could be written.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.out_ready.is_empty() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.out_ready))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.out_ready.drain(..n);
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Deflating<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.codec.is_none() && this.out_raw.is_empty() && this.out_ready.is_empty() {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        }
        if let Poll::Ready(Err(e)) = this.poll_drain(cx) {
            return Poll::Ready(Err(e));
        }
        if this.out_ready.len() >= MAX_PENDING_OUT {
            // The socket is full (poll_drain left it to wake us).
            return Poll::Pending;
        }
        this.out_raw.extend_from_slice(buf);
        this.encode()?;
        if let Poll::Ready(Err(e)) = this.poll_drain(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

impl Codec {
    /// A server frame: a compressed message becomes one plain frame; the rest pass.
    fn inbound(&mut self, frame: &[u8], header: &Header, out: &mut Vec<u8>) -> io::Result<()> {
        let payload = header.payload(frame);
        let data_frame = header.opcode == 1 || header.opcode == 2;
        if data_frame && header.rsv1 && self.assembling.is_none() {
            if header.fin {
                let plain = self.inflate(&payload)?;
                write_frame(out, header.opcode, None, &plain);
            } else {
                self.assembling = Some((header.opcode, payload));
            }
        } else if header.opcode == 0 && !header.rsv1 && self.assembling.is_some() {
            let (opcode, mut message) = self.assembling.take().expect("checked");
            message.extend_from_slice(&payload);
            if header.fin {
                let plain = self.inflate(&message)?;
                write_frame(out, opcode, None, &plain);
            } else {
                self.assembling = Some((opcode, message));
            }
        } else {
            // Control frames, uncompressed messages, and what tungstenite must refuse itself.
            out.extend_from_slice(frame);
        }
        Ok(())
    }

    /// A client frame: a whole data message is compressed; the rest pass.
    fn outbound(&mut self, frame: &[u8], header: &Header, out: &mut Vec<u8>) -> io::Result<()> {
        let data_frame = header.opcode == 1 || header.opcode == 2;
        if !(data_frame && header.fin && !header.rsv1) {
            out.extend_from_slice(frame);
            return Ok(());
        }
        let compressed = deflate(&header.payload(frame))?;
        write_frame(out, 0x40 | header.opcode, header.mask, &compressed);
        self.deflated += 1;
        Ok(())
    }

    fn inflate(&mut self, compressed: &[u8]) -> io::Result<Vec<u8>> {
        if self.params.server_no_context_takeover || self.inflated == 0 {
            self.inflater.reset(false);
        }
        let input = [compressed, &TAIL].concat();
        let mut plain = Vec::with_capacity(input.len() * 4 + 64);
        let mut used = 0;
        loop {
            if plain.capacity() - plain.len() < 1024 {
                plain.reserve(plain.capacity());
            }
            let (in_before, out_before) = (self.inflater.total_in(), plain.len());
            let status = self
                .inflater
                .decompress_vec(&input[used..], &mut plain, FlushDecompress::Sync)
                .map_err(|e| invalid(format!("a compressed message does not inflate: {e}")))?;
            used += (self.inflater.total_in() - in_before) as usize;
            if plain.len() > MAX_MESSAGE {
                return Err(invalid(format!(
                    "a compressed message inflates past {MAX_MESSAGE} bytes"
                )));
            }
            let room_left = plain.len() < plain.capacity();
            if status == Status::StreamEnd || (used == input.len() && room_left) {
                break;
            }
            if used == input.len() && plain.len() == out_before {
                break;
            }
        }
        self.inflated += 1;
        Ok(plain)
    }
}

/// A message compressed on its own (no context kept), its sync-flush tail removed.
pub(crate) fn deflate(plain: &[u8]) -> io::Result<Vec<u8>> {
    let mut encoder =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(plain)?;
    // A sync flush: every byte out, the stream not finished.
    encoder.flush()?;
    let mut compressed = std::mem::take(encoder.get_mut());
    if compressed.ends_with(&TAIL) {
        compressed.truncate(compressed.len() - TAIL.len());
    }
    Ok(compressed)
}

fn invalid(detail: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("permessage-deflate: {detail}"),
    )
}

/// A frame's header (RFC 6455 section 5.2).
#[derive(Debug, Clone, PartialEq)]
struct Header {
    fin: bool,
    rsv1: bool,
    opcode: u8,
    mask: Option<[u8; 4]>,
    /// The header's own length, in bytes.
    len: usize,
    payload_len: u64,
}

impl Header {
    /// The header at the start of `bytes`; `None` until all of it is there.
    fn parse(bytes: &[u8]) -> Option<Header> {
        let [first, second, ..] = *bytes else {
            return None;
        };
        let (payload_len, mut len) = match second & 0x7f {
            126 => (
                u64::from(u16::from_be_bytes(bytes.get(2..4)?.try_into().ok()?)),
                4,
            ),
            127 => (u64::from_be_bytes(bytes.get(2..10)?.try_into().ok()?), 10),
            n => (u64::from(n), 2),
        };
        let mask = if second & 0x80 != 0 {
            let key: [u8; 4] = bytes.get(len..len + 4)?.try_into().ok()?;
            len += 4;
            Some(key)
        } else {
            None
        };
        Some(Header {
            fin: first & 0x80 != 0,
            rsv1: first & 0x40 != 0,
            opcode: first & 0x0f,
            mask,
            len,
            payload_len,
        })
    }

    /// The frame's payload, unmasked.
    fn payload(&self, frame: &[u8]) -> Vec<u8> {
        let mut payload = frame[self.len..].to_vec();
        if let Some(key) = self.mask {
            apply_mask(&mut payload, key);
        }
        payload
    }
}

fn apply_mask(bytes: &mut [u8], key: [u8; 4]) {
    for (i, b) in bytes.iter_mut().enumerate() {
        *b ^= key[i % 4];
    }
}

/// Writes one final frame: `bits` is the opcode with RSV1 (0x40) when compressed.
fn write_frame(out: &mut Vec<u8>, bits: u8, mask: Option<[u8; 4]>, payload: &[u8]) {
    out.push(0x80 | bits);
    let masked = if mask.is_some() { 0x80 } else { 0 };
    match payload.len() {
        n if n < 126 => out.push(masked | n as u8),
        n if n <= usize::from(u16::MAX) => {
            out.push(masked | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(masked | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    if let Some(key) = mask {
        out.extend_from_slice(&key);
    }
    let start = out.len();
    out.extend_from_slice(payload);
    if let Some(key) = mask {
        // Masked on the way out with the key tungstenite chose.
        apply_mask(&mut out[start..], key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn no_takeover() -> DeflateParams {
        DeflateParams::parse(OFFER).unwrap()
    }

    fn codec(params: DeflateParams) -> Deflating<tokio::io::DuplexStream> {
        let (one, _) = tokio::io::duplex(64);
        let mut d = Deflating::new(one);
        d.enable(params);
        d
    }

    /// Every frame in `bytes` through the inbound path, as the client would read them.
    fn inbound(d: &mut Deflating<tokio::io::DuplexStream>, bytes: &[u8]) -> Vec<u8> {
        d.in_raw.extend_from_slice(bytes);
        d.decode().unwrap();
        std::mem::take(&mut d.in_ready)
    }

    fn plain(opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut frame = Vec::new();
        write_frame(&mut frame, opcode, None, payload);
        frame
    }

    // RFC 7692 section 7.2.3.1: "Hello" compressed on its own, in one frame and in two.
    const HELLO: [u8; 7] = [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00];

    #[test]
    fn the_rfcs_compressed_hello_arrives_as_a_plain_text_frame() {
        let mut d = codec(no_takeover());
        let frame = [&[0xc1, 0x07][..], &HELLO].concat();
        assert_eq!(inbound(&mut d, &frame), plain(1, b"Hello"));
        assert_eq!(d.negotiated().unwrap().1, 1);
    }

    #[test]
    fn a_compressed_message_in_fragments_arrives_whole_after_a_ping_between_them() {
        let mut d = codec(no_takeover());
        let first = [&[0x41, 0x03][..], &HELLO[..3]].concat();
        let ping = [0x89, 0x01, b'p'];
        let last = [&[0x80, 0x04][..], &HELLO[3..]].concat();
        let bytes = [first, ping.to_vec(), last].concat();
        // Fed a byte at a time, as a slow socket would.
        let mut out = Vec::new();
        for b in bytes {
            out.extend(inbound(&mut d, &[b]));
        }
        assert_eq!(out, [ping.to_vec(), plain(1, b"Hello")].concat());
    }

    #[test]
    fn with_context_takeover_the_second_message_uses_the_first_ones_window() {
        // RFC 7692 section 7.2.3.2: the second "Hello" refers back to the first.
        let second = [0xc1, 0x05, 0xf2, 0x00, 0x11, 0x00, 0x00];
        let first = [&[0xc1, 0x07][..], &HELLO].concat();
        let mut takeover = codec(DeflateParams::parse("permessage-deflate").unwrap());
        let out = inbound(&mut takeover, &[first.clone(), second.to_vec()].concat());
        assert_eq!(out, [plain(1, b"Hello"), plain(1, b"Hello")].concat());
        // Reset after every message, the back reference has nothing to refer to: an error,
        // or (miniz_oxide does not check the distance) anything but the second "Hello".
        let mut reset = codec(no_takeover());
        reset
            .in_raw
            .extend_from_slice(&[first, second.to_vec()].concat());
        match reset.decode() {
            Err(e) => assert!(e.to_string().contains("permessage-deflate"), "{e}"),
            Ok(()) => assert_ne!(reset.in_ready, out),
        }
    }

    #[test]
    fn a_client_message_goes_out_compressed_masked_and_inflates_back() {
        let mut d = codec(no_takeover());
        let text = "chat ".repeat(50);
        let key = [1, 2, 3, 4];
        let mut frame = Vec::new();
        write_frame(&mut frame, 1, Some(key), text.as_bytes());
        d.out_raw.extend_from_slice(&frame);
        d.encode().unwrap();
        let sent = std::mem::take(&mut d.out_ready);
        let header = Header::parse(&sent).unwrap();
        assert!(header.fin && header.rsv1 && header.opcode == 1);
        assert_eq!(header.mask, Some(key));
        assert!(header.payload_len < 40, "{} bytes", header.payload_len);
        // The same bytes read back through the inbound path are the message again.
        assert_eq!(inbound(&mut d, &sent), plain(1, text.as_bytes()));
        // A close frame passes unchanged.
        let mut close = Vec::new();
        write_frame(&mut close, 8, Some(key), &1000u16.to_be_bytes());
        d.out_raw.extend_from_slice(&close);
        d.encode().unwrap();
        assert_eq!(d.out_ready, close);
    }

    #[test]
    fn before_enable_and_without_the_extension_bytes_pass_unchanged() {
        let (one, _) = tokio::io::duplex(64);
        let mut d = Deflating::new(one);
        let frame = [&[0xc1, 0x07][..], &HELLO].concat();
        assert_eq!(inbound(&mut d, &frame), frame);
        assert!(d.negotiated().is_none());
    }

    #[tokio::test]
    async fn through_a_socket_the_client_writes_compressed_and_reads_inflated() {
        let (client, mut server) = tokio::io::duplex(1 << 16);
        let mut d = Deflating::new(client);
        d.enable(no_takeover());
        let text = "hello ".repeat(300);
        let mut frame = Vec::new();
        write_frame(&mut frame, 1, Some([9, 8, 7, 6]), text.as_bytes());
        d.write_all(&frame).await.unwrap();
        d.flush().await.unwrap();
        let mut head = [0u8; 2];
        server.read_exact(&mut head).await.unwrap();
        assert_eq!(head[0], 0xc1, "FIN, RSV1, text");
        let len = usize::from(head[1] & 0x7f);
        let mut rest = vec![0u8; 4 + len];
        server.read_exact(&mut rest).await.unwrap();
        let mut payload = rest[4..].to_vec();
        apply_mask(&mut payload, [9, 8, 7, 6]);
        let reply = [&[0xc1, payload.len() as u8][..], &payload].concat();
        server.write_all(&reply).await.unwrap();
        let want = plain(1, text.as_bytes());
        let mut got = vec![0u8; want.len()];
        d.read_exact(&mut got).await.unwrap();
        assert_eq!(got, want);
    }
}
