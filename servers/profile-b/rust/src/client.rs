//! One WebSocket connection, with one reader and one writer (after gorilla's
//! `readPump`/`writePump` and axum's chat example).
//!
//! The socket is split. The reader runs in the connection's task: it applies
//! the size limit (in tungstenite's config) and the read deadline, and hands each
//! text frame to its `Member` (chat-core), which applies the protocol's rules
//! and talks to the hub. The writer is a task of its own and
//! the only code that writes to the socket: it drains the client's bounded
//! queue, sends pings, and sends the close frame when the server closes.
//! Whichever of the two ends first decides how the connection closes.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt, TryFutureExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{self, timeout};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Bytes, Error, Message, Utf8Bytes};

use chat_core::hub::{self, Handled, QUEUE_CAPACITY};
use chat_core::pacer::Pacer;
use chat_core::protocol::MAX_MESSAGE_SIZE;
use chat_core::stats::{self, Stats};

/// The hub, with this stack's shared text buffer: a broadcast's one
/// `Utf8Bytes` goes to every recipient's writer without a copy.
pub type Hub = hub::Hub<Utf8Bytes>;
type Outbound = hub::Outbound<Utf8Bytes>;
type Member = hub::Member<Utf8Bytes>;

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
/// Bytes tungstenite reads from the socket at a time. Its default, 128 KiB,
/// is allocated and zero-filled per connection. tungstenite assembles a
/// message from as many reads as it takes, and clients send a few small
/// chats a second, so 1 KiB, as for gorilla (docs/fairness.md, "Buffers").
pub const READ_BUFFER_SIZE: usize = 1024;
/// Bytes tungstenite buffers before writing to the socket. The writer flushes
/// after every batch anyway, so this only splits very large batches.
pub const WRITE_BUFFER_SIZE: usize = 16 * 1024;

pub type Socket<S> = WebSocketStream<S>;

/// tungstenite's settings for every connection.
pub fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_SIZE)
        .write_buffer_size(WRITE_BUFFER_SIZE)
        .max_message_size(Some(MAX_MESSAGE_SIZE))
        .max_frame_size(Some(MAX_MESSAGE_SIZE))
}

/// Runs one upgraded connection to its end.
pub async fn serve<S>(socket: Socket<S>, hub: Arc<Hub>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let stats = Arc::clone(&hub.stats);
    stats::add(&stats.connections_total, 1);
    stats::add(&stats.connections_current, 1);

    let (sink, mut stream) = socket.split();
    let (queue, outbox) = mpsc::channel(QUEUE_CAPACITY);
    let (close, close_requested) = oneshot::channel();
    let mut writer = tokio::spawn(write_pump(
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
        end = client.read_pump(&mut stream) => {
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
            let _ = timeout(CLOSE_WAIT, client.read_pump(&mut stream)).await;
        }
    }
    client.member.leave();
    stats.connections_current.fetch_sub(1, Relaxed);
}

/// Why the reader stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ReadEnd {
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
    /// How a read error ends the connection. tungstenite fails the read on
    /// every MUST of RFC 6455 but leaves the close frame to the caller (its
    /// state stays active, so the writer can still send it): the code RFC
    /// 6455 names for each, section 7.4.1.
    fn of(error: &Error) -> ReadEnd {
        match error {
            Error::Capacity(_) => ReadEnd::TooBig,
            Error::Utf8(_) => ReadEnd::InvalidUtf8,
            Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => ReadEnd::Failed,
            Error::Protocol(_) => ReadEnd::ProtocolViolation,
            _ => ReadEnd::Failed,
        }
    }

    /// The close frame the server sends for this end, if any.
    fn close_code(self) -> Option<CloseCode> {
        match self {
            ReadEnd::TooBig => Some(CloseCode::Size),
            ReadEnd::ProtocolViolation => Some(CloseCode::Protocol),
            ReadEnd::InvalidUtf8 => Some(CloseCode::Invalid),
            ReadEnd::Closed | ReadEnd::TimedOut | ReadEnd::Failed => None,
        }
    }
}

/// The reader's state.
struct Client {
    /// This connection in the hub: user name, rooms, token bucket, its queue.
    member: Member,
    /// Tells the writer to close, once.
    close: Option<oneshot::Sender<Option<CloseCode>>>,
}

