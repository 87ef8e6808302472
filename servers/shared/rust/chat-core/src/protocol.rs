//! The chat protocol of docs/protocol.md: parsing and validating what a client
//! sends, and serializing what the server broadcasts.
//!
//! `text` and `ts` are kept as the exact JSON text the client sent (serde_json's
//! `RawValue`), so a broadcast echoes them unchanged and never re-formats a
//! number: `1732233445566.25` comes back as `1732233445566.25`.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// The largest message a client may send, in bytes (docs/protocol.md, "Size
/// limit"); a larger one closes the connection with 1009.
pub const MAX_MESSAGE_SIZE: usize = 4096;
/// The longest `user` or `room`, in Unicode scalar values.
pub const MAX_NAME_CHARS: usize = 64;
/// The most rooms one connection is in at once; a join to one more is malformed.
pub const MAX_ROOMS: usize = 16;

/// A room as a join names it: decoded, to compare with what later chats and
/// leaves name, and JSON-encoded once, to paste into every broadcast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomName {
    pub name: Box<str>,
    pub json: Box<str>,
}

impl RoomName {
    /// `None` if `name` is not a valid room (1 to 64 characters).
    pub fn new(name: &str) -> Option<Self> {
        if !valid_name(name) {
            return None;
        }
        Some(Self {
            name: name.into(),
            json: encode(name)?.into(),
        })
    }
}

/// A valid message from a client. Anything else is malformed.
#[derive(Debug, PartialEq)]
pub enum Inbound<'a> {
    /// `user` is already JSON-encoded, ready to be pasted into broadcasts.
    Join {
        room: RoomName,
        user: String,
    },
    /// `room` is the decoded name; `text` is a JSON string literal and `ts` a
    /// JSON number, both as sent.
    Chat {
        room: Cow<'a, str>,
        text: &'a str,
        ts: Option<&'a str>,
    },
    Ping {
        ts: Option<&'a str>,
    },
    /// Without a room: leave every room and close. With one: leave it only.
    Leave {
        room: Option<Cow<'a, str>>,
    },
}

/// Every field the protocol knows, each as raw JSON so that its type can be
/// checked and `ts` kept verbatim. Unknown fields are ignored; a duplicate
/// field is a serde error and so malformed.
#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(rename = "type", default, borrow, deserialize_with = "present")]
    kind: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    room: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    user: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    text: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    ts: Option<&'a RawValue>,
}

/// A present field, `null` included: plain `Option` would read `"ts":null` as
/// an absent `ts`, but null is not a number.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Parses one text frame. `None` means malformed (see "Invalid input").
pub fn parse(frame: &str) -> Option<Inbound<'_>> {
    // serde's derived structs also accept a JSON array, field by field; the
    // protocol wants an object.
    if !frame.trim_start().starts_with('{') {
        return None;
    }
    let wire: Wire = serde_json::from_str(frame).ok()?;
    let kind = string(wire.kind?)?;
    let room = optional(wire.room, string)?;
    let user = optional(wire.user, string)?;
    let text = optional(wire.text, string_literal)?;
    let ts = optional(wire.ts, number)?;
    if room.as_deref().is_some_and(|room| !valid_name(room)) {
        return None;
    }
    match &*kind {
        "join" => {
            let user = user?;
            if !valid_name(&user) {
                return None;
            }
            Some(Inbound::Join {
                room: RoomName::new(&room?)?,
                user: encode(&user)?,
            })
        }
        "chat" => Some(Inbound::Chat {
            room: room?,
            text: text?,
            ts,
        }),
        "ping" => Some(Inbound::Ping { ts }),
        "leave" => Some(Inbound::Leave { room }),
        _ => None,
    }
}

/// A `user` or `room`: 1 to 64 Unicode scalar values.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().nth(MAX_NAME_CHARS).is_none()
}

/// A string as a JSON string literal (serde_json cannot fail on a `str`).
fn encode(text: &str) -> Option<String> {
    serde_json::to_string(text).ok()
}

/// An optional field: absent is `Some(None)`, present and valid
/// `Some(Some(value))`, present but of the wrong type `None`.
fn optional<'a, T>(
    raw: Option<&'a RawValue>,
    valid: fn(&'a RawValue) -> Option<T>,
) -> Option<Option<T>> {
    match raw {
        None => Some(None),
        Some(raw) => valid(raw).map(Some),
    }
}

