"""client.py owns one connection: its reader (the size limit and the rules of
docs/protocol.md; websockets applies the read deadline through its keepalive) and its
writer, the only code that writes messages to the socket."""

import asyncio

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from .hub import Hub, Member

MAX_MESSAGE_BYTES = 4096  # websockets closes a larger message with 1009
PING_INTERVAL_S = 30  # a ping every 30 s ...
PING_TIMEOUT_S = 30  # ... and no pong 30 s later closes: silent for 60 s at most
CLOSE_TIMEOUT_S = 0.5  # how long a close frame waits for the peer's answer
# A reader whose messages are already buffered never waits, so it yields to the event loop
# every this many messages: a flooding client cannot starve the other connections.
YIELD_EVERY = 16


async def write_pump(ws: ServerConnection, member: Member) -> None:
    """Drains the member's queue, then closes with its close code once one is set."""
    stats = member.hub.stats
    queue = member.queue
    while True:
        await member.wake.wait()
        member.wake.clear()
        while queue:
            out = queue.popleft()
            await ws.send(out.data, text=True)  # the shared bytes, as a text frame
            if out.chat:
                stats.deliveries += 1
        if member.close_code is not None:
            await ws.close(member.close_code)
            return


async def serve_ws(hub: Hub, ws: ServerConnection) -> None:
    """Serves one upgraded connection until it closes (the reader)."""
    stats = hub.stats
    member = Member(hub)
    if not hub.register(member):
        await ws.close(1001)
        return
    stats.connections_current += 1
    stats.connections_total += 1
    writer = asyncio.create_task(write_pump(ws, member))
    read = 0
    try:
        async for message in ws:
            stats.frames_in += 1
            read += 1
            if read % YIELD_EVERY == 0:
                await asyncio.sleep(0)
            if isinstance(message, bytes):
                stats.malformed += 1
            else:
                member.handle(message)
            if writer.done():
                break
    except ConnectionClosed:
        pass
    finally:
        writer.cancel()
        member.close_code = member.close_code or 1000
        stats.connections_current -= 1
        hub.unregister(member)
