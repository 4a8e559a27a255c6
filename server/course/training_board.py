"""Training jobs shared by replicas through Redis, run by `rasplay worker` processes through Celery
(`rasplay serve --broker redis://...`). The job board: every job's state, progress events and cancel flag
live in Redis, so any replica can start, read, stream and cancel any job, and the per-client shares hold
across replicas.

Keys (one Redis, not a cluster; `P` = "rasplay:job"):

* `P:{id}`: a hash: status, client, spec, created, started, finished, error, result, events (a count),
  warm, cancel.
* `P:{id}:events`: a stream. Progress event i has the id `0-{i+1}` (so `Last-Event-ID: i` resumes with
  XREAD from `0-{i+1}` on any replica); the job's end is one more entry `{"end": status}` with an
  automatic (time) id, after every event; events are added only while the job runs (checked in the
  same script), so nothing follows the end.
* `P:{id}:lease`: set by the worker running the job, with a short expiry it renews every second. A
  running job whose lease has expired lost its worker (killed, its machine gone): a replica that finds
  it so marks the job (`lapsed`, Redis's own clock), and one that finds it so again `CONFIRM_SECONDS`
  later ends it `failed` with the reason. A lease also expires while Redis itself is frozen (its clock
  runs on) or restarting: the worker renews it within a second of Redis answering again, which clears
  the mark, so a freeze longer than the lease does not fail a training whose worker is alive.
* `P:{id}:wanted`: a client follows the job (an event stream open, its status read): set with an expiry
  of `--train-orphan-seconds` and renewed while a stream is open. A job no one wants is cancelled (its
  page was closed), as the in-process manager does.
* `rasplay:jobs:client:{client}`, `rasplay:jobs:queued`, `rasplay:jobs:running`: sets of job ids, for the
  per-client share (`--client-jobs`) and the bound on waiting jobs (`--train-queue`), both checked and
  taken atomically (a Lua script) so replicas submitting together cannot exceed them.

State changes are Lua scripts: a job ends exactly once, whoever ends it (its worker, a cancel, a
replica finding its worker gone), and its end is always the last entry of its stream.
"""
from __future__ import annotations

import asyncio
import json
import time

from ..training_jobs import FINISHED, ClientFull, QueueFull, new_job_id
from .agreement import heartbeat_settings
from .celery_base import TRAIN_QUEUE, TRAIN_TASK, WORKER_KEY
from .queue_gate import QueueGate, describe, unavailable

PREFIX = "rasplay:job:"
CLIENTS = "rasplay:jobs:client:"
QUEUED = "rasplay:jobs:queued"
RUNNING = "rasplay:jobs:running"
LEASE_SECONDS = 10          # a worker silent this long has lost its job...
CONFIRM_SECONDS = 4         # ...if it is still silent this long after a replica first saw the lease lapsed
KEEP_SECONDS = 3600         # a finished job (state, events) is kept this long
ACTIVE_SECONDS = 86400      # an unfinished job's keys expire after this, whatever happens
ANSWER_SECONDS = 3.0        # a replica's board call waits at most this for Redis (a read blocks 1 s of it)
SEND_SECONDS = 3.0          # a training's task not handed to the broker by then: 503
LOST = ("the worker training this job stopped (its process or machine ended) before the job finished; "
        "start the training again")
STATE_LOST = ("the job queue's Redis restarted without keeping its data (no append-only file) and lost this job's "
              "state; start the training again")

_SUBMIT = """
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 1 end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 2 end
redis.call('SADD', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[3], 'status', 'queued', 'created', ARGV[4], 'client', ARGV[5], 'spec', ARGV[6], 'events', 0)
redis.call('EXPIRE', KEYS[3], ARGV[7])
redis.call('SET', KEYS[4], '1', 'EX', ARGV[8])
return 0
"""

# KEYS: job, queued, running, lease, wanted; ARGV: id, started, lease seconds, worker.
# 1: started; 0: not queued any more; -1: no one wants it (ended cancelled: the caller ends it).
_START = """
if redis.call('HGET', KEYS[1], 'status') ~= 'queued' then return 0 end
if redis.call('EXISTS', KEYS[5]) == 0 then return -1 end
redis.call('HSET', KEYS[1], 'status', 'running', 'started', ARGV[2], 'worker', ARGV[4])
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('SET', KEYS[4], '1', 'EX', ARGV[3])
return 1
"""

