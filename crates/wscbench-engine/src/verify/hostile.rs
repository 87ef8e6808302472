//! Hostile clients: named attacks on a running server, each bounded in count and time and
//! aimed at 127.0.0.1 only, while two well-behaved canary members keep chatting.
//!
//! After every attack the same aftermath must hold: `/health` answers, the canaries receive
//! each other's chats within 1 s, the server's `connections_current` is back to what it was
//! before (within 5 s), and, for a local process, its resident memory is back within
//! [`RSS_SLACK_BYTES`] of what it was before the first attack (within 5 s).
//!
//! Raw frames (non-UTF-8 text, fragments, declared-oversize headers, half frames) are written
//! by hand on a plain TCP socket, since a proper client library refuses to send them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures_util::SinkExt;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

use super::client::{self, Member, is};
use super::raw::{MASK, Raw, frame, header, tcp, ws_path};
use super::{CheckFuture, CheckResult, Target, VerifyReport, counters::read_stats};
use crate::net::http;
use wscbench_results::ServerStats;

/// How much the server's resident memory may stay above its level before the first attack,
/// once an attack is over (allocators and Go's runtime keep some of what they grew).
pub const RSS_SLACK_BYTES: u64 = 64 << 20;
/// How much it may grow *during* the never-reading-clients attack.
pub const RSS_PEAK_SLACK_BYTES: u64 = 128 << 20;
/// The connection flood's size: a few thousand sockets, bounded.
pub const FLOOD_CONNECTIONS: usize = 2000;
/// The longest any attack (with its aftermath) may take.
const ATTACK_TIMEOUT: Duration = Duration::from_secs(40);
/// How long the canaries may take to hear each other once an attack is over.
const CANARY_DEADLINE: Duration = Duration::from_secs(1);
/// How long the server may take to settle (connections closed, memory freed) after an attack.
const SETTLE: Duration = Duration::from_secs(5);

type Attack = for<'a> fn(&'a Ctx) -> CheckFuture<'a>;

/// One named attack and the rule it proves.
pub struct HostileCheck {
    /// Stable name, e.g. `oversize_frames`.
    pub name: &'static str,
    /// What is sent and what must hold.
    pub rule: &'static str,
    run: Attack,
}

/// Every hostile check, in order.
pub fn all_hostile_checks() -> &'static [HostileCheck] {
    ALL
}

const ALL: &[HostileCheck] = &[
    HostileCheck {
        name: "invalid_json_flood",
        rule: "10,000 malformed JSON texts from 4 connections: ignored, the senders stay served",
        run: invalid_json_flood,
    },
    HostileCheck {
        name: "unknown_types",
        rule: "5,000 messages of unknown or missing type: ignored, the senders stay served",
        run: unknown_types,
    },
    HostileCheck {
        name: "non_utf8_text",
        rule: "text frames that are not UTF-8 from 10 connections: ignored or closed, never a crash",
        run: non_utf8_text,
    },
    HostileCheck {
        name: "binary_frames",
        rule: "5,000 binary frames from 2 connections: ignored, the senders stay served",
        run: binary_frames,
    },
    HostileCheck {
        name: "oversize_frames",
        rule: "a 64 KiB frame, and a header announcing 1 MiB: each connection closed with 1009",
        run: oversize_frames,
    },
    HostileCheck {
        name: "fragmented_messages",
        rule: "a chat in 3 fragments is broadcast once; 5,000 one-byte fragments (over 4096 bytes) close with 1009",
        run: fragmented_messages,
    },
    HostileCheck {
        name: "ping_flood",
        rule: "10,000 WebSocket pings from 2 connections: the server stays up and bounded",
        run: ping_flood,
    },
    HostileCheck {
        name: "slowloris_upgrade",
        rule: "200 upgrades that never finish their headers (6 s): a new member still joins within 1 s",
        run: slowloris_upgrade,
    },
    HostileCheck {
        name: "reset_mid_frame",
        rule: "50 joined members reset their TCP connection mid-frame: all are gone after",
        run: reset_mid_frame,
    },
    HostileCheck {
        name: "never_reads",
        rule: "10 clients send 20,000 pings each and never read: memory stays bounded",
        run: never_reads,
    },
    HostileCheck {
        name: "connection_flood",
        rule: "2,000 WebSocket connections at once, then closed: the server serves on and lets go of them",
        run: connection_flood,
    },
];

