//! Each room check can fail: a tiny in-process chat server with rooms (join, chat, leave,
//! ping, /health, /stats) passes every room check when whole, and with one deliberate
//! weakness at a time fails the check meant for it while passing one its weakness does not
//! touch.

mod handshake;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};
use wscbench_engine::verify::{Target, verify};

/// The one thing the server gets wrong, if any.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Weakness {
    /// Keeps every rule the room checks prove.
    None,
    /// Broadcasts every join, chat and leave to the members of every room.
    BroadcastsToAllRooms,
    /// Reports as `online` the joined connections of the whole server.
    CountsOnlineGlobally,
    /// Treats a leave with a room as the seed's leave: leaves every room and closes 1000.
    ClosesOnLeaveWithRoom,
    /// Lets a connection join any number of rooms.
    NoRoomLimit,
    /// Accepts room names of any length.
    NoRoomNameLimit,
    /// On a disconnect, broadcasts the leave in the connection's first room only.
    DisconnectLeavesFirstRoomOnly,
}

const MAX_ROOMS: usize = 16;
const MAX_NAME_CHARS: usize = 64;

type Outbox = mpsc::UnboundedSender<String>;

/// The rooms, and the counters `/stats` reports.
struct Server {
    weakness: Weakness,
    /// room → connection id → that connection's outbox.
    rooms: Mutex<HashMap<String, HashMap<u64, Outbox>>>,
    next_id: AtomicU64,
    current: AtomicU64,
    total: AtomicU64,
    joins: AtomicU64,
    chat_in: AtomicU64,
    malformed: AtomicU64,
}

impl Server {
    /// Sends `message` to `room`'s members but `skip` (every room's, when so weakened).
    fn broadcast(
        &self,
        rooms: &HashMap<String, HashMap<u64, Outbox>>,
        room: &str,
        message: &Value,
        skip: Option<u64>,
    ) {
        let text = message.to_string();
        let mut recipients: HashMap<u64, &Outbox> = HashMap::new();
        for (name, members) in rooms {
            if name == room || self.weakness == Weakness::BroadcastsToAllRooms {
                recipients.extend(members.iter().map(|(id, tx)| (*id, tx)));
            }
        }
        for (id, tx) in recipients {
            if Some(id) != skip {
                let _ = tx.send(text.clone());
            }
        }
    }

    fn online(&self, rooms: &HashMap<String, HashMap<u64, Outbox>>, room: &str) -> usize {
        if self.weakness == Weakness::CountsOnlineGlobally {
            rooms
                .values()
                .flat_map(|m| m.keys())
                .collect::<BTreeSet<_>>()
                .len()
        } else {
            rooms.get(room).map_or(0, HashMap::len)
        }
    }

    /// Takes `id` out of `room`, broadcasting its leave there unless `silent`.
    fn leave(&self, id: u64, user: &str, room: &str, silent: bool) {
        let mut rooms = self.rooms.lock().unwrap();
        if let Some(members) = rooms.get_mut(room) {
            members.remove(&id);
            if members.is_empty() {
                rooms.remove(room);
            }
        }
        if !silent {
            let online = self.online(&rooms, room);
            let leave = json!({"type": "leave", "room": room, "user": user, "online": online});
            self.broadcast(&rooms, room, &leave, None);
        }
    }

    fn stats(&self) -> String {
        let n = |c: &AtomicU64| c.load(Ordering::SeqCst);
        json!({"server": "rooms-weak", "uptime_ms": 0,
            "connections_current": n(&self.current), "connections_total": n(&self.total),
            "joins": n(&self.joins), "frames_in": 0, "chat_in": n(&self.chat_in),
            "chat_accepted": n(&self.chat_in), "deliveries": 0, "dropped_ratelimit": 0,
            "dropped_slow": 0, "malformed": n(&self.malformed)})
        .to_string()
    }
}

async fn start(weakness: Weakness) -> Target {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = Arc::new(Server {
        weakness,
        rooms: Mutex::default(),
        next_id: AtomicU64::new(1),
        current: AtomicU64::new(0),
        total: AtomicU64::new(0),
        joins: AtomicU64::new(0),
        chat_in: AtomicU64::new(0),
        malformed: AtomicU64::new(0),
    });
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(serve(stream, server.clone()));
        }
    });
    Target::loopback(port)
}

