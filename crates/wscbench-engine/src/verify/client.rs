//! The verifier's chat client: one real WebSocket connection and the few
//! operations the checks are written in (join, expect, stay quiet, prove alive), over ws or
//! wss, with permessage-deflate offered and required when the target asks for it.

mod deflate;

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpSocket;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use wscbench_results::DeflateParams;

use super::Target;

/// How long any single expected message may take before a check fails.
pub const EXPECT_TIMEOUT: Duration = Duration::from_secs(3);

pub type Ws = WebSocketStream<Deflating<crate::net::tls::Stream>>;

pub(crate) use deflate::deflate as deflate_message;
pub use deflate::{Deflating, OFFER as DEFLATE_OFFER};

/// What arrived on a connection, control frames aside.
#[derive(Debug)]
pub enum Event {
    Json(Value),
    NotJson(String),
    Binary,
    /// A close frame, with its code if it had one.
    Closed(Option<u16>),
    /// The stream ended or broke without a close frame.
    Gone(String),
}

/// Opens a WebSocket to the target. `recv_buffer` shrinks the socket's receive buffer
/// (the slow-consumer check uses it to make back-pressure reach the server quickly).
pub async fn connect(target: &Target, recv_buffer: Option<u32>) -> Result<Ws, String> {
    let addr: std::net::SocketAddr = target
        .addr
        .parse()
        .map_err(|e| format!("bad address {}: {e}", target.addr))?;
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(|e| format!("socket: {e}"))?;
    if let Some(size) = recv_buffer {
        socket
            .set_recv_buffer_size(size)
            .map_err(|e| format!("SO_RCVBUF: {e}"))?;
    }
    let stream = tokio::time::timeout(EXPECT_TIMEOUT, socket.connect(addr))
        .await
        .map_err(|_| format!("connect to {addr} timed out"))?
        .map_err(|e| format!("connect to {addr}: {e}"))?;
    stream.set_nodelay(true).ok();
    let stream = tokio::time::timeout(
        EXPECT_TIMEOUT,
        crate::net::tls::Stream::over(stream, target.tls.as_ref()),
    )
    .await
    .map_err(|_| "TLS handshake timed out".to_string())?
    .map_err(|e| format!("TLS handshake: {e}"))?;
    let mut request = target
        .ws_url
        .as_str()
        .into_client_request()
        .map_err(|e| format!("WebSocket upgrade: {e}"))?;
    if target.deflate {
        request.headers_mut().insert(
            "Sec-WebSocket-Extensions",
            HeaderValue::from_static(DEFLATE_OFFER),
        );
    }
    let (mut ws, response) = tokio::time::timeout(
        EXPECT_TIMEOUT,
        tokio_tungstenite::client_async(request, Deflating::new(stream)),
    )
    .await
    .map_err(|_| "WebSocket upgrade timed out".to_string())?
    .map_err(|e| format!("WebSocket upgrade: {e}"))?;
    if target.deflate {
        let answer: Vec<&str> = response
            .headers()
            .get_all("Sec-WebSocket-Extensions")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        ws.get_mut().enable(accepted_deflate(&answer.join(", "))?);
    }
    Ok(ws)
}

/// The server's permessage-deflate answer to [`DEFLATE_OFFER`], or why the client cannot
/// use it: no answer (the offer refused), or a window the client did not offer to keep.
pub fn accepted_deflate(answer: &str) -> Result<DeflateParams, String> {
    let params = DeflateParams::parse(answer).ok_or_else(|| {
        let said = if answer.is_empty() {
            "its answer has no Sec-WebSocket-Extensions".to_string()
        } else {
            format!("its answer's Sec-WebSocket-Extensions is {answer:?}")
        };
        format!("the server did not accept permessage-deflate ({DEFLATE_OFFER:?} offered): {said}")
    })?;
    if let Some(bits) = params.client_max_window_bits.filter(|&b| b < 15) {
        return Err(format!(
            "the server's permessage-deflate answer {:?} asks for a {bits}-bit client window, \
             which was not offered",
            params.extension
        ));
    }
    Ok(params)
}