/// What every attack gets.
pub struct Ctx {
    target: Target,
    pid: Option<u32>,
    nonce: String,
    baseline_rss: Option<u64>,
}

impl Ctx {
    fn user(&self, role: &str) -> String {
        format!("h{}-{role}", self.nonce)
    }

    fn rss(&self) -> Option<u64> {
        rss_of(self.pid?)
    }
}

fn rss_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

/// The two well-behaved members that chat through every attack.
struct Canaries {
    a: Member,
    b: Member,
    round: u64,
}

impl Canaries {
    async fn join(ctx: &Ctx) -> Result<Self, String> {
        Ok(Self {
            a: Member::join(&ctx.target, ctx.user("canary-a")).await?,
            b: Member::join(&ctx.target, ctx.user("canary-b")).await?,
            round: 0,
        })
    }

    /// A chats to B and B to A, each heard within `deadline`; returns the slower of the two.
    async fn exchange(&mut self, deadline: Duration) -> Result<Duration, String> {
        self.round += 1;
        let mut slowest = Duration::ZERO;
        for forward in [true, false] {
            let (from, to) = if forward {
                (&mut self.a, &mut self.b)
            } else {
                (&mut self.b, &mut self.a)
            };
            let text = format!("canary {} from {}", self.round, from.user);
            let sent = Instant::now();
            from.send_chat(&text, None).await?;
            to.expect_within(&format!("the canary chat {text:?}"), deadline, |m| {
                is(m, "chat") && m["text"] == text.as_str()
            })
            .await?;
            slowest = slowest.max(sent.elapsed());
        }
        Ok(slowest)
    }

