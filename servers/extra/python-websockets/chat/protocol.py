"""protocol.py owns the wire format of docs/protocol.md: the messages a client may send,
how they are validated, and the broadcasts the hub serializes once."""

import json
from dataclasses import dataclass
from typing import Optional, Union

MAX_NAME_CHARS = 64  # a room or a user name: 1 to 64 Unicode scalar values

Number = Union[int, float]


@dataclass(frozen=True)
class Inbound:
    """One client message that passed validation."""

    kind: str  # "join", "chat", "ping" or "leave"
    room: Optional[str] = None  # join and chat; leave when it names one
    user: str = ""  # join only
    text: str = ""  # chat only
    ts: Optional[Number] = None  # chat and ping; None when absent


def _no_constants(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _valid_name(value: object) -> bool:
    """A room or user name: a string of 1 to 64 characters (Python counts code points)."""
    return isinstance(value, str) and 0 < len(value) <= MAX_NAME_CHARS


def parse_inbound(text: str) -> Optional[Inbound]:
    """Validates one text frame; None is invalid input (ignored, counted in malformed).
    Whether the sender is in the room is the member's business, not the parser's."""
    try:
        m = json.loads(text, parse_constant=_no_constants)
    except ValueError:  # malformed JSON, NaN, Infinity, or a lone surrogate
        return None
    if not isinstance(m, dict) or not isinstance(m.get("type"), str):
        return None
    if "ts" in m and not _is_number(m["ts"]):
        return None
    for field in ("room", "user", "text"):
        if field in m and not isinstance(m[field], str):
            return None
    kind = m["type"]
    room = m.get("room")
    if "room" in m and not _valid_name(room):
        return None
    if kind == "join":
        if room is None or not _valid_name(m.get("user")):
            return None
        return Inbound("join", room=room, user=m["user"])
    if kind == "chat":
        if room is None or "text" not in m:
            return None
        return Inbound("chat", room=room, text=m["text"], ts=m.get("ts"))
    if kind == "ping":
        return Inbound("ping", ts=m.get("ts"))
    if kind == "leave":
        return Inbound("leave", room=room)
    return None


def _encode(fields: dict) -> bytes:
    # UTF-8 as received; a lone surrogate (JSON allows "\ud800") cannot be UTF-8, so such a
    # message goes out with its non-ASCII characters escaped instead.
    try:
        return json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(fields, separators=(",", ":")).encode("ascii")


def encode_join(room: str, user: str, online: int) -> bytes:
    return _encode({"type": "join", "room": room, "user": user, "online": online})


def encode_leave(room: str, user: str, online: int) -> bytes:
    return _encode({"type": "leave", "room": room, "user": user, "online": online})


def encode_chat(room: str, user: str, text: str, ts: Optional[Number]) -> bytes:
    """A chat without ts is broadcast without ts."""
    fields = {"type": "chat", "room": room, "user": user, "text": text}
    if ts is not None:
        fields["ts"] = ts
    return _encode(fields)


def encode_pong(ts: Optional[Number]) -> bytes:
    return _encode({"type": "pong"} if ts is None else {"type": "pong", "ts": ts})
