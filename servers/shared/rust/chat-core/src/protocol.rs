//! The chat protocol of docs/protocol.md: parsing and validating what a client
//! sends, and serializing what the server broadcasts.
//!
//! `text` and `ts` are kept as the exact JSON text the client sent (serde_json's
//! `RawValue`), so a broadcast echoes them unchanged and never re-formats a
//! number: `1732233445566.25` comes back as `1732233445566.25`.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// The one room.
pub const ROOM: &str = "public";
/// The longest `user`, in Unicode scalar values.
pub const MAX_USER_CHARS: usize = 64;

/// A valid message from a client. Anything else is malformed.
#[derive(Debug, PartialEq)]
pub enum Inbound<'a> {
    /// `user` is already JSON-encoded, ready to be pasted into broadcasts.
    Join {
        user: String,
    },
    /// `text` is a JSON string literal and `ts` a JSON number, both as sent.
    Chat {
        text: &'a str,
        ts: Option<&'a str>,
    },
    Ping {
        ts: Option<&'a str>,
    },
    Leave,
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
    let in_room = room.as_deref() == Some(ROOM);
    match &*kind {
        "join" if in_room => {
            let user = user?;
            let chars = user.chars().count();
            if chars == 0 || chars > MAX_USER_CHARS {
                return None;
            }
            Some(Inbound::Join {
                user: serde_json::to_string(&*user).ok()?,
            })
        }
        "chat" if in_room => Some(Inbound::Chat { text: text?, ts }),
        "ping" => Some(Inbound::Ping { ts }),
        "leave" => Some(Inbound::Leave),
        _ => None,
    }
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

/// `{"type":"join",...}` for every member, the joiner included.
pub fn join(user: &str, online: usize) -> String {
    format!(r#"{{"type":"join","room":"public","user":{user},"online":{online}}}"#)
}

/// `{"type":"leave",...}` for the remaining members.
pub fn leave(user: &str, online: usize) -> String {
    format!(r#"{{"type":"leave","room":"public","user":{user},"online":{online}}}"#)
}

/// `{"type":"chat",...}` for every member but the sender.
pub fn chat(user: &str, text: &str, ts: Option<&str>) -> String {
    match ts {
        Some(ts) => {
            format!(r#"{{"type":"chat","room":"public","user":{user},"text":{text},"ts":{ts}}}"#)
        }
        None => format!(r#"{{"type":"chat","room":"public","user":{user},"text":{text}}}"#),
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

    fn join_of(user: &str) -> Option<Inbound<'static>> {
        Some(Inbound::Join {
            user: user.to_owned(),
        })
    }

    #[test]
    fn parses_each_message_type() {
        assert_eq!(
            parse(r#"{"type":"join","room":"public","user":"alice"}"#),
            join_of(r#""alice""#)
        );
        assert_eq!(
            parse(r#"{"type":"chat","room":"public","text":"hi","ts":1732233445566.25}"#),
            Some(Inbound::Chat {
                text: r#""hi""#,
                ts: Some("1732233445566.25")
            })
        );
        assert_eq!(
            parse(r#"{"type":"chat","room":"public","text":"hi"}"#),
            Some(Inbound::Chat {
                text: r#""hi""#,
                ts: None
            })
        );
        assert_eq!(
            parse(r#"{"type":"ping","ts":17}"#),
            Some(Inbound::Ping { ts: Some("17") })
        );
        assert_eq!(
            parse(r#"{"type":"ping"}"#),
            Some(Inbound::Ping { ts: None })
        );
        assert_eq!(parse(r#"{"type":"leave"}"#), Some(Inbound::Leave));
    }

    #[test]
    fn keeps_number_text_exactly() {
        for ts in ["1e3", "-0.000", "12345678901234567890123", "1.50"] {
            let frame = format!(r#"{{"type":"ping","ts":{ts}}}"#);
            assert_eq!(parse(&frame), Some(Inbound::Ping { ts: Some(ts) }));
        }
        let frame = r#"{ "ts" : 1.0 , "type" : "chat", "room":"public", "text" : "a\"b" }"#;
        assert_eq!(
            parse(frame),
            Some(Inbound::Chat {
                text: r#""a\"b""#,
                ts: Some("1.0")
            })
        );
    }

    #[test]
    fn decodes_escaped_strings() {
        assert_eq!(
            parse(r#"{"type":"j\u006fin","room":"pub\u006cic","user":"\u00e9"}"#),
            join_of(r#""é""#)
        );
        assert_eq!(
            parse(r#"{"type":"join","room":"public","user":"a\"b"}"#),
            join_of(r#""a\"b""#)
        );
    }

    #[test]
    fn user_length_counts_unicode_scalar_values() {
        let longest = "é".repeat(MAX_USER_CHARS);
        let frame = format!(r#"{{"type":"join","room":"public","user":"{longest}"}}"#);
        assert_eq!(parse(&frame), join_of(&format!(r#""{longest}""#)));
        let too_long = "a".repeat(MAX_USER_CHARS + 1);
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
            r#"{"type":"join","room":"lobby","user":"alice"}"#,
            r#"{"type":"join","user":"alice"}"#,
            r#"{"type":"chat","room":"public"}"#,
            r#"{"type":"chat","room":"public","text":5}"#,
            r#"{"type":"chat","room":"public","text":null}"#,
            r#"{"type":"chat","room":"lobby","text":"hi"}"#,
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
            Some(Inbound::Leave)
        );
    }

    #[test]
    fn serializes_broadcasts() {
        assert_eq!(
            join(r#""alice""#, 3),
            r#"{"type":"join","room":"public","user":"alice","online":3}"#
        );
        assert_eq!(
            leave(r#""alice""#, 2),
            r#"{"type":"leave","room":"public","user":"alice","online":2}"#
        );
        assert_eq!(
            chat(r#""alice""#, r#""hello""#, Some("1732233445566.25")),
            r#"{"type":"chat","room":"public","user":"alice","text":"hello","ts":1732233445566.25}"#
        );
        assert_eq!(
            chat(r#""alice""#, r#""hello""#, None),
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
        let Some(Inbound::Join { user }) =
            parse(r#"{"type":"join","room":"public","user":"\"q\"\n"}"#)
        else {
            panic!("join expected");
        };
        let Some(Inbound::Chat { text, ts }) =
            parse(r#"{"type":"chat","room":"public","text":"x\u0000y","ts":-1.5e2}"#)
        else {
            panic!("chat expected");
        };
        let value: serde_json::Value = serde_json::from_str(&chat(&user, text, ts)).unwrap();
        assert_eq!(value["user"], "\"q\"\n");
        assert_eq!(value["text"], "x\u{0}y");
        assert_eq!(value["ts"].as_f64(), Some(-150.0));
    }
}