    /// Exchanges a round every 300 ms until `done`; returns (rounds, slowest, first failure).
    async fn chatter(&mut self, done: &AtomicBool) -> (u64, Duration, Option<String>) {
        let (mut rounds, mut slowest) = (0, Duration::ZERO);
        while !done.load(Ordering::Relaxed) {
            match self.exchange(Duration::from_secs(3)).await {
                Ok(took) => {
                    rounds += 1;
                    slowest = slowest.max(took);
                }
                Err(e) => return (rounds, slowest, Some(e)),
            }
            for _ in 0..6 {
                if done.load(Ordering::Relaxed) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        (rounds, slowest, None)
    }
}

/// Runs every hostile check (or those named in `only`) against `target`. `pid` is the server's
/// process when it runs locally: its resident memory is then part of every aftermath.
pub async fn hostile(
    target: &Target,
    pid: Option<u32>,
    only: &[String],
    mut on_check: impl FnMut(&CheckResult),
) -> VerifyReport {
    let nonce = format!("{:x}", std::process::id() ^ super::rand_seed());
    let mut ctx = Ctx {
        target: target.clone(),
        pid,
        nonce: nonce.chars().take(6).collect(),
        baseline_rss: None,
    };
    let mut results = Vec::new();
    let mut canaries = Canaries::join(&ctx).await;
    // Settle the canaries' own joins before taking the baseline.
    tokio::time::sleep(Duration::from_millis(200)).await;
    ctx.baseline_rss = ctx.rss();
    let baseline_connections = read_stats(target).await.map(|s| s.connections_current).ok();
    for check in ALL
        .iter()
        .filter(|c| only.is_empty() || only.iter().any(|o| o == c.name))
    {
        let started = Instant::now();
        let outcome = match &mut canaries {
            Err(e) => Err(format!("the canaries could not join: {e}")),
            Ok(canaries) => {
                tokio::time::timeout(
                    ATTACK_TIMEOUT,
                    attack_and_aftermath(&ctx, check, canaries, baseline_connections),
                )
                .await
                .unwrap_or_else(|_| {
                    Err(format!(
                        "the attack and its aftermath did not finish within {ATTACK_TIMEOUT:?} (server hung?)"
                    ))
                })
            }
        };
        let result = CheckResult::of(check.name, check.rule, outcome, started);
        on_check(&result);
        let passed = result.passed;
        results.push(result);
        if !passed {
            // A failed check may have cost the canaries their connections: start the next
            // check with fresh ones, so one failure names one attack.
            canaries = Canaries::join(&ctx).await;
        }
    }
    VerifyReport {
        target: target.ws_url.clone(),
        checks: results,
    }
}

async fn attack_and_aftermath(
    ctx: &Ctx,
    check: &HostileCheck,
    canaries: &mut Canaries,
    baseline_connections: Option<u64>,
) -> Result<String, String> {
    let before = read_stats(&ctx.target).await.ok();
    let done = AtomicBool::new(false);
    let (evidence, (rounds, slowest, chatter_error)) = tokio::join!(
        async {
            let r = (check.run)(ctx).await;
            done.store(true, Ordering::Relaxed);
            r
        },
        canaries.chatter(&done)
    );
    let evidence = evidence?;
    if let Some(e) = chatter_error {
        return Err(format!(
            "during the attack ({evidence}), the canaries stopped hearing each other: {e}; {}",
            counters_since(ctx, before.as_ref()).await
        ));
    }
    let after = aftermath(ctx, canaries, baseline_connections).await?;
    Ok(format!(
        "{evidence}; canaries: {rounds} rounds during (slowest {} ms); {after}",
        slowest.as_millis()
    ))
}

/// What the server's counters say happened since `before`: whether a lost chat reached it,
/// and whether it dropped it (full queue or rate limit).
async fn counters_since(ctx: &Ctx, before: Option<&ServerStats>) -> String {
    let (Some(before), Ok(now)) = (before, read_stats(&ctx.target).await) else {
        return "the server's /stats could not be read before and after".into();
    };
    let delta = |now: u64, then: u64| now.saturating_sub(then);
    format!(
        "server counters meanwhile: chat_accepted +{}, deliveries +{}, dropped_slow +{}, dropped_ratelimit +{}, connections {}",
        delta(now.chat_accepted, before.chat_accepted),
        delta(now.deliveries, before.deliveries),
        delta(now.dropped_slow, before.dropped_slow),
        delta(now.dropped_ratelimit, before.dropped_ratelimit),
        now.connections_current
    )
}

/// What must hold after every attack.
async fn aftermath(
    ctx: &Ctx,
    canaries: &mut Canaries,
    baseline_connections: Option<u64>,
) -> Result<String, String> {
    let health = http::get_over(
        &ctx.target.addr,
        ctx.target.tls.as_ref(),
        "/health",
        Duration::from_secs(2),
    )
    .await
    .map_err(|e| format!("after the attack /health did not answer: {e}"))?;
    if health.status != 200 {
        return Err(format!(
            "after the attack /health answered {}",
            health.status
        ));
    }
    let took = canaries.exchange(CANARY_DEADLINE).await.map_err(|e| {
        format!("after the attack the canaries did not hear each other within 1 s: {e}")
    })?;
    let mut notes = vec![format!(
        "after: /health 200, canaries in {} ms",
        took.as_millis()
    )];
    let settle_until = Instant::now() + SETTLE;
    if let Some(before) = baseline_connections {
        let mut now = None;
        loop {
            if let Ok(stats) = read_stats(&ctx.target).await {
                now = Some(stats.connections_current);
                if stats.connections_current <= before {
                    break;
                }
            }
            if Instant::now() > settle_until {
                return Err(format!(
                    "{SETTLE:?} after the attack the server still counts {} connections (before: {before})",
                    now.map_or("?".into(), |n| n.to_string())
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        notes.push(format!("connections back to {before}"));
    }
    if let Some(before) = ctx.baseline_rss {
        let limit = before + RSS_SLACK_BYTES;
        loop {
            let rss = ctx
                .rss()
                .ok_or("after the attack the server process is gone")?;
            if rss <= limit {
                notes.push(format!(
                    "RSS {:.1} MiB (before {:.1})",
                    mib(rss),
                    mib(before)
                ));
                break;
            }
            if Instant::now() > settle_until {
                return Err(format!(
                    "{SETTLE:?} after the attack the server's RSS is {:.1} MiB, over {:.1} MiB before + {} MiB",
                    mib(rss),
                    mib(before),
                    RSS_SLACK_BYTES >> 20
                ));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    Ok(notes.join(", "))
}

/// Several connections, each flooding `count` texts made by `make`, then proving it is still served.
async fn text_flood(
    ctx: &Ctx,
    connections: usize,
    count: usize,
    make: fn(usize) -> Message,
) -> Result<String, String> {
    let before = read_stats(&ctx.target).await.ok();
    let floods = (0..connections).map(|c| async move {
        let mut m = Member::connect(&ctx.target, ctx.user(&format!("flood{c}"))).await?;
        for i in 0..count {
            m.ws.feed(make(i))
                .await
                .map_err(|e| format!("sending: {e}"))?;
            if i % 256 == 255 {
                m.ws.flush().await.map_err(|e| format!("sending: {e}"))?;
            }
        }
        m.ws.flush().await.map_err(|e| format!("sending: {e}"))?;
        m.alive()
            .await
            .map_err(|e| format!("after the flood the sender is not served: {e}"))?;
        m.close().await;
        Ok::<(), String>(())
    });
    for r in futures_util::future::join_all(floods).await {
        r?;
    }
    let after = read_stats(&ctx.target).await.ok();
    let malformed = match (before, after) {
        (Some(b), Some(a)) => format!(", malformed +{}", a.malformed.saturating_sub(b.malformed)),
        _ => String::new(),
    };
    Ok(format!(
        "{} messages sent, every sender still served{malformed}",
        connections * count
    ))
}

fn invalid_json_flood(ctx: &Ctx) -> CheckFuture<'_> {
    Box::pin(text_flood(ctx, 4, 2500, |i| {
        Message::text(
            [
                "{not json",
                "\"just a string\"",
                "[1,2",
                "{\"type\":",
                "nul",
            ][i % 5],
        )
    }))
}

fn unknown_types(ctx: &Ctx) -> CheckFuture<'_> {
    Box::pin(text_flood(ctx, 2, 2500, |i| {
        Message::text(match i % 4 {
            0 => json!({"type": format!("x{i}"), "room": "public"}).to_string(),
            1 => json!({"type": 42}).to_string(),
            2 => json!({"room": "public", "text": "no type"}).to_string(),
            _ => json!([{"type": "chat"}]).to_string(),
        })
    }))
}

fn binary_frames(ctx: &Ctx) -> CheckFuture<'_> {
    Box::pin(text_flood(ctx, 2, 2500, |i| {
        Message::binary(vec![(i % 251) as u8; 64])
    }))
}

fn non_utf8_text(ctx: &Ctx) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut closed = 0;
        let mut ignored = 0;
        for _ in 0..10 {
            let mut raw = Raw::upgrade(&ctx.target, None).await?;
            for _ in 0..100 {
                if raw
                    .send(&frame(1, true, &[0xff, 0xfe, 0xc3, 0x28, b'{', 0x80]))
                    .await
                    .is_err()
                {
                    break;
                }
            }
            match raw.expect_close(Duration::from_millis(300)).await {
                Ok(_) => closed += 1,
                Err(e) if e.starts_with("no close frame") => ignored += 1,
                Err(_) => closed += 1,
            }
            raw.reset();
        }
        Ok(format!(
            "1,000 invalid UTF-8 texts on 10 connections: {closed} closed, {ignored} ignored"
        ))
    })
}

fn oversize_frames(ctx: &Ctx) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut codes = Vec::new();
        for i in 0..10 {
            let mut raw = Raw::upgrade(&ctx.target, None).await?;
            if i % 2 == 0 {
                // Whole: a 64 KiB text frame.
                let _ = raw.send(&frame(1, true, &vec![b'a'; 64 << 10])).await;
            } else {
                // Announced: a header for 1 MiB, then only 8 KiB of it, masked as a client
                // masks (every byte with its key's byte): valid UTF-8 once unmasked, so a
                // server that validates text fails the frame for its size, not its text.
                let mut bytes = header(1, true, 1 << 20);
                bytes.extend((0..8 << 10).map(|i| b'a' ^ MASK[i % 4]));
                let _ = raw.send(&bytes).await;
            }
            let code = raw.expect_close(Duration::from_secs(3)).await;
            raw.reset();
            match code {
                Ok(Some(1009)) => codes.push(1009),
                Ok(other) => {
                    return Err(format!(
                        "an oversize frame ({}) was closed with {}, expected 1009",
                        if i % 2 == 0 {
                            "64 KiB"
                        } else {
                            "announced 1 MiB"
                        },
                        client::code_text(other)
                    ));
                }
                Err(e) => {
                    return Err(format!(
                        "an oversize frame ({}): {e}, expected a close with 1009",
                        if i % 2 == 0 {
                            "64 KiB"
                        } else {
                            "announced 1 MiB"
                        }
                    ));
                }
            }
        }
        Ok(format!(
            "{} oversize frames (64 KiB sent, 1 MiB announced), each closed with 1009",
            codes.len()
        ))
    })
}

