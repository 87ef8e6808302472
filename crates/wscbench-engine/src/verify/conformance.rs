//! RFC 6455 conformance: the cases of Autobahn|Testsuite's categories 1–7 that apply to a
//! chat server, written as raw frames and judged through the chat protocol (a chat sent in
//! pieces must reach another member whole), each ending in a [`CaseVerdict`].
//!
//! Every case has its own connections and resets them when it ends, so no case leaves a
//! connection open. A case waits [`CLOSE_WAIT`] for the server to fail a connection; when it
//! did not, a WebSocket ping on the same connection tells a server that ignored the MUST
//! (the pong comes) from one that stopped answering. After every case `/health` must
//! answer: when it does not, that case names the crash and the rest are not run.

use std::time::{Duration, Instant};

use serde_json::json;
use wscbench_results::conformance::CONFORMANCE_SCHEMA_VERSION;
use wscbench_results::{CaseResult, CaseVerdict, Category, ServerConformance, Transport};

use super::Target;
use super::client::{Member, code_text, deflate_message, is};
use super::raw::{FIN, RSV1, RSV2, RSV3, Raw, RawEvent, close_code, frame, frame_bits};
use crate::net::http;

/// How long the server may take to fail a connection, or to deliver or answer.
pub const CLOSE_WAIT: Duration = Duration::from_secs(2);
/// How long a ping sent after [`CLOSE_WAIT`] may take to get its pong.
const PROBE_WAIT: Duration = Duration::from_secs(1);
/// The longest one case may take, connecting and cleaning up included.
const CASE_TIMEOUT: Duration = Duration::from_secs(10);
/// The payload of the ping that proves a connection is still served.
const PROBE: &[u8] = b"still there?";

/// What a case requires of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// The chat reaches another member, whole and once.
    Delivered,
    /// A ping of this many bytes is answered by a pong with the same payload.
    Echoed(usize),
    /// The connection is failed with this close code.
    FailedWith(u16),
    /// The close handshake is answered with this code.
    Answered(u16),
}

/// Which connections a case applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Applies {
    Always,
    /// Only without permessage-deflate (RSV1 is then reserved).
    Plain,
    /// Only with permessage-deflate negotiated (RSV1 marks a compressed message).
    Deflate,
}

/// One case: what is sent (built from a valid chat message's bytes) and what must follow.
pub struct Case {
    /// Stable name, e.g. `close_code_1004`.
    pub id: &'static str,
    /// Autobahn's category.
    pub category: Category,
    /// The section of RFC 6455 (or 7692) it checks.
    pub section: &'static str,
    /// What is sent and what must happen.
    pub rule: &'static str,
    /// What the server must do.
    pub expect: Expect,
    applies: Applies,
    /// The chat message's length in bytes (its text padded to it).
    chat_len: usize,
    /// The bytes to send, made from the chat message.
    wire: fn(&[u8]) -> Vec<u8>,
}

impl Case {
    /// True when the case runs on a connection with (or without) permessage-deflate.
    pub fn applies(&self, deflate: bool) -> bool {
        match self.applies {
            Applies::Always => true,
            Applies::Plain => !deflate,
            Applies::Deflate => deflate,
        }
    }
}

const CHAT: usize = 100;

/// Every case, in Autobahn's order of categories.
pub fn all_cases() -> &'static [Case] {
    CASES
}

macro_rules! case {
    ($id:literal, $cat:ident, $sec:literal, $expect:expr, $rule:literal, $wire:expr) => {
        case!(
            $id,
            $cat,
            $sec,
            $expect,
            $rule,
            $wire,
            Applies::Always,
            CHAT
        )
    };
    ($id:literal, $cat:ident, $sec:literal, $expect:expr, $rule:literal, $wire:expr, $applies:expr, $len:expr) => {
        Case {
            id: $id,
            category: Category::$cat,
            section: $sec,
            rule: $rule,
            expect: $expect,
            applies: $applies,
            chat_len: $len,
            wire: $wire,
        }
    };
}

use Expect::{Answered, Delivered, Echoed, FailedWith};