impl Client {
    /// Reads until the stream ends, an error, or the read deadline.
    async fn read_pump<S>(&mut self, stream: &mut SplitStream<Socket<S>>) -> ReadEnd
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        loop {
            let message = match timeout(READ_TIMEOUT, stream.next()).await {
                Err(_) => return ReadEnd::TimedOut,
                Ok(None) => return ReadEnd::Closed,
                Ok(Some(Err(error))) => return ReadEnd::of(&error),
                Ok(Some(Ok(message))) => message,
            };
            let stats = &self.member.hub().stats;
            match message {
                Message::Text(text) => {
                    stats::add(&stats.frames_in, 1);
                    if self.member.on_text(&text) == Handled::Left {
                        self.request_close(Some(CloseCode::Normal));
                    }
                }
                Message::Binary(_) => {
                    stats::add(&stats.frames_in, 1);
                    stats::add(&stats.malformed, 1);
                }
                // tungstenite answers pings and close frames itself, on a later
                // poll of this stream: so keep reading until the stream ends.
                Message::Ping(_) | Message::Pong(_) | Message::Close(_) | Message::Frame(_) => {}
            }
        }
    }

    /// Tells the writer to send a close frame with `code` (or none) and stop.
    fn request_close(&mut self, code: Option<CloseCode>) {
        if let Some(close) = self.close.take() {
            let _ = close.send(code);
        }
    }
}