fn fragmented_messages(ctx: &Ctx) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut listener = Member::join(&ctx.target, ctx.user("frag-rx")).await?;
        let mut sender = Raw::upgrade(&ctx.target, None).await?;
        let user = ctx.user("frag-tx");
        sender
            .send_text(&json!({"type": "join", "room": "public", "user": user}).to_string())
            .await?;
        listener
            .expect("the fragment sender's join", |m| {
                is(m, "join") && m["user"] == user.as_str()
            })
            .await?;
        let text = format!("fragmented {}", ctx.nonce);
        let chat = json!({"type": "chat", "room": "public", "text": text}).to_string();
        let bytes = chat.as_bytes();
        let (one, rest) = bytes.split_at(bytes.len() / 3);
        let (two, three) = rest.split_at(rest.len() / 2);
        let mut wire = frame(1, false, one);
        wire.extend(frame(0, false, two));
        wire.extend(frame(0, true, three));
        sender.send(&wire).await?;
        listener
            .expect_within(
                "the chat sent in 3 fragments",
                Duration::from_secs(1),
                |m| is(m, "chat") && m["text"] == text.as_str(),
            )
            .await?;
        listener
            .quiet(
                Duration::from_millis(300),
                "the fragmented chat twice",
                |m| is(m, "chat") && m["text"] == text.as_str(),
            )
            .await?;
        sender.reset();
        listener.close().await;

        let mut raw = Raw::upgrade(&ctx.target, None).await?;
        let mut wire = frame(1, false, b"a");
        for _ in 1..5000 {
            wire.extend(frame(0, false, b"a"));
        }
        let _ = raw.send(&wire).await;
        let code = raw.expect_close(Duration::from_secs(3)).await;
        raw.reset();
        match code {
            Ok(Some(1009)) => Ok("a chat in 3 fragments was broadcast once; 5,000 one-byte fragments were closed with 1009".into()),
            Ok(other) => Err(format!(
                "5,000 one-byte fragments (over 4096 bytes in all) were closed with {}, expected 1009",
                client::code_text(other)
            )),
            Err(e) => Err(format!("5,000 one-byte fragments (over 4096 bytes in all): {e}, expected a close with 1009")),
        }
    })
}

