//! The checks themselves, one function per rule of docs/protocol.md.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use wscbench_results::ServerStats;

use super::client::{self, Event, Member, code_text, is, now_ms, rand_ts};
use super::counters::{counter, read_stats};
use super::rooms;
use super::{Check, CheckFuture, Context};
use crate::net::http;

pub(super) static ALL: &[Check] = &[
    Check {
        name: "health",
        rule: "GET /health answers 200; other paths 404",
        run: health,
    },
    Check {
        name: "stats_counters",
        rule: "/stats counters move exactly as the verifier's own traffic",
        run: stats_counters,
    },
    Check {
        name: "join_ack",
        rule: "join is broadcast to every member of its room, joiner included, with the room's online count",
        run: join_ack,
    },
    Check {
        name: "chat_broadcast",
        rule: "chat reaches every other member of its room, never the sender, ts echoed",
        run: chat_broadcast,
    },
    Check {
        name: "ping_pong",
        rule: "ping gets pong with the same ts, before join too",
        run: ping_pong,
    },
    Check {
        name: "leave",
        rule: "leave without room is broadcast to the room's others and the server closes with 1000",
        run: leave,
    },
    Check {
        name: "disconnect_is_leave",
        rule: "a disconnect without leave is broadcast as leave",
        run: disconnect_is_leave,
    },
    Check {
        name: "close_answered",
        rule: "a client's close frame is answered with a close frame",
        run: close_answered,
    },
    Check {
        name: "chat_before_join",
        rule: "chat and leave before any join are ignored; the connection stays open",
        run: chat_before_join,
    },
    Check {
        name: "invalid_input",
        rule: "malformed JSON, unknown type, a chat to a room not joined, wrong types and binary frames are ignored",
        run: invalid_input,
    },
    Check {
        name: "escaped_text",
        rule: "a chat text full of JSON escapes reaches the others as the same string",
        run: escaped_text,
    },
    Check {
        name: "size_limit",
        rule: "4096 bytes pass; 4097 bytes close with 1009",
        run: size_limit,
    },
    Check {
        name: "rooms_isolated",
        rule: "a join or chat is broadcast in its own room only: r1's chat reaches r1's other members, never r2's, and r2's joins and chats never reach r1",
        run: rooms::rooms_isolated,
    },
    Check {
        name: "online_per_room",
        rule: "a join's online counts the members of that room only; a member of two rooms hears each room's own count; a further join keeps the first join's user name",
        run: rooms::online_per_room,
    },
    Check {
        name: "leave_one_room",
        rule: "leave with a room leaves that room only: its others get the leave with online decremented, the connection stays open in its other rooms, a chat to the room it left is malformed; leave without room then leaves the rest and closes 1000",
        run: rooms::leave_one_room,
    },
    Check {
        name: "room_names",
        rule: "a room that is empty, over 64 characters, not a string, or missing on join or chat is malformed (counted, connection open); 64 characters are valid; a second join to a room is ignored; a join to a 17th room is malformed",
        run: rooms::room_names,
    },
    Check {
        name: "disconnect_all_rooms",
        rule: "a member of two rooms that drops its TCP connection is broadcast as a leave in both; an emptied room counts from 1 again",
        run: rooms::disconnect_all_rooms,
    },
    Check {
        name: "rate_limit",
        rule: "a burst of 30 delivers 10 plus refill; then about 10/s",
        run: rate_limit,
    },
    Check {
        name: "many_members",
        rule: "200 members joined at once all receive one broadcast",
        run: many_members,
    },
    Check {
        name: "slow_consumer",
        rule: "members that stop reading do not delay the others; their overflow is dropped and counted",
        run: slow_consumer,
    },
];

const QUIET: Duration = Duration::from_millis(200);

fn chat_from<'a>(user: &'a str, text: &'a str) -> impl Fn(&Value) -> bool + 'a {
    move |m| is(m, "chat") && m["user"] == user && m["text"] == text
}

