"""limiter.py owns the token bucket of docs/protocol.md: capacity 10, refilled at 10
tokens/s, full when the connection opens."""

import time
from typing import Callable

CAPACITY = 10
REFILL_PER_SECOND = 10


class Limiter:
    """One connection's bucket; `now` (seconds) is injectable so tests need no sleeping."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._tokens = float(CAPACITY)
        self._last = now()

    def allow(self) -> bool:
        """Takes a token if there is one."""
        now = self._now()
        elapsed = now - self._last
        if elapsed > 0:
            self._tokens = min(CAPACITY, self._tokens + elapsed * REFILL_PER_SECOND)
            self._last = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True