// One row per case: name, category, RFC section, expectation; the rule; the wire (and, for
// some, when it applies and the chat's length).
#[rustfmt::skip]
const CASES: &[Case] = &[
    case!("chat_7bit_length", Framing, "5.2", Delivered,
        "a 100-byte chat in one frame (7-bit length) is delivered",
        whole),
    case!("chat_16bit_length", Framing, "5.2", Delivered,
        "a 300-byte chat in one frame (16-bit length) is delivered",
        whole, Applies::Always, 300),
    case!("unmasked_client_frame", Framing, "5.1", FailedWith(1002),
        "a chat in an unmasked client frame fails the connection (1002)",
        unmasked),
    case!("ping_empty", Pings, "5.5.2", Echoed(0),
        "a ping without payload is answered by a pong without payload",
        ping::<0>),
    case!("ping_125_bytes", Pings, "5.5.3", Echoed(125),
        "a 125-byte ping is answered by a pong with the same payload",
        ping::<125>),
    case!("ping_126_bytes", Pings, "5.5", FailedWith(1002),
        "a 126-byte ping (control frames carry at most 125) fails the connection (1002)",
        ping::<126>),
    case!("rsv1_without_extension", ReservedBits, "5.2", FailedWith(1002),
        "a chat with RSV1 set, no extension negotiated, fails the connection (1002)",
        rsv::<RSV1>, Applies::Plain, CHAT),
    case!("rsv1_compressed", ReservedBits, "RFC 7692 6", Delivered,
        "with permessage-deflate, a compressed chat (RSV1 set) is delivered",
        compressed, Applies::Deflate, CHAT),
    case!("rsv2", ReservedBits, "5.2", FailedWith(1002),
        "a chat with RSV2 set fails the connection (1002)",
        rsv::<RSV2>),
    case!("rsv3", ReservedBits, "5.2", FailedWith(1002),
        "a chat with RSV3 set fails the connection (1002)",
        rsv::<RSV3>),
    case!("data_opcode_3", Opcodes, "5.2", FailedWith(1002),
        "a frame with the reserved data opcode 3 fails the connection (1002)",
        opcode::<3>),
    case!("data_opcode_7", Opcodes, "5.2", FailedWith(1002),
        "a frame with the reserved data opcode 7 fails the connection (1002)",
        opcode::<7>),
    case!("control_opcode_11", Opcodes, "5.2", FailedWith(1002),
        "a frame with the reserved control opcode 11 fails the connection (1002)",
        opcode::<11>),
    case!("control_opcode_15", Opcodes, "5.2", FailedWith(1002),
        "a frame with the reserved control opcode 15 fails the connection (1002)",
        opcode::<15>),
    case!("fragments_3", Fragmentation, "5.4", Delivered,
        "a chat in 3 fragments is delivered whole",
        three_fragments),
    case!("fragments_1_byte", Fragmentation, "5.4", Delivered,
        "a chat in 1-byte fragments is delivered whole",
        byte_fragments),
    case!("ping_between_fragments", Fragmentation, "5.4", Delivered,
        "a chat in 2 fragments with a ping between them is delivered whole",
        ping_between),
    case!("compressed_fragments", Fragmentation, "RFC 7692 6.1", Delivered,
        "with permessage-deflate, a compressed chat in 3 fragments (RSV1 on the first) is delivered",
        compressed_fragments, Applies::Deflate, CHAT),
    case!("ping_fragmented", Fragmentation, "5.4", FailedWith(1002),
        "a ping in 2 fragments (control frames must not be fragmented) fails the connection (1002)",
        fragmented_ping),
    case!("continuation_without_start", Fragmentation, "5.4", FailedWith(1002),
        "a continuation frame with no message to continue fails the connection (1002)",
        stray_continuation),
    case!("new_message_inside_fragments", Fragmentation, "5.4", FailedWith(1002),
        "a new text frame inside a fragmented message fails the connection (1002)",
        interleaved),
    case!("invalid_utf8_single_frame", Utf8, "8.1", FailedWith(1007),
        "a chat whose text is not UTF-8, in one frame, fails the connection (1007)",
        utf8_single),
    case!("invalid_utf8_across_fragments", Utf8, "8.1", FailedWith(1007),
        "a chat whose UTF-8 breaks across two fragments fails the connection (1007)",
        utf8_across),
    case!("utf8_truncated_at_end", Utf8, "8.1", FailedWith(1007),
        "a text message ending inside a UTF-8 sequence fails the connection (1007)",
        utf8_truncated),
    case!("close_1000_answered", Close, "5.5.1", Answered(1000),
        "a close with 1000 is answered with a close frame (1000)",
        close_with::<1000>),
    case!("close_3000_answered", Close, "7.4.2", Answered(3000),
        "a close with the registered code 3000 is answered with a close frame (3000)",
        close_with::<3000>),
    case!("close_payload_1_byte", Close, "5.5.1", FailedWith(1002),
        "a close whose payload is 1 byte fails the connection (1002)",
        close_one_byte),
    case!("close_code_0", Close, "7.4.1", FailedWith(1002),
        "a close with the invalid code 0 fails the connection (1002)",
        close_with::<0>),
    case!("close_code_999", Close, "7.4.1", FailedWith(1002),
        "a close with the invalid code 999 fails the connection (1002)",
        close_with::<999>),
    case!("close_code_1004", Close, "7.4.1", FailedWith(1002),
        "a close with the reserved code 1004 fails the connection (1002)",
        close_with::<1004>),
    case!("close_code_1005", Close, "7.4.1", FailedWith(1002),
        "a close with 1005 (never sent on the wire) fails the connection (1002)",
        close_with::<1005>),
    case!("close_code_1006", Close, "7.4.1", FailedWith(1002),
        "a close with 1006 (never sent on the wire) fails the connection (1002)",
        close_with::<1006>),
    case!("close_code_1016", Close, "7.4.1", FailedWith(1002),
        "a close with the unassigned code 1016 fails the connection (1002)",
        close_with::<1016>),
    case!("close_code_2999", Close, "7.4.1", FailedWith(1002),
        "a close with the unassigned code 2999 fails the connection (1002)",
        close_with::<2999>),
    case!("close_code_5000", Close, "7.4.1", FailedWith(1002),
        "a close with the out-of-range code 5000 fails the connection (1002)",
        close_with::<5000>),
    case!("close_reason_not_utf8", Close, "5.5.1", FailedWith(1007),
        "a close whose reason is not UTF-8 fails the connection (1007)",
        close_reason_not_utf8),
];