fn ping_flood(ctx: &Ctx) -> CheckFuture<'_> {
    Box::pin(async move {
        let floods = (0..2).map(|_| async move {
            let raw = Raw::upgrade(&ctx.target, None).await?;
            let (mut rd, mut wr) = tokio::io::split(raw.stream);
            // Read and discard the pongs, so the flood measures the server, not our buffers.
            let reader = tokio::spawn(async move {
                let mut sink = [0u8; 65536];
                while let Ok(n) = rd.read(&mut sink).await {
                    if n == 0 {
                        break;
                    }
                }
            });
            let ping = frame(9, true, b"0123456789abcdef");
            let batch: Vec<u8> = ping
                .iter()
                .copied()
                .cycle()
                .take(ping.len() * 500)
                .collect();
            let mut sent = 0;
            for _ in 0..10 {
                if tokio::time::timeout(Duration::from_secs(5), wr.write_all(&batch))
                    .await
                    .is_err()
                {
                    break;
                }
                sent += 500;
            }
            reader.abort();
            drop(wr);
            Ok::<usize, String>(sent)
        });
        let mut sent = 0;
        for r in futures_util::future::join_all(floods).await {
            sent += r?;
        }
        Ok(format!("{sent} pings sent on 2 connections"))
    })
}

fn slowloris_upgrade(ctx: &Ctx) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut hanging = Vec::new();
        for _ in 0..200 {
            let mut s = tcp(&ctx.target, None).await?;
            let head = format!(
                "GET {} HTTP/1.1\r\nHost: {}\r\n",
                ws_path(&ctx.target),
                ctx.target.addr
            );
            s.write_all(head.as_bytes())
                .await
                .map_err(|e| format!("write: {e}"))?;
            hanging.push(s);
        }
        let started = Instant::now();
        let mut joined_in = None;
        let mut line = 0;
        while started.elapsed() < Duration::from_secs(6) {
            line += 1;
            for s in &mut hanging {
                let _ = s
                    .write_all(format!("X-Slow-{line}: 1\r\n").as_bytes())
                    .await;
            }
            if joined_in.is_none() && started.elapsed() > Duration::from_secs(2) {
                let t = Instant::now();
                let m = tokio::time::timeout(
                    Duration::from_secs(1),
                    Member::join(&ctx.target, ctx.user("slow-new")),
                )
                .await
                .map_err(|_| {
                    "while 200 upgrades hung, a new member could not join within 1 s".to_string()
                })?
                .map_err(|e| {
                    format!("while 200 upgrades hung, a new member could not join: {e}")
                })?;
                joined_in = Some(t.elapsed());
                m.close().await;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let still_open = hanging.len();
        drop(hanging);
        Ok(format!(
            "200 upgrades held for 6 s ({still_open} sockets); a new member joined in {} ms meanwhile",
            joined_in.unwrap_or_default().as_millis()
        ))
    })
}

