//! Each hostile check can fail: a tiny in-process chat server (join, chat, ping, /health,
//! /stats) with one deliberate weakness at a time fails the check meant for it, and passes a
//! check its weakness does not touch.

mod handshake;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{broadcast, watch};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use wscbench_engine::verify::Target;
use wscbench_engine::verify::hostile::hostile;

/// The one thing the server gets wrong.
#[derive(Clone, Copy, PartialEq)]
enum Weakness {
    /// Accepts messages of any size (no 1009).
    NoSizeLimit,
    /// The whole server stops (listener and every connection) on a binary frame.
    DiesOnBinary,
    /// Closes a connection that sends malformed JSON instead of ignoring it.
    ClosesOnMalformed,
    /// Reads each upgrade request in the accept loop, one client at a time.
    SequentialUpgrades,
    /// Counts a connection as gone only after a close handshake (a reset leaks it).
    LeaksResetConnections,
    /// Drops the canaries' third round of chats, counted as `dropped_slow`.
    DropsACanaryRound,
}

#[derive(Default)]
struct Counters {
    current: AtomicU64,
    total: AtomicU64,
    malformed: AtomicU64,
    dropped_slow: AtomicU64,
}

async fn start(weakness: Weakness) -> Target {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let counters = Arc::new(Counters::default());
    let (chats, _) = broadcast::channel::<String>(1024);
    let (dead_tx, dead) = watch::channel(false);
    let dead_tx = Arc::new(dead_tx);
    tokio::spawn(async move {
        let mut dead_rx = dead.clone();
        loop {
            let (mut stream, _) = tokio::select! {
                accepted = listener.accept() => accepted.unwrap(),
                _ = dead_rx.changed() => return,
            };
            let (counters, chats, dead, dead_tx) = (
                counters.clone(),
                chats.clone(),
                dead.clone(),
                dead_tx.clone(),
            );
            if weakness == Weakness::SequentialUpgrades {
                let Some(head) = handshake::read_head(&mut stream).await else {
                    continue;
                };
                tokio::spawn(serve(
                    stream, head, weakness, counters, chats, dead, dead_tx,
                ));
            } else {
                tokio::spawn(async move {
                    let Some(head) = handshake::read_head(&mut stream).await else {
                        return;
                    };
                    serve(stream, head, weakness, counters, chats, dead, dead_tx).await
                });
            }
        }
    });
    Target::loopback(port)
}

