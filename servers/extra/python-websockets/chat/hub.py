"""hub.py owns the open connections, the rooms and their members, and every broadcast; and
Member, one connection's protocol state (its name, its rooms) and its bounded outbound queue."""

import asyncio
from collections import deque
from typing import Deque, Dict, NamedTuple, Optional, Set

from . import protocol
from .limiter import Limiter
from .stats import Stats

QUEUE_SIZE = 256  # messages a connection may have queued before further ones are dropped
MAX_ROOMS = 16  # rooms one connection may be in at once; a join to one more is malformed
CLOSE_NORMAL = 1000  # after a leave without room
CLOSE_GOING_AWAY = 1001  # on shutdown


class Outbound(NamedTuple):
    """One serialized message, shared by every recipient's queue."""

    data: bytes
    chat: bool  # counted in deliveries once written


class Hub:
    def __init__(self, stats: Stats) -> None:
        self.stats = stats
        self.clients: Set["Member"] = set()  # every open connection, so shutdown reaches all
        # room name -> its members; an emptied room is deleted
        self.rooms: Dict[str, Set["Member"]] = {}
        self.closed = False  # set by shutdown; later connections are refused

    def register(self, member: "Member") -> bool:
        """Adds an open connection; False once the hub is shutting down."""
        if self.closed:
            return False
        self.clients.add(member)
        return True

    def unregister(self, member: "Member") -> None:
        """Takes a closed connection out, broadcasting its leave in every room it was in."""
        self.leave_all(member)
        self.clients.discard(member)

    def join(self, member: "Member", room: str) -> None:
        members = self.rooms.setdefault(room, set())
        members.add(member)
        member.rooms.add(room)
        self.fan_out(members, Outbound(protocol.encode_join(room, member.user, len(members)), False))
        self.stats.joins += 1

    def leave(self, member: "Member", room: str) -> None:
        """Takes `member` out of `room`, telling the room's remaining members."""
        member.rooms.discard(room)
        members = self.rooms.get(room)
        if members is None or member not in members:
            return
        members.discard(member)
        if not members:
            del self.rooms[room]
        self.fan_out(members, Outbound(protocol.encode_leave(room, member.user, len(members)), False))

    def leave_all(self, member: "Member") -> None:
        for room in list(member.rooms):
            self.leave(member, room)

    def chat(self, sender: "Member", room: str, text: str, ts) -> None:
        members = self.rooms.get(room, ())
        self.fan_out(members, Outbound(protocol.encode_chat(room, sender.user, text, ts), True), skip=sender)

    def fan_out(self, members, out: Outbound, skip: Optional["Member"] = None) -> None:
        """Hands one serialized message to every member of a room but `skip`, never waiting on any."""
        for member in members:
            if member is not skip and not member.offer(out):
                self.stats.dropped_slow += 1

    def shutdown(self, code: int = CLOSE_GOING_AWAY) -> None:
        """Refuses new connections and closes every open one with `code`."""
        self.closed = True
        for member in list(self.clients):
            member.close(code)


class Member:
    """One connection's protocol state and its queue; the client's writer drains the queue
    and closes the socket once `close_code` is set."""

    def __init__(self, hub: Hub, limiter: Optional[Limiter] = None) -> None:
        self.hub = hub
        self.limiter = limiter or Limiter()
        self.user = ""  # set by the first successful join, kept for life
        self.rooms: Set[str] = set()  # the rooms it is in: it receives their broadcasts
        self.queue: Deque[Outbound] = deque()
        self.wake = asyncio.Event()
        self.close_code: Optional[int] = None

    def offer(self, out: Outbound) -> bool:
        """Queues one message unless 256 are waiting; False means dropped."""
        if self.close_code is not None or len(self.queue) >= QUEUE_SIZE:
            return False
        self.queue.append(out)
        self.wake.set()
        return True

    def close(self, code: int) -> None:
        if self.close_code is None:
            self.close_code = code
            self.wake.set()

    def handle(self, text: str) -> None:
        """Applies one text frame's message."""
        stats = self.hub.stats
        msg = protocol.parse_inbound(text)
        if msg is None:
            stats.malformed += 1
        elif msg.kind == "ping":
            if not self.offer(Outbound(protocol.encode_pong(msg.ts), False)):
                stats.dropped_slow += 1
        elif msg.kind == "join":
            if msg.room in self.rooms:  # a second join to a room: ignored
                return
            if len(self.rooms) >= MAX_ROOMS:
                stats.malformed += 1
                return
            self.user = self.user or msg.user
            self.hub.join(self, msg.room)
        elif msg.kind == "chat":
            if msg.room not in self.rooms:  # a room it is not in (before any join, too)
                stats.malformed += 1
                return
            stats.chat_in += 1
            if not self.limiter.allow():
                stats.dropped_ratelimit += 1
                return
            stats.chat_accepted += 1
            self.hub.chat(self, msg.room, msg.text, msg.ts)
        elif msg.room is not None:  # leave that room only; the connection stays open
            if msg.room not in self.rooms:
                stats.malformed += 1
                return
            self.hub.leave(self, msg.room)
        elif not self.rooms:  # leave without room before any join
            stats.malformed += 1
        else:  # leave every room, and close
            self.hub.leave_all(self)
            self.close(CLOSE_NORMAL)