fn reset_mid_frame(ctx: &Ctx) -> CheckFuture<'_> {
    Box::pin(async move {
        let mut resets = 0;
        for i in 0..50 {
            let mut raw = Raw::upgrade(&ctx.target, None).await?;
            raw.send_text(
                &json!({"type": "join", "room": "public", "user": ctx.user(&format!("rst{i}"))})
                    .to_string(),
            )
            .await?;
            let chat = frame(
                1,
                true,
                json!({"type": "chat", "room": "public", "text": "x".repeat(200)})
                    .to_string()
                    .as_bytes(),
            );
            raw.send(&chat[..chat.len() / 2]).await?;
            raw.reset();
            resets += 1;
        }
        Ok(format!("{resets} joined members reset mid-frame"))
    })
}

fn never_reads(ctx: &Ctx) -> CheckFuture<'_> {
    Box::pin(async move {
        let before = read_stats(&ctx.target).await.ok();
        let peak = Arc::new(std::sync::Mutex::new(ctx.rss().unwrap_or(0)));
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = ctx.pid.map(|pid| {
            let (peak, stop) = (peak.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    if let Some(rss) = rss_of(pid) {
                        let mut p = peak.lock().unwrap();
                        *p = (*p).max(rss);
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        });
        let mut clients = Vec::new();
        for i in 0..10 {
            let mut raw = Raw::upgrade(&ctx.target, Some(4096)).await?;
            raw.send_text(
                &json!({"type": "join", "room": "public", "user": ctx.user(&format!("deaf{i}"))})
                    .to_string(),
            )
            .await?;
            clients.push(raw);
        }
        let ping = frame(1, true, br#"{"type":"ping","ts":1}"#);
        let batch: Vec<u8> = ping
            .iter()
            .copied()
            .cycle()
            .take(ping.len() * 1000)
            .collect();
        let deadline = Instant::now() + Duration::from_secs(10);
        let writes = clients.iter_mut().map(|c| {
            let batch = &batch;
            async move {
                let mut sent = 0;
                for _ in 0..20 {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match tokio::time::timeout(left, c.send(batch)).await {
                        Ok(Ok(())) => sent += 1000,
                        _ => break,
                    }
                }
                sent
            }
        });
        let sent: usize = futures_util::future::join_all(writes)
            .await
            .into_iter()
            .sum();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let after = read_stats(&ctx.target).await.ok();
        stop.store(true, Ordering::Relaxed);
        if let Some(s) = sampler {
            let _ = s.await;
        }
        for c in clients {
            c.reset();
        }
        let peak = *peak.lock().unwrap();
        let dropped = match (before, after) {
            (Some(b), Some(a)) => format!(
                ", dropped_slow +{}",
                a.dropped_slow.saturating_sub(b.dropped_slow)
            ),
            _ => String::new(),
        };
        if let Some(base) = ctx.baseline_rss {
            if peak > base + RSS_PEAK_SLACK_BYTES {
                return Err(format!(
                    "10 clients that never read grew the server to {:.1} MiB (before {:.1} MiB, limit +{} MiB){dropped}",
                    mib(peak),
                    mib(base),
                    RSS_PEAK_SLACK_BYTES >> 20
                ));
            }
            return Ok(format!(
                "{sent} pings from 10 clients that never read; peak RSS {:.1} MiB{dropped}",
                mib(peak)
            ));
        }
        Ok(format!(
            "{sent} pings from 10 clients that never read{dropped}"
        ))
    })
}

fn connection_flood(ctx: &Ctx) -> CheckFuture<'_> {
    Box::pin(async move {
        let started = Instant::now();
        let mut open = Vec::new();
        let mut refused = 0;
        for chunk in (0..FLOOD_CONNECTIONS).collect::<Vec<_>>().chunks(200) {
            let batch = chunk.iter().map(|_| Raw::upgrade(&ctx.target, None));
            for r in futures_util::future::join_all(batch).await {
                match r {
                    Ok(raw) => open.push(raw),
                    Err(_) => refused += 1,
                }
            }
            if started.elapsed() > Duration::from_secs(15) {
                break;
            }
        }
        let upgraded = open.len();
        let held = started.elapsed();
        // The server must still serve a newcomer with all of them open.
        let mut m = Member::join(&ctx.target, ctx.user("flood-new"))
            .await
            .map_err(|e| {
                format!("with {upgraded} connections open a new member could not join: {e}")
            })?;
        m.alive().await?;
        m.close().await;
        for raw in open {
            raw.reset();
        }
        Ok(format!(
            "{upgraded} of {FLOOD_CONNECTIONS} WebSockets open in {} ms ({refused} refused), a newcomer joined meanwhile, all reset",
            held.as_millis()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_check_names_are_unique_and_differ_from_the_protocol_checks() {
        let mut names: Vec<_> = ALL.iter().map(|c| c.name).collect();
        names.extend(super::super::all_checks().iter().map(|c| c.name));
        let before = names.len();
        names.sort();
        names.dedup();
        assert_eq!(before, names.len());
    }
}