// The wire of each case, from a valid chat message.

fn whole(chat: &[u8]) -> Vec<u8> {
    frame(1, true, chat)
}

fn unmasked(chat: &[u8]) -> Vec<u8> {
    frame_bits(FIN | 1, false, chat)
}

/// The payload of a ping of `len` bytes: recognisable, and different at every position.
fn ping_payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| b'a' + (i % 26) as u8).collect()
}

fn ping<const LEN: usize>(_: &[u8]) -> Vec<u8> {
    frame(9, true, &ping_payload(LEN))
}

fn rsv<const BIT: u8>(chat: &[u8]) -> Vec<u8> {
    frame_bits(FIN | BIT | 1, true, chat)
}

fn opcode<const OPCODE: u8>(chat: &[u8]) -> Vec<u8> {
    frame(OPCODE, true, chat)
}

fn compress(chat: &[u8]) -> Vec<u8> {
    deflate_message(chat).expect("deflating into memory cannot fail")
}

fn compressed(chat: &[u8]) -> Vec<u8> {
    frame_bits(FIN | RSV1 | 1, true, &compress(chat))
}

/// `bytes` in three frames: the first with `first` (opcode and bits), then continuations.
fn in_three(bytes: &[u8], first: u8) -> Vec<u8> {
    let (one, rest) = bytes.split_at(bytes.len() / 3);
    let (two, three) = rest.split_at(rest.len() / 2);
    let mut wire = frame_bits(first, true, one);
    wire.extend(frame(0, false, two));
    wire.extend(frame(0, true, three));
    wire
}

fn three_fragments(chat: &[u8]) -> Vec<u8> {
    in_three(chat, 1)
}

fn compressed_fragments(chat: &[u8]) -> Vec<u8> {
    in_three(&compress(chat), RSV1 | 1)
}