# KEYS: job, queued, running, events, lease, wanted; ARGV: id, status, error, result, finished, keep seconds,
# clients prefix, expected status ('' any unfinished), condition ('' | 'lease gone' | 'unwanted'), confirm seconds.
# 'lease gone': the first look that finds the lease lapsed only marks it (Redis's clock); a look at least
# ARGV[10] seconds later that finds it lapsed still ends the job (a renewal in between clears the mark).
_FINISH = """
local s = redis.call('HGET', KEYS[1], 'status')
if (not s) or s == 'done' or s == 'failed' or s == 'cancelled' or s == 'timeout' then return 0 end
if ARGV[8] ~= '' and s ~= ARGV[8] then return 0 end
if ARGV[9] == 'lease gone' then
  if redis.call('EXISTS', KEYS[5]) == 1 then return 0 end
  local now = tonumber(redis.call('TIME')[1])
  local first = tonumber(redis.call('HGET', KEYS[1], 'lapsed') or '')
  if not first then
    redis.call('HSET', KEYS[1], 'lapsed', now)
    return 0
  end
  if now - first < tonumber(ARGV[10]) then return 0 end
end
if ARGV[9] == 'unwanted' and redis.call('EXISTS', KEYS[6]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'finished', ARGV[5])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'error', ARGV[3]) end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'result', ARGV[4]) end
local client = redis.call('HGET', KEYS[1], 'client') or ''
redis.call('SREM', ARGV[7] .. client, ARGV[1])
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('XADD', KEYS[4], '*', 'end', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('EXPIRE', KEYS[4], ARGV[6])
redis.call('DEL', KEYS[5], KEYS[6])
return 1
"""


# KEYS: job, events, queued, running, lease; ARGV: id, status, error, spec, client, created, started, finished, events,
# keep seconds. A running job whose state Redis lost (restarted empty) is written back, ended, by its worker.
_LOST = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'error', ARGV[3], 'spec', ARGV[4], 'client', ARGV[5],
           'created', ARGV[6], 'started', ARGV[7], 'finished', ARGV[8], 'events', ARGV[9])
