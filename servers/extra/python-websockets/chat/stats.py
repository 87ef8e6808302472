"""stats.py owns the cumulative counters of docs/protocol.md's /stats and their JSON.
asyncio runs the server on one thread, so plain integers are the atomics here."""

import json
import time

COUNTERS = (
    "connections_current",
    "connections_total",
    "joins",
    "frames_in",
    "chat_in",
    "chat_accepted",
    "deliveries",
    "dropped_ratelimit",
    "dropped_slow",
    "malformed",
)


class Stats:
    def __init__(self, server: str) -> None:
        self.server = server
        self.started = time.monotonic()
        for name in COUNTERS:
            setattr(self, name, 0)

    def json(self) -> str:
        """The /stats object, in the protocol's field order."""
        fields = {
            "server": self.server,
            "uptime_ms": int((time.monotonic() - self.started) * 1000),
        }
        fields.update((name, getattr(self, name)) for name in COUNTERS)
        return json.dumps(fields, separators=(",", ":"))
