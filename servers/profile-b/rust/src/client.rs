//! One WebSocket connection, as tokio-tungstenite carries it: its settings,
//! and its messages as the chat core's client reads and writes them
//! ([`Tungstenite`]). The reader and the writer are chat-core's
//! (`chat_core::client`, shared with profile-a/rust).

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Bytes, Error, Message, Utf8Bytes};

use chat_core::client::{self as core, Incoming, READ_BUFFER_SIZE, ReadEnd, WRITE_BUFFER_SIZE};
use chat_core::hub;
use chat_core::protocol::MAX_MESSAGE_SIZE;

/// The hub, with this stack's shared text buffer: a broadcast's one
/// `Utf8Bytes` goes to every recipient's writer without a copy.
pub type Hub = hub::Hub<Utf8Bytes>;

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
    core::serve::<Tungstenite, _>(socket, hub).await;
}

/// tungstenite's messages, for the chat core's client.
pub struct Tungstenite;

impl core::Stack for Tungstenite {
    type Message = Message;
    type Error = Error;
    type Text = Utf8Bytes;

    /// `http` hands the client a socket that counts what it writes.
    const COUNTS_WRITES: bool = false;

    fn text(text: Utf8Bytes) -> Message {
        Message::Text(text)
    }

    fn ping() -> Message {
        Message::Ping(Bytes::new())
    }

    fn close(code: u16) -> Message {
        Message::Close(Some(CloseFrame {
            code: code.into(),
            reason: Utf8Bytes::from_static(""),
        }))
    }

    fn incoming(message: &Message) -> Incoming<'_> {
        match message {
            Message::Text(text) => Incoming::Text(text.as_str()),
            Message::Binary(_) => Incoming::Binary,
            Message::Ping(_) | Message::Pong(_) | Message::Close(_) | Message::Frame(_) => {
                Incoming::Control
            }
        }
    }

    /// tungstenite fails the read on every MUST of RFC 6455.
    fn read_end(error: &Error) -> ReadEnd {
        match error {
            Error::Capacity(_) => ReadEnd::TooBig,
            Error::Utf8(_) => ReadEnd::InvalidUtf8,
            Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => ReadEnd::Failed,
            Error::Protocol(_) => ReadEnd::ProtocolViolation,
            _ => ReadEnd::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::DuplexStream;
    use tokio_tungstenite::tungstenite::protocol::Role;

    use chat_core::stats::Stats;

    use super::*;

    /// The client's side of a test connection.
    type Ws = Socket<DuplexStream>;

    /// A hub, whose connections are served over in-memory pipes as in
    /// production.
    struct Server {
        hub: Arc<Hub>,
    }

    async fn start() -> Server {
        let hub = Arc::new(Hub::new(Arc::new(Stats::new(crate::SERVER))));
        Server { hub }
    }

    impl Server {
        async fn connect(&self) -> Ws {
            let (server_end, client_end) = tokio::io::duplex(64 * 1024);
            let server =
                WebSocketStream::from_raw_socket(server_end, Role::Server, Some(config())).await;
            tokio::spawn(serve(server, Arc::clone(&self.hub)));
            WebSocketStream::from_raw_socket(client_end, Role::Client, None).await
        }
    }

    // The checks are shared with the other Rust server (servers/shared/rust/chat-core).
    include!("../../../shared/rust/chat-core/server-tests/client.rs");
}
