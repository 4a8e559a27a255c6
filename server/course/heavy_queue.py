"""Compiler work (compile, run, soft study, weights) sent to `rasplay worker` through Celery, for replicas
started with `--broker`: the interface of process_pool.WorkerPool (`run`, `stats`, ...), so the routes do not
change. A request waits at most `queue_timeout` for a worker to start it (Celery's `expires`; then
PoolBusy, a 503), then at most its time limit (which the worker's own pool enforces) and a margin. While
the queue's Redis does not answer, a request is answered 503 `unavailable` at once (queue_gate.QueueGate),
and the requests waiting for results are answered so within READ_SECONDS.

Results come from Celery's Redis result backend: one reader per replica polls the keys of every request
waiting (one MGET per interval, however many wait), since Celery's own result reader blocks a thread per
request and is not safe across threads."""
from __future__ import annotations

import asyncio
import base64
import json
import time

from .celery_base import HEAVY_QUEUE, HEAVY_TASK, RESULT_PREFIX, make_app
from .queue_gate import QueueGate, describe, unavailable
from ..process_pool import EvaluationTimeout, MemoryLimit, PoolBusy, ReplyTooLarge, WorkerFailed

POLL_SECONDS = 0.02
MARGIN_SECONDS = 5.0
SEND_SECONDS = 3.0    # a task not handed to Redis by then: 503 (the gate's PING answered, then Redis froze)
READ_SECONDS = 2.0    # the results' reader: a Redis silent this long fails the requests waiting (503)


class RemotePool:
    def __init__(self, url: str, timeout: float, queue_timeout: float, gate: QueueGate | None = None):
        import redis.asyncio as aioredis
        from redis import RedisError

        self.timeout, self.queue_timeout = timeout, queue_timeout
        self.celery = make_app(url, results=False)
        self.redis = aioredis.Redis.from_url(url, socket_connect_timeout=READ_SECONDS, socket_timeout=READ_SECONDS)
        self.errors = (RedisError, OSError)
        self.gate = gate or QueueGate(url)
        self.gate.watch(self.redis)   # the results' reader: its connections renewed when Redis is back
        self._waiting: dict[str, asyncio.Future] = {}
        self._reader: asyncio.Task | None = None
        self.size = 0
        self.done = {"ok": 0, "busy": 0, "failed": 0}

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        await self.redis.aclose()
        await self.gate.close()

    async def run(self, kind: str, payload: dict, timeout: float | None = None, message: bytes | None = None,
                  client: str = "") -> bytes:
        from celery.utils import uuid

        limit = timeout or self.timeout
        task_id = uuid()
        future = asyncio.get_running_loop().create_future()
        self._waiting[task_id] = future
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read())
        try:
            await self.gate.check()   # a Redis that does not answer: 503 now, not after the request's wait
            send = asyncio.get_running_loop().run_in_executor(
                None, lambda: self.celery.send_task(HEAVY_TASK, args=[kind, payload, limit, client], task_id=task_id,
                                                    queue=HEAVY_QUEUE, expires=self.queue_timeout))
            try:
                await asyncio.wait_for(send, SEND_SECONDS)
            except Exception as e:   # the broker is unreachable, or froze since the gate asked it
                self.gate.failed(e)
                raise unavailable(describe(e)) from None
            meta = await self._wait(task_id, future, limit)
        finally:
            self._waiting.pop(task_id, None)
        try:   # read once: not kept for its expiry (a model's weights can be megabytes)
            await self.redis.delete(RESULT_PREFIX + task_id)
        except self.errors:
            pass
        return self._unpack(meta)

    async def _wait(self, task_id: str, future: asyncio.Future, limit: float) -> dict:
        """The task's final state; PoolBusy when no worker started it in time, or it never finished."""
        deadline = time.monotonic() + self.queue_timeout + MARGIN_SECONDS
        started = False
        while True:
            try:
                meta = await asyncio.wait_for(asyncio.shield(future), max(0.01, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                self.done["busy"] += 1
                raise PoolBusy() from None
            if meta.get("status") != "STARTED":
                return meta
            if not started:   # a worker took it: its own pool's time limit runs from now
                started = True
                deadline = time.monotonic() + limit + MARGIN_SECONDS
            future = asyncio.get_running_loop().create_future()
            self._waiting[task_id] = future

    async def _read(self) -> None:
        """Resolve the requests waiting from their keys in the result backend, until none waits."""
        seen: dict[str, str] = {}
        while self._waiting:
            ids = list(self._waiting)
            try:
                values = await self.redis.mget([RESULT_PREFIX + i for i in ids])
            except self.errors as e:   # Redis is away: the requests waiting are answered 503 now
                self.gate.failed(e)
                for task_id in ids:
                    future = self._waiting.get(task_id)
                    if future is not None and not future.done():
                        future.set_exception(unavailable(describe(e)))
                await asyncio.sleep(0.05)
                continue
            self.gate.answered()
            for task_id, raw in zip(ids, values):
                if raw is None:
                    continue
                meta = json.loads(raw)
                status = meta.get("status")
                future = self._waiting.get(task_id)
                if future is None or future.done() or seen.get(task_id) == status:
                    continue
                seen[task_id] = status
                future.set_result(meta)
            for gone in set(seen) - set(self._waiting):
                del seen[gone]
            await asyncio.sleep(POLL_SECONDS)

    def _unpack(self, meta: dict) -> bytes:
        status, result = meta.get("status"), meta.get("result")
        if status == "REVOKED":    # expired: no worker started it within the queue wait
            self.done["busy"] += 1
            raise PoolBusy()
        if status != "SUCCESS" or not isinstance(result, dict):
            self.done["failed"] += 1
            raise WorkerFailed(f"the worker failed ({status})")
        if "ok" in result:
            self.done["ok"] += 1
            return base64.b64decode(result["ok"])
        error = result.get("error")
        self.done["failed"] += 1
        if error == "timeout":
            raise EvaluationTimeout(result.get("message") or "")
        if error == "memory":
            raise MemoryLimit()
        if error == "busy":
            raise PoolBusy()
        if error == "too_large":
            raise ReplyTooLarge(result["size"])
        raise WorkerFailed(result.get("message") or "the worker failed")

    def alive(self) -> int:
        return 0

    def stats(self) -> dict:
        return {"queue": "celery", "waiting": len(self._waiting), "results": dict(self.done)}