fn byte_fragments(chat: &[u8]) -> Vec<u8> {
    let last = chat.len() - 1;
    let mut wire = Vec::new();
    for (i, b) in chat.iter().enumerate() {
        let opcode = if i == 0 { 1 } else { 0 };
        wire.extend(frame(opcode, i == last, &[*b]));
    }
    wire
}

fn ping_between(chat: &[u8]) -> Vec<u8> {
    let (one, two) = chat.split_at(chat.len() / 2);
    let mut wire = frame(1, false, one);
    wire.extend(frame(9, true, b"between"));
    wire.extend(frame(0, true, two));
    wire
}

fn fragmented_ping(_: &[u8]) -> Vec<u8> {
    let mut wire = frame(9, false, b"frag");
    wire.extend(frame(0, true, b"mented"));
    wire
}

fn stray_continuation(chat: &[u8]) -> Vec<u8> {
    frame(0, true, chat)
}

fn interleaved(chat: &[u8]) -> Vec<u8> {
    let mut wire = frame(1, false, &chat[..chat.len() / 2]);
    wire.extend(frame(1, true, chat));
    wire
}

/// The chat with `bytes` put at the end of its text (before the closing `"}`).
fn text_ending(chat: &[u8], bytes: &[u8]) -> Vec<u8> {
    let end = chat.len() - 2;
    [&chat[..end], bytes, &chat[end..]].concat()
}

fn utf8_single(chat: &[u8]) -> Vec<u8> {
    frame(1, true, &text_ending(chat, &[0xce, 0xba, 0xff, 0xfe, 0x80]))
}

fn utf8_across(chat: &[u8]) -> Vec<u8> {
    // 0xce opens a two-byte sequence that the next fragment's '(' breaks: each fragment
    // alone could pass a validator that forgets the state between them.
    let end = chat.len() - 2;
    let mut one = chat[..end].to_vec();
    one.push(0xce);
    let two = [&[b'('][..], &chat[end..]].concat();
    let mut wire = frame(1, false, &one);
    wire.extend(frame(0, true, &two));
    wire
}

fn utf8_truncated(chat: &[u8]) -> Vec<u8> {
    // The message ends two bytes into the three of '€'.
    let mut wire = frame(1, false, chat);
    wire.extend(frame(0, true, &[0xe2, 0x82]));
    wire
}

fn close_with<const CODE: u16>(_: &[u8]) -> Vec<u8> {
    frame(8, true, &CODE.to_be_bytes())
}

fn close_one_byte(_: &[u8]) -> Vec<u8> {
    frame(8, true, &[0x03])
}

fn close_reason_not_utf8(_: &[u8]) -> Vec<u8> {
    frame(8, true, &[0x03, 0xe8, b'b', 0xff, 0xfe, b'y'])
}

/// What the server did on a case's connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Observed {
    /// Another member received the chat, whole and once.
    Delivered,
    /// It did not (why, and what the sender's connection saw).
    NotDelivered(String),
    /// A pong with this payload.
    Pong(Vec<u8>),
    /// A close frame, with its code if it had one.
    Closed(Option<u16>),
    /// The connection ended without a close frame.
    Ended(String),
    /// No close within [`CLOSE_WAIT`], and the connection still answered a ping.
    Usable,
    /// No close within [`CLOSE_WAIT`], and no answer to a ping after it.
    Unresponsive,
}

