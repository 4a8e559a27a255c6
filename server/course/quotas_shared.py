"""Per-client write buckets shared by replicas through Redis (`rasplay serve --redis redis://...`), so that
adding a replica does not multiply a client's allowance: the same token bucket as quotas.RateLimit, kept
in one Redis hash per client and limit, updated atomically by a Lua script on Redis's own clock.

While Redis is unreachable each replica falls back to its own in-memory bucket (a client may then get up
to one allowance per replica), tries Redis again after `retry_seconds`, and logs the change both ways;
a request never fails or waits long because of Redis (it is asked with a timeout of `timeout_seconds`).
Only this module imports the `redis` client (the `course` extra)."""
from __future__ import annotations

import logging
import math
import re
import time

from ..errors import ApiError
from ..quotas import RateLimit

log = logging.getLogger("rasplay.quotas")

# KEYS[1]: the bucket; ARGV[1]: tokens a minute. Returns {1 if a token was taken else 0, tokens left}.
_TAKE = """
local rate = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local b = redis.call('HMGET', KEYS[1], 'tokens', 'when')
local tokens = tonumber(b[1]) or rate
local when = tonumber(b[2]) or now
tokens = math.min(rate, tokens + math.max(0, now - when) * rate / 60)
local took = 0
if tokens >= 1 then tokens = tokens - 1; took = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'when', tostring(now))
redis.call('EXPIRE', KEYS[1], 61)
return {took, tostring(tokens)}
"""


class RedisRateLimit(RateLimit):
    def __init__(self, url: str, per_minute: int, what: str, timeout_seconds: float = 0.2,
                 retry_seconds: float = 5.0, clock=time.monotonic):
        super().__init__(per_minute, what, clock)
        import redis

        self._redis = redis.Redis.from_url(url, socket_timeout=timeout_seconds,
                                           socket_connect_timeout=timeout_seconds)
        self._errors = (redis.RedisError, OSError)
        self._script = self._redis.register_script(_TAKE)
        self._prefix = "rasplay:bucket:" + re.sub(r"[^a-z]+", "-", what.lower()) + ":"
        self.retry_seconds = retry_seconds
        self._down_until = 0.0

    def take(self, client: str) -> None:
        if not self.per_minute:
            return
        now = self.clock()
        if now >= self._down_until:
            try:
                took, tokens = self._script(keys=[self._prefix + client], args=[self.per_minute])
            except self._errors as e:
                if not self._down_until:
                    log.warning("Redis is unreachable (%s): each replica limits %s on its own until it is back",
                                e, self.what)
                self._down_until = now + self.retry_seconds
            else:
                if self._down_until:
                    log.warning("Redis is back: %s are limited across replicas again", self.what)
                    self._down_until = 0.0
                if int(took):
                    return
                wait = max(1, math.ceil((1 - float(tokens)) * 60 / self.per_minute))
                raise ApiError(429, "rate_limit", f"too many {self.what} from your address (the limit is "
                                                  f"{self.per_minute} a minute); try again in {wait} s",
                               headers={"Retry-After": str(wait)})
        super().take(client)


def rate_limit(redis_url: str | None, per_minute: int, what: str) -> RateLimit:
    """A per-client token bucket: shared through Redis when a URL is given, else in this process."""
    return RedisRateLimit(redis_url, per_minute, what) if redis_url else RateLimit(per_minute, what)