async fn close_all(members: Vec<Member>) {
    futures_util::future::join_all(members.into_iter().map(Member::close)).await;
}

fn health(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let timeout = Duration::from_secs(2);
        let ok = http::get_over(
            &ctx.target.addr,
            ctx.target.tls.as_ref(),
            "/health",
            timeout,
        )
        .await
        .map_err(|e| e.to_string())?;
        if ok.status != 200 {
            return Err(format!("/health answered {}", ok.status));
        }
        let missing = http::get_over(
            &ctx.target.addr,
            ctx.target.tls.as_ref(),
            "/no-such-path",
            timeout,
        )
        .await
        .map_err(|e| e.to_string())?;
        if missing.status != 404 {
            return Err(format!(
                "/no-such-path answered {} instead of 404",
                missing.status
            ));
        }
        Ok("/health 200, /no-such-path 404".into())
    })
}

fn stats_counters(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let t = &ctx.target;
        let before = read_stats(t).await?;
        if before.server.is_empty() {
            return Err("/stats has an empty server name".into());
        }
        let mut a = Member::join(t, ctx.user("stats", "a")).await?;
        let mut b = Member::join(t, ctx.user("stats", "b")).await?;
        for i in 0..3 {
            a.send_chat(&format!("stats-{i}"), Some(rand_ts())).await?;
        }
        for i in 0..3 {
            b.expect(
                &format!("chat stats-{i}"),
                chat_from(&a.user.clone(), &format!("stats-{i}")),
            )
            .await?;
        }
        a.send_text("{not json").await?;
        a.alive().await?;
        a.ws.send(Message::binary(vec![1u8, 2, 3]))
            .await
            .map_err(|e| e.to_string())?;
        a.alive().await?;
        // 2 joins + 3 chats + 1 malformed + 2 pings + 1 binary frame.
        let expected = [
            ("connections_total", 2),
            ("joins", 2),
            ("frames_in", 9),
            ("chat_in", 3),
            ("chat_accepted", 3),
            ("deliveries", 3),
            ("dropped_ratelimit", 0),
            ("dropped_slow", 0),
            ("malformed", 2),
        ];
        let deadline = Instant::now() + Duration::from_secs(2);
        let mismatch = loop {
            let after = read_stats(t).await?;
            let wrong: Vec<String> = expected
                .iter()
                .filter_map(|(name, want)| {
                    let got = counter(&after, name) as i64 - counter(&before, name) as i64;
                    (got != *want).then(|| format!("{name} moved by {got}, expected {want}"))
                })
                .chain(
                    (after.connections_current != before.connections_current + 2).then(|| {
                        format!(
                            "connections_current is {}, expected {} (+2 open)",
                            after.connections_current,
                            before.connections_current + 2
                        )
                    }),
                )
                .chain(
                    (after.dropped_ratelimit != after.chat_in.saturating_sub(after.chat_accepted))
                        .then(|| {
                            format!(
                                "dropped_ratelimit {} != chat_in {} - chat_accepted {}",
                                after.dropped_ratelimit, after.chat_in, after.chat_accepted
                            )
                        }),
                )
                .collect();
            if wrong.is_empty() || Instant::now() > deadline {
                break wrong;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        close_all(vec![a, b]).await;
        if !mismatch.is_empty() {
            return Err(mismatch.join("; "));
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            let now = read_stats(t).await?;
            if now.connections_current == before.connections_current {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "connections_current stayed at {} after both closed (was {})",
                    now.connections_current, before.connections_current
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(format!(
            "server {:?}: 9 counters moved exactly; connections_current returned to {}",
            before.server, before.connections_current
        ))
    })
}

fn join_ack(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut a = Member::join(&ctx.target, ctx.user("join", "a")).await?;
        let n = a.online_at_join.unwrap_or(0);
        if n < 1 {
            return Err(format!(
                "the joiner's acknowledgement says online {n}; it must count the joiner"
            ));
        }
        let b = Member::join(&ctx.target, ctx.user("join", "b")).await?;
        let b_user = b.user.clone();
        let seen = a
            .expect("b's join", |m| {
                is(m, "join") && m["user"] == b_user.as_str()
            })
            .await?;
        let online = seen["online"].as_u64();
        if online != Some(n + 1) || b.online_at_join != Some(n + 1) {
            return Err(format!(
                "after a second join, a saw online {:?} and b's ack said {:?}; expected {}",
                online,
                b.online_at_join,
                n + 1
            ));
        }
        close_all(vec![a, b]).await;
        Ok(format!("acks carry online {n} then {}", n + 1))
    })
}