redis.call('DEL', KEYS[2], KEYS[5])
redis.call('XADD', KEYS[2], '*', 'end', ARGV[2])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('SREM', KEYS[4], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[10])
redis.call('EXPIRE', KEYS[2], ARGV[10])
return 1
"""


# KEYS: job, events; ARGV: the first event's index, then the events (JSON). 0 when the job has ended (its end
# is the last entry of its stream: nothing is added after it, and the count stays the events before it).
_ADD_EVENTS = """
local s = redis.call('HGET', KEYS[1], 'status')
if s ~= 'running' then return 0 end
local first = tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.pcall('XADD', KEYS[2], '0-' .. (first + i - 1), 'ev', ARGV[i])   -- (one already there: a retry)
end
redis.call('HSET', KEYS[1], 'events', first + #ARGV - 1)
return 1
"""


def _text(value) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


class JobBoard:
    """The Redis side of shared jobs, for replicas and workers alike (redis.asyncio, one client per
    event loop)."""

    def __init__(self, url: str, orphan_after: float | None = None, timeout_seconds: float = 5.0,
                 answer_seconds: float | None = None):
        """`answer_seconds`: how long a command may wait for Redis's answer (None: as long as the
        connection lasts); above the 1 s block of `events`' reads."""
        import redis.asyncio as aioredis
        from redis import RedisError

        self.redis = aioredis.Redis.from_url(url, socket_connect_timeout=timeout_seconds, socket_timeout=answer_seconds,
                                             health_check_interval=30)
        self.errors = (RedisError, OSError)
        self.orphan_after = orphan_after
        self._submit = self.redis.register_script(_SUBMIT)
        self._start = self.redis.register_script(_START)
        self._finish = self.redis.register_script(_FINISH)
        self._add_events = self.redis.register_script(_ADD_EVENTS)
        self._lost = self.redis.register_script(_LOST)

    @staticmethod
    def keys(job_id: str) -> dict:
        base = PREFIX + job_id
        return {"job": base, "events": base + ":events", "lease": base + ":lease", "wanted": base + ":wanted"}

    def _wanted_seconds(self) -> int:
        return max(1, round(self.orphan_after)) if self.orphan_after else ACTIVE_SECONDS

    async def close(self) -> None:
        await self.redis.aclose()

    # ---------------------------------------------------------------- replicas

    async def submit(self, spec: dict, client: str, per_client: int, max_queued: int) -> str:
        """A new queued job (its id); raises ClientFull or QueueFull. Jobs left behind by lost workers or
        closed pages are ended first, so that they do not hold a place."""
        for attempt in (0, 1):
            job_id = new_job_id()
            k = self.keys(job_id)
            code = await self._submit(keys=[CLIENTS + client, QUEUED, k["job"], k["wanted"]],
                                      args=[per_client, max_queued, job_id, time.time(), client, json.dumps(spec),
                                            ACTIVE_SECONDS, self._wanted_seconds()])
            if code == 0:
                return job_id
            if attempt == 0:   # something may hold a place it no longer has: look again once
                ids = await self.redis.smembers(CLIENTS + client if code == 1 else QUEUED)
                for other in ids:
                    await self.refresh(_text(other), forget_missing=CLIENTS + client if code == 1 else QUEUED)
        raise ClientFull() if code == 1 else QueueFull()

    async def read(self, job_id: str) -> dict | None:
        raw = await self.redis.hgetall(self.keys(job_id)["job"])
        if not raw:
            return None
        return {_text(k): _text(v) for k, v in raw.items()}

    async def touch(self, job_id: str) -> None:
        """A client still follows the job (see `orphan_after`)."""
        k = self.keys(job_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.exists(k["job"])
            pipe.set(k["wanted"], "1", ex=self._wanted_seconds())
            exists, _ = await pipe.execute()
        if not exists:
            await self.redis.delete(k["wanted"])

    async def refresh(self, job_id: str, forget_missing: str | None = None) -> dict | None:
        """The job's state, after ending it if its worker is gone (running without a lease) or no one
        wants it (queued, unfollowed). `forget_missing`: a set to drop the id from when the job is gone."""
        job = await self.read(job_id)
        if job is None:
            if forget_missing:
                await self.redis.srem(forget_missing, job_id)
            return None
        if job["status"] == "running":
            if not await self.redis.exists(self.keys(job_id)["lease"]):
                await self.finish(job_id, "failed", error=LOST, expect="running", condition="lease gone")
                job = await self.read(job_id)
        elif job["status"] == "queued" and self.orphan_after:
            if not await self.redis.exists(self.keys(job_id)["wanted"]):
                await self.finish(job_id, "cancelled", expect="queued", condition="unwanted")
                job = await self.read(job_id)
        return job

    async def cancel(self, job_id: str) -> bool:
        """Ask the job to stop: a queued job ends now; a running one when its worker sees the flag (its
        runner's `should_stop`). True when the job was still queued (ended here)."""
        await self.redis.hset(self.keys(job_id)["job"], "cancel", "1")
        return bool(await self.finish(job_id, "cancelled", expect="queued"))

    async def events(self, job_id: str, start: int, block_ms: int = 1000):
        """Yield (index, event) from index `start` until the job's end; between reads, keep the job
        wanted and end it if its worker is gone."""
        key = self.keys(job_id)["events"]
        last = f"0-{start}"
        while True:
            await self.touch(job_id)
            reply = await self.redis.xread({key: last}, count=256, block=block_ms)
            if not reply:
                job = await self.refresh(job_id)
                if job is None:
                    return
                continue
            for entry_id, fields in reply[0][1]:
                last = _text(entry_id)
                if b"end" in fields:
                    return
                ms, seq = last.split("-")
                if ms == "0":
                    yield int(seq) - 1, json.loads(fields[b"ev"])

    async def counts(self) -> dict:
        """Jobs running and queued across the course, and the live workers of each queue (their
        heartbeats: celery_app.Runtime.beat) with their warm spare processes."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.scard(RUNNING)
            pipe.scard(QUEUED)
            running, queued = await pipe.execute()
        workers, warm, settings = {"train": 0, "heavy": 0}, 0, {}
        keys = [key async for key in self.redis.scan_iter(match=WORKER_KEY + "*", count=1000)]
        for key, value in zip(keys, await self.redis.mget(keys) if keys else []):
            queue = _text(key)[len(WORKER_KEY):].split(":", 1)[0]
            if queue in workers and value is not None:
                workers[queue] += 1
                warm += json.loads(value).get("warm", 0)
                settings[_text(key)[len(WORKER_KEY):]] = heartbeat_settings(value)
        return {"running": running, "queued": queued, "workers": workers, "warm": warm, "settings": settings}

    # ---------------------------------------------------------------- workers

    async def start(self, job_id: str, worker: str) -> dict | None:
        """Take a queued job (its state), or None: it ended already, or no one wants it any more
        (then it ends cancelled here)."""
        k = self.keys(job_id)
        code = await self._start(keys=[k["job"], QUEUED, RUNNING, k["lease"], k["wanted"]],
                                 args=[job_id, time.time(), LEASE_SECONDS, worker])
        if code == -1:
            await self.finish(job_id, "cancelled", expect="queued", condition="unwanted")
        return await self.read(job_id) if code == 1 else None

    async def add_events(self, job_id: str, events: list, first: int) -> bool:
        """Append events `first`, `first + 1`, ... to the job's stream; False when the job has ended
        meanwhile (its end is in the stream: later ids are refused)."""
        k = self.keys(job_id)
        return bool(await self._add_events(keys=[k["job"], k["events"]],
                                           args=[first, *(json.dumps(e) for e in events)]))

    async def renew(self, job_id: str, warm: bool | None = None) -> tuple[str | None, bool, bool]:
        """The worker is alive: renew the job's lease (again, after it lapsed while Redis was frozen or
        restarting; a lease of a job that has ended meanwhile expires unused). Returns (status, cancel
        asked, still wanted); status None: Redis has lost the job (see `lost`)."""
        k = self.keys(job_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hmget(k["job"], "status", "cancel")
            pipe.exists(k["wanted"])
            pipe.set(k["lease"], "1", ex=LEASE_SECONDS)
            pipe.hdel(k["job"], "lapsed")
            if warm is not None:
                pipe.hset(k["job"], "warm", int(warm))
            (status, cancel), wanted, *_ = await pipe.execute()
        return _text(status), bool(cancel), bool(wanted) or not self.orphan_after

    async def finish(self, job_id: str, status: str, error: str | None = None, result: dict | None = None,
                     expect: str = "", condition: str = "") -> int:
        k = self.keys(job_id)
        return await self._finish(keys=[k["job"], QUEUED, RUNNING, k["events"], k["lease"], k["wanted"]],
                                  args=[job_id, status, error or "", json.dumps(result) if result is not None else "",
                                        time.time(), KEEP_SECONDS, CLIENTS, expect, condition, CONFIRM_SECONDS])

    async def lost(self, job_id: str, job: dict) -> bool:
        """Write back, ended `failed` with STATE_LOST, a job this worker runs whose state Redis lost (it
        restarted without persistence): its status and event stream say why instead of "no such job".
        `job`: its state when the worker took it; its events went with Redis's data (the count is 0). False
        when the job is there (nothing written)."""
        k = self.keys(job_id)
        return bool(await self._lost(
            keys=[k["job"], k["events"], QUEUED, RUNNING, k["lease"]],
            args=[job_id, "failed", STATE_LOST, job["spec"], job.get("client") or "", job.get("created") or time.time(),
                  job.get("started") or time.time(), time.time(), 0, KEEP_SECONDS]))


def public(job_id: str, job: dict) -> dict:
    """A job's state as the API shows it (schemas.TrainJob), from its hash."""
    def number(name):
        return float(job[name]) if job.get(name) else None

    return {"id": job_id, "status": job["status"], "events": int(job.get("events") or 0), "error": job.get("error"),
            "created": number("created"), "started": number("started"), "finished": number("finished"),
            "result": json.loads(job["result"]) if job.get("result") else None, "spec": json.loads(job["spec"]),
            "warm": job.get("warm") == "1"}


