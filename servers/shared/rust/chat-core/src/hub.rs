//! The rooms: their members and the broadcasts.
//!
//! The hub maps each room's name to its members, and a member to its client's
//! bounded outbound queue. A broadcast goes to one room's members only, never
//! to every connection: it serializes its message once, into a
//! reference-counted text buffer that every recipient's queue shares, and
//! hands it over with `try_send`: a full queue drops the message (counted as
//! `dropped_slow`) and the hub moves on, so it never waits for a slow client.
//! The lock around the map is held only while joining, leaving and handing
//! out; no socket is written under it, and counters are added after it is
//! released. A room whose last member leaves is removed, so the map holds
//! only the rooms in use.
//!
//! The buffer type `T` is the server's: the `Utf8Bytes` of its WebSocket
//! stack, which its writer sends without a copy. Any `T: From<String> +
//! Clone` whose clone shares the bytes (`Arc<str>` in the tests) will do.
//!
//! [`Member`] is one connection as the hub sees it: the reader's protocol
//! state (its user name, its rooms, the token bucket) and its own queue. The
//! server's client hands it each text frame; the client's writer drains the
//! queue.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Instant;

use tokio::sync::{mpsc, watch};

use crate::limiter::TokenBucket;
use crate::protocol::{self, Inbound, MAX_ROOMS, RoomName};
use crate::stats::{self, Stats};

/// Messages a client's outbound queue holds before further ones are dropped.
pub const QUEUE_CAPACITY: usize = 256;

/// One message on its way to one client.
#[derive(Debug, Clone)]
pub struct Outbound<T> {
    pub text: T,
    /// Chats count as `deliveries` once written.
    pub chat: bool,
}

/// The sending end of a client's outbound queue.
pub type Queue<T> = mpsc::Sender<Outbound<T>>;

/// Identifies a client within the hub.
pub type ClientId = u64;

/// One room's members.
type Members<T> = HashMap<ClientId, Queue<T>>;

pub struct Hub<T> {
    pub stats: Arc<Stats>,
    /// Every room with at least one member, by its decoded name.
    rooms: RwLock<HashMap<Box<str>, Members<T>>>,
    next_id: AtomicU64,
    /// Becomes true on shutdown; every client's writer then closes with 1001.
    closing: watch::Sender<bool>,
}

impl<T: From<String> + Clone> Hub<T> {
    pub fn new(stats: Arc<Stats>) -> Self {
        Self {
            stats,
            rooms: RwLock::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            closing: watch::Sender::new(false),
        }
    }

    pub fn next_id(&self) -> ClientId {
        self.next_id.fetch_add(1, Relaxed)
    }

    /// Adds a member to `room` (creating the room) and announces it to every
    /// member of the room, the joiner included. The queue is in the room
    /// before the announcement, so the joiner's own copy is its
    /// acknowledgement and nothing broadcast in the room after it is missed.
    pub fn join(&self, id: ClientId, room: &RoomName, user: &str, queue: Queue<T>) {
        let dropped = {
            let mut rooms = self.rooms.write().unwrap_or_else(PoisonError::into_inner);
            let members = rooms.entry(room.name.clone()).or_default();
            members.insert(id, queue);
            // Under the write lock, so `online` counts rise in the order members see them.
            let message = shared(protocol::join(&room.json, user, members.len()), false);
            hand_out(members.values(), &message)
        };
        stats::add(&self.stats.joins, 1);
        stats::add(&self.stats.dropped_slow, dropped);
    }

    /// Removes a member from `room` and announces it to those remaining; the
    /// last member's leave removes the room. Returns false (and announces
    /// nothing) if it was not a member.
    pub fn leave(&self, id: ClientId, room: &RoomName, user: &str) -> bool {
        let dropped = {
            let mut rooms = self.rooms.write().unwrap_or_else(PoisonError::into_inner);
            let Some(members) = rooms.get_mut(&*room.name) else {
                return false;
            };
            if members.remove(&id).is_none() {
                return false;
            }
            if members.is_empty() {
                rooms.remove(&*room.name);
                return true;
            }
            let message = shared(protocol::leave(&room.json, user, members.len()), false);
            hand_out(members.values(), &message)
        };
        stats::add(&self.stats.dropped_slow, dropped);
        true
    }

