//! One WebSocket connection, with one reader and one writer (after gorilla's
//! `readPump`/`writePump` and axum's chat example), for both Rust servers.
//!
//! The socket is split. The reader runs in the connection's task: it applies
//! the read deadline (the size limit is the stack's, set by each server), and
//! hands each text frame to its [`Member`], which applies the protocol's
//! rules and talks to the hub. The writer is a task of its own and the only
//! code that writes to the socket: it drains the client's bounded queue,
//! sends pings, and sends the close frame when the server closes. Whichever
//! of the two ends first decides how the connection closes.
//!
//! The client is generic over the stack's messages: each server implements
//! [`Stack`] for its own (axum's `Message`, tungstenite's), converting at the
//! edge, and hands [`serve`] the upgraded socket. Every call is resolved at
//! compile time, per server.

use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{Sink, SinkExt, Stream, StreamExt, TryFutureExt};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{self, timeout};

use crate::hub::{Handled, Hub, Member, Outbound, QUEUE_CAPACITY};
use crate::pacer::Pacer;
use crate::stats::{self, Stats};

/// A connection from which nothing has arrived for this long is closed.
pub const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the writer pings; well inside `READ_TIMEOUT`, so a live client
/// always has something to answer.
pub const PING_PERIOD: Duration = Duration::from_secs(30);
/// How long one side waits for the other once the connection is closing:
/// the writer to send its close frame, or the peer to answer ours.
pub const CLOSE_WAIT: Duration = Duration::from_millis(500);
/// How long one write (a batch, a ping) may take. A client whose socket stays
/// full this long is disconnected, as in gorilla's `writeWait`; until then its
/// queue fills and further messages for it are dropped.
pub const WRITE_WAIT: Duration = Duration::from_secs(10);
/// Bytes tungstenite reads from the socket at a time. Its default (and
/// axum's), 128 KiB, is allocated and zero-filled per connection. tungstenite
/// assembles a message from as many reads as it takes, and clients send a few
/// small chats a second, so 1 KiB, as for gorilla (docs/fairness.md,
/// "Buffers").
pub const READ_BUFFER_SIZE: usize = 1024;
/// Bytes tungstenite buffers before writing to the socket. The writer flushes
/// after every batch anyway, so this only splits very large batches.
pub const WRITE_BUFFER_SIZE: usize = 16 * 1024;

/// RFC 6455's close codes (section 7.4.1) that the client sends.
pub mod close_code {
    /// After a `leave`.
    pub const NORMAL: u16 = 1000;
    /// On shutdown.
    pub const AWAY: u16 = 1001;
    /// A frame RFC 6455 forbids.
    pub const PROTOCOL: u16 = 1002;
    /// A text message or close reason that is not UTF-8.
    pub const INVALID: u16 = 1007;
    /// A message over `MAX_MESSAGE_SIZE`.
    pub const SIZE: u16 = 1009;
}

/// What the client needs of a WebSocket stack: its messages, made and read.
/// Each server implements it on a type of its own for its stack's types.
pub trait Stack: 'static {
    /// The stack's message.
    type Message: Send + Unpin;
    /// What its socket's stream and sink fail with.
    type Error: Send;
    /// Its reference-counted text buffer: a broadcast is formatted once into
    /// one, which every recipient's writer sends without a copy.
    type Text: From<String> + Clone + Deref<Target = str> + Send + Sync + Unpin + 'static;

    /// Whether the writer adds the frames it writes to `bytes_written`: for
    /// a stack that keeps the socket to itself (axum), where the server
    /// cannot count under the WebSocket. Counted as the stack frames them,
    /// uncompressed.
    const COUNTS_WRITES: bool;

    /// A text message.
    fn text(text: Self::Text) -> Self::Message;
    /// A ping with no payload.
    fn ping() -> Self::Message;
    /// A close frame with `code` and no reason.
    fn close(code: u16) -> Self::Message;
    /// What the reader makes of a message.
    fn incoming(message: &Self::Message) -> Incoming<'_>;
    /// How a read error ends the connection.
    fn read_end(error: &Self::Error) -> ReadEnd;
}