/// The verdict on what the server did, and the evidence in words.
pub fn classify(expect: Expect, observed: &Observed) -> (CaseVerdict, String) {
    use CaseVerdict::{Failed, Ignored, NonStrict, Strict};
    let wait = CLOSE_WAIT.as_secs();
    match (expect, observed) {
        (Delivered, Observed::Delivered) => (Strict, "delivered whole, once".into()),
        (Delivered, Observed::NotDelivered(why)) => (Failed, format!("not delivered: {why}")),
        (Echoed(len), Observed::Pong(payload)) if *payload == ping_payload(len) => {
            (Strict, format!("the pong echoed the {len}-byte payload"))
        }
        (Echoed(len), Observed::Pong(payload)) => (
            Failed,
            format!(
                "the pong carried {} bytes, not the ping's {len}",
                payload.len()
            ),
        ),
        (FailedWith(want), Observed::Closed(Some(code))) if *code == want => {
            (Strict, format!("closed with {want}"))
        }
        (FailedWith(want), Observed::Closed(code)) => (
            NonStrict,
            format!("closed with {} (RFC 6455 names {want})", code_text(*code)),
        ),
        (FailedWith(want), Observed::Ended(why)) => (
            NonStrict,
            format!("{why} without a close frame (RFC 6455 names {want})"),
        ),
        (FailedWith(_), Observed::Usable) => (
            Ignored,
            format!("no close within {wait} s, and the connection still answers a ping"),
        ),
        (FailedWith(_), Observed::Delivered) => (Ignored, "the chat was delivered".into()),
        (Answered(sent), Observed::Closed(Some(code))) if *code == sent => {
            (Strict, format!("answered with {sent}"))
        }
        (Answered(sent), Observed::Closed(code)) => (
            NonStrict,
            format!("answered with {}, not the {sent} sent", code_text(*code)),
        ),
        (Answered(_), Observed::Ended(why)) => {
            (NonStrict, format!("{why} without answering the close"))
        }
        (_, Observed::Unresponsive) => (
            Failed,
            format!("nothing within {wait} s, and no answer to a ping after (server hung?)"),
        ),
        (_, Observed::Closed(code)) => (Failed, format!("closed with {}", code_text(*code))),
        (_, Observed::Ended(why)) => (Failed, why.clone()),
        (_, other) => (Failed, format!("{other:?}")),
    }
}

struct Ctx<'a> {
    target: &'a Target,
    nonce: String,
}

impl Ctx<'_> {
    fn user(&self, case: &str, role: &str) -> String {
        format!("c{}-{case}-{role}", self.nonce)
            .chars()
            .take(64)
            .collect()
    }
}

/// A chat message of about `len` bytes whose text names the case.
fn chat_of(ctx: &Ctx, case: &Case) -> (String, Vec<u8>) {
    let mut text = format!("conformance {} {}", case.id, ctx.nonce);
    let empty = json!({"type": "chat", "room": "public", "text": ""}).to_string();
    while empty.len() + text.len() < case.chat_len {
        text.push('.');
    }
    let chat = json!({"type": "chat", "room": "public", "text": text}).to_string();
    (text, chat.into_bytes())
}

/// Runs one case on fresh connections and resets them after.
async fn observe(ctx: &Ctx<'_>, case: &Case) -> Result<Observed, String> {
    let (text, chat) = chat_of(ctx, case);
    let sender_name = ctx.user(case.id, "tx");
    let join = json!({"type": "join", "room": "public", "user": sender_name}).to_string();
    if case.expect != Delivered {
        let mut raw = Raw::upgrade(ctx.target, None).await?;
        raw.send_text(&join).await?;
        // A server that already failed the connection may refuse the write: read on.
        let _ = raw.send(&(case.wire)(&chat)).await;
        let observed = after_sending(&mut raw, case.expect).await;
        raw.reset();
        return Ok(observed);
    }
    let mut listener = Member::join(ctx.target, ctx.user(case.id, "rx")).await?;
    let mut sender = Raw::upgrade(ctx.target, None).await?;
    let outcome = async {
        sender.send_text(&join).await?;
        listener
            .expect("the sender's join", |m| {
                is(m, "join") && m["user"] == sender_name.as_str()
            })
            .await?;
        sender.send(&(case.wire)(&chat)).await?;
        let is_chat = |m: &serde_json::Value| is(m, "chat") && m["text"] == text.as_str();
        if let Err(e) = listener
            .expect_within("the chat", CLOSE_WAIT, is_chat)
            .await
        {
            let sender_saw = match sender.next(Duration::from_millis(200)).await {
                RawEvent::Frame(8, payload) => {
                    format!(
                        "; the sender was closed with {}",
                        code_text(close_code(&payload))
                    )
                }
                RawEvent::Ended(why) => format!("; the sender's connection: {why}"),
                _ => String::new(),
            };
            return Ok(Observed::NotDelivered(format!("{e}{sender_saw}")));
        }
        Ok(
            match listener
                .quiet(Duration::from_millis(200), "the chat twice", is_chat)
                .await
            {
                Ok(()) => Observed::Delivered,
                Err(e) => Observed::NotDelivered(e),
            },
        )
    }
    .await;
    sender.reset();
    listener.close().await;
    outcome
}