/// A weakened server: one connection, each weakness in turn; a test fixture kept in one
/// piece so that each weakness reads beside the check it must fail.
#[allow(clippy::too_many_lines)]
async fn serve(
    mut stream: TcpStream,
    head: String,
    weakness: Weakness,
    counters: Arc<Counters>,
    chats: broadcast::Sender<String>,
    mut dead: watch::Receiver<bool>,
    dead_tx: Arc<watch::Sender<bool>>,
) {
    let path = head.split_whitespace().nth(1).unwrap_or("/");
    if path == "/health" || path == "/stats" {
        let body = if path == "/health" {
            "ok".to_string()
        } else {
            json!({"server": "weak", "uptime_ms": 0,
                "connections_current": counters.current.load(Ordering::SeqCst),
                "connections_total": counters.total.load(Ordering::SeqCst),
                "joins": 0, "frames_in": 0, "chat_in": 0, "chat_accepted": 0, "deliveries": 0,
                "dropped_ratelimit": 0, "dropped_slow": counters.dropped_slow.load(Ordering::SeqCst),
                "malformed": counters.malformed.load(Ordering::SeqCst)})
            .to_string()
        };
        let _ = stream
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            )
            .await;
        return;
    }
    if !handshake::accept_upgrade(&mut stream, &head).await {
        return;
    }
    let limit = (weakness != Weakness::NoSizeLimit).then_some(4096);
    let config = WebSocketConfig::default()
        .max_message_size(limit)
        .max_frame_size(limit);
    let mut ws = WebSocketStream::from_raw_socket(stream, Role::Server, Some(config)).await;
    counters.current.fetch_add(1, Ordering::SeqCst);
    counters.total.fetch_add(1, Ordering::SeqCst);
    let mut feed = chats.subscribe();
    let mut joined = false;
    let mut closed_cleanly = false;
    loop {
        tokio::select! {
            _ = dead.changed() => break,
            chat = feed.recv() => if let Ok(chat) = chat && joined && ws.send(Message::text(chat)).await.is_err() {
                break;
            },
            message = ws.next() => match message {
                Some(Ok(Message::Text(text))) => {
                    let Ok(m) = serde_json::from_str::<Value>(&text) else {
                        counters.malformed.fetch_add(1, Ordering::SeqCst);
                        if weakness == Weakness::ClosesOnMalformed {
                            let _ = ws.close(None).await;
                            break;
                        }
                        continue;
                    };
                    match m["type"].as_str() {
                        Some("join") => {
                            joined = true;
                            let ack = json!({"type": "join", "room": "public", "user": m["user"],
                                "online": counters.current.load(Ordering::SeqCst)});
                            let _ = chats.send(ack.to_string());
                        }
                        Some("chat") if weakness == Weakness::DropsACanaryRound
                            && m["text"].as_str().is_some_and(|t| t.starts_with("canary 3 ")) => {
                            counters.dropped_slow.fetch_add(1, Ordering::SeqCst);
                        }
                        Some("chat") if joined => {
                            let _ = chats.send(json!({"type": "chat", "room": "public", "user": "x",
                                "text": m["text"], "ts": 0}).to_string());
                        }
                        Some("ping") => {
                            let _ = ws.send(Message::text(json!({"type": "pong", "ts": m["ts"]}).to_string())).await;
                        }
                        _ => {
                            counters.malformed.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }
                Some(Ok(Message::Binary(_))) => {
                    counters.malformed.fetch_add(1, Ordering::SeqCst);
                    if weakness == Weakness::DiesOnBinary {
                        let _ = dead_tx.send(true);
                        break;
                    }
                }
                Some(Ok(Message::Close(_))) => {
                    closed_cleanly = true;
                    break;
                }
                Some(Ok(_)) => {}
                Some(Err(WsError::Capacity(_))) => {
                    let frame = CloseFrame { code: CloseCode::Size, reason: "".into() };
                    let _ = ws.close(Some(frame)).await;
                    // Drain until the peer goes, so the close frame is not lost to a reset.
                    while let Ok(Some(_)) = tokio::time::timeout(Duration::from_secs(1), ws.next()).await {}
                    break;
                }
                Some(Err(_)) | None => break,
            },
        }
    }
    if closed_cleanly || weakness != Weakness::LeaksResetConnections {
        counters.current.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs the named hostile checks against a server with `weakness`; returns (name, passed, detail).
async fn attack(weakness: Weakness, checks: &[&str]) -> Vec<(String, bool, String)> {
    let target = start(weakness).await;
    let only: Vec<String> = checks.iter().map(|c| c.to_string()).collect();
    hostile(&target, None, &only, |_| {})
        .await
        .checks
        .into_iter()
        .map(|c| (c.name.to_string(), c.passed, c.detail))
        .collect()
}

fn verdicts(results: &[(String, bool, String)]) -> Vec<(&str, bool)> {
    results.iter().map(|(n, p, _)| (n.as_str(), *p)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_without_a_size_limit_fails_the_oversize_and_fragment_checks() {
    let results = attack(
        Weakness::NoSizeLimit,
        &["binary_frames", "oversize_frames", "fragmented_messages"],
    )
    .await;
    assert_eq!(
        verdicts(&results),
        [
            ("binary_frames", true),
            ("oversize_frames", false),
            ("fragmented_messages", false)
        ],
        "{results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_dies_on_a_binary_frame_fails_the_binary_check() {
    let results = attack(Weakness::DiesOnBinary, &["non_utf8_text", "binary_frames"]).await;
    assert_eq!(
        verdicts(&results),
        [("non_utf8_text", true), ("binary_frames", false)],
        "{results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_closes_on_malformed_json_fails_the_flood_check() {
    let results = attack(
        Weakness::ClosesOnMalformed,
        &["invalid_json_flood", "unknown_types", "oversize_frames"],
    )
    .await;
    assert_eq!(
        verdicts(&results),
        [
            ("invalid_json_flood", false),
            ("unknown_types", true),
            ("oversize_frames", true)
        ],
        "{results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_upgrades_one_client_at_a_time_fails_the_slowloris_check() {
    let results = attack(Weakness::SequentialUpgrades, &["slowloris_upgrade"]).await;
    assert_eq!(
        verdicts(&results),
        [("slowloris_upgrade", false)],
        "{results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_leaks_reset_connections_fails_the_reset_and_flood_checks() {
    let results = attack(
        Weakness::LeaksResetConnections,
        &["invalid_json_flood", "reset_mid_frame", "connection_flood"],
    )
    .await;
    assert_eq!(
        verdicts(&results),
        [
            ("invalid_json_flood", true),
            ("reset_mid_frame", false),
            ("connection_flood", false)
        ],
        "{results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_canary_chat_lost_during_an_attack_is_reported_with_the_servers_counters() {
    let results = attack(Weakness::DropsACanaryRound, &["slowloris_upgrade"]).await;
    let [(name, passed, detail)] = &results[..] else {
        panic!("{results:#?}")
    };
    assert_eq!((name.as_str(), *passed), ("slowloris_upgrade", false));
    assert!(
        detail.contains("the canaries stopped hearing each other"),
        "{detail}"
    );
    // The timeout says what did arrive (here the newcomer's join, or nothing).
    assert!(
        detail.contains("canary 3 from") && detail.contains("within 3s ("),
        "{detail}"
    );
    assert!(detail.contains("dropped_slow +1,"), "{detail}");
}