/// A message as the reader sees it.
pub enum Incoming<'a> {
    Text(&'a str),
    Binary,
    /// Ping, pong or close: the stack answers pings and close frames itself,
    /// on a later poll of the stream, so the reader keeps reading until the
    /// stream ends.
    Control,
}

/// Why the reader stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReadEnd {
    /// The stream ended: the close handshake is done, or the peer is gone.
    Closed,
    /// Nothing arrived for `READ_TIMEOUT`.
    TimedOut,
    /// A message over `MAX_MESSAGE_SIZE`.
    TooBig,
    /// A frame RFC 6455 forbids: reserved bits or opcodes, an unmasked
    /// frame, a bad fragment or control frame, a close payload of 1 byte.
    ProtocolViolation,
    /// A text message or close reason that is not UTF-8.
    InvalidUtf8,
    /// An I/O error, or the peer gone without a close frame.
    Failed,
}

impl ReadEnd {
    /// The close frame the server sends for this end, if any. The stacks
    /// fail the read on every MUST of RFC 6455 but leave the close frame to
    /// the caller (their state stays active, so the writer can still send
    /// it): the code RFC 6455 names for each, section 7.4.1.
    fn close_code(self) -> Option<u16> {
        match self {
            ReadEnd::TooBig => Some(close_code::SIZE),
            ReadEnd::ProtocolViolation => Some(close_code::PROTOCOL),
            ReadEnd::InvalidUtf8 => Some(close_code::INVALID),
            ReadEnd::Closed | ReadEnd::TimedOut | ReadEnd::Failed => None,
        }
    }
}

/// Runs one upgraded connection to its end.
pub async fn serve<W, S>(socket: S, hub: Arc<Hub<W::Text>>)
where
    W: Stack,
    S: Stream<Item = Result<W::Message, W::Error>> + Sink<W::Message, Error = W::Error>,
    S: Send + 'static,
{
    let stats = Arc::clone(&hub.stats);
    stats::add(&stats.connections_total, 1);
    stats::add(&stats.connections_current, 1);

    let (sink, mut stream) = socket.split();
    let (queue, outbox) = mpsc::channel(QUEUE_CAPACITY);
    let (close, close_requested) = oneshot::channel();
    let mut writer = tokio::spawn(write_pump::<W, S>(
        sink,
        outbox,
        close_requested,
        hub.closing(),
        Arc::clone(&stats),
    ));
    let mut client = Client {
        member: Member::new(hub, queue),
        close: Some(close),
    };

    tokio::select! {
        end = client.read_pump::<W, S>(&mut stream) => {
            // Let the writer send the close frame this end calls for, if any.
            client.request_close(end.close_code());
            if timeout(CLOSE_WAIT, &mut writer).await.is_err() {
                writer.abort();
            }
        }
        _ = &mut writer => {
            // The writer has sent a close frame (leave, shutdown), or a write
            // failed or stayed stuck for WRITE_WAIT. Keep reading a little:
            // a peer's reply to our close frame ends the stream.
            let _ = timeout(CLOSE_WAIT, client.read_pump::<W, S>(&mut stream)).await;
        }
    }
    client.member.leave();
    stats.connections_current.fetch_sub(1, Relaxed);
}

/// The reader's state.
struct Client<T> {
    /// This connection in the hub: user name, rooms, token bucket, its queue.
    member: Member<T>,
    /// Tells the writer to close (with a code, or without a close frame), once.
    close: Option<oneshot::Sender<Option<u16>>>,
}

