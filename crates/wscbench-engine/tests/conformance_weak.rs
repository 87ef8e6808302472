//! The conformance cases judge what they claim: a tiny in-process chat server that reads
//! frames by hand is strict in every case, and with one deliberate weakness at a time
//! (no UTF-8 validation, unmasked frames accepted, no close frame ever sent, a crash) fails
//! in exactly the cell meant for it.

mod handshake;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{broadcast, watch};
use wscbench_engine::verify::Target;
use wscbench_engine::verify::conformance::conformance;
use wscbench_results::{CaseVerdict, Category, ServerConformance, Transport};

/// The one thing the server gets wrong.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Weakness {
    /// None: the server every case calls strict.
    None,
    /// Passes text messages on without validating their UTF-8.
    SkipsUtf8,
    /// Reads an unmasked client frame like a masked one.
    AcceptsUnmasked,
    /// Never sends a close frame: a connection it fails, or one the client closes, is
    /// dropped.
    NoCloseFrame,
    /// The whole server stops on a frame with RSV2 set.
    DiesOnRsv2,
}

async fn start(weakness: Weakness) -> Target {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (hub, _) = broadcast::channel::<String>(1024);
    let online = Arc::new(AtomicU64::new(0));
    let (dead_tx, dead) = watch::channel(false);
    let dead_tx = Arc::new(dead_tx);
    tokio::spawn(async move {
        let mut dead_rx = dead.clone();
        loop {
            let (stream, _) = tokio::select! {
                accepted = listener.accept() => accepted.unwrap(),
                _ = dead_rx.changed() => return,
            };
            let (hub, online, dead_tx, dead) =
                (hub.clone(), online.clone(), dead_tx.clone(), dead.clone());
            tokio::spawn(async move {
                let mut dead = dead;
                tokio::select! {
                    _ = serve(stream, weakness, hub, online, dead_tx) => {}
                    _ = dead.changed() => {}
                }
            });
        }
    });
    Target::loopback(port)
}

async fn serve(
    mut stream: TcpStream,
    weakness: Weakness,
    hub: broadcast::Sender<String>,
    online: Arc<AtomicU64>,
    dead: Arc<watch::Sender<bool>>,
) {
    let Some(head) = handshake::read_head(&mut stream).await else {
        return;
    };
    if head.starts_with("GET /health") {
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            .await;
        return;
    }
    if !handshake::accept_upgrade(&mut stream, &head).await {
        return;
    }
    let mut conn = Conn {
        weakness,
        hub: hub.clone(),
        online,
        user: None,
        message: None,
    };
    let mut chats = hub.subscribe();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        tokio::select! {
            n = stream.read(&mut chunk) => {
                let n = match n { Ok(0) | Err(_) => return, Ok(n) => n };
                buf.extend_from_slice(&chunk[..n]);
                while let Some((frame, used)) = read_frame(&buf) {
                    buf.drain(..used);
                    if weakness == Weakness::DiesOnRsv2 && frame.rsv & 2 != 0 {
                        let _ = dead.send(true);
                        return;
                    }
                    match conn.handle(frame) {
                        Ok(replies) => {
                            for reply in replies {
                                if stream.write_all(&reply).await.is_err() {
                                    return;
                                }
                            }
                        }
                        Err(code) => {
                            if weakness != Weakness::NoCloseFrame {
                                let _ = stream.write_all(&server_frame(8, &code.to_be_bytes())).await;
                            }
                            return;
                        }
                    }
                }
            }
            chat = chats.recv(), if conn.user.is_some() => {
                if let Ok(text) = chat
                    && stream.write_all(&server_frame(1, text.as_bytes())).await.is_err()
                {
                    return;
                }
            }
        }
    }
}

struct Frame {
    fin: bool,
    rsv: u8,
    opcode: u8,
    masked: bool,
    payload: Vec<u8>,
}