fn chat_broadcast(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let t = &ctx.target;
        let mut a = Member::join(t, ctx.user("chat", "a")).await?;
        let mut b = Member::join(t, ctx.user("chat", "b")).await?;
        let mut c = Member::join(t, ctx.user("chat", "c")).await?;
        let ts = rand_ts();
        a.send_chat("hello from a", Some(ts)).await?;
        for m in [&mut b, &mut c] {
            let got = m
                .expect("a's chat", chat_from(&a.user.clone(), "hello from a"))
                .await?;
            if got["room"] != "public" {
                return Err(format!("{} got the chat with room {}", m.user, got["room"]));
            }
            if got["ts"].as_f64() != Some(ts) {
                return Err(format!("ts came back as {} instead of {ts}", got["ts"]));
            }
        }
        let a_user = a.user.clone();
        a.quiet(
            QUIET,
            "its own chat (the sender must not receive it)",
            |m| is(m, "chat") && m["user"] == a_user.as_str(),
        )
        .await?;
        a.send_chat("no ts", None).await?;
        let got = b
            .expect("a's chat without ts", chat_from(&a.user.clone(), "no ts"))
            .await?;
        if got.get("ts").is_some_and(|ts| !ts.is_null()) {
            return Err(format!(
                "a chat without ts was broadcast with ts {}",
                got["ts"]
            ));
        }
        close_all(vec![a, b, c]).await;
        Ok(format!(
            "2 recipients got it with ts {ts}; the sender did not"
        ))
    })
}

fn ping_pong(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut p = Member::connect(&ctx.target, ctx.user("ping", "p")).await?;
        p.alive().await?;
        p.send_json(&json!({"type": "ping", "ts": 42.5})).await?;
        p.expect("pong with ts 42.5", |m| {
            is(m, "pong") && m["ts"].as_f64() == Some(42.5)
        })
        .await?;
        p.close().await;
        Ok("pong echoed ts, before join".into())
    })
}

fn leave(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut a = Member::join(&ctx.target, ctx.user("leave", "a")).await?;
        let mut b = Member::join(&ctx.target, ctx.user("leave", "b")).await?;
        let online_with_both = b.online_at_join.unwrap_or(0);
        a.send_json(&json!({"type": "leave"})).await?;
        let a_user = a.user.clone();
        let got = b
            .expect("a's leave", |m| {
                is(m, "leave") && m["user"] == a_user.as_str()
            })
            .await?;
        if got["room"] != "public" || got["online"].as_u64().is_none_or(|n| n >= online_with_both) {
            return Err(format!(
                "leave broadcast {got} should have room public and online below {online_with_both}"
            ));
        }
        let code = a.expect_close(Duration::from_secs(2)).await?;
        if code != Some(1000) {
            return Err(format!(
                "after leave the server closed with {}, expected 1000",
                code_text(code)
            ));
        }
        a.quiet(Duration::from_millis(50), "more", |_| true)
            .await
            .ok();
        b.close().await;
        Ok(format!(
            "b saw leave with online {}; a closed with 1000",
            got["online"]
        ))
    })
}