impl<T: From<String> + Clone> Client<T> {
    /// Reads until the stream ends, an error, or the read deadline.
    async fn read_pump<W, S>(&mut self, stream: &mut SplitStream<S>) -> ReadEnd
    where
        W: Stack<Text = T>,
        S: Stream<Item = Result<W::Message, W::Error>>,
    {
        loop {
            let message = match timeout(READ_TIMEOUT, stream.next()).await {
                Err(_) => return ReadEnd::TimedOut,
                Ok(None) => return ReadEnd::Closed,
                Ok(Some(Err(error))) => return W::read_end(&error),
                Ok(Some(Ok(message))) => message,
            };
            let stats = &self.member.hub().stats;
            match W::incoming(&message) {
                Incoming::Text(text) => {
                    stats::add(&stats.frames_in, 1);
                    if self.member.on_text(text) == Handled::Left {
                        self.request_close(Some(close_code::NORMAL));
                    }
                }
                Incoming::Binary => {
                    stats::add(&stats.frames_in, 1);
                    stats::add(&stats.malformed, 1);
                }
                Incoming::Control => {}
            }
        }
    }

    /// Tells the writer to send a close frame with `code` (or none) and stop.
    fn request_close(&mut self, code: Option<u16>) {
        if let Some(close) = self.close.take() {
            let _ = close.send(code);
        }
    }
}

/// The only code that writes to the socket.
async fn write_pump<W, S>(
    mut sink: SplitSink<S, W::Message>,
    mut outbox: mpsc::Receiver<Outbound<W::Text>>,
    mut close_requested: oneshot::Receiver<Option<u16>>,
    mut closing: watch::Receiver<bool>,
    stats: Arc<Stats>,
) where
    W: Stack,
    S: Sink<W::Message, Error = W::Error>,
{
    let mut ping = time::interval_at(time::Instant::now() + PING_PERIOD, PING_PERIOD);
    let mut pacer = Pacer::from_env();
    loop {
        let written = tokio::select! {
            biased;
            code = &mut close_requested => return send_close::<W, S>(&mut sink, code.unwrap_or(None)).await,
            () = server_closing(&mut closing) => return send_close::<W, S>(&mut sink, Some(close_code::AWAY)).await,
            Some(first) = outbox.recv() => timeout(WRITE_WAIT, send_queued::<W, S>(&mut sink, first, &mut outbox, &stats)).await,
            _ = ping.tick() => timeout(WRITE_WAIT, sink.send(W::ping()).map_ok(|()| {
                if W::COUNTS_WRITES {
                    stats::add(&stats.bytes_written, stats::frame_bytes(0));
                }
                0
            })).await,
        };
        let Ok(Ok(sent)) = written else { return };
        if sent > 0 {
            let wait = pacer.after(sent, std::time::Instant::now());
            if !wait.is_zero() {
                time::sleep(wait).await;
            }
        }
    }
}

/// Resolves once the hub closes every client.
async fn server_closing(closing: &mut watch::Receiver<bool>) {
    let _ = closing.wait_for(|&closing| closing).await;
}

/// Writes `first` and whatever else is queued behind it, with one flush.
async fn send_queued<W, S>(
    sink: &mut SplitSink<S, W::Message>,
    first: Outbound<W::Text>,
    outbox: &mut mpsc::Receiver<Outbound<W::Text>>,
    stats: &Stats,
) -> Result<usize, W::Error>
where
    W: Stack,
    S: Sink<W::Message, Error = W::Error>,
{
    let mut chats = u64::from(first.chat);
    let mut sent = 1;
    let mut bytes = 0;
    if W::COUNTS_WRITES {
        bytes += stats::frame_bytes(first.text.len());
    }
    sink.feed(W::text(first.text)).await?;
    for _ in 0..outbox.len() {
        let Ok(next) = outbox.try_recv() else { break };
        chats += u64::from(next.chat);
        sent += 1;
        if W::COUNTS_WRITES {
            bytes += stats::frame_bytes(next.text.len());
        }
        sink.feed(W::text(next.text)).await?;
    }
    sink.flush().await?;
    stats::add(&stats.deliveries, chats);
    stats::add(&stats.bytes_written, bytes);
    Ok(sent)
}

async fn send_close<W, S>(sink: &mut SplitSink<S, W::Message>, code: Option<u16>)
where
    W: Stack,
    S: Sink<W::Message, Error = W::Error>,
{
    if let Some(code) = code {
        let _ = timeout(CLOSE_WAIT, sink.send(W::close(code))).await;
    }
}