/// One client frame at the start of `buf`, unmasked, and the bytes it used.
fn read_frame(buf: &[u8]) -> Option<(Frame, usize)> {
    let [first, second, ..] = *buf else {
        return None;
    };
    let (len, mut at) = match second & 0x7f {
        126 => (
            u16::from_be_bytes(buf.get(2..4)?.try_into().ok()?) as usize,
            4,
        ),
        127 => (
            u64::from_be_bytes(buf.get(2..10)?.try_into().ok()?) as usize,
            10,
        ),
        n => (n as usize, 2),
    };
    let masked = second & 0x80 != 0;
    let key: [u8; 4] = if masked {
        let key = buf.get(at..at + 4)?.try_into().ok()?;
        at += 4;
        key
    } else {
        [0; 4]
    };
    let mut payload = buf.get(at..at + len)?.to_vec();
    for (i, b) in payload.iter_mut().enumerate() {
        *b ^= key[i % 4];
    }
    let frame = Frame {
        fin: first & 0x80 != 0,
        rsv: (first >> 4) & 7,
        opcode: first & 0x0f,
        masked,
        payload,
    };
    Some((frame, at + len))
}

fn server_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0x80 | opcode];
    match payload.len() {
        n if n < 126 => out.push(n as u8),
        n => {
            out.push(126);
            out.extend((n as u16).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
    out
}

struct Conn {
    weakness: Weakness,
    hub: broadcast::Sender<String>,
    online: Arc<AtomicU64>,
    user: Option<String>,
    /// A fragmented message so far.
    message: Option<Vec<u8>>,
}

impl Conn {
    /// The frames to send back, or the close code that fails the connection.
    fn handle(&mut self, frame: Frame) -> Result<Vec<Vec<u8>>, u16> {
        if frame.rsv != 0 || (!frame.masked && self.weakness != Weakness::AcceptsUnmasked) {
            return Err(1002);
        }
        match frame.opcode {
            8..=10 if !frame.fin || frame.payload.len() > 125 => Err(1002),
            9 => Ok(vec![server_frame(10, &frame.payload)]),
            10 => Ok(vec![]),
            8 => {
                let code = match frame.payload.len() {
                    0 => 1000,
                    1 => return Err(1002),
                    _ => u16::from_be_bytes([frame.payload[0], frame.payload[1]]),
                };
                if !(matches!(code, 1000..=1003 | 1007..=1011 | 3000..=4999)) {
                    return Err(1002);
                }
                if std::str::from_utf8(&frame.payload[2.min(frame.payload.len())..]).is_err() {
                    return Err(1007);
                }
                // Answered, then this connection ends.
                Err(code)
            }
            1 | 2 if self.message.is_some() => Err(1002),
            0 if self.message.is_none() => Err(1002),
            0..=2 => {
                let mut message = self.message.take().unwrap_or_default();
                message.extend_from_slice(&frame.payload);
                if !frame.fin {
                    self.message = Some(message);
                    return Ok(vec![]);
                }
                self.on_message(&message)?;
                Ok(vec![])
            }
            _ => Err(1002),
        }
    }

    fn on_message(&mut self, message: &[u8]) -> Result<(), u16> {
        let text = match std::str::from_utf8(message) {
            Ok(text) => text.to_string(),
            Err(_) if self.weakness == Weakness::SkipsUtf8 => {
                String::from_utf8_lossy(message).to_string()
            }
            Err(_) => return Err(1007),
        };
        let Ok(m) = serde_json::from_str::<Value>(&text) else {
            return Ok(());
        };
        match m["type"].as_str() {
            Some("join") => {
                let user = m["user"].as_str().unwrap_or_default().to_string();
                let online = self.online.fetch_add(1, Ordering::Relaxed) + 1;
                let _ = self.hub.send(
                    json!({"type": "join", "room": "public", "user": user, "online": online})
                        .to_string(),
                );
                self.user = Some(user);
            }
            Some("chat") if self.user.is_some() => {
                let _ = self.hub.send(
                    json!({"type": "chat", "room": "public", "user": self.user, "text": m["text"]})
                        .to_string(),
                );
            }
            _ => {}
        }
        Ok(())
    }
}

async fn run(weakness: Weakness) -> ServerConformance {
    let target = start(weakness).await;
    conformance(
        &target,
        &format!("{weakness:?}"),
        Transport::Ws,
        &[],
        |_| {},
    )
    .await
}

/// The category's worst verdict and the cases that have it.
fn cell(c: &ServerConformance, category: Category) -> (CaseVerdict, Vec<String>) {
    let (verdict, cases) = c.worst_in(category).unwrap();
    (verdict, cases.iter().map(|c| c.id.clone()).collect())
}

fn describe(c: &ServerConformance) -> String {
    c.cases
        .iter()
        .map(|c| format!("{} {:?}: {}", c.id, c.verdict, c.evidence))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_server_that_keeps_every_rule_is_strict_in_every_case() {
    let c = run(Weakness::None).await;
    assert!(
        c.cases.iter().all(|c| c.verdict == CaseVerdict::Strict),
        "{}",
        describe(&c)
    );
    assert!(c.passed() && !c.deflate_negotiated);
}

#[tokio::test]
async fn a_server_that_skips_utf8_validation_is_ignored_in_the_utf8_cell_only() {
    let c = run(Weakness::SkipsUtf8).await;
    let (verdict, cases) = cell(&c, Category::Utf8);
    assert_eq!(verdict, CaseVerdict::Ignored, "{}", describe(&c));
    assert_eq!(
        cases,
        [
            "invalid_utf8_single_frame",
            "invalid_utf8_across_fragments",
            "utf8_truncated_at_end"
        ]
    );
    for other in Category::ALL.into_iter().filter(|&k| k != Category::Utf8) {
        assert_eq!(
            cell(&c, other).0,
            CaseVerdict::Strict,
            "{other:?}\n{}",
            describe(&c)
        );
    }
    assert!(!c.passed());
}

#[tokio::test]
async fn a_server_that_accepts_unmasked_frames_is_ignored_in_the_framing_cell() {
    let c = run(Weakness::AcceptsUnmasked).await;
    assert_eq!(
        cell(&c, Category::Framing),
        (
            CaseVerdict::Ignored,
            vec!["unmasked_client_frame".to_string()]
        ),
        "{}",
        describe(&c)
    );
    let ignored: Vec<_> = c.failing().map(|c| c.id.as_str()).collect();
    assert_eq!(ignored, ["unmasked_client_frame"]);
}

#[tokio::test]
async fn a_server_that_answers_no_close_frame_is_non_strict_but_ignores_nothing() {
    let c = run(Weakness::NoCloseFrame).await;
    let (verdict, cases) = cell(&c, Category::Close);
    assert_eq!(verdict, CaseVerdict::NonStrict, "{}", describe(&c));
    assert!(
        cases.contains(&"close_1000_answered".to_string()),
        "{cases:?}"
    );
    assert!(cases.contains(&"close_code_5000".to_string()), "{cases:?}");
    assert_eq!(cell(&c, Category::Utf8).0, CaseVerdict::NonStrict);
    // Delivery and pongs need no close frame.
    assert_eq!(cell(&c, Category::Pings).1, ["ping_126_bytes"]);
    assert!(c.passed(), "non-strict passes: {}", describe(&c));
    let evidence = &c.cases.iter().find(|c| c.id == "rsv2").unwrap().evidence;
    assert!(evidence.contains("without a close frame"), "{evidence}");
}

#[tokio::test]
async fn a_server_that_dies_mid_suite_fails_that_case_and_runs_no_other() {
    let c = run(Weakness::DiesOnRsv2).await;
    let at = c.cases.iter().position(|c| c.id == "rsv2").unwrap();
    let rsv2 = &c.cases[at];
    assert_eq!(rsv2.verdict, CaseVerdict::Failed, "{}", describe(&c));
    assert!(
        rsv2.evidence.contains("/health stopped answering"),
        "{}",
        rsv2.evidence
    );
    assert!(
        c.cases[..at]
            .iter()
            .all(|c| c.verdict == CaseVerdict::Strict),
        "{}",
        describe(&c)
    );
    assert!(
        c.cases[at + 1..]
            .iter()
            .all(|c| c.verdict == CaseVerdict::NotRun)
    );
    assert!(c.cases.len() > at + 1);
}
