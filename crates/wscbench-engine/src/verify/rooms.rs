//! The room checks, one function per room rule of docs/protocol.md: isolation, each room's
//! own online count, leaving one room, room names and the 16-room limit, and a disconnect
//! leaving every room. Each check names its own rooms (unique to the run), so every count
//! starts from an empty room and can be asserted exactly.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::client::{EXPECT_TIMEOUT, Event, Member, code_text, is};
use super::counters::{counter, read_stats};
use super::{CheckFuture, Context, Target};
use wscbench_results::ServerStats;

/// How long a member must hear nothing it should not.
const QUIET: Duration = Duration::from_millis(200);

/// Rooms a connection may be in at once.
pub const MAX_ROOMS: usize = 16;

/// Connects `user` and joins `room`; its acknowledgement's `online` is in `online_at_join`.
async fn member_in(target: &Target, user: String, room: &str) -> Result<Member, String> {
    let mut member = Member::connect(target, user).await?;
    member.online_at_join = Some(join_room(&mut member, room).await?);
    Ok(member)
}

/// Sends a join to `room` (with the member's own name) and waits for its acknowledgement
/// there; returns the acknowledgement's `online`.
async fn join_room(member: &mut Member, room: &str) -> Result<u64, String> {
    let user = member.user.clone();
    join_room_as(member, room, &user).await
}

/// As [`join_room`], the join carrying `claimed` as its user. The acknowledgement must carry
/// the connection's name (`member.user`), set by its first join.
async fn join_room_as(member: &mut Member, room: &str, claimed: &str) -> Result<u64, String> {
    member
        .send_json(&json!({"type": "join", "room": room, "user": claimed}))
        .await?;
    let user = member.user.clone();
    let ack = member
        .expect(&format!("join acknowledgement in room {room}"), |m| {
            is(m, "join")
                && m["room"] == room
                && (m["user"] == user.as_str() || m["user"] == claimed)
        })
        .await?;
    if ack["user"] != user.as_str() {
        return Err(format!(
            "a further join was broadcast as {} instead of the connection's name {user:?} (set by its first join): {ack}",
            ack["user"]
        ));
    }
    ack["online"]
        .as_u64()
        .ok_or_else(|| format!("join acknowledgement lacks an integer online: {ack}"))
}

async fn chat_to(member: &mut Member, room: &str, text: &str) -> Result<(), String> {
    member
        .send_json(&json!({"type": "chat", "room": room, "text": text}))
        .await
}

fn chat_from<'a>(user: &'a str, text: &'a str) -> impl Fn(&Value) -> bool + 'a {
    move |m| is(m, "chat") && m["user"] == user && m["text"] == text
}

fn leave_of<'a>(user: &'a str, room: &'a str) -> impl Fn(&Value) -> bool + 'a {
    move |m| is(m, "leave") && m["user"] == user && m["room"] == room
}

/// True for a message that names a room outside `rooms`.
fn foreign(m: &Value, rooms: &[&str]) -> bool {
    m["room"]
        .as_str()
        .is_some_and(|room| !rooms.contains(&room))
}

/// Waits for a message matching `pred`, failing at once on any message of a room outside
/// `rooms` (the member's own): what [`Member::expect`] would skip is evidence here.
async fn expect_in(
    member: &mut Member,
    rooms: &[&str],
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Result<Value, String> {
    let deadline = Instant::now() + EXPECT_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match member.next_event(left).await {
            None => {
                return Err(format!(
                    "{}: no {what} within {EXPECT_TIMEOUT:?}",
                    member.user
                ));
            }
            Some(Event::Json(m)) if foreign(&m, rooms) => {
                return Err(format!(
                    "{}, a member of {rooms:?} only, received a message of another room: {m}",
                    member.user
                ));
            }
            Some(Event::Json(m)) if pred(&m) => return Ok(m),
            Some(Event::Closed(code)) => {
                return Err(format!(
                    "{}: connection closed ({}) while waiting for {what}",
                    member.user,
                    code_text(code)
                ));
            }
            Some(Event::Gone(why)) => {
                return Err(format!(
                    "{}: connection lost ({why}) while waiting for {what}",
                    member.user
                ));
            }
            Some(_) => {}
        }
    }
}