/// What the server does within [`CLOSE_WAIT`] of the case's frames, probed with a ping
/// when it did nothing.
async fn after_sending(raw: &mut Raw, expect: Expect) -> Observed {
    let deadline = Instant::now() + CLOSE_WAIT;
    loop {
        match raw
            .next(deadline.saturating_duration_since(Instant::now()))
            .await
        {
            RawEvent::Frame(8, payload) => return Observed::Closed(close_code(&payload)),
            RawEvent::Frame(10, payload) if matches!(expect, Echoed(_)) => {
                return Observed::Pong(payload);
            }
            RawEvent::Frame(..) => {}
            RawEvent::Ended(why) => return Observed::Ended(why),
            RawEvent::Quiet => break,
        }
    }
    if raw.send(&frame(9, true, PROBE)).await.is_err() {
        return Observed::Ended("the connection refused a write".into());
    }
    let deadline = Instant::now() + PROBE_WAIT;
    loop {
        match raw
            .next(deadline.saturating_duration_since(Instant::now()))
            .await
        {
            RawEvent::Frame(8, payload) => return Observed::Closed(close_code(&payload)),
            RawEvent::Frame(10, payload) if payload == PROBE => return Observed::Usable,
            RawEvent::Frame(..) => {}
            RawEvent::Ended(why) => return Observed::Ended(why),
            RawEvent::Quiet => return Observed::Unresponsive,
        }
    }
}

/// Whether the server still answers `/health`.
async fn healthy(target: &Target) -> bool {
    http::get_over(
        &target.addr,
        target.tls.as_ref(),
        "/health",
        Duration::from_secs(2),
    )
    .await
    .is_ok_and(|r| r.status == 200)
}