fn disconnect_is_leave(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let a = Member::join(&ctx.target, ctx.user("drop", "a")).await?;
        let mut b = Member::join(&ctx.target, ctx.user("drop", "b")).await?;
        let a_user = a.user.clone();
        // Dropping the stream closes TCP without a close frame.
        drop(a);
        b.expect("a leave after a's disconnect", |m| {
            is(m, "leave") && m["user"] == a_user.as_str()
        })
        .await?;
        b.close().await;
        Ok("an abrupt disconnect was broadcast as leave".into())
    })
}

fn close_answered(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut a = Member::join(&ctx.target, ctx.user("close", "a")).await?;
        a.send_close().await?;
        let code = a.expect_close(Duration::from_secs(2)).await?;
        Ok(format!("close answered ({})", code_text(code)))
    })
}

fn chat_before_join(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut b = Member::join(&ctx.target, ctx.user("early", "b")).await?;
        let mut c = Member::connect(&ctx.target, ctx.user("early", "c")).await?;
        c.send_chat("before join", Some(rand_ts())).await?;
        c.alive().await?;
        c.send_json(&json!({"type": "leave"})).await?;
        c.alive().await?;
        b.quiet(
            QUIET,
            "a chat or leave from a member that never joined",
            |m| {
                (is(m, "chat") && m["text"] == "before join")
                    || (is(m, "leave") && m["user"].as_str().is_none_or(|u| u.contains("-early-c")))
            },
        )
        .await?;
        close_all(vec![b, c]).await;
        Ok("ignored; the connection stayed open".into())
    })
}

