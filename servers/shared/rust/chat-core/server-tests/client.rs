// The client tests that both Rust servers run, over a real WebSocket client
// (tokio-tungstenite): each server's `client.rs` has a `tests` module that
// defines `Ws` (the client's socket), `Server` (a hub whose `connect` opens a
// connection that the server serves as in production) and `start`, then
// `include!`s this file, so the two run the same checks against their own
// stack. Not compiled on its own.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use chat_core::protocol::MAX_MESSAGE_SIZE;
use futures_util::{SinkExt, StreamExt};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::protocol::frame::coding::OpCode;
use tokio_tungstenite::tungstenite::protocol::frame::{Frame, FrameHeader};
use tokio_tungstenite::tungstenite::{Bytes, Message};

/// The next message, with a generous guard so a broken test fails instead of hanging.
async fn next(socket: &mut Ws) -> Option<Message> {
    timeout(Duration::from_secs(10), socket.next())
        .await
        .expect("no message within 10 s")
        .map(Result::unwrap)
}

async fn next_text(socket: &mut Ws) -> String {
    match next(socket).await {
        Some(Message::Text(text)) => text.as_str().to_owned(),
        other => panic!("expected a text message, got {other:?}"),
    }
}

async fn send(socket: &mut Ws, text: &str) {
    socket.send(Message::text(text)).await.unwrap();
}

async fn joined(server: &Server, user: &str) -> Ws {
    let mut socket = server.connect().await;
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
async fn round_trip(socket: &mut Ws) {
    send(socket, r#"{"type":"ping","ts":1}"#).await;
    while next_text(socket).await != r#"{"type":"pong","ts":1}"# {}
}

async fn close_code(socket: &mut Ws) -> Option<u16> {
    loop {
        match next(socket).await {
            Some(Message::Close(frame)) => return frame.map(|frame| frame.code.into()),
            Some(Message::Text(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn chat_reaches_others_not_the_sender_and_counts_deliveries() {
    let server = start().await;
    let hub = &server.hub;
    let mut alice = joined(&server, "alice").await;
    let mut bob = joined(&server, "bob").await;
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
    let server = start().await;
    let hub = &server.hub;
    let mut socket = server.connect().await;
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
    let server = start().await;
    let hub = &server.hub;
    let mut alice = joined(&server, "alice").await;
    let _bob = joined(&server, "bob").await;
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
    let server = start().await;
    let mut socket = server.connect().await;
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
async fn send_frame(socket: &mut Ws, opcode: OpCode, payload: &'static [u8]) {
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
        let mut socket = start().await.connect().await;
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
    let server = start().await;
    let mut alice = joined(&server, "alice").await;
    let mut bob = joined(&server, "bob").await;
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
    let server = start().await;
    let hub = &server.hub;
    let mut alice = joined(&server, "alice").await;
    let mut bob = joined(&server, "bob").await;
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
    let server = start().await;
    let mut alice = joined(&server, "alice").await;
    let mut bob = joined(&server, "bob").await;
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
    let server = start().await;
    let hub = &server.hub;
    let mut alice = joined(&server, "alice").await;
    hub.close_all();
    assert_eq!(close_code(&mut alice).await, Some(1001));
    assert_eq!(next(&mut alice).await, None);
}