    /// Sends a chat to every member of `room` but its sender.
    pub fn chat(&self, from: ClientId, room: &RoomName, user: &str, text: &str, ts: Option<&str>) {
        let message = shared(protocol::chat(&room.json, user, text, ts), true);
        let dropped = {
            let rooms = self.rooms.read().unwrap_or_else(PoisonError::into_inner);
            let Some(members) = rooms.get(&*room.name) else {
                return;
            };
            let others = members
                .iter()
                .filter(|&(&id, _)| id != from)
                .map(|(_, queue)| queue);
            hand_out(others, &message)
        };
        stats::add(&self.stats.dropped_slow, dropped);
    }

    /// How many rooms have members now.
    #[cfg(test)]
    fn room_count(&self) -> usize {
        self.rooms
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Asks every client to close with 1001.
    pub fn close_all(&self) {
        self.closing.send_replace(true);
    }

    /// Resolves once `close_all` has been called, even if before this.
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }
}

/// A message serialized once, shared by every recipient.
fn shared<T: From<String>>(text: String, chat: bool) -> Outbound<T> {
    Outbound {
        text: T::from(text),
        chat,
    }
}

/// Queues `message` for every recipient without waiting; returns how many
/// queues were full. A closed queue belongs to a client that is going away.
fn hand_out<'a, T: Clone + 'a>(
    recipients: impl Iterator<Item = &'a Queue<T>>,
    message: &Outbound<T>,
) -> u64 {
    let mut dropped = 0;
    for queue in recipients {
        if let Err(mpsc::error::TrySendError::Full(_)) = queue.try_send(message.clone()) {
            dropped += 1;
        }
    }
    dropped
}

/// What a frame asks of the connection, beyond what the hub already did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// Keep reading.
    Continue,
    /// The member left every room: close the connection with 1000.
    Left,
}

/// One connection's side of the hub, owned by its reader.
pub struct Member<T> {
    id: ClientId,
    hub: Arc<Hub<T>>,
    /// This connection's own queue, for its rooms and for pongs.
    queue: Queue<T>,
    bucket: TokenBucket,
    /// The JSON-encoded user name, set by the first successful join and kept
    /// for every later one, even after the connection has left every room.
    user: Option<String>,
    /// The rooms this connection is in, in the order it joined them; at most
    /// `MAX_ROOMS`, so a linear search is the fastest lookup.
    rooms: Vec<RoomName>,
}

impl<T: From<String> + Clone> Member<T> {
    /// A connection that has not joined; `queue` is the one its writer drains.
    pub fn new(hub: Arc<Hub<T>>, queue: Queue<T>) -> Self {
        Self {
            id: hub.next_id(),
            hub,
            queue,
            bucket: TokenBucket::new(Instant::now()),
            user: None,
            rooms: Vec::new(),
        }
    }

    pub fn hub(&self) -> &Arc<Hub<T>> {
        &self.hub
    }

    /// Applies one text frame from the peer.
    pub fn on_text(&mut self, text: &str) -> Handled {
        self.on_text_at(text, Instant::now())
    }

    /// `on_text` at a given time, for the token bucket.
    fn on_text_at(&mut self, text: &str, now: Instant) -> Handled {
        let stats = &self.hub.stats;
        let Some(inbound) = protocol::parse(text) else {
            stats::add(&stats.malformed, 1);
            return Handled::Continue;
        };
        match inbound {
            Inbound::Join { room, user } => {
                if self.position(&room.name).is_some() {
                    // A second join to a room is ignored.
                } else if self.rooms.len() == MAX_ROOMS {
                    stats::add(&stats.malformed, 1);
                } else {
                    let user = self.user.get_or_insert(user);
                    self.hub.join(self.id, &room, user, self.queue.clone());
                    self.rooms.push(room);
                }
            }
            Inbound::Chat { room, text, ts } => {
                let joined = self.position(&room).map(|i| &self.rooms[i]);
                let (Some(room), Some(user)) = (joined, &self.user) else {
                    stats::add(&stats.malformed, 1);
                    return Handled::Continue;
                };
                stats::add(&stats.chat_in, 1);
                if self.bucket.allow(now) {
                    stats::add(&stats.chat_accepted, 1);
                    self.hub.chat(self.id, room, user, text, ts);
                } else {
                    stats::add(&stats.dropped_ratelimit, 1);
                }
            }
            Inbound::Ping { ts } => {
                let pong = shared(protocol::pong(ts), false);
                if let Err(mpsc::error::TrySendError::Full(_)) = self.queue.try_send(pong) {
                    stats::add(&stats.dropped_slow, 1);
                }
            }
            Inbound::Leave { room: None } if !self.rooms.is_empty() => {
                self.leave();
                return Handled::Left;
            }
            Inbound::Leave { room: Some(room) } => {
                let joined = self.position(&room);
                let (Some(i), Some(user)) = (joined, &self.user) else {
                    stats::add(&stats.malformed, 1);
                    return Handled::Continue;
                };
                let room = self.rooms.remove(i);
                self.hub.leave(self.id, &room, user);
            }
            Inbound::Leave { room: None } => stats::add(&stats.malformed, 1),
        }
        Handled::Continue
    }