/// Proves the offer is accepted and used both ways: two members join over the extension
/// and pass a chat; says what the server answered and how many messages were compressed.
pub async fn negotiate_deflate(target: &Target, users: [String; 2]) -> Result<String, String> {
    let [a, b] = users;
    let mut a = Member::join(target, a).await?;
    let mut b = Member::join(target, b).await?;
    let text = "deflate ".repeat(32);
    a.send_json(&json!({"type": "chat", "room": "public", "text": text}))
        .await?;
    b.expect("the chat sent compressed", |m| {
        is(m, "chat") && m["text"] == text.as_str()
    })
    .await?;
    let (params, received, sent) =
        b.ws.get_ref()
            .negotiated()
            .ok_or("the extension is off after the handshake")?;
    let a_sent = a.ws.get_ref().negotiated().map_or(0, |(_, _, sent)| sent);
    Ok(format!(
        "answered {:?} ({}); b received {received} messages compressed, a and b sent {} \
         compressed",
        params.extension,
        params.describe(),
        sent + a_sent
    ))
}

/// A connection with a user name, joined or not.
pub struct Member {
    pub ws: Ws,
    pub user: String,
    /// The `online` count in this member's own join acknowledgement.
    pub online_at_join: Option<u64>,
}

impl Member {
    /// Connects without joining.
    pub async fn connect(target: &Target, user: impl Into<String>) -> Result<Self, String> {
        Ok(Self {
            ws: connect(target, None).await?,
            user: user.into(),
            online_at_join: None,
        })
    }

    /// Connects, joins, and waits for this member's own join acknowledgement.
    pub async fn join(target: &Target, user: impl Into<String>) -> Result<Self, String> {
        let mut member = Self::connect(target, user).await?;
        member.send_join().await?;
        Ok(member)
    }

    /// Sends the join and waits for the acknowledgement.
    pub async fn send_join(&mut self) -> Result<(), String> {
        self.send_json(&json!({"type": "join", "room": "public", "user": self.user}))
            .await?;
        let user = self.user.clone();
        let ack = self
            .expect(&format!("join acknowledgement for {user}"), |m| {
                is(m, "join") && m["user"] == user.as_str()
            })
            .await?;
        if ack["room"] != "public" {
            return Err(format!(
                "join acknowledgement has room {} instead of \"public\"",
                ack["room"]
            ));
        }
        self.online_at_join = Some(
            ack["online"]
                .as_u64()
                .ok_or_else(|| format!("join acknowledgement lacks an integer online: {ack}"))?,
        );
        Ok(())
    }

    pub async fn send_json(&mut self, value: &Value) -> Result<(), String> {
        self.send_text(value.to_string()).await
    }

    pub async fn send_text(&mut self, text: impl Into<String>) -> Result<(), String> {
        self.ws
            .send(Message::text(text.into()))
            .await
            .map_err(|e| format!("{}: send failed: {e}", self.user))
    }

    pub async fn send_chat(&mut self, text: &str, ts: Option<f64>) -> Result<(), String> {
        let mut chat = json!({"type": "chat", "room": "public", "text": text});
        if let Some(ts) = ts {
            chat["ts"] = json!(ts);
        }
        self.send_json(&chat).await
    }

    /// The next event within `timeout`, or `None` when nothing arrived.
    pub async fn next_event(&mut self, timeout: Duration) -> Option<Event> {
        next_event(&mut self.ws, timeout).await
    }