/// Runs every case that applies (or those named in `only`) against `target`, reporting each
/// as it finishes. `server` and `transport` label the result.
pub async fn conformance(
    target: &Target,
    server: &str,
    transport: Transport,
    only: &[String],
    mut on_case: impl FnMut(&CaseResult),
) -> ServerConformance {
    let nonce: String = format!("{:x}", std::process::id() ^ super::rand_seed())
        .chars()
        .take(6)
        .collect();
    let ctx = Ctx { target, nonce };
    // Whether permessage-deflate is in force decides which cases apply.
    let deflate_negotiated = match Raw::upgrade(target, None).await {
        Ok(raw) => {
            let deflate = raw.deflate;
            raw.reset();
            deflate
        }
        Err(_) => target.deflate,
    };
    let mut cases = Vec::new();
    let mut dead: Option<String> = None;
    for case in CASES
        .iter()
        .filter(|c| c.applies(deflate_negotiated))
        .filter(|c| only.is_empty() || only.iter().any(|o| o == c.id))
    {
        let started = Instant::now();
        let (verdict, evidence) = match &dead {
            Some(id) => (
                CaseVerdict::NotRun,
                format!("not run: the server stopped answering after {id}"),
            ),
            None => {
                let (mut verdict, mut evidence) =
                    match tokio::time::timeout(CASE_TIMEOUT, observe(&ctx, case)).await {
                        Ok(Ok(observed)) => classify(case.expect, &observed),
                        Ok(Err(e)) => (CaseVerdict::Failed, e),
                        Err(_) => (
                            CaseVerdict::Failed,
                            format!("the case did not finish within {CASE_TIMEOUT:?}"),
                        ),
                    };
                if !healthy(target).await {
                    verdict = CaseVerdict::Failed;
                    evidence = format!("{evidence}; then /health stopped answering (crashed?)");
                    dead = Some(case.id.to_string());
                }
                (verdict, evidence)
            }
        };
        let result = CaseResult {
            id: case.id.into(),
            category: case.category,
            rfc_section: case.section.into(),
            rule: case.rule.into(),
            verdict,
            evidence,
            duration_ms: started.elapsed().as_millis() as u64,
        };
        on_case(&result);
        cases.push(result);
    }
    ServerConformance {
        schema_version: CONFORMANCE_SCHEMA_VERSION,
        server: server.into(),
        transport,
        deflate_negotiated,
        cases,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CaseVerdict::{Failed, Ignored, NonStrict, Strict};

    fn verdict(expect: Expect, observed: Observed) -> CaseVerdict {
        classify(expect, &observed).0
    }

    #[test]
    fn failing_with_the_named_code_is_strict_and_with_another_or_none_non_strict() {
        assert_eq!(
            verdict(FailedWith(1002), Observed::Closed(Some(1002))),
            Strict
        );
        assert_eq!(
            verdict(FailedWith(1007), Observed::Closed(Some(1002))),
            NonStrict
        );
        assert_eq!(verdict(FailedWith(1002), Observed::Closed(None)), NonStrict);
        let (v, evidence) = classify(
            FailedWith(1002),
            &Observed::Ended("the connection ended".into()),
        );
        assert_eq!(v, NonStrict);
        assert!(evidence.contains("without a close frame"), "{evidence}");
    }

    #[test]
    fn a_connection_still_served_after_invalid_input_ignored_the_must() {
        assert_eq!(verdict(FailedWith(1007), Observed::Usable), Ignored);
        assert_eq!(verdict(FailedWith(1002), Observed::Delivered), Ignored);
    }

    #[test]
    fn a_server_that_stops_answering_fails_whatever_the_case_expects() {
        for expect in [Delivered, Echoed(0), FailedWith(1002), Answered(1000)] {
            assert_eq!(
                verdict(expect, Observed::Unresponsive),
                Failed,
                "{expect:?}"
            );
        }
    }

    #[test]
    fn a_pong_must_echo_the_pings_payload() {
        assert_eq!(
            verdict(Echoed(125), Observed::Pong(ping_payload(125))),
            Strict
        );
        assert_eq!(verdict(Echoed(125), Observed::Pong(vec![])), Failed);
        assert_eq!(verdict(Echoed(0), Observed::Closed(Some(1002))), Failed);
    }

    #[test]
    fn a_close_is_answered_best_with_its_own_code() {
        assert_eq!(
            verdict(Answered(3000), Observed::Closed(Some(3000))),
            Strict
        );
        assert_eq!(
            verdict(Answered(3000), Observed::Closed(Some(1000))),
            NonStrict
        );
        assert_eq!(
            verdict(Answered(1000), Observed::Ended("gone".into())),
            NonStrict
        );
    }

    #[test]
    fn delivery_is_strict_or_failed_never_in_between() {
        assert_eq!(verdict(Delivered, Observed::Delivered), Strict);
        assert_eq!(
            verdict(Delivered, Observed::NotDelivered("x".into())),
            Failed
        );
        assert_eq!(verdict(Delivered, Observed::Closed(Some(1002))), Failed);
    }

    #[test]
    fn case_names_are_unique_and_every_category_has_a_case() {
        let mut ids: Vec<_> = CASES.iter().map(|c| c.id).collect();
        ids.sort();
        let before = ids.len();
        ids.dedup();
        assert_eq!(before, ids.len());
        for category in Category::ALL {
            assert!(CASES.iter().any(|c| c.category == category), "{category:?}");
        }
    }

    #[test]
    fn with_deflate_rsv1_marks_a_compressed_message_instead_of_failing() {
        let ids = |deflate| -> Vec<&str> {
            CASES
                .iter()
                .filter(|c| c.applies(deflate))
                .map(|c| c.id)
                .collect()
        };
        assert!(ids(false).contains(&"rsv1_without_extension"));
        assert!(!ids(false).contains(&"rsv1_compressed"));
        assert!(ids(true).contains(&"rsv1_compressed"));
        assert!(!ids(true).contains(&"rsv1_without_extension"));
    }

    #[test]
    fn the_invalid_utf8_wires_break_the_text_where_they_say() {
        let chat = br#"{"type":"chat","room":"public","text":"hi"}"#;
        // Unmasked back, the single frame's text is not UTF-8, the chat's valid one is.
        let mut payload = utf8_single(chat)[6..].to_vec();
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= super::super::raw::MASK[i % 4];
        }
        assert!(std::str::from_utf8(&payload).is_err());
        assert!(std::str::from_utf8(chat).is_ok());
        assert_eq!(&payload[payload.len() - 2..], b"\"}");
    }
}