/// Proves the connection open and served (a ping gets its pong), failing if a broadcast
/// naming the member itself (a join or leave acknowledged) arrives first: after invalid
/// input, nothing may be broadcast back.
async fn alive_and_silent(member: &mut Member, after: &str) -> Result<(), String> {
    let ts = super::client::rand_ts();
    member.send_json(&json!({"type": "ping", "ts": ts})).await?;
    let user = member.user.clone();
    member
        .expect(&format!("pong after {after}"), |m| {
            m["user"] == user.as_str() || (is(m, "pong") && m["ts"].as_f64() == Some(ts))
        })
        .await
        .and_then(|m| {
            if is(&m, "pong") {
                Ok(())
            } else {
                Err(format!("{user} was sent {m}"))
            }
        })
        .map_err(|e| format!("after {after}: {e}"))
}

/// Waits (up to 2 s) until every named counter has moved from `before` by exactly the
/// amount given; fails with every counter still off.
async fn counters_moved(
    target: &Target,
    before: &ServerStats,
    expected: &[(&str, i64)],
    when: &str,
) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let after = read_stats(target).await?;
        let wrong: Vec<String> = expected
            .iter()
            .filter_map(|(name, want)| {
                let got = counter(&after, name) as i64 - counter(before, name) as i64;
                (got != *want).then(|| format!("{name} moved by {got}, expected {want}"))
            })
            .collect();
        if wrong.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("{when}: {}", wrong.join("; ")));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn online_is(what: &str, got: Option<u64>, want: u64) -> Result<(), String> {
    if got == Some(want) {
        Ok(())
    } else {
        Err(format!("{what} said online {got:?}, expected {want}"))
    }
}

async fn close_all(members: Vec<Member>) {
    futures_util::future::join_all(members.into_iter().map(Member::close)).await;
}

pub(super) fn rooms_isolated(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let t = &ctx.target;
        let (r1, r2) = (ctx.room("isolated", "r1"), ctx.room("isolated", "r2"));
        let mut a = member_in(t, ctx.user("isolated", "a"), &r1).await?;
        let mut c = member_in(t, ctx.user("isolated", "c"), &r1).await?;
        let mut b = member_in(t, ctx.user("isolated", "b"), &r2).await?;
        let mut d = member_in(t, ctx.user("isolated", "d"), &r2).await?;
        chat_to(&mut a, &r1, "to r1").await?;
        let a_user = a.user.clone();
        let got = expect_in(
            &mut c,
            &[r1.as_str()],
            "a's chat in r1",
            chat_from(&a_user, "to r1"),
        )
        .await?;
        if got["room"] != r1.as_str() {
            return Err(format!("c got a's chat with room {}", got["room"]));
        }
        chat_to(&mut b, &r2, "to r2").await?;
        let b_user = b.user.clone();
        expect_in(
            &mut d,
            &[r2.as_str()],
            "b's chat in r2",
            chat_from(&b_user, "to r2"),
        )
        .await?;
        // Nothing of r2 (b's and d's joins, b's chat) reached r1, nothing of r1 reached r2,
        // and a's own chat did not come back to it.
        let (in_r1, in_r2) = ([r1.as_str()], [r2.as_str()]);
        let (qa, qc, qb) = tokio::join!(
            a.quiet(QUIET, "a message of r2, or its own chat", |m| {
                foreign(m, &in_r1) || chat_from(&a_user, "to r1")(m)
            }),
            c.quiet(QUIET, "a message of r2", |m| foreign(m, &in_r1)),
            b.quiet(QUIET, "a message of r1", |m| {
                foreign(m, &in_r2) || chat_from(&a_user, "to r1")(m)
            }),
        );
        qa?;
        qc?;
        qb?;
        close_all(vec![a, b, c, d]).await;
        Ok("r1's chat reached r1 only, r2's chat and joins reached r2 only".into())
    })
}

