//! The room: its members and the broadcast.
//!
//! A member is a client's bounded outbound queue. A broadcast serializes its
//! message once, into a reference-counted `Utf8Bytes` that every recipient's
//! queue shares, and hands it over with `try_send`: a full queue drops the
//! message (counted as `dropped_slow`) and the hub moves on, so it never
//! waits for a slow client. The lock around the member map is held only
//! while handing out; no socket is written under it, and counters are added
//! after it is released.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, PoisonError, RwLock};

use axum::extract::ws::Utf8Bytes;
use tokio::sync::{mpsc, watch};

use crate::protocol;
use crate::stats::{self, Stats};

/// Messages a client's outbound queue holds before further ones are dropped.
pub const QUEUE_CAPACITY: usize = 256;

/// One message on its way to one client.
#[derive(Debug, Clone)]
pub struct Outbound {
    pub text: Utf8Bytes,
    /// Chats count as `deliveries` once written.
    pub chat: bool,
}

/// The sending end of a client's outbound queue.
pub type Queue = mpsc::Sender<Outbound>;

/// Identifies a client within the hub.
pub type ClientId = u64;

pub struct Hub {
    pub stats: Arc<Stats>,
    members: RwLock<HashMap<ClientId, Queue>>,
    next_id: AtomicU64,
    /// Becomes true on shutdown; every client's writer then closes with 1001.
    closing: watch::Sender<bool>,
}

impl Hub {
    pub fn new(stats: Arc<Stats>) -> Self {
        Self {
            stats,
            members: RwLock::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            closing: watch::Sender::new(false),
        }
    }

    pub fn next_id(&self) -> ClientId {
        self.next_id.fetch_add(1, Relaxed)
    }

    /// Adds a member and announces it to everyone, the joiner included. The
    /// queue is in the room before the announcement, so the joiner's own copy
    /// is its acknowledgement and nothing broadcast after it is missed.
    pub fn join(&self, id: ClientId, user: &str, queue: Queue) {
        let dropped = {
            let mut members = self.members.write().unwrap_or_else(PoisonError::into_inner);
            members.insert(id, queue);
            // Under the write lock, so `online` counts rise in the order members see them.
            let message = shared(protocol::join(user, members.len()), false);
            hand_out(members.values(), &message)
        };
        stats::add(&self.stats.joins, 1);
        stats::add(&self.stats.dropped_slow, dropped);
    }

    /// Removes a member and announces it to those remaining. Returns false
    /// (and announces nothing) if it was not a member.
    pub fn leave(&self, id: ClientId, user: &str) -> bool {
        let dropped = {
            let mut members = self.members.write().unwrap_or_else(PoisonError::into_inner);
            if members.remove(&id).is_none() {
                return false;
            }
            let message = shared(protocol::leave(user, members.len()), false);
            hand_out(members.values(), &message)
        };
        stats::add(&self.stats.dropped_slow, dropped);
        true
    }

    /// Sends a chat to every member but its sender.
    pub fn chat(&self, from: ClientId, user: &str, text: &str, ts: Option<&str>) {
        let message = shared(protocol::chat(user, text, ts), true);
        let dropped = {
            let members = self.members.read().unwrap_or_else(PoisonError::into_inner);
            let others = members
                .iter()
                .filter(|&(&id, _)| id != from)
                .map(|(_, queue)| queue);
            hand_out(others, &message)
        };
        stats::add(&self.stats.dropped_slow, dropped);
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
fn shared(text: String, chat: bool) -> Outbound {
    Outbound {
        text: Utf8Bytes::from(text),
        chat,
    }
}

/// Queues `message` for every recipient without waiting; returns how many
/// queues were full. A closed queue belongs to a client that is going away.
fn hand_out<'a>(recipients: impl Iterator<Item = &'a Queue>, message: &Outbound) -> u64 {
    let mut dropped = 0;
    for queue in recipients {
        if let Err(mpsc::error::TrySendError::Full(_)) = queue.try_send(message.clone()) {
            dropped += 1;
        }
    }
    dropped
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::Relaxed;

    use super::*;

    fn member(hub: &Hub, user: &str) -> (ClientId, mpsc::Receiver<Outbound>) {
        let id = hub.next_id();
        let (queue, outbox) = mpsc::channel(QUEUE_CAPACITY);
        hub.join(id, user, queue);
        (id, outbox)
    }

    fn drain(outbox: &mut mpsc::Receiver<Outbound>) -> Vec<String> {
        std::iter::from_fn(|| outbox.try_recv().ok())
            .map(|out| out.text.as_str().to_owned())
            .collect()
    }

    #[test]
    fn join_reaches_everyone_including_the_joiner() {
        let hub = Hub::new(Arc::new(Stats::new()));
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
        let hub = Hub::new(Arc::new(Stats::new()));
        let (alice_id, mut alice) = member(&hub, r#""alice""#);
        let (_, mut bob) = member(&hub, r#""bob""#);
        let (_, mut carol) = member(&hub, r#""carol""#);
        for outbox in [&mut alice, &mut bob, &mut carol] {
            drain(outbox);
        }
        hub.chat(alice_id, r#""alice""#, r#""hi""#, Some("5"));
        let expected = r#"{"type":"chat","room":"public","user":"alice","text":"hi","ts":5}"#;
        assert_eq!(drain(&mut bob), [expected]);
        assert_eq!(drain(&mut carol), [expected]);
        assert!(drain(&mut alice).is_empty());
    }

    #[test]
    fn a_broadcast_shares_one_buffer() {
        let hub = Hub::new(Arc::new(Stats::new()));
        let (alice_id, _alice) = member(&hub, r#""alice""#);
        let (_, mut bob) = member(&hub, r#""bob""#);
        let (_, mut carol) = member(&hub, r#""carol""#);
        drain(&mut bob);
        drain(&mut carol);
        hub.chat(alice_id, r#""alice""#, r#""hi""#, None);
        let (to_bob, to_carol) = (bob.try_recv().unwrap(), carol.try_recv().unwrap());
        assert!(to_bob.chat);
        assert_eq!(
            to_bob.text.as_str().as_ptr(),
            to_carol.text.as_str().as_ptr()
        );
    }

    #[test]
    fn leave_reaches_the_remaining_members_once() {
        let hub = Hub::new(Arc::new(Stats::new()));
        let (alice_id, mut alice) = member(&hub, r#""alice""#);
        let (_, mut bob) = member(&hub, r#""bob""#);
        drain(&mut alice);
        drain(&mut bob);
        assert!(hub.leave(alice_id, r#""alice""#));
        assert!(!hub.leave(alice_id, r#""alice""#));
        assert_eq!(
            drain(&mut bob),
            [r#"{"type":"leave","room":"public","user":"alice","online":1}"#]
        );
        assert!(drain(&mut alice).is_empty());
    }

    #[test]
    fn a_full_queue_drops_and_counts_without_holding_up_others() {
        let hub = Hub::new(Arc::new(Stats::new()));
        let (alice_id, _alice) = member(&hub, r#""alice""#);
        let (_, mut slow) = member(&hub, r#""slow""#);
        let (_, mut fast) = member(&hub, r#""fast""#);
        // The slow member holds its join and fast's join: 2 of 256 slots.
        drain(&mut fast);
        let chats = QUEUE_CAPACITY + 50;
        for i in 0..chats {
            hub.chat(alice_id, r#""alice""#, r#""x""#, Some(&i.to_string()));
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
        let hub = Hub::new(Arc::new(Stats::new()));
        let early = hub.closing();
        hub.close_all();
        assert!(*early.borrow());
        assert!(*hub.closing().borrow());
    }
}