/// A JSON string, decoded; borrowed when it has no escapes.
fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    let literal = string_literal(raw)?;
    let inner = &literal[1..literal.len() - 1];
    if inner.contains('\\') {
        serde_json::from_str::<String>(literal).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// A JSON string, as its literal (quotes and escapes included). `RawValue`
/// holds valid JSON, so a leading quote means a whole, valid string.
fn string_literal(raw: &RawValue) -> Option<&str> {
    let text = raw.get();
    text.starts_with('"').then_some(text)
}

/// A JSON number, as its text. Valid JSON that starts with `-` or a digit is
/// a number.
fn number(raw: &RawValue) -> Option<&str> {
    let text = raw.get();
    text.starts_with(|c: char| c == '-' || c.is_ascii_digit())
        .then_some(text)
}

// The broadcasts: `room` and `user` are JSON-encoded (`RoomName::json`, a
// join's `user`), `text` and `ts` as the client sent them.

/// `{"type":"join",...}` for every member of the room, the joiner included.
pub fn join(room: &str, user: &str, online: usize) -> String {
    format!(r#"{{"type":"join","room":{room},"user":{user},"online":{online}}}"#)
}

/// `{"type":"leave",...}` for the room's remaining members.
pub fn leave(room: &str, user: &str, online: usize) -> String {
    format!(r#"{{"type":"leave","room":{room},"user":{user},"online":{online}}}"#)
}

/// `{"type":"chat",...}` for every member of the room but the sender.
pub fn chat(room: &str, user: &str, text: &str, ts: Option<&str>) -> String {
    match ts {
        Some(ts) => {
            format!(r#"{{"type":"chat","room":{room},"user":{user},"text":{text},"ts":{ts}}}"#)
        }
        None => format!(r#"{{"type":"chat","room":{room},"user":{user},"text":{text}}}"#),
    }
}

/// `{"type":"pong"}` for the sender of a ping.
pub fn pong(ts: Option<&str>) -> String {
    match ts {
        Some(ts) => format!(r#"{{"type":"pong","ts":{ts}}}"#),
        None => r#"{"type":"pong"}"#.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room(name: &str) -> RoomName {
        RoomName::new(name).unwrap()
    }

    fn join_of(room_name: &str, user: &str) -> Option<Inbound<'static>> {
        Some(Inbound::Join {
            room: room(room_name),
            user: user.to_owned(),
        })
    }

    fn chat_of<'a>(room: &'a str, text: &'a str, ts: Option<&'a str>) -> Option<Inbound<'a>> {
        Some(Inbound::Chat {
            room: Cow::Borrowed(room),
            text,
            ts,
        })
    }

    #[test]
    fn parses_each_message_type() {
        assert_eq!(
            parse(r#"{"type":"join","room":"public","user":"alice"}"#),
            join_of("public", r#""alice""#)
        );
        assert_eq!(
            parse(r#"{"type":"chat","room":"public","text":"hi","ts":1732233445566.25}"#),
            chat_of("public", r#""hi""#, Some("1732233445566.25"))
        );
        assert_eq!(
            parse(r#"{"type":"chat","room":"lobby","text":"hi"}"#),
            chat_of("lobby", r#""hi""#, None)
        );
        assert_eq!(
            parse(r#"{"type":"ping","ts":17}"#),
            Some(Inbound::Ping { ts: Some("17") })
        );
        assert_eq!(
            parse(r#"{"type":"ping"}"#),
            Some(Inbound::Ping { ts: None })
        );
        assert_eq!(
            parse(r#"{"type":"leave"}"#),
            Some(Inbound::Leave { room: None })
        );
        assert_eq!(
            parse(r#"{"type":"leave","room":"lobby"}"#),
            Some(Inbound::Leave {
                room: Some(Cow::Borrowed("lobby"))
            })
        );
    }

    #[test]
    fn a_room_is_any_name_of_1_to_64_unicode_scalar_values() {
        let longest = "é".repeat(MAX_NAME_CHARS);
        let frame = format!(r#"{{"type":"join","room":"{longest}","user":"a"}}"#);
        assert_eq!(parse(&frame), join_of(&longest, r#""a""#));
        assert_eq!(room(&longest).json.as_ref(), format!(r#""{longest}""#));
        assert_eq!(
            parse(r#"{"type":"join","room":"x","user":"a"}"#),
            join_of("x", r#""a""#)
        );
        let too_long = "a".repeat(MAX_NAME_CHARS + 1);
        for frame in [
            format!(r#"{{"type":"join","room":"{too_long}","user":"a"}}"#),
            format!(r#"{{"type":"chat","room":"{too_long}","text":"hi"}}"#),
            format!(r#"{{"type":"leave","room":"{too_long}"}}"#),
            r#"{"type":"join","room":"","user":"a"}"#.to_owned(),
            r#"{"type":"chat","room":"","text":"hi"}"#.to_owned(),
            r#"{"type":"leave","room":""}"#.to_owned(),
            r#"{"type":"leave","room":7}"#.to_owned(),
            r#"{"type":"leave","room":null}"#.to_owned(),
        ] {
            assert_eq!(parse(&frame), None, "{frame}");
        }
    }

    #[test]
    fn a_room_name_is_encoded_once_as_json() {
        let Some(Inbound::Join { room, .. }) =
            parse(r#"{"type":"join","room":"a\"b\u00e9\n","user":"u"}"#)
        else {
            panic!("join expected");
        };
        assert_eq!(&*room.name, "a\"bé\n");
        assert_eq!(&*room.json, r#""a\"bé\n""#);
        let value: serde_json::Value =
            serde_json::from_str(&join(&room.json, r#""u""#, 1)).unwrap();
        assert_eq!(value["room"], "a\"bé\n");
    }

    #[test]
    fn keeps_number_text_exactly() {
        for ts in ["1e3", "-0.000", "12345678901234567890123", "1.50"] {
            let frame = format!(r#"{{"type":"ping","ts":{ts}}}"#);
            assert_eq!(parse(&frame), Some(Inbound::Ping { ts: Some(ts) }));
        }
        let frame = r#"{ "ts" : 1.0 , "type" : "chat", "room":"public", "text" : "a\"b" }"#;
        assert_eq!(parse(frame), chat_of("public", r#""a\"b""#, Some("1.0")));
    }

    #[test]
    fn decodes_escaped_strings() {
        assert_eq!(
            parse(r#"{"type":"j\u006fin","room":"pub\u006cic","user":"\u00e9"}"#),
            join_of("public", r#""é""#)
        );
        assert_eq!(
            parse(r#"{"type":"join","room":"public","user":"a\"b"}"#),
            join_of("public", r#""a\"b""#)
        );
        assert_eq!(
            parse(r#"{"type":"chat","room":"pub\u006cic","text":"hi"}"#),
            chat_of("public", r#""hi""#, None)
        );
    }

    #[test]
    fn user_length_counts_unicode_scalar_values() {
        let longest = "é".repeat(MAX_NAME_CHARS);
        let frame = format!(r#"{{"type":"join","room":"public","user":"{longest}"}}"#);
        assert_eq!(parse(&frame), join_of("public", &format!(r#""{longest}""#)));
        let too_long = "a".repeat(MAX_NAME_CHARS + 1);
        let frame = format!(r#"{{"type":"join","room":"public","user":"{too_long}"}}"#);
        assert_eq!(parse(&frame), None);
        assert_eq!(parse(r#"{"type":"join","room":"public","user":""}"#), None);
    }

    #[test]
    fn rejects_invalid_input() {
        for frame in [
            "",
            "not json",
            r#"{"type":"ping""#,
            "[]",
            r#"["ping"]"#,
            r#""ping""#,
            "42",
            "null",
            r#"{}"#,
            r#"{"type":"dance"}"#,
            r#"{"type":7}"#,
            r#"{"type":null}"#,
            r#"{"type":"ping","ts":"17"}"#,
            r#"{"type":"ping","ts":null}"#,
            r#"{"type":"ping","room":5}"#,
            r#"{"type":"ping","type":"ping"}"#,
            r#"{"type":"join","room":"public"}"#,
            r#"{"type":"join","room":"public","user":5}"#,
            r#"{"type":"join","room":5,"user":"alice"}"#,
            r#"{"type":"join","user":"alice"}"#,
            r#"{"type":"chat","room":"public"}"#,
            r#"{"type":"chat","text":"hi"}"#,
            r#"{"type":"chat","room":"public","text":5}"#,
            r#"{"type":"chat","room":"public","text":null}"#,
            r#"{"type":"chat","room":["public"],"text":"hi"}"#,
            r#"{"type":"chat","room":"public","text":"hi","ts":true}"#,
            r#"{"type":"ping"} trailing"#,
        ] {
            assert_eq!(parse(frame), None, "{frame}");
        }
    }

    #[test]
    fn ignores_unknown_fields() {
        assert_eq!(
            parse(r#"{"type":"leave","extra":[1,{"a":2}]}"#),
            Some(Inbound::Leave { room: None })
        );
    }

    #[test]
    fn serializes_broadcasts() {
        let public = r#""public""#;
        assert_eq!(
            join(public, r#""alice""#, 3),
            r#"{"type":"join","room":"public","user":"alice","online":3}"#
        );
        assert_eq!(
            leave(r#""lobby""#, r#""alice""#, 2),
            r#"{"type":"leave","room":"lobby","user":"alice","online":2}"#
        );
        assert_eq!(
            chat(public, r#""alice""#, r#""hello""#, Some("1732233445566.25")),
            r#"{"type":"chat","room":"public","user":"alice","text":"hello","ts":1732233445566.25}"#
        );
        assert_eq!(
            chat(public, r#""alice""#, r#""hello""#, None),
            r#"{"type":"chat","room":"public","user":"alice","text":"hello"}"#
        );
        assert_eq!(
            pong(Some("1732233445566")),
            r#"{"type":"pong","ts":1732233445566}"#
        );
        assert_eq!(pong(None), r#"{"type":"pong"}"#);
    }

    #[test]
    fn broadcasts_are_valid_json() {
        let Some(Inbound::Join { room, user }) =
            parse(r#"{"type":"join","room":"r\"\u0001","user":"\"q\"\n"}"#)
        else {
            panic!("join expected");
        };
        let Some(Inbound::Chat { text, ts, .. }) =
            parse(r#"{"type":"chat","room":"public","text":"x\u0000y","ts":-1.5e2}"#)
        else {
            panic!("chat expected");
        };
        let value: serde_json::Value =
            serde_json::from_str(&chat(&room.json, &user, text, ts)).unwrap();
        assert_eq!(value["room"], "r\"\u{1}");
        assert_eq!(value["user"], "\"q\"\n");
        assert_eq!(value["text"], "x\u{0}y");
        assert_eq!(value["ts"].as_f64(), Some(-150.0));
    }
}