pub(super) fn online_per_room(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let t = &ctx.target;
        let (r1, r2) = (ctx.room("online", "r1"), ctx.room("online", "r2"));
        let mut a = member_in(t, ctx.user("online", "a"), &r1).await?;
        online_is("the first join to a new room", a.online_at_join, 1)?;
        let b = member_in(t, ctx.user("online", "b"), &r1).await?;
        online_is("the second join to r1", b.online_at_join, 2)?;
        let mut c = member_in(t, ctx.user("online", "c"), &r2).await?;
        online_is(
            "the first join to r2, while r1 has 2 members,",
            c.online_at_join,
            1,
        )?;
        // a, a member of r1 already, joins r2 too, under another claimed name.
        let alias = format!("{}-alias", a.user);
        let acked = join_room_as(&mut a, &r2, &alias).await?;
        online_is("a's join to r2 (its second room)", Some(acked), 2)?;
        let a_user = a.user.clone();
        let seen = c
            .expect("a's join in r2", |m| {
                is(m, "join") && m["room"] == r2.as_str() && m["user"] == a_user.as_str()
            })
            .await?;
        online_is("a's join to r2, as c saw it,", seen["online"].as_u64(), 2)?;
        // a, in both rooms, hears each room's own count.
        let d = member_in(t, ctx.user("online", "d"), &r2).await?;
        online_is("the third join to r2", d.online_at_join, 3)?;
        let d_user = d.user.clone();
        let seen = a
            .expect("d's join in r2", |m| {
                is(m, "join") && m["room"] == r2.as_str() && m["user"] == d_user.as_str()
            })
            .await?;
        online_is("d's join to r2, as a saw it,", seen["online"].as_u64(), 3)?;
        let e = member_in(t, ctx.user("online", "e"), &r1).await?;
        let e_user = e.user.clone();
        let seen = a
            .expect("e's join in r1", |m| {
                is(m, "join") && m["room"] == r1.as_str() && m["user"] == e_user.as_str()
            })
            .await?;
        online_is("e's join to r1, as a saw it,", seen["online"].as_u64(), 3)?;
        close_all(vec![a, b, c, d, e]).await;
        Ok("r1 counted 1, 2, 3 and r2 1, 2, 3, each its own; a member of both heard both; a further join kept the first name".into())
    })
}