class SharedJobs:
    """Training jobs for the routes (the interface of training_jobs.JobManager's async methods), kept on the job
    board and run by `rasplay worker` through Celery. While the board's Redis does not answer, every route
    is answered 503 at once (queue_gate.QueueGate), not after a wait of its own."""

    def __init__(self, url: str, max_queued: int, per_client: int, time_limit: float,
                 orphan_after: float | None = None, memory_bytes: int | None = None, gate: QueueGate | None = None,
                 agreement=None):
        from .celery_base import make_app

        self.url = url
        self.max_queued, self.time_limit, self.memory_bytes = max_queued, time_limit, memory_bytes
        # the in-process rule: one client never holds every place but one
        self.per_client = min(per_client or max_queued, max(1, max_queued - 1))
        self.orphan_after = orphan_after
        self.board = JobBoard(url, orphan_after, answer_seconds=ANSWER_SECONDS)
        self.gate = gate or QueueGate(url)
        self.gate.watch(self.board.redis)   # its connections renewed when Redis is back from a restart
        self.agreement = agreement   # agreement.Agreement: the workers' settings checked against this replica's
        self.celery = make_app(url, results=False)
        self._counts = {"running": 0, "queued": 0, "workers": {"train": 0, "heavy": 0}, "warm": 0}
        self._counting: asyncio.Task | None = None
        self._counted = 0.0

    async def _call(self, fn, *args, **kw):
        return await asyncio.get_running_loop().run_in_executor(None, lambda: fn(*args, **kw))

    def _failed(self, e: Exception):
        """The 503 for a board call that failed (and the gate fails the next ones at once)."""
        self.gate.failed(e)
        return unavailable(describe(e))

    async def submit_job(self, spec: dict, client: str) -> dict:
        await self.gate.check()
        try:
            job_id = await self.board.submit(spec, client, self.per_client, self.max_queued)
            try:
                send = self._call(self.celery.send_task, TRAIN_TASK, args=[job_id], task_id=job_id, queue=TRAIN_QUEUE)
                await asyncio.wait_for(send, SEND_SECONDS)
            except Exception as e:   # the broker refused the task: the job never starts
                await self.board.finish(job_id, "failed", error=f"the job queue is unavailable ({type(e).__name__})")
                raise self._failed(e) from None
            return public(job_id, await self.board.read(job_id))
        except self.board.errors as e:
            raise self._failed(e) from None

    async def status(self, job_id: str) -> dict | None:
        await self.gate.check()
        try:
            await self.board.touch(job_id)
            job = await self.board.refresh(job_id)
        except self.board.errors as e:
            raise self._failed(e) from None
        return public(job_id, job) if job is not None else None

    async def cancel_job(self, job_id: str) -> dict | None:
        await self.gate.check()
        try:
            job = await self.board.read(job_id)
            if job is None:
                return None
            if job["status"] not in FINISHED and await self.board.cancel(job_id):
                try:   # the queued task: its worker would drop it anyway (the job has ended)
                    await self._call(self.celery.control.revoke, job_id)
                except Exception:
                    pass
        except self.board.errors as e:
            raise self._failed(e) from None
        return await self.status(job_id)

    async def follow_job(self, job_id: str, start: int):
        """The job's events; the board's errors (Redis away) end it (the route sends an error event)."""
        try:
            async for item in self.board.events(job_id, start):
                yield item
        except self.board.errors as e:
            self.gate.failed(e)
            raise

    def not_found(self, job_id: str) -> str:
        """What a missing job's 404 says: a job's state may have been lost with Redis's data."""
        return (f"no training job '{job_id}' on the job queue: a finished job is kept for {KEEP_SECONDS // 60} "
                "minutes, and jobs queued or running are lost when the job queue's Redis restarts without its "
                "append-only file; if this one was, start the training again")

    async def final(self, job_id: str) -> dict:
        try:
            job = await self.board.read(job_id)
        except self.board.errors:
            job = None
        job = job or {"status": "failed", "error": "the job is no longer kept"}
        return {"status": job["status"], "error": job.get("error"), "events": int(job.get("events") or 0)}

    async def _count(self) -> None:
        try:
            counts = await self.board.counts()
        except self.board.errors:
            return
        if self.agreement is not None:   # the workers' settings that must agree with this replica's
            self.agreement.check(counts["settings"])
        self._counts = {k: v for k, v in counts.items() if k != "settings"}

    def stats(self) -> dict:
        """The figures of the last count (at most a second old: a new count starts when they are older)."""
        if time.monotonic() - self._counted > 1 and (self._counting is None or self._counting.done()):
            self._counted = time.monotonic()
            self._counting = asyncio.get_running_loop().create_task(self._count())
        return {**self._counts, "queue": "celery", "max_queued": self.max_queued, "per_client": self.per_client,
                "time_limit": self.time_limit, "memory_limit": self.memory_bytes}

    def fill_spares(self) -> None:
        """The warm processes live in the workers; at start, count them (and check their settings)."""
        self.stats()

    async def close(self) -> None:
        await self.board.close()
        await self.gate.close()
