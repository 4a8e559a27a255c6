"""Per-client quotas: how many heavy requests one client may have running at once, and how fast one
client may add rows to the store. Who a client is: clients.client_of (the peer address, or the address a
trusted reverse proxy forwards: docs/security.md)."""
from __future__ import annotations

import math
import time
from collections import defaultdict
from contextlib import contextmanager

from .clients import client_of  # noqa: F401 - the routers import it from here
from .errors import ApiError


class ConcurrencyLimit:
    """At most `limit` requests of one client inside `hold(client)` at once; more are 429."""

    def __init__(self, limit: int, what: str):
        self.limit, self.what = limit, what
        self._running: dict[str, int] = defaultdict(int)

    @contextmanager
    def hold(self, client: str):
        if self.limit and self._running[client] >= self.limit:
            raise ApiError(429, "busy", f"you already have {self._running[client]} {self.what} running (the limit "
                                        f"per client is {self.limit}); wait for one to finish",
                           headers={"Retry-After": "2"})
        self._running[client] += 1
        try:
            yield
        finally:
            self._running[client] -= 1
            if not self._running[client]:
                del self._running[client]


class RateLimit:
    """A token bucket per client: `per_minute` tokens a minute, bursts of up to `per_minute`."""

    def __init__(self, per_minute: int, what: str, clock=time.monotonic):
        self.per_minute, self.what, self.clock = per_minute, what, clock
        self._buckets: dict[str, tuple[float, float]] = {}   # client -> (tokens, when)

    def take(self, client: str) -> None:
        if not self.per_minute:
            return
        now = self.clock()
        tokens, when = self._buckets.get(client, (float(self.per_minute), now))
        tokens = min(float(self.per_minute), tokens + (now - when) * self.per_minute / 60)
        if tokens < 1:
            wait = math.ceil((1 - tokens) * 60 / self.per_minute)
            self._buckets[client] = (tokens, now)
            raise ApiError(429, "rate_limit", f"too many {self.what} from your address (the limit is "
                                              f"{self.per_minute} a minute); try again in {wait} s",
                           headers={"Retry-After": str(wait)})
        self._buckets[client] = (tokens - 1, now)
        if len(self._buckets) > 10_000:   # forget clients whose bucket is full again
            full = [c for c, (t, w) in self._buckets.items() if t + (now - w) * self.per_minute / 60 >= self.per_minute]
            for c in full:
                del self._buckets[c]