pub(super) fn leave_one_room(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let t = &ctx.target;
        let (r1, r2) = (ctx.room("leave1", "r1"), ctx.room("leave1", "r2"));
        let mut a = member_in(t, ctx.user("leave1", "a"), &r1).await?;
        let mut b = member_in(t, ctx.user("leave1", "b"), &r1).await?;
        let mut c = member_in(t, ctx.user("leave1", "c"), &r2).await?;
        join_room(&mut a, &r2).await?;
        let a_user = a.user.clone();
        a.send_json(&json!({"type": "leave", "room": r1})).await?;
        let got = b.expect("a's leave of r1", leave_of(&a_user, &r1)).await?;
        online_is("a's leave of r1, as b saw it,", got["online"].as_u64(), 1)?;
        a.alive()
            .await
            .map_err(|e| format!("a leave with a room must keep the connection open: {e}"))?;
        // a is still in r2: it hears r2's chats and may chat there.
        let c_user = c.user.clone();
        chat_to(&mut c, &r2, "r2 after a left r1").await?;
        a.expect("c's chat in r2", chat_from(&c_user, "r2 after a left r1"))
            .await?;
        chat_to(&mut a, &r2, "a still in r2").await?;
        c.expect("a's chat in r2", chat_from(&a_user, "a still in r2"))
            .await?;
        // A chat to r1, which a has left, is malformed.
        let before = read_stats(t).await?;
        chat_to(&mut a, &r1, "a no longer in r1").await?;
        alive_and_silent(&mut a, "a chat to a room it has left").await?;
        counters_moved(
            t,
            &before,
            &[("malformed", 1), ("chat_in", 0)],
            "a chat to a room the connection has left",
        )
        .await?;
        b.quiet(QUIET, "a chat from a member that left r1", |m| {
            chat_from(&a_user, "a no longer in r1")(m)
        })
        .await?;
        c.quiet(
            QUIET,
            "a leave of r2 before a left it",
            leave_of(&a_user, &r2),
        )
        .await?;
        // A leave without room leaves r2 as well, and closes.
        a.send_json(&json!({"type": "leave"})).await?;
        let got = c.expect("a's leave of r2", leave_of(&a_user, &r2)).await?;
        online_is("a's leave of r2, as c saw it,", got["online"].as_u64(), 1)?;
        let code = a.expect_close(Duration::from_secs(2)).await?;
        if code != Some(1000) {
            return Err(format!(
                "after a leave without room the server closed with {}, expected 1000",
                code_text(code)
            ));
        }
        b.quiet(QUIET, "a second leave of r1", leave_of(&a_user, &r1))
            .await?;
        close_all(vec![b, c]).await;
        Ok("r1 heard a's leave (online 1); a stayed open in r2, chatted there, its chat to r1 counted malformed; the full leave left r2 and closed 1000".into())
    })
}

/// A room name of exactly 64 characters: `prefix`, then `é` (two bytes each), so a server
/// that counts bytes instead of characters refuses it.
fn room_of_64(prefix: &str) -> String {
    prefix
        .chars()
        .chain(std::iter::repeat('é'))
        .take(64)
        .collect()
}

/// Joins and chats whose room is empty, 65 characters long, a number, or missing: each
/// one malformed.
fn invalid_room_names(user: &str) -> Vec<(&'static str, Value)> {
    let long = "r".repeat(65);
    vec![
        (
            "a join to an empty room",
            json!({"type": "join", "room": "", "user": user}),
        ),
        (
            "a join to a 65-character room",
            json!({"type": "join", "room": long, "user": user}),
        ),
        (
            "a join whose room is a number",
            json!({"type": "join", "room": 7, "user": user}),
        ),
        ("a join without room", json!({"type": "join", "user": user})),
        (
            "a chat to an empty room",
            json!({"type": "chat", "room": "", "text": "names-bad-1"}),
        ),
        (
            "a chat to a 65-character room",
            json!({"type": "chat", "room": long, "text": "names-bad-2"}),
        ),
        (
            "a chat whose room is a number",
            json!({"type": "chat", "room": 7, "text": "names-bad-3"}),
        ),
        (
            "a chat without room",
            json!({"type": "chat", "text": "names-bad-4"}),
        ),
    ]
}