fn invalid_input(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut a = Member::join(&ctx.target, ctx.user("bad", "a")).await?;
        let mut b = Member::join(&ctx.target, ctx.user("bad", "b")).await?;
        let long_user = "u".repeat(65);
        let not_joined = ctx.room("bad", "not-joined");
        let cases: Vec<(&str, Message)> = vec![
            ("malformed JSON", Message::text("{not json")),
            ("a JSON array", Message::text("[1,2]")),
            (
                "a missing type",
                Message::text(r#"{"room":"public","text":"bad-1"}"#),
            ),
            (
                "an unknown type",
                Message::text(r#"{"type":"shout","room":"public","text":"bad-2"}"#),
            ),
            (
                "a chat to a room the connection is not in",
                Message::text(
                    json!({"type": "chat", "room": not_joined, "text": "bad-3"}).to_string(),
                ),
            ),
            (
                "a text that is not a string",
                Message::text(r#"{"type":"chat","room":"public","text":7}"#),
            ),
            (
                "a ts that is not a number",
                Message::text(r#"{"type":"chat","room":"public","text":"bad-4","ts":"x"}"#),
            ),
            (
                "a binary frame",
                Message::binary(br#"{"type":"chat","room":"public","text":"bad-5"}"#.to_vec()),
            ),
        ];
        for (what, message) in cases {
            a.ws.send(message)
                .await
                .map_err(|e| format!("sending {what}: {e}"))?;
            a.alive().await.map_err(|e| format!("after {what}: {e}"))?;
        }
        // A second connection tries to join with an over-long name: refused, still open.
        let mut c = Member::connect(&ctx.target, long_user.clone()).await?;
        c.send_json(&json!({"type": "join", "room": "public", "user": long_user}))
            .await?;
        c.alive()
            .await
            .map_err(|e| format!("after a 65-character user name: {e}"))?;
        b.quiet(QUIET, "a broadcast caused by invalid input", |m| {
            (is(m, "chat") && m["text"].as_str().is_none_or(|t| t.starts_with("bad-")))
                || (is(m, "join") && m["user"] == long_user.as_str())
        })
        .await?;
        a.send_chat("still here", None).await?;
        b.expect(
            "a valid chat after the invalid ones",
            chat_from(&a.user.clone(), "still here"),
        )
        .await?;
        close_all(vec![a, b, c]).await;
        Ok("10 kinds of invalid input ignored; the connection stayed open and joined".into())
    })
}

fn escaped_text(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut a = Member::join(&ctx.target, ctx.user("escaped", "a")).await?;
        let mut b = Member::join(&ctx.target, ctx.user("escaped", "b")).await?;
        // Quotes, backslashes, control characters, and non-ASCII as \u escapes: about
        // 3.9 KB on the wire, under the 4096-byte limit, so servers that parse into a
        // small scratch buffer must find room for it.
        let unit = "\"q\" \\ \n\t é \u{1F600} \u{0001}";
        let text = unit.repeat(95);
        let chat = json!({"type": "chat", "room": "public", "text": text});
        let wire = escape_non_ascii(&chat.to_string());
        if wire.len() > 4096 {
            return Err(format!(
                "the check's own message is {} bytes, over the limit",
                wire.len()
            ));
        }
        a.send_text(wire.clone()).await?;
        let a_user = a.user.clone();
        b.expect("escaped chat", |m| {
            is(m, "chat") && m["user"] == a_user.as_str()
        })
        .await
        .and_then(|m| {
            if m["text"] == text.as_str() {
                Ok(())
            } else {
                Err(format!(
                    "the text arrived changed: {} characters sent, {} received",
                    text.chars().count(),
                    m["text"].as_str().map_or(0, |t| t.chars().count())
                ))
            }
        })?;
        close_all(vec![a, b]).await;
        Ok(format!(
            "{} bytes of escaped JSON delivered as the same {}-character text",
            wire.len(),
            text.chars().count()
        ))
    })
}

/// JSON text with every non-ASCII character written as `\u` escapes (surrogate pairs
/// above the BMP), as a client that escapes everything would send it.
fn escape_non_ascii(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

fn size_limit(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut a = Member::join(&ctx.target, ctx.user("size", "a")).await?;
        let mut b = Member::join(&ctx.target, ctx.user("size", "b")).await?;
        let exact = padded_chat(4096, "max");
        a.send_text(exact).await?;
        let a_user = a.user.clone();
        b.expect("a 4096-byte chat", |m| {
            is(m, "chat")
                && m["user"] == a_user.as_str()
                && m["text"].as_str().is_some_and(|t| t.starts_with("max"))
        })
        .await
        .map_err(|e| format!("a message of exactly 4096 bytes must pass: {e}"))?;
        a.send_text(padded_chat(4097, "over")).await?;
        let code = a.expect_close(Duration::from_secs(2)).await?;
        if code != Some(1009) {
            return Err(format!(
                "a 4097-byte message closed with {}, expected 1009",
                code_text(code)
            ));
        }
        b.close().await;
        Ok("4096 bytes delivered; 4097 bytes closed with 1009".into())
    })
}

