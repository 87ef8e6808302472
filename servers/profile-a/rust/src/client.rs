//! One WebSocket connection, as axum carries it: the upgrade's settings, and
//! its messages as the chat core's client reads and writes them ([`Axum`]).
//! The reader and the writer are chat-core's (`chat_core::client`, shared
//! with profile-b/rust).

use std::error::Error as _;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};

use chat_core::client::{self as core, Incoming, READ_BUFFER_SIZE, ReadEnd, WRITE_BUFFER_SIZE};
use chat_core::hub;
use chat_core::protocol::MAX_MESSAGE_SIZE;

/// The hub, with this stack's shared text buffer: a broadcast's one
/// `Utf8Bytes` goes to every recipient's writer without a copy.
pub type Hub = hub::Hub<Utf8Bytes>;

/// The WebSocket settings for every connection.
pub fn configure(upgrade: WebSocketUpgrade) -> WebSocketUpgrade {
    upgrade
        .read_buffer_size(READ_BUFFER_SIZE)
        .write_buffer_size(WRITE_BUFFER_SIZE)
        .max_message_size(MAX_MESSAGE_SIZE)
        .max_frame_size(MAX_MESSAGE_SIZE)
}

/// Runs one upgraded connection to its end.
pub async fn serve(socket: WebSocket, hub: Arc<Hub>) {
    core::serve::<Axum, _>(socket, hub).await;
}

/// axum's messages, for the chat core's client.
pub struct Axum;

impl core::Stack for Axum {
    type Message = Message;
    type Error = axum::Error;
    type Text = Utf8Bytes;

    /// axum keeps the socket to itself, so the writer counts the frames'
    /// bytes as tungstenite frames them: no compression (axum offers none).
    const COUNTS_WRITES: bool = true;

    fn text(text: Utf8Bytes) -> Message {
        Message::Text(text)
    }

    fn ping() -> Message {
        Message::Ping(Bytes::new())
    }

    fn close(code: u16) -> Message {
        Message::Close(Some(CloseFrame {
            code,
            reason: Utf8Bytes::from_static(""),
        }))
    }

    fn incoming(message: &Message) -> Incoming<'_> {
        match message {
            Message::Text(text) => Incoming::Text(text.as_str()),
            Message::Binary(_) => Incoming::Binary,
            Message::Ping(_) | Message::Pong(_) | Message::Close(_) => Incoming::Control,
        }
    }

    /// tungstenite fails the read on every MUST of RFC 6455; axum wraps its
    /// error in an opaque `axum::Error` whose source is tungstenite's.
    fn read_end(error: &axum::Error) -> ReadEnd {
        use tungstenite::error::ProtocolError;
        match error
            .source()
            .and_then(|source| source.downcast_ref::<tungstenite::Error>())
        {
            Some(tungstenite::Error::Capacity(_)) => ReadEnd::TooBig,
            Some(tungstenite::Error::Utf8(_)) => ReadEnd::InvalidUtf8,
            Some(tungstenite::Error::Protocol(ProtocolError::ResetWithoutClosingHandshake)) => {
                ReadEnd::Failed
            }
            Some(tungstenite::Error::Protocol(_)) => ReadEnd::ProtocolViolation,
            _ => ReadEnd::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::net::{TcpListener, TcpStream};
    use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

    use chat_core::stats::Stats;

    use super::*;

    /// The client's side of a test connection.
    type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

    /// The whole app on a loopback port of its own, as in production.
    struct Server {
        hub: Arc<Hub>,
        addr: std::net::SocketAddr,
    }

    async fn start() -> Server {
        let hub = Arc::new(Hub::new(Arc::new(Stats::new(crate::SERVER))));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(axum::serve(listener, crate::app(Arc::clone(&hub))).into_future());
        Server { hub, addr }
    }

    impl Server {
        async fn connect(&self) -> Ws {
            tokio_tungstenite::connect_async(format!("ws://{}/ws", self.addr))
                .await
                .unwrap()
                .0
        }
    }

    // The checks are shared with the other Rust server (servers/shared/rust/chat-core).
    include!("../../../shared/rust/chat-core/server-tests/client.rs");
}
