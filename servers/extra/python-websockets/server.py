"""server.py owns the process: flags, routes, and the shutdown docs/protocol.md asks for
(stop accepting, close clients with 1001, print the final stats as the last line of
stdout, exit 0 within 2 s)."""

import argparse
import asyncio
import logging
import os
import signal
import sys

# The pinned websockets (requirements.txt), installed into vendor/ by
# `pip install --target vendor`: the same folder locally and in the image.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor"))

from websockets.asyncio.server import serve  # noqa: E402
from websockets.datastructures import Headers  # noqa: E402
from websockets.http11 import Response  # noqa: E402

from chat import client  # noqa: E402
from chat.hub import CLOSE_GOING_AWAY, Hub  # noqa: E402
from chat.stats import Stats  # noqa: E402

SERVER_TAG = "wscx-python-websockets"  # the image tag, reported as "server" in /stats
CONN_SHUTDOWN_WAIT_S = 1.2  # how long shutdown waits for the clients' close answers

log = logging.getLogger(SERVER_TAG)


def parse_flags(argv):
    parser = argparse.ArgumentParser(description="The wscbench chat server on websockets")
    parser.add_argument("--host", default="0.0.0.0", help="address to bind")
    parser.add_argument("--port", type=int, default=8080, help="port to bind")
    parser.add_argument(
        "--duration", type=float, default=0, help="stop after this many seconds; 0 runs until signalled"
    )
    return parser.parse_args(argv)


def routes(hub: Hub):
    """process_request: /health and /stats answer, /ws goes on to the upgrade, else 404."""

    def process_request(connection, request):
        path = request.path.split("?", 1)[0]
        if path == "/ws":
            return None
        if path == "/health":
            return connection.respond(200, "ok")
        if path == "/stats":
            body = hub.stats.json().encode()
            headers = Headers([("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return Response(200, "OK", headers, body)
        return connection.respond(404, "not found")

    return process_request


async def start(hub: Hub, host: str, port: int):
    """The listening server, with the protocol's limits."""
    return await serve(
        lambda ws: client.serve_ws(hub, ws),
        host,
        port,
        process_request=routes(hub),
        compression=None,
        max_size=client.MAX_MESSAGE_BYTES,
        ping_interval=client.PING_INTERVAL_S,
        ping_timeout=client.PING_TIMEOUT_S,
        close_timeout=client.CLOSE_TIMEOUT_S,
        open_timeout=10,
        server_header=None,
    )


async def main(argv) -> None:
    flags = parse_flags(argv)
    stats = Stats(SERVER_TAG)
    hub = Hub(stats)
    server = await start(hub, flags.host, flags.port)
    log.info("listening on %s:%d", flags.host, flags.port)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if flags.duration > 0:
        loop.call_later(flags.duration, stop.set)
    await stop.wait()

    hub.shutdown(CLOSE_GOING_AWAY)
    server.close(close_connections=True, code=CLOSE_GOING_AWAY)
    try:
        await asyncio.wait_for(server.wait_closed(), CONN_SHUTDOWN_WAIT_S)
    except asyncio.TimeoutError:
        log.info("shutdown: clients still open after %.1f s", CONN_SHUTDOWN_WAIT_S)
    sys.stdout.write(stats.json() + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(name)s %(message)s")
    logging.getLogger("websockets").setLevel(logging.CRITICAL)
    asyncio.run(main(sys.argv[1:]))