/// A chat whose JSON is exactly `len` bytes.
fn padded_chat(len: usize, prefix: &str) -> String {
    let shell = format!(r#"{{"type":"chat","room":"public","text":"{prefix}"}}"#);
    let pad = len.saturating_sub(shell.len());
    let text = format!(
        r#"{{"type":"chat","room":"public","text":"{prefix}{}"}}"#,
        "x".repeat(pad)
    );
    debug_assert_eq!(text.len(), len);
    text
}

fn rate_limit(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut a = Member::join(&ctx.target, ctx.user("rate", "a")).await?;
        let b = Member::join(&ctx.target, ctx.user("rate", "b")).await?;
        let a_user = a.user.clone();
        // b counts in the background while a sends.
        let counter = tokio::spawn(count_chats(b, a_user, Duration::from_secs(6)));
        let started = Instant::now();
        for i in 0..30 {
            let chat = json!({"type": "chat", "room": "public", "text": format!("burst-{i}")});
            a.ws.feed(Message::text(chat.to_string()))
                .await
                .map_err(|e| e.to_string())?;
        }
        a.ws.flush().await.map_err(|e| e.to_string())?;
        let burst_s = started.elapsed().as_secs_f64();
        // Then 40 chats at 20/s: the bucket is empty, so about half should pass.
        let paced_started = Instant::now();
        for i in 0..40 {
            tokio::time::sleep_until((paced_started + Duration::from_millis(50 * i)).into()).await;
            a.send_chat(&format!("paced-{i}"), None).await?;
        }
        let paced_s = paced_started.elapsed().as_secs_f64();
        a.alive().await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        a.close().await;
        let texts = counter.await.map_err(|e| e.to_string())??;
        let burst = texts.iter().filter(|t| t.starts_with("burst-")).count();
        let paced = texts.iter().filter(|t| t.starts_with("paced-")).count();
        let burst_max = 10 + (10.0 * (burst_s + 0.1)).ceil() as usize;
        if !(10..=burst_max).contains(&burst) {
            return Err(format!(
                "a burst of 30 sent in {:.0} ms delivered {burst}; expected 10 to {burst_max}",
                burst_s * 1000.0
            ));
        }
        // Refill over the paced phase, give or take the timing of its first and last chat.
        let expected = 10.0 * paced_s;
        let (low, high) = (
            (expected - 5.0).max(1.0) as usize,
            (expected + 5.0) as usize,
        );
        if !(low..=high).contains(&paced) {
            return Err(format!(
                "40 chats at 20/s over {paced_s:.2} s delivered {paced}; expected {low} to {high} (10/s)"
            ));
        }
        Ok(format!(
            "burst of 30 delivered {burst}; 40 at 20/s over {paced_s:.1} s delivered {paced}"
        ))
    })
}

/// Collects the texts of chats from `from` until a pong-less quiet period of `max` ends.
async fn count_chats(
    mut member: Member,
    from: String,
    max: Duration,
) -> Result<Vec<String>, String> {
    let deadline = Instant::now() + max;
    let mut texts = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match member
            .next_event(left.min(Duration::from_millis(1500)))
            .await
        {
            Some(Event::Json(m)) if is(&m, "chat") && m["user"] == from.as_str() => {
                texts.push(m["text"].as_str().unwrap_or_default().to_string());
            }
            Some(Event::Json(m)) if is(&m, "leave") && m["user"] == from.as_str() => break,
            Some(Event::Closed(_) | Event::Gone(_)) => break,
            None if !texts.is_empty() || left.is_zero() => break,
            _ => {}
        }
    }
    member.close().await;
    Ok(texts)
}

fn many_members(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        const MEMBERS: usize = 200;
        let joins =
            (0..MEMBERS).map(|i| Member::join(&ctx.target, ctx.user("many", &i.to_string())));
        let mut members = Vec::with_capacity(MEMBERS);
        for joined in futures_util::future::join_all(joins).await {
            members.push(joined.map_err(|e| format!("joining 200 at once: {e}"))?);
        }
        let mut sender = members.remove(0);
        sender.send_chat("to all 199", Some(rand_ts())).await?;
        let sender_user = sender.user.clone();
        let receipts = members.into_iter().map(|mut m| {
            let from = sender_user.clone();
            async move {
                let got = m
                    .expect_within(
                        "the broadcast",
                        Duration::from_secs(5),
                        chat_from(&from, "to all 199"),
                    )
                    .await;
                m.close().await;
                got.is_ok()
            }
        });
        let received = futures_util::future::join_all(receipts)
            .await
            .into_iter()
            .filter(|ok| *ok)
            .count();
        sender.close().await;
        if received != MEMBERS - 1 {
            return Err(format!(
                "{received} of {} members received the broadcast",
                MEMBERS - 1
            ));
        }
        Ok(format!("all {received} other members received it"))
    })
}