async fn serve(mut stream: TcpStream, server: Arc<Server>) {
    let Some(head) = handshake::read_head(&mut stream).await else {
        return;
    };
    let path = head.split_whitespace().nth(1).unwrap_or("/");
    if path != "/ws" {
        let (status, body) = match path {
            "/health" => ("200 OK", "ok".to_string()),
            "/stats" => ("200 OK", server.stats()),
            _ => ("404 Not Found", String::new()),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        return;
    }
    if !handshake::accept_upgrade(&mut stream, &head).await {
        return;
    }
    let ws = WebSocketStream::from_raw_socket(stream, Role::Server, None).await;
    server.current.fetch_add(1, Ordering::SeqCst);
    server.total.fetch_add(1, Ordering::SeqCst);
    let mut conn = Conn {
        id: server.next_id.fetch_add(1, Ordering::SeqCst),
        server: server.clone(),
        user: None,
        rooms: Vec::new(),
    };
    conn.run(ws).await;
    server.current.fetch_sub(1, Ordering::SeqCst);
}

/// One connection: its name, its rooms in the order joined, and its reader and writer.
struct Conn {
    id: u64,
    server: Arc<Server>,
    user: Option<String>,
    rooms: Vec<String>,
}

/// What a message asks of the connection once handled.
enum After {
    Continue,
    Close,
}

fn valid_name(v: &Value, weakness: Weakness) -> Option<&str> {
    let s = v.as_str()?;
    let chars = s.chars().count();
    (chars >= 1 && (chars <= MAX_NAME_CHARS || weakness == Weakness::NoRoomNameLimit)).then_some(s)
}

impl Conn {
    async fn run(&mut self, mut ws: WebSocketStream<TcpStream>) {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        loop {
            tokio::select! {
                out = rx.recv() => if let Some(out) = out && ws.send(Message::text(out)).await.is_err() {
                    break;
                },
                message = ws.next() => match message {
                    Some(Ok(Message::Text(text))) => {
                        if let After::Close = self.handle(&text, &tx) {
                            // Let what this connection's leave queued go first, then close.
                            while let Ok(out) = rx.try_recv() {
                                let _ = ws.send(Message::text(out)).await;
                            }
                            let frame = CloseFrame { code: CloseCode::Normal, reason: "".into() };
                            let _ = ws.close(Some(frame)).await;
                            while let Ok(Some(_)) = tokio::time::timeout(Duration::from_secs(1), ws.next()).await {}
                            return;
                        }
                    }
                    Some(Ok(Message::Binary(_))) => {
                        self.server.malformed.fetch_add(1, Ordering::SeqCst);
                    }
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                    Some(Ok(_)) => {}
                },
            }
        }
        self.disconnect();
    }

    fn handle(&mut self, text: &str, tx: &Outbox) -> After {
        let server = self.server.clone();
        let weakness = server.weakness;
        let malformed = || {
            server.malformed.fetch_add(1, Ordering::SeqCst);
            After::Continue
        };
        let Ok(m) = serde_json::from_str::<Value>(text) else {
            return malformed();
        };
        let room = valid_name(&m["room"], weakness).map(str::to_string);
        let joined =
            |room: &Option<String>| room.as_ref().filter(|r| self.rooms.contains(r)).cloned();
        match m["type"].as_str() {
            Some("ping") => {
                let _ = tx.send(json!({"type": "pong", "ts": m["ts"]}).to_string());
            }
            Some("join") => {
                let (Some(room), Some(user)) = (room, valid_name(&m["user"], Weakness::None))
                else {
                    return malformed();
                };
                if self.rooms.contains(&room) {
                    return After::Continue;
                }
                if self.rooms.len() >= MAX_ROOMS && weakness != Weakness::NoRoomLimit {
                    return malformed();
                }
                let user = self.user.get_or_insert_with(|| user.to_string()).clone();
                self.rooms.push(room.clone());
                server.joins.fetch_add(1, Ordering::SeqCst);
                let mut rooms = server.rooms.lock().unwrap();
                rooms
                    .entry(room.clone())
                    .or_default()
                    .insert(self.id, tx.clone());
                let online = server.online(&rooms, &room);
                let join = json!({"type": "join", "room": room, "user": user, "online": online});
                server.broadcast(&rooms, &room, &join, None);
            }
            Some("chat") => {
                let (Some(room), Some(text)) = (joined(&room), m["text"].as_str()) else {
                    return malformed();
                };
                server.chat_in.fetch_add(1, Ordering::SeqCst);
                let user = self.user.clone().unwrap_or_default();
                let chat = json!({"type": "chat", "room": room, "user": user, "text": text});
                let rooms = server.rooms.lock().unwrap();
                server.broadcast(&rooms, &room, &chat, Some(self.id));
            }
            Some("leave")
                if m.get("room").is_some() && weakness != Weakness::ClosesOnLeaveWithRoom =>
            {
                let Some(room) = joined(&room) else {
                    return malformed();
                };
                self.rooms.retain(|r| *r != room);
                server.leave(
                    self.id,
                    self.user.as_deref().unwrap_or_default(),
                    &room,
                    false,
                );
            }
            Some("leave") => {
                if self.rooms.is_empty() {
                    return malformed();
                }
                for room in std::mem::take(&mut self.rooms) {
                    server.leave(
                        self.id,
                        self.user.as_deref().unwrap_or_default(),
                        &room,
                        false,
                    );
                }
                return After::Close;
            }
            _ => return malformed(),
        }
        After::Continue
    }

    fn disconnect(&mut self) {
        let user = self.user.clone().unwrap_or_default();
        for (i, room) in std::mem::take(&mut self.rooms).iter().enumerate() {
            let silent = i > 0 && self.server.weakness == Weakness::DisconnectLeavesFirstRoomOnly;
            self.server.leave(self.id, &user, room, silent);
        }
    }
}

const ROOM_CHECKS: [&str; 5] = [
    "rooms_isolated",
    "online_per_room",
    "leave_one_room",
    "room_names",
    "disconnect_all_rooms",
];

/// Runs the named checks (in `verify`'s order, whatever the order asked) against a server
/// with `weakness`; returns (name, passed, detail).
async fn check(weakness: Weakness, checks: &[&str]) -> Vec<(String, bool, String)> {
    let target = start(weakness).await;
    let only: Vec<String> = checks.iter().map(|c| c.to_string()).collect();
    verify(&target, &only, |_| {})
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
async fn a_server_that_keeps_the_room_rules_passes_every_room_check() {
    let results = check(Weakness::None, &ROOM_CHECKS).await;
    let expected: Vec<(&str, bool)> = ROOM_CHECKS.iter().map(|n| (*n, true)).collect();
    assert_eq!(verdicts(&results), expected, "{results:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_broadcasts_to_every_room_fails_the_isolation_check() {
    let results = check(
        Weakness::BroadcastsToAllRooms,
        &["rooms_isolated", "disconnect_all_rooms"],
    )
    .await;
    assert_eq!(
        verdicts(&results),
        [("rooms_isolated", false), ("disconnect_all_rooms", true)],
        "{results:#?}"
    );
    assert!(
        results[0].2.contains("received a message of another room"),
        "{results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_counts_online_over_all_rooms_fails_the_online_check() {
    let results = check(
        Weakness::CountsOnlineGlobally,
        &["online_per_room", "rooms_isolated"],
    )
    .await;
    assert_eq!(
        verdicts(&results),
        [("rooms_isolated", true), ("online_per_room", false)],
        "{results:#?}"
    );
    assert!(
        results[1].2.contains(
            "the first join to r2, while r1 has 2 members, said online Some(3), expected 1"
        ),
        "{results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_closes_on_a_leave_with_a_room_fails_the_leave_one_room_check() {
    let results = check(
        Weakness::ClosesOnLeaveWithRoom,
        &["leave_one_room", "disconnect_all_rooms"],
    )
    .await;
    assert_eq!(
        verdicts(&results),
        [("leave_one_room", false), ("disconnect_all_rooms", true)],
        "{results:#?}"
    );
    assert!(
        results[0]
            .2
            .contains("a leave with a room must keep the connection open"),
        "{results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_without_the_16_room_limit_fails_the_room_names_check() {
    let results = check(Weakness::NoRoomLimit, &["room_names", "online_per_room"]).await;
    assert_eq!(
        verdicts(&results),
        [("online_per_room", true), ("room_names", false)],
        "{results:#?}"
    );
    assert!(results[1].2.contains("17th"), "{results:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_accepts_65_character_rooms_fails_the_room_names_check() {
    let results = check(Weakness::NoRoomNameLimit, &["room_names", "leave_one_room"]).await;
    assert_eq!(
        verdicts(&results),
        [("leave_one_room", true), ("room_names", false)],
        "{results:#?}"
    );
    assert!(results[1].2.contains("65-character room"), "{results:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_broadcasts_a_disconnect_in_one_room_only_fails_the_disconnect_check() {
    let results = check(
        Weakness::DisconnectLeavesFirstRoomOnly,
        &["disconnect_all_rooms", "leave_one_room"],
    )
    .await;
    assert_eq!(
        verdicts(&results),
        [("leave_one_room", true), ("disconnect_all_rooms", false)],
        "{results:#?}"
    );
    assert!(
        results[1]
            .2
            .contains("no a's leave of r2 after its disconnect"),
        "{results:#?}"
    );
}
