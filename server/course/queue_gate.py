"""Fail fast while the job queue's Redis does not answer (replicas with `--broker`).

A Redis that froze (its process stopped, its host gone without a word) keeps connections open and answers
nothing: every request that needs it would wait out its socket timeout, one after another. The gate asks
Redis first (a PING with a short timeout, at most once per `fresh_seconds` while it answers); once a call
timed out, for the next `retry_seconds` every request that needs the queue is answered 503 `unavailable`
at once, with the reason, as the PostgreSQL store does (store_postgres.py); a refused connection (Redis
stopped or restarting) is a 503 too, and the next request asks again. Redis answering again opens the
gate by itself: the first request after `retry_seconds` asks it again.

Redis back after a restart: the connections its users (the job board, the results' reader) keep in their
pools were closed by the old Redis, and a command sent on one fails ("Connection closed by server"; redis-py
retries nothing by default, and a command must not be retried blindly: a Lua script may have run). So
when the gate sees Redis answer again after it failed, or its own connection was dropped, it closes the
idle connections of the pools it watches (`watch`) before the request goes on: the first request after
Redis is back is served on fresh connections.
"""
from __future__ import annotations

import time


def unavailable(reason: str, retry_after: int = 10):
    from ..errors import ApiError

    return ApiError(503, "unavailable", f"the job queue is unreachable ({reason}); try again in a moment",
                    headers={"Retry-After": str(retry_after)})


class QueueGate:
    def __init__(self, url: str, probe_seconds: float = 1.0, retry_seconds: float = 2.0, fresh_seconds: float = 0.5,
                 clock=time.monotonic):
        import redis.asyncio as aioredis
        from redis import RedisError

        self.redis = aioredis.Redis.from_url(url, socket_connect_timeout=probe_seconds, socket_timeout=probe_seconds)
        self.errors = (RedisError, OSError)
        self.probe_seconds, self.retry_seconds, self.fresh_seconds = probe_seconds, retry_seconds, fresh_seconds
        self.clock = clock
        self._answered = float("-inf")   # when Redis last answered
        self._down_until = float("-inf")
        self._down_reason = ""
        self._closed = False
        self._lost = False   # a call failed or a connection was dropped since Redis last answered
        self._watched = []   # other clients of this Redis whose idle connections a restart leaves dead

    def watch(self, client) -> None:
        """Close `client`'s idle connections whenever Redis answers again after a failure (a restart)."""
        self._watched.append(client)

    def failed(self, e: Exception) -> None:
        """A call to the queue's Redis failed. A timeout (Redis frozen, its host gone): the next
        `retry_seconds` fail at once. A refusal (Redis stopped or restarting) cost no time: the next
        request asks again, so that a Redis back is used at once."""
        self._down_reason = describe(e)
        self._answered = float("-inf")
        self._lost = True
        if timed_out(e):
            self._down_until = self.clock() + self.retry_seconds

    def answered(self) -> None:
        self._answered = self.clock()

    async def check(self) -> None:
        """Return when Redis answers (asked at most once per `fresh_seconds`); raise the 503 otherwise."""
        now = self.clock()
        if now < self._down_until:
            raise unavailable(f"{self._down_reason}; asked again in at most {self.retry_seconds:g} s",
                              retry_after=max(1, round(self.retry_seconds)))
        if now - self._answered < self.fresh_seconds:
            return
        try:
            await self._ping()
        except self.errors as e:
            self.failed(e)
            raise unavailable(self._down_reason) from None
        if self._lost:
            await self._renew()
        self.answered()

    async def _renew(self) -> None:
        """Redis answers again: the watched clients' idle connections (to the Redis before) are closed, so
        that their next commands connect anew (connections in use fail on their own, as their users expect)."""
        self._lost = False
        for client in self._watched:
            try:
                await client.connection_pool.disconnect(inuse_connections=False)
            except self.errors:
                pass   # (closing a connection already broken)

    async def _ping(self) -> None:
        """PING; a connection Redis dropped (it restarted) is replaced once, on a new connection."""
        try:
            await self.redis.ping()
        except self.errors as e:
            if timed_out(e):
                raise
            self._lost = True   # dropped: Redis restarted (or closed it); the watched pools' are stale too
            await self.redis.ping()

    async def close(self) -> None:
        """(Once, however many users of the gate close it.)"""
        if not self._closed:
            self._closed = True
            await self.redis.aclose()


def timed_out(e: Exception) -> bool:
    from redis.exceptions import TimeoutError as RedisTimeout

    return isinstance(e, (RedisTimeout, TimeoutError))


def describe(e: Exception) -> str:
    """Why a call to Redis failed, in words (no URL: it may hold a password)."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeout

    if isinstance(e, (RedisTimeout, TimeoutError)):
        return "its Redis does not answer in time"
    if isinstance(e, (RedisConnectionError, OSError)):
        return f"its Redis refuses or dropped the connection ({type(e).__name__})"
    return f"its Redis failed ({type(e).__name__})"