fn slow_consumer(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        // The senders stop reading too, with tiny receive buffers: once their buffers fill they
        // cost nothing, so the verifier's own CPU goes to the one reader it times. 30 senders at
        // 9/s for 6 s push ~6 MB towards each sleeper, well past a queue of 256 messages plus
        // what the kernel buffers on loopback.
        const SENDERS: usize = 30;
        const CHATS_EACH: usize = 54; // at 9/s: under the rate limit, so every chat is accepted
        const PERIOD: Duration = Duration::from_millis(111);
        let t = &ctx.target;
        let before = read_stats(t).await.ok();

        // The slow member joins, then never reads again.
        let mut slow = Member {
            ws: client::connect(t, Some(4096)).await?,
            user: ctx.user("slow", "sleeper"),
            online_at_join: None,
        };
        slow.send_join().await?;
        let mut reader = Member::join(t, ctx.user("slow", "reader")).await?;

        let (sent, tasks, unread) = start_slow_senders(ctx, SENDERS, CHATS_EACH, PERIOD).await?;

        let health_probe = {
            let addr = t.addr.clone();
            let tls = t.tls.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(3)).await;
                let started = Instant::now();
                let ok = http::get_over(&addr, tls.as_ref(), "/health", Duration::from_secs(1))
                    .await
                    .map(|r| r.status == 200)
                    .unwrap_or(false);
                (ok, started.elapsed())
            })
        };

        let expected_total = (SENDERS * CHATS_EACH) as u64;
        let mut received = 0u64;
        let mut worst_ms = 0.0f64;
        let deadline = Instant::now() + PERIOD * CHATS_EACH as u32 + Duration::from_secs(4);
        while received < expected_total && Instant::now() < deadline {
            match reader.next_event(Duration::from_millis(1500)).await {
                Some(Event::Json(m))
                    if is(&m, "chat")
                        && m["text"].as_str().is_some_and(|t| t.starts_with("slow-")) =>
                {
                    received += 1;
                    if let Some(ts) = m["ts"].as_f64() {
                        worst_ms = worst_ms.max(now_ms() - ts);
                    }
                }
                Some(Event::Closed(code)) => {
                    return Err(format!("the reader was closed ({})", code_text(code)));
                }
                Some(Event::Gone(why)) => {
                    return Err(format!("the reader lost its connection: {why}"));
                }
                None if sent.load(Ordering::Relaxed) >= expected_total => break,
                _ => {}
            }
        }
        let (healthy, health_took) = health_probe.await.map_err(|e| e.to_string())?;
        for task in tasks {
            task.abort();
        }
        let after = read_stats(t).await.ok();
        drop(slow);
        drop(unread);
        reader.close().await;

        let sent = sent.load(Ordering::Relaxed);
        if received < sent {
            return Err(lost_chats(received, sent, before.as_ref(), after.as_ref()));
        }
        if worst_ms > 1000.0 {
            return Err(format!(
                "the reader's worst latency was {worst_ms:.0} ms (limit 1000 ms) while the others slept"
            ));
        }
        if !healthy {
            return Err(format!(
                "/health did not answer 200 within 1 s during the flood ({health_took:?})"
            ));
        }
        let dropped = match (before, after) {
            (Some(b), Some(a)) => Some(a.dropped_slow.saturating_sub(b.dropped_slow)),
            _ => None,
        };
        if dropped == Some(0) {
            return Err(format!(
                "~{} MiB were sent towards each sleeping member, yet dropped_slow did not move: is the queue unbounded?",
                sent * 3900 / (1 << 20)
            ));
        }
        Ok(format!(
            "reader got all {received} chats, worst latency {worst_ms:.0} ms; /health took {} ms; dropped_slow +{}",
            health_took.as_millis(),
            dropped.map_or("?".to_string(), |d| d.to_string())
        ))
    })
}

/// The reader missed chats: says so with what the server's counters moved, which tells a
/// server that never read them (`chat_accepted` short) from one that dropped them.
fn lost_chats(
    received: u64,
    sent: u64,
    before: Option<&ServerStats>,
    after: Option<&ServerStats>,
) -> String {
    let moved = |name: &str| match (before, after) {
        (Some(b), Some(a)) => counter(a, name)
            .saturating_sub(counter(b, name))
            .to_string(),
        _ => "?".to_string(),
    };
    format!(
        "the reader received {received} of {sent} chats while the others slept \
         (server: chat_accepted +{}, dropped_ratelimit +{}, dropped_slow +{})",
        moved("chat_accepted"),
        moved("dropped_ratelimit"),
        moved("dropped_slow")
    )
}