pub(super) fn room_names(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let t = &ctx.target;
        let r1 = ctx.room("names", "r1");
        let mut a = member_in(t, ctx.user("names", "a"), &r1).await?;
        let mut b = member_in(t, ctx.user("names", "b"), &r1).await?;
        let user = a.user.clone();
        let cases = invalid_room_names(&user);
        let invalid = cases.len() as i64;
        let before = read_stats(t).await?;
        for (what, message) in &cases {
            a.send_json(message).await?;
            alive_and_silent(&mut a, what).await?;
        }
        counters_moved(
            t,
            &before,
            &[("malformed", invalid), ("joins", 0), ("chat_in", 0)],
            "after 8 invalid room names",
        )
        .await?;
        // 64 characters (Unicode scalar values, not bytes) is a valid room.
        let room64 = room_of_64(&ctx.room("names", "64-"));
        let online = join_room(&mut a, &room64)
            .await
            .map_err(|e| format!("a 64-character room must be joinable: {e}"))?;
        online_is("the join to a 64-character room", Some(online), 1)?;
        // A second join to a room the connection is in: ignored, not malformed.
        a.send_json(&json!({"type": "join", "room": r1, "user": user}))
            .await?;
        alive_and_silent(&mut a, "a second join to the same room").await?;
        b.quiet(
            QUIET,
            "a broadcast of a second join to the same room",
            |m| is(m, "join") && m["user"] == user.as_str(),
        )
        .await?;
        counters_moved(
            t,
            &before,
            &[("malformed", invalid), ("joins", 1)],
            "after a 64-character room and a second join to the same room",
        )
        .await?;
        // Up to 16 rooms, then a 17th join is malformed.
        for i in 3..=MAX_ROOMS {
            join_room(&mut a, &ctx.room("names", &format!("r{i}")))
                .await
                .map_err(|e| format!("joining room {i} of {MAX_ROOMS}: {e}"))?;
        }
        a.send_json(&json!({"type": "join", "room": ctx.room("names", "r17"), "user": user}))
            .await?;
        alive_and_silent(&mut a, "a join to a 17th room").await?;
        counters_moved(
            t,
            &before,
            &[("malformed", invalid + 1), ("joins", MAX_ROOMS as i64 - 1)],
            "after 16 rooms and a join to a 17th",
        )
        .await?;
        chat_to(&mut a, &r1, "names-still-here").await?;
        b.expect(
            "a valid chat after the invalid ones",
            chat_from(&user, "names-still-here"),
        )
        .await?;
        close_all(vec![a, b]).await;
        Ok(format!(
            "{invalid} invalid room names counted malformed, the connection open; a 64-character room joined; a second join ignored; a 17th room malformed"
        ))
    })
}

pub(super) fn disconnect_all_rooms(ctx: &Context) -> CheckFuture<'_> {
    Box::pin(async move {
        let t = &ctx.target;
        let (r1, r2) = (ctx.room("drop2", "r1"), ctx.room("drop2", "r2"));
        let mut a = member_in(t, ctx.user("drop2", "a"), &r1).await?;
        join_room(&mut a, &r2).await?;
        let mut b = member_in(t, ctx.user("drop2", "b"), &r1).await?;
        let mut c = member_in(t, ctx.user("drop2", "c"), &r2).await?;
        let a_user = a.user.clone();
        // Dropping the stream closes TCP without a close frame.
        drop(a);
        let (in_r1, in_r2) = tokio::join!(
            b.expect(
                "a's leave of r1 after its disconnect",
                leave_of(&a_user, &r1)
            ),
            c.expect(
                "a's leave of r2 after its disconnect",
                leave_of(&a_user, &r2)
            ),
        );
        online_is(
            "a's leave of r1, as b saw it,",
            in_r1?["online"].as_u64(),
            1,
        )?;
        online_is(
            "a's leave of r2, as c saw it,",
            in_r2?["online"].as_u64(),
            1,
        )?;
        // Once its last member is gone, a room starts again from nobody.
        close_all(vec![b, c]).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let again = member_in(t, ctx.user("drop2", "f"), &r1).await?;
        online_is(
            "a join to r1 after everyone left it",
            again.online_at_join,
            1,
        )?;
        again.close().await;
        Ok(
            "both rooms heard the leave (online 1 each); an emptied room counted from 1 again"
                .into(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_64_character_room_is_64_characters_and_over_64_bytes() {
        let room = room_of_64("v1a2b3c-names-64-");
        assert_eq!(room.chars().count(), 64);
        assert!(room.len() > 64, "{} bytes", room.len());
    }

    #[test]
    fn every_invalid_room_name_case_lacks_a_valid_room() {
        let cases = invalid_room_names("alice");
        assert_eq!(cases.len(), 8);
        for (what, message) in cases {
            let valid = message["room"]
                .as_str()
                .is_some_and(|r| (1..=64).contains(&r.chars().count()));
            assert!(!valid, "{what}: {message}");
        }
    }
}