    /// Where `room` is in this connection's rooms, if it is in it.
    fn position(&self, room: &str) -> Option<usize> {
        self.rooms.iter().position(|joined| *joined.name == *room)
    }

    /// Leaves every room it is in; in each, the hub tells the remaining
    /// members. The client calls it when its connection ends, whatever ended
    /// it.
    pub fn leave(&mut self) {
        if let Some(user) = &self.user {
            for room in self.rooms.drain(..) {
                self.hub.leave(self.id, &room, user);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::Relaxed;

    use super::*;

    /// Shared like the servers' `Utf8Bytes`: a clone points at the same bytes.
    type Text = Arc<str>;
    type Hub = super::Hub<Text>;
    type Outbound = super::Outbound<Text>;

    fn hub() -> Arc<Hub> {
        Arc::new(Hub::new(Arc::new(Stats::new("wsc-test"))))
    }

    fn room(name: &str) -> RoomName {
        RoomName::new(name).unwrap()
    }

    /// A client that has joined `public` through the hub directly.
    fn member(hub: &Hub, user: &str) -> (ClientId, mpsc::Receiver<Outbound>) {
        let id = hub.next_id();
        let (queue, outbox) = mpsc::channel(QUEUE_CAPACITY);
        hub.join(id, &room("public"), user, queue);
        (id, outbox)
    }

    fn drain(outbox: &mut mpsc::Receiver<Outbound>) -> Vec<String> {
        std::iter::from_fn(|| outbox.try_recv().ok())
            .map(|out| out.text.to_string())
            .collect()
    }

    #[test]
    fn join_reaches_everyone_including_the_joiner() {
        let hub = hub();
        let (_, mut alice) = member(&hub, r#""alice""#);
        let (_, mut bob) = member(&hub, r#""bob""#);
        let alice_join = r#"{"type":"join","room":"public","user":"alice","online":1}"#;
        let bob_join = r#"{"type":"join","room":"public","user":"bob","online":2}"#;
        assert_eq!(drain(&mut alice), [alice_join, bob_join]);
        assert_eq!(drain(&mut bob), [bob_join]);
        assert_eq!(hub.stats.joins.load(Relaxed), 2);
    }

    #[test]
    fn chat_reaches_every_member_but_the_sender() {
        let hub = hub();
        let (alice_id, mut alice) = member(&hub, r#""alice""#);
        let (_, mut bob) = member(&hub, r#""bob""#);
        let (_, mut carol) = member(&hub, r#""carol""#);
        for outbox in [&mut alice, &mut bob, &mut carol] {
            drain(outbox);
        }
        hub.chat(
            alice_id,
            &room("public"),
            r#""alice""#,
            r#""hi""#,
            Some("5"),
        );
        let expected = r#"{"type":"chat","room":"public","user":"alice","text":"hi","ts":5}"#;
        assert_eq!(drain(&mut bob), [expected]);
        assert_eq!(drain(&mut carol), [expected]);
        assert!(drain(&mut alice).is_empty());
    }

    #[test]
    fn a_broadcast_shares_one_buffer() {
        let hub = hub();
        let (alice_id, _alice) = member(&hub, r#""alice""#);
        let (_, mut bob) = member(&hub, r#""bob""#);
        let (_, mut carol) = member(&hub, r#""carol""#);
        drain(&mut bob);
        drain(&mut carol);
        hub.chat(alice_id, &room("public"), r#""alice""#, r#""hi""#, None);
        let (to_bob, to_carol) = (bob.try_recv().unwrap(), carol.try_recv().unwrap());
        assert!(to_bob.chat);
        assert_eq!(to_bob.text.as_ptr(), to_carol.text.as_ptr());
    }

    #[test]
    fn leave_reaches_the_remaining_members_once() {
        let hub = hub();
        let (alice_id, mut alice) = member(&hub, r#""alice""#);
        let (_, mut bob) = member(&hub, r#""bob""#);
        drain(&mut alice);
        drain(&mut bob);
        assert!(hub.leave(alice_id, &room("public"), r#""alice""#));
        assert!(!hub.leave(alice_id, &room("public"), r#""alice""#));
        assert_eq!(
            drain(&mut bob),
            [r#"{"type":"leave","room":"public","user":"alice","online":1}"#]
        );
        assert!(drain(&mut alice).is_empty());
    }

    #[test]
    fn a_full_queue_drops_and_counts_without_holding_up_others() {
        let hub = hub();
        let (alice_id, _alice) = member(&hub, r#""alice""#);
        let (_, mut slow) = member(&hub, r#""slow""#);
        let (_, mut fast) = member(&hub, r#""fast""#);
        // The slow member holds its join and fast's join: 2 of 256 slots.
        drain(&mut fast);
        let chats = QUEUE_CAPACITY + 50;
        for i in 0..chats {
            hub.chat(
                alice_id,
                &room("public"),
                r#""alice""#,
                r#""x""#,
                Some(&i.to_string()),
            );
            assert_eq!(drain(&mut fast).len(), 1, "the fast member gets chat {i}");
        }
        assert_eq!(drain(&mut slow).len(), QUEUE_CAPACITY);
        assert_eq!(
            hub.stats.dropped_slow.load(Relaxed),
            (chats + 2 - QUEUE_CAPACITY) as u64
        );
    }

    #[test]
    fn close_all_is_seen_by_clients_that_subscribe_later() {
        let hub = hub();
        let early = hub.closing();
        hub.close_all();
        assert!(*early.borrow());
        assert!(*hub.closing().borrow());
    }

    /// A connection that has not joined yet, with its queue's receiving end.
    fn connected(hub: &Arc<Hub>) -> (Member<Text>, mpsc::Receiver<Outbound>) {
        let (queue, outbox) = mpsc::channel(QUEUE_CAPACITY);
        (Member::new(Arc::clone(hub), queue), outbox)
    }

    fn join_frame(user: &str) -> String {
        join_room_frame("public", user)
    }

    fn join_room_frame(room: &str, user: &str) -> String {
        format!(r#"{{"type":"join","room":"{room}","user":"{user}"}}"#)
    }

    fn chat_frame(room: &str, text: &str) -> String {
        format!(r#"{{"type":"chat","room":"{room}","text":"{text}"}}"#)
    }

    fn leave_frame(room: &str) -> String {
        format!(r#"{{"type":"leave","room":"{room}"}}"#)
    }

    #[test]
    fn a_member_joins_a_room_once_and_a_second_join_is_ignored() {
        let hub = hub();
        let (mut alice, mut outbox) = connected(&hub);
        assert_eq!(alice.on_text(&join_frame("alice")), Handled::Continue);
        assert_eq!(
            drain(&mut outbox),
            [r#"{"type":"join","room":"public","user":"alice","online":1}"#]
        );
        alice.on_text(&join_frame("alice2"));
        assert!(drain(&mut outbox).is_empty());
        assert_eq!(hub.stats.joins.load(Relaxed), 1);
        assert_eq!(hub.stats.malformed.load(Relaxed), 0);
    }

    #[test]
    fn chat_and_leave_before_join_are_malformed_and_not_broadcast() {
        let hub = hub();
        let (_, mut bob) = member(&hub, r#""bob""#);
        drain(&mut bob);
        let (mut stranger, _outbox) = connected(&hub);
        stranger.on_text(&chat_frame("public", "hi"));
        assert_eq!(stranger.on_text(r#"{"type":"leave"}"#), Handled::Continue);
        assert_eq!(stranger.on_text(&leave_frame("public")), Handled::Continue);
        stranger.on_text("{");
        assert!(drain(&mut bob).is_empty());
        assert_eq!(hub.stats.malformed.load(Relaxed), 4);
        assert_eq!(hub.stats.chat_in.load(Relaxed), 0);
    }

    #[test]
    fn rooms_are_isolated_from_each_other() {
        let hub = hub();
        let (mut alice, mut alice_outbox) = connected(&hub);
        let (mut bob, mut bob_outbox) = connected(&hub);
        let (mut carol, mut carol_outbox) = connected(&hub);
        alice.on_text(&join_room_frame("red", "alice"));
        alice.on_text(&join_room_frame("blue", "alice"));
        bob.on_text(&join_room_frame("red", "bob"));
        carol.on_text(&join_room_frame("blue", "carol"));
        assert_eq!(
            drain(&mut alice_outbox),
            [
                r#"{"type":"join","room":"red","user":"alice","online":1}"#,
                r#"{"type":"join","room":"blue","user":"alice","online":1}"#,
                r#"{"type":"join","room":"red","user":"bob","online":2}"#,
                r#"{"type":"join","room":"blue","user":"carol","online":2}"#,
            ]
        );
        assert_eq!(
            drain(&mut bob_outbox),
            [r#"{"type":"join","room":"red","user":"bob","online":2}"#]
        );
        assert_eq!(
            drain(&mut carol_outbox),
            [r#"{"type":"join","room":"blue","user":"carol","online":2}"#]
        );

        bob.on_text(&chat_frame("red", "to red"));
        carol.on_text(&chat_frame("blue", "to blue"));
        alice.on_text(&chat_frame("blue", "from alice"));
        assert_eq!(
            drain(&mut alice_outbox),
            [
                r#"{"type":"chat","room":"red","user":"bob","text":"to red"}"#,
                r#"{"type":"chat","room":"blue","user":"carol","text":"to blue"}"#,
            ]
        );
        assert!(drain(&mut bob_outbox).is_empty());
        assert_eq!(
            drain(&mut carol_outbox),
            [r#"{"type":"chat","room":"blue","user":"alice","text":"from alice"}"#]
        );
        assert_eq!(hub.stats.joins.load(Relaxed), 4);
    }

    #[test]
    fn a_chat_to_a_room_the_member_is_not_in_is_malformed() {
        let hub = hub();
        let (mut alice, _alice_outbox) = connected(&hub);
        let (mut bob, mut bob_outbox) = connected(&hub);
        alice.on_text(&join_room_frame("red", "alice"));
        bob.on_text(&join_room_frame("blue", "bob"));
        drain(&mut bob_outbox);
        alice.on_text(&chat_frame("blue", "intruding"));
        assert!(drain(&mut bob_outbox).is_empty());
        assert_eq!(hub.stats.malformed.load(Relaxed), 1);
        assert_eq!(hub.stats.chat_in.load(Relaxed), 0);
    }

    #[test]
    fn later_joins_use_the_first_joins_user_name() {
        let hub = hub();
        let (mut alice, mut outbox) = connected(&hub);
        alice.on_text(&join_room_frame("red", "alice"));
        alice.on_text(&join_room_frame("blue", "mallory"));
        alice.on_text(&join_room_frame("green", ""));
        assert_eq!(
            drain(&mut outbox),
            [
                r#"{"type":"join","room":"red","user":"alice","online":1}"#,
                r#"{"type":"join","room":"blue","user":"alice","online":1}"#,
            ]
        );
        assert_eq!(
            hub.stats.malformed.load(Relaxed),
            1,
            "an empty user is still invalid"
        );
    }

    #[test]
    fn online_counts_the_members_of_that_room_only() {
        let hub = hub();
        let (mut alice, _a) = connected(&hub);
        let (mut bob, _b) = connected(&hub);
        let (mut carol, mut carol_outbox) = connected(&hub);
        alice.on_text(&join_room_frame("red", "alice"));
        bob.on_text(&join_room_frame("red", "bob"));
        carol.on_text(&join_room_frame("red", "carol"));
        carol.on_text(&join_room_frame("blue", "carol"));
        bob.on_text(&leave_frame("red"));
        assert_eq!(
            drain(&mut carol_outbox),
            [
                r#"{"type":"join","room":"red","user":"carol","online":3}"#,
                r#"{"type":"join","room":"blue","user":"carol","online":1}"#,
                r#"{"type":"leave","room":"red","user":"bob","online":2}"#,
            ]
        );
    }

    #[test]
    fn a_17th_room_is_malformed_and_a_repeat_join_at_16_is_ignored() {
        let hub = hub();
        let (mut alice, mut outbox) = connected(&hub);
        for i in 0..MAX_ROOMS {
            alice.on_text(&join_room_frame(&format!("room{i}"), "alice"));
        }
        assert_eq!(drain(&mut outbox).len(), MAX_ROOMS);
        alice.on_text(&join_room_frame("room0", "alice"));
        assert_eq!(hub.stats.malformed.load(Relaxed), 0);
        alice.on_text(&join_room_frame("one-too-many", "alice"));
        assert!(drain(&mut outbox).is_empty());
        assert_eq!(hub.stats.malformed.load(Relaxed), 1);
        assert_eq!(hub.stats.joins.load(Relaxed), MAX_ROOMS as u64);
        // Leaving one makes room for another.
        alice.on_text(&leave_frame("room3"));
        alice.on_text(&join_room_frame("one-too-many", "alice"));
        assert_eq!(
            drain(&mut outbox),
            [r#"{"type":"join","room":"one-too-many","user":"alice","online":1}"#]
        );
    }

    #[test]
    fn leave_of_one_room_keeps_the_connection_in_its_others() {
        let hub = hub();
        let (mut alice, mut alice_outbox) = connected(&hub);
        let (mut bob, mut bob_outbox) = connected(&hub);
        alice.on_text(&join_room_frame("red", "alice"));
        alice.on_text(&join_room_frame("blue", "alice"));
        bob.on_text(&join_room_frame("red", "bob"));
        bob.on_text(&join_room_frame("blue", "bob"));
        drain(&mut alice_outbox);
        drain(&mut bob_outbox);

        assert_eq!(alice.on_text(&leave_frame("red")), Handled::Continue);
        assert_eq!(
            drain(&mut bob_outbox),
            [r#"{"type":"leave","room":"red","user":"alice","online":1}"#]
        );
        assert!(drain(&mut alice_outbox).is_empty());
        bob.on_text(&chat_frame("red", "gone"));
        bob.on_text(&chat_frame("blue", "still here"));
        assert_eq!(
            drain(&mut alice_outbox),
            [r#"{"type":"chat","room":"blue","user":"bob","text":"still here"}"#]
        );
        // A second leave of the same room, and a chat to it, are malformed.
        assert_eq!(alice.on_text(&leave_frame("red")), Handled::Continue);
        alice.on_text(&chat_frame("red", "hi"));
        assert_eq!(hub.stats.malformed.load(Relaxed), 2);
        assert!(drain(&mut bob_outbox).is_empty());
    }

    #[test]
    fn leaving_the_last_room_is_as_if_never_joined_but_the_name_stays() {
        let hub = hub();
        let (mut alice, mut outbox) = connected(&hub);
        alice.on_text(&join_room_frame("red", "alice"));
        assert_eq!(alice.on_text(&leave_frame("red")), Handled::Continue);
        alice.on_text(&chat_frame("red", "hi"));
        assert_eq!(alice.on_text(r#"{"type":"leave"}"#), Handled::Continue);
        assert_eq!(hub.stats.malformed.load(Relaxed), 2);
        alice.on_text(&join_room_frame("blue", "someone-else"));
        assert_eq!(
            drain(&mut outbox),
            [
                r#"{"type":"join","room":"red","user":"alice","online":1}"#,
                r#"{"type":"join","room":"blue","user":"alice","online":1}"#,
            ]
        );
    }

    #[test]
    fn an_empty_room_is_forgotten() {
        let hub = hub();
        let (mut alice, _a) = connected(&hub);
        let (mut bob, _b) = connected(&hub);
        for i in 0..1000 {
            let name = format!("room{i}");
            alice.on_text(&join_room_frame(&name, "alice"));
            bob.on_text(&join_room_frame(&name, "bob"));
            alice.on_text(&leave_frame(&name));
            assert_eq!(hub.room_count(), 1);
            bob.on_text(&leave_frame(&name));
            assert_eq!(hub.room_count(), 0);
        }
        alice.on_text(&join_room_frame("red", "alice"));
        bob.on_text(&join_room_frame("blue", "bob"));
        assert_eq!(hub.room_count(), 2);
        alice.leave();
        bob.leave();
        assert_eq!(hub.room_count(), 0);
    }

    #[test]
    fn leave_without_a_room_leaves_every_room_and_asks_for_the_close() {
        let hub = hub();
        let (mut alice, mut alice_outbox) = connected(&hub);
        let (mut bob, mut bob_outbox) = connected(&hub);
        alice.on_text(&join_room_frame("red", "alice"));
        alice.on_text(&join_room_frame("blue", "alice"));
        bob.on_text(&join_room_frame("red", "bob"));
        bob.on_text(&join_room_frame("blue", "bob"));
        drain(&mut alice_outbox);
        drain(&mut bob_outbox);
        assert_eq!(alice.on_text(r#"{"type":"leave"}"#), Handled::Left);
        // The connection ending afterwards must not announce the leave twice.
        alice.leave();
        assert_eq!(
            drain(&mut bob_outbox),
            [
                r#"{"type":"leave","room":"red","user":"alice","online":1}"#,
                r#"{"type":"leave","room":"blue","user":"alice","online":1}"#,
            ]
        );
        assert!(drain(&mut alice_outbox).is_empty());
    }

    #[test]
    fn the_rate_limit_drops_chats_beyond_the_bucket() {
        let hub = hub();
        let (mut alice, _alice_outbox) = connected(&hub);
        alice.on_text(&join_frame("alice"));
        let (_, mut bob) = member(&hub, r#""bob""#);
        drain(&mut bob);
        let now = Instant::now();
        for _ in 0..30 {
            alice.on_text_at(&chat_frame("public", "x"), now);
        }
        assert_eq!(drain(&mut bob).len(), 10);
        let stats = &hub.stats;
        assert_eq!(stats.chat_in.load(Relaxed), 30);
        assert_eq!(stats.chat_accepted.load(Relaxed), 10);
        assert_eq!(stats.dropped_ratelimit.load(Relaxed), 20);
    }

    #[test]
    fn one_bucket_serves_every_room_of_a_connection() {
        let hub = hub();
        let (mut alice, _alice_outbox) = connected(&hub);
        alice.on_text(&join_room_frame("red", "alice"));
        alice.on_text(&join_room_frame("blue", "alice"));
        let now = Instant::now();
        for i in 0..20 {
            let room = if i % 2 == 0 { "red" } else { "blue" };
            alice.on_text_at(&chat_frame(room, "x"), now);
        }
        assert_eq!(hub.stats.chat_accepted.load(Relaxed), 10);
        assert_eq!(hub.stats.dropped_ratelimit.load(Relaxed), 10);
    }

    #[test]
    fn a_ping_is_answered_to_its_sender_only_even_before_join() {
        let hub = hub();
        let (_, mut bob) = member(&hub, r#""bob""#);
        drain(&mut bob);
        let (mut stranger, mut outbox) = connected(&hub);
        stranger.on_text(r#"{"type":"ping","ts":1732233445566}"#);
        let pong = outbox.try_recv().unwrap();
        assert_eq!(&*pong.text, r#"{"type":"pong","ts":1732233445566}"#);
        assert!(!pong.chat);
        assert!(drain(&mut bob).is_empty());
    }

    #[test]
    fn a_disconnect_without_leave_is_announced_in_every_room() {
        let hub = hub();
        let (mut alice, _outbox) = connected(&hub);
        alice.on_text(&join_frame("alice"));
        alice.on_text(&join_room_frame("lobby", "alice"));
        let (mut bob, mut bob_outbox) = connected(&hub);
        bob.on_text(&join_frame("bob"));
        bob.on_text(&join_room_frame("lobby", "bob"));
        drain(&mut bob_outbox);
        alice.leave();
        assert_eq!(
            drain(&mut bob_outbox),
            [
                r#"{"type":"leave","room":"public","user":"alice","online":1}"#,
                r#"{"type":"leave","room":"lobby","user":"alice","online":1}"#,
            ]
        );
    }
}