    /// Waits for a JSON message matching `pred`, skipping others. Fails on close or timeout.
    pub async fn expect(
        &mut self,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, String> {
        self.expect_within(what, EXPECT_TIMEOUT, pred).await
    }

    pub async fn expect_within(
        &mut self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<Value, String> {
        let deadline = Instant::now() + timeout;
        // What else came meanwhile, so that a timeout says whether the connection was quiet.
        let (mut others, mut last_other) = (0, None);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_event(left).await {
                None => {
                    let meanwhile = match last_other {
                        None => "nothing else arrived".to_string(),
                        Some(last) => format!("{others} other messages arrived, the last {last}"),
                    };
                    return Err(format!(
                        "{}: no {what} within {timeout:?} ({meanwhile})",
                        self.user
                    ));
                }
                Some(Event::Json(m)) if pred(&m) => return Ok(m),
                Some(Event::Json(m)) => {
                    others += 1;
                    last_other = Some(m.to_string());
                }
                Some(Event::Closed(code)) => {
                    return Err(format!(
                        "{}: connection closed ({}) while waiting for {what}",
                        self.user,
                        code_text(code)
                    ));
                }
                Some(Event::Gone(why)) => {
                    return Err(format!(
                        "{}: connection lost ({why}) while waiting for {what}",
                        self.user
                    ));
                }
                Some(_) => {}
            }
        }
    }

    /// Fails if a JSON message matching `pred` arrives within `window`, or the connection closes.
    pub async fn quiet(
        &mut self,
        window: Duration,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Result<(), String> {
        let deadline = Instant::now() + window;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            match self.next_event(left).await {
                None => return Ok(()),
                Some(Event::Json(m)) if pred(&m) => {
                    return Err(format!("{} received {what}: {m}", self.user));
                }
                Some(Event::Closed(code)) => {
                    return Err(format!(
                        "{}: connection closed ({})",
                        self.user,
                        code_text(code)
                    ));
                }
                Some(Event::Gone(why)) => {
                    return Err(format!("{}: connection lost ({why})", self.user));
                }
                Some(_) => {}
            }
        }
    }

    /// Proves the connection is open and served: a ping gets its pong.
    pub async fn alive(&mut self) -> Result<(), String> {
        let ts = rand_ts();
        self.send_json(&json!({"type": "ping", "ts": ts})).await?;
        self.expect("pong (is the connection still served?)", |m| {
            is(m, "pong") && m["ts"].as_f64() == Some(ts)
        })
        .await
        .map(|_| ())
    }

    /// Waits for the server's close frame and returns its code.
    pub async fn expect_close(&mut self, timeout: Duration) -> Result<Option<u16>, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_event(left).await {
                None => return Err(format!("{}: no close frame within {timeout:?}", self.user)),
                Some(Event::Closed(code)) => {
                    // Keep polling: tungstenite sends our reply to the server's close frame from here,
                    // so the server is not left waiting out its close timeout.
                    let _ = tokio::time::timeout(Duration::from_millis(500), self.ws.next()).await;
                    return Ok(code);
                }
                Some(Event::Gone(why)) => {
                    return Err(format!(
                        "{}: connection ended without a close frame ({why})",
                        self.user
                    ));
                }
                Some(_) => {}
            }
        }
    }

    /// Starts the close handshake with 1000.
    pub async fn send_close(&mut self) -> Result<(), String> {
        let frame = CloseFrame {
            code: CloseCode::Normal,
            reason: "bye".into(),
        };
        self.ws
            .close(Some(frame))
            .await
            .map_err(|e| format!("{}: sending close: {e}", self.user))
    }

    /// Closes politely and does not wait long: used for clean-up between checks.
    pub async fn close(mut self) {
        if self.send_close().await.is_ok() {
            let _ = self.expect_close(Duration::from_millis(500)).await;
        }
    }
}

pub async fn next_event(ws: &mut Ws, timeout: Duration) -> Option<Event> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let item = match tokio::time::timeout(left, ws.next()).await {
            Err(_) => return None,
            Ok(item) => item,
        };
        return Some(match item {
            None => Event::Gone("end of stream".into()),
            Some(Err(e)) => Event::Gone(e.to_string()),
            Some(Ok(Message::Text(text))) => match serde_json::from_str::<Value>(&text) {
                Ok(v) => Event::Json(v),
                Err(_) => Event::NotJson(text.to_string()),
            },
            Some(Ok(Message::Binary(_))) => Event::Binary,
            Some(Ok(Message::Close(frame))) => Event::Closed(frame.map(|f| u16::from(f.code))),
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
        });
    }
}

pub fn is(m: &Value, kind: &str) -> bool {
    m["type"] == kind
}

pub fn code_text(code: Option<u16>) -> String {
    code.map_or_else(|| "no code".to_string(), |c| format!("code {c}"))
}

/// A `ts` with a fractional part, so a server that rounds or truncates it is caught.
pub fn rand_ts() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    (nanos / 1_000_000) as f64 + 0.25
}

/// Milliseconds since the Unix epoch, the clock `ts` is written in.
pub fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
        * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deflate_answer_is_required_and_read_with_its_parameters() {
        let params = accepted_deflate(DEFLATE_OFFER).unwrap();
        assert!(params.server_no_context_takeover && params.client_no_context_takeover);
        // The answer a server started without --deflate gives: none.
        let refused = accepted_deflate("").unwrap_err();
        assert!(
            refused.contains("did not accept permessage-deflate")
                && refused.contains("no Sec-WebSocket-Extensions"),
            "{refused}"
        );
        let other = accepted_deflate("x-webkit-deflate-frame").unwrap_err();
        assert!(other.contains("\"x-webkit-deflate-frame\""), "{other}");
        // A smaller client window than the 15 bits the compressor uses was never offered.
        let window = accepted_deflate("permessage-deflate; client_max_window_bits=10").unwrap_err();
        assert!(window.contains("10-bit client window"), "{window}");
    }
}
