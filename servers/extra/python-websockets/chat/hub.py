"""hub.py owns the open connections, the joined members and every broadcast; and Member,
one connection's protocol state and its bounded outbound queue."""

import asyncio
from collections import deque
from typing import Deque, NamedTuple, Optional, Set

from . import protocol
from .limiter import Limiter
from .stats import Stats

QUEUE_SIZE = 256  # messages a connection may have queued before further ones are dropped
CLOSE_NORMAL = 1000  # after a leave
CLOSE_GOING_AWAY = 1001  # on shutdown

FRESH, JOINED, LEFT = "fresh", "joined", "left"


class Outbound(NamedTuple):
    """One serialized message, shared by every recipient's queue."""

    data: bytes
    chat: bool  # counted in deliveries once written


class Hub:
    def __init__(self, stats: Stats) -> None:
        self.stats = stats
        self.clients: Set["Member"] = set()  # every open connection, so shutdown reaches all
        self.members: Set["Member"] = set()  # the joined ones, who receive broadcasts
        self.closed = False  # set by shutdown; later connections are refused

    def register(self, member: "Member") -> bool:
        """Adds an open connection; False once the hub is shutting down."""
        if self.closed:
            return False
        self.clients.add(member)
        return True

    def unregister(self, member: "Member") -> None:
        """Takes a closed connection out, broadcasting its leave if it was a member."""
        self.leave(member)
        self.clients.discard(member)

    def join(self, member: "Member") -> None:
        self.members.add(member)
        self.fan_out(Outbound(protocol.encode_join(member.user, len(self.members)), False))
        self.stats.joins += 1

    def leave(self, member: "Member") -> None:
        if member not in self.members:
            return
        self.members.discard(member)
        self.fan_out(Outbound(protocol.encode_leave(member.user, len(self.members)), False))

    def chat(self, sender: "Member", text: str, ts) -> None:
        self.fan_out(Outbound(protocol.encode_chat(sender.user, text, ts), True), skip=sender)

    def fan_out(self, out: Outbound, skip: Optional["Member"] = None) -> None:
        """Hands one serialized message to every member but `skip`, never waiting on any."""
        for member in self.members:
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
        self.state = FRESH
        self.user = ""
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
            if self.state == FRESH:
                self.user = msg.user
                self.state = JOINED
                self.hub.join(self)
        elif self.state != JOINED:  # chat or leave before join
            stats.malformed += 1
        elif msg.kind == "chat":
            stats.chat_in += 1
            if not self.limiter.allow():
                stats.dropped_ratelimit += 1
                return
            stats.chat_accepted += 1
            self.hub.chat(self, msg.text, msg.ts)
        else:  # leave
            self.state = LEFT
            self.hub.leave(self)
            self.close(CLOSE_NORMAL)