/// `len` letters and digits that permessage-deflate cannot shrink much (about 6 bits of each
/// 8 stay), different for each `seed`: padding that fills queues over every transport.
fn incompressible(len: usize, seed: u64) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            // xorshift64: cheap, and enough to defeat deflate's matcher.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ALPHABET[(x >> 58) as usize] as char
        })
        .collect()
}

/// `senders` members who join, then stop reading (tiny receive buffers) and send `chats_each`
/// padded chats every `period`. Returns the count sent so far, the sending tasks, and the
/// unread halves, which must stay open for as long as the senders should.
async fn start_slow_senders(
    ctx: &Context,
    senders: usize,
    chats_each: usize,
    period: Duration,
) -> Result<
    (
        Arc<AtomicU64>,
        Vec<tokio::task::JoinHandle<()>>,
        Vec<Box<dyn Send>>,
    ),
    String,
> {
    let t = &ctx.target;
    let mut members = Vec::new();
    for i in 0..senders {
        let mut sender = Member {
            ws: client::connect(t, Some(4096)).await?,
            user: ctx.user("slow", &format!("s{i}")),
            online_at_join: None,
        };
        sender.send_join().await?;
        members.push(sender);
    }
    let sent = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    let mut unread: Vec<Box<dyn Send>> = Vec::new();
    for (i, member) in members.into_iter().enumerate() {
        let (mut sink, stream) = member.ws.split();
        unread.push(Box::new(stream));
        let sent = sent.clone();
        tasks.push(tokio::spawn(async move {
            let start = Instant::now() + Duration::from_millis(3 * i as u64);
            for n in 0..chats_each {
                tokio::time::sleep_until((start + period * n as u32).into()).await;
                let padding = incompressible(3800, (i * chats_each + n) as u64);
                let chat = json!({"type":"chat","room":"public","text":format!("slow-{i}-{n}-{padding}"),"ts":now_ms()});
                if sink.send(Message::text(chat.to_string())).await.is_err() {
                    return;
                }
                sent.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    Ok((sent, tasks, unread))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_chat_says_what_the_server_accepted_and_dropped() {
        let before = ServerStats {
            chat_accepted: 10,
            dropped_slow: 5,
            ..ServerStats::default()
        };
        let after = ServerStats {
            chat_accepted: 1590,
            dropped_slow: 18_005,
            ..ServerStats::default()
        };
        assert_eq!(
            lost_chats(1580, 1584, Some(&before), Some(&after)),
            "the reader received 1580 of 1584 chats while the others slept \
             (server: chat_accepted +1580, dropped_ratelimit +0, dropped_slow +18000)"
        );
        assert!(lost_chats(1, 2, None, Some(&after)).contains("chat_accepted +?"));
    }

    #[test]
    fn padded_chats_have_the_exact_length_asked_for() {
        for len in [100, 4096, 4097] {
            let text = padded_chat(len, "p");
            assert_eq!(text.len(), len);
            assert!(serde_json::from_str::<Value>(&text).is_ok());
        }
    }

    #[test]
    fn slow_consumer_padding_stays_large_under_permessage_deflate() {
        use flate2::{Compression, write::DeflateEncoder};
        use std::io::Write;
        let padding = incompressible(3800, 7);
        assert_eq!(padding.len(), 3800);
        assert_ne!(padding, incompressible(3800, 8));
        let mut deflate = DeflateEncoder::new(Vec::new(), Compression::default());
        deflate.write_all(padding.as_bytes()).unwrap();
        let compressed = deflate.finish().unwrap().len();
        assert!(
            compressed > 3800 * 2 / 3,
            "3800 bytes deflated to {compressed}"
        );
    }
}