/// The only code that writes to the socket.
async fn write_pump<S>(
    mut sink: SplitSink<Socket<S>, Message>,
    mut outbox: mpsc::Receiver<Outbound>,
    mut close_requested: oneshot::Receiver<Option<CloseCode>>,
    mut closing: watch::Receiver<bool>,
    stats: Arc<Stats>,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut ping = time::interval_at(time::Instant::now() + PING_PERIOD, PING_PERIOD);
    let mut pacer = Pacer::from_env();
    loop {
        let written = tokio::select! {
            biased;
            code = &mut close_requested => return send_close(&mut sink, code.unwrap_or(None)).await,
            () = server_closing(&mut closing) => return send_close(&mut sink, Some(CloseCode::Away)).await,
            Some(first) = outbox.recv() => timeout(WRITE_WAIT, send_queued(&mut sink, first, &mut outbox, &stats)).await,
            _ = ping.tick() => timeout(WRITE_WAIT, sink.send(Message::Ping(Bytes::new())).map_ok(|()| 0)).await,
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
async fn send_queued<S>(
    sink: &mut SplitSink<Socket<S>, Message>,
    first: Outbound,
    outbox: &mut mpsc::Receiver<Outbound>,
    stats: &Stats,
) -> Result<usize, Error>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut chats = u64::from(first.chat);
    let mut sent = 1;
    sink.feed(Message::Text(first.text)).await?;
    for _ in 0..outbox.len() {
        let Ok(next) = outbox.try_recv() else { break };
        chats += u64::from(next.chat);
        sent += 1;
        sink.feed(Message::Text(next.text)).await?;
    }
    sink.flush().await?;
    stats::add(&stats.deliveries, chats);
    Ok(sent)
}

async fn send_close<S>(sink: &mut SplitSink<Socket<S>, Message>, code: Option<CloseCode>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    if let Some(code) = code {
        let frame = CloseFrame {
            code,
            reason: Utf8Bytes::from_static(""),
        };
        let _ = timeout(CLOSE_WAIT, sink.send(Message::Close(Some(frame)))).await;
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::DuplexStream;
    use tokio_tungstenite::tungstenite::protocol::Role;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::OpCode;
    use tokio_tungstenite::tungstenite::protocol::frame::{Frame, FrameHeader};

    use super::*;

    /// A connection over an in-memory pipe, served as in production.
    async fn connect(hub: &Arc<Hub>) -> Socket<DuplexStream> {
        let (server_end, client_end) = tokio::io::duplex(64 * 1024);
        let server =
            WebSocketStream::from_raw_socket(server_end, Role::Server, Some(config())).await;
        tokio::spawn(serve(server, Arc::clone(hub)));
        WebSocketStream::from_raw_socket(client_end, Role::Client, None).await
    }

    /// The next message, with a generous guard so a broken test fails instead of hanging.
    async fn next(socket: &mut Socket<DuplexStream>) -> Option<Message> {
        timeout(Duration::from_secs(10), socket.next())
            .await
            .expect("no message within 10 s")
            .map(Result::unwrap)
    }

    async fn next_text(socket: &mut Socket<DuplexStream>) -> String {
        match next(socket).await {
            Some(Message::Text(text)) => text.as_str().to_owned(),
            other => panic!("expected a text message, got {other:?}"),
        }
    }

    async fn send(socket: &mut Socket<DuplexStream>, text: &str) {
        socket.send(Message::text(text)).await.unwrap();
    }

    async fn joined(hub: &Arc<Hub>, user: &str) -> Socket<DuplexStream> {
        let mut socket = connect(hub).await;
        send(
            &mut socket,
            &format!(r#"{{"type":"join","room":"public","user":"{user}"}}"#),
        )
        .await;
        assert!(
            next_text(&mut socket)
                .await
                .contains(&format!(r#""user":"{user}""#))
        );
        socket
    }

    /// Sends a ping and waits for its pong (skipping broadcasts): everything
    /// sent before it has been handled.
    async fn round_trip(socket: &mut Socket<DuplexStream>) {
        send(socket, r#"{"type":"ping","ts":1}"#).await;
        while next_text(socket).await != r#"{"type":"pong","ts":1}"# {}
    }

    async fn close_code(socket: &mut Socket<DuplexStream>) -> Option<u16> {
        loop {
            match next(socket).await {
                Some(Message::Close(frame)) => return frame.map(|frame| frame.code.into()),
                Some(Message::Text(_)) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    }

    fn hub() -> Arc<Hub> {
        Arc::new(Hub::new(Arc::new(Stats::new(crate::SERVER))))
    }

    #[tokio::test]
    async fn chat_reaches_others_not_the_sender_and_counts_deliveries() {
        let hub = hub();
        let mut alice = joined(&hub, "alice").await;
        let mut bob = joined(&hub, "bob").await;
        assert_eq!(
            next_text(&mut alice).await,
            r#"{"type":"join","room":"public","user":"bob","online":2}"#
        );
        send(
            &mut alice,
            r#"{"type":"chat","room":"public","text":"hi","ts":1732233445566.25}"#,
        )
        .await;
        assert_eq!(
            next_text(&mut bob).await,
            r#"{"type":"chat","room":"public","user":"alice","text":"hi","ts":1732233445566.25}"#
        );
        round_trip(&mut alice).await;
        assert_eq!(hub.stats.deliveries.load(Relaxed), 1);
        assert_eq!(hub.stats.chat_accepted.load(Relaxed), 1);
    }

    #[tokio::test]
    async fn invalid_input_is_counted_and_the_connection_stays_open() {
        let hub = hub();
        let mut socket = connect(&hub).await;
        send(
            &mut socket,
            r#"{"type":"chat","room":"public","text":"too early"}"#,
        )
        .await;
        send(&mut socket, "{").await;
        socket.send(Message::binary(vec![1, 2, 3])).await.unwrap();
        round_trip(&mut socket).await;
        assert_eq!(hub.stats.malformed.load(Relaxed), 3);
        assert_eq!(hub.stats.frames_in.load(Relaxed), 4);
    }

    #[tokio::test]
    async fn rate_limit_drops_chats_past_the_bucket() {
        let hub = hub();
        let mut alice = joined(&hub, "alice").await;
        let _bob = joined(&hub, "bob").await;
        for _ in 0..30 {
            send(&mut alice, r#"{"type":"chat","room":"public","text":"x"}"#).await;
        }
        round_trip(&mut alice).await;
        // The exact refill is the limiter's test; here: a full bucket, and every chat accounted for.
        let (accepted, dropped) = (
            hub.stats.chat_accepted.load(Relaxed),
            hub.stats.dropped_ratelimit.load(Relaxed),
        );
        assert_eq!(hub.stats.chat_in.load(Relaxed), 30);
        assert_eq!(accepted + dropped, 30);
        assert!(accepted >= 10, "accepted {accepted}");
    }

    #[tokio::test]
    async fn a_message_of_4096_bytes_passes_and_4097_closes_with_1009() {
        let hub = hub();
        let mut socket = connect(&hub).await;
        let padded = |size: usize| {
            let frame = r#"{"type":"ping","ts":1,"pad":""}"#;
            frame.replace(
                r#""pad":"""#,
                &format!(r#""pad":"{}""#, "x".repeat(size - frame.len())),
            )
        };
        send(&mut socket, &padded(MAX_MESSAGE_SIZE)).await;
        assert_eq!(next_text(&mut socket).await, r#"{"type":"pong","ts":1}"#);
        send(&mut socket, &padded(MAX_MESSAGE_SIZE + 1)).await;
        assert_eq!(close_code(&mut socket).await, Some(1009));
    }

    /// Sends one raw frame, as a peer that breaks RFC 6455 would.
    async fn send_frame(socket: &mut Socket<DuplexStream>, opcode: OpCode, payload: &'static [u8]) {
        let header = FrameHeader {
            opcode,
            ..FrameHeader::default()
        };
        let frame = Frame::from_payload(header, Bytes::from_static(payload));
        socket.send(Message::Frame(frame)).await.unwrap();
    }

    #[tokio::test]
    async fn each_violation_is_failed_with_the_close_code_rfc_6455_names() {
        use tokio_tungstenite::tungstenite::protocol::frame::coding::{Control, Data};
        let cases: [(OpCode, &'static [u8], u16); 5] = [
            (
                OpCode::Data(Data::Text),
                b"{\"type\":\"ping\",\"ts\":1}\xc3",
                1007,
            ),
            (OpCode::Data(Data::Reserved(3)), b"", 1002),
            (OpCode::Control(Control::Close), b"\x03", 1002),
            (OpCode::Control(Control::Close), b"\x03\xe8\xff", 1007),
            (OpCode::Control(Control::Close), b"\x13\x88", 1002), // 5000
        ];
        for (opcode, payload, want) in cases {
            let mut socket = connect(&hub()).await;
            send_frame(&mut socket, opcode, payload).await;
            assert_eq!(
                close_code(&mut socket).await,
                Some(want),
                "{opcode:?} {payload:?}"
            );
        }
    }

    #[tokio::test]
    async fn leave_is_broadcast_then_closes_with_1000() {
        let hub = hub();
        let mut alice = joined(&hub, "alice").await;
        let mut bob = joined(&hub, "bob").await;
        send(&mut bob, r#"{"type":"leave"}"#).await;
        assert_eq!(close_code(&mut bob).await, Some(1000));
        assert_eq!(next(&mut bob).await, None, "the close handshake completes");
        assert_eq!(
            next_text(&mut alice).await,
            r#"{"type":"join","room":"public","user":"bob","online":2}"#
        );
        assert_eq!(
            next_text(&mut alice).await,
            r#"{"type":"leave","room":"public","user":"bob","online":1}"#
        );
    }

    #[tokio::test]
    async fn leave_of_one_room_keeps_the_connection_open_in_its_others() {
        let hub = hub();
        let mut alice = joined(&hub, "alice").await;
        let mut bob = joined(&hub, "bob").await;
        next_text(&mut alice).await; // bob's join to public
        send(
            &mut alice,
            r#"{"type":"join","room":"lobby","user":"alice"}"#,
        )
        .await;
        assert_eq!(
            next_text(&mut alice).await,
            r#"{"type":"join","room":"lobby","user":"alice","online":1}"#
        );
        send(&mut bob, r#"{"type":"join","room":"lobby","user":"bob"}"#).await;
        let bob_in_lobby = r#"{"type":"join","room":"lobby","user":"bob","online":2}"#;
        assert_eq!(next_text(&mut bob).await, bob_in_lobby);
        assert_eq!(next_text(&mut alice).await, bob_in_lobby);

        send(&mut alice, r#"{"type":"leave","room":"public"}"#).await;
        assert_eq!(
            next_text(&mut bob).await,
            r#"{"type":"leave","room":"public","user":"alice","online":1}"#
        );
        send(&mut bob, r#"{"type":"chat","room":"public","text":"gone"}"#).await;
        send(
            &mut bob,
            r#"{"type":"chat","room":"lobby","text":"still here"}"#,
        )
        .await;
        assert_eq!(
            next_text(&mut alice).await,
            r#"{"type":"chat","room":"lobby","user":"bob","text":"still here"}"#
        );
        round_trip(&mut alice).await;
        assert_eq!(hub.stats.malformed.load(Relaxed), 0);
        assert_eq!(hub.stats.joins.load(Relaxed), 4);
    }

    #[tokio::test]
    async fn a_close_frame_is_answered_and_counts_as_leaving() {
        let hub = hub();
        let mut alice = joined(&hub, "alice").await;
        let mut bob = joined(&hub, "bob").await;
        bob.close(None).await.unwrap();
        assert_eq!(close_code(&mut bob).await, None);
        assert_eq!(next(&mut bob).await, None);
        next_text(&mut alice).await; // bob's join
        assert_eq!(
            next_text(&mut alice).await,
            r#"{"type":"leave","room":"public","user":"bob","online":1}"#
        );
    }

    #[tokio::test]
    async fn shutdown_closes_clients_with_1001() {
        let hub = hub();
        let mut alice = joined(&hub, "alice").await;
        hub.close_all();
        assert_eq!(close_code(&mut alice).await, Some(1001));
        assert_eq!(next(&mut alice).await, None);
    }
}
