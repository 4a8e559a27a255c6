"""Long jobs (training): a bounded queue, worker processes, progress events, cancel, a time limit.

A job runs `runner(spec, emit, should_stop, workdir)` in its own process at low CPU priority, so that
it never slows evaluation for other users. `emit(event)` streams a JSON-able progress event back; the
runner returns the job's result; `workdir` is a temporary directory of the job's own, removed when the
job ends however it ends (even killed). At most `max_running` jobs run at once and `max_queued` wait;
a full queue is refused (the API answers 429). A job past its time limit, over its memory limit
(resident set, checked by a watchdog: torch reserves far more address space than it uses, so an
address-space limit would not do), or cancelled and not stopping within a second, is killed; the
events it sent so far are kept.
"""
from __future__ import annotations

import asyncio
import importlib
import multiprocessing as mp
import os
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

import orjson

from .settings import show_bytes
from .process_pool import memory_of

FINISHED = ("done", "failed", "cancelled", "timeout")
JOB_ID_PATTERN = r"^[A-Za-z0-9_-]{22}$"   # what new_job_id() makes: the routes accept exactly this


def new_job_id() -> str:
    """A job's id: 128 random bits, base64url (22 characters, always): unguessable, since whoever holds
    an id may read the job (its program) and cancel it, and of one width however many jobs there were."""
    return secrets.token_urlsafe(16)


class QueueFull(Exception):
    pass


class ClientFull(Exception):
    """The client already has its share of the jobs (queued and running)."""


MEMORY_CHECK_INTERVAL = 0.2   # seconds between two looks at a running job's memory


def _job_main(conn: Connection, runner_path: str, spec: dict | None, workdir: str | None) -> None:
    """A job's process. With spec None it is a warm spare: it imports the runner's module and calls
    the module's `warm()` (if any: e.g. import torch), then waits on the pipe for its spec and the
    job's work directory."""
    try:
        os.nice(10)
    except OSError:
        pass
    module_name, _, name = runner_path.rpartition(".")
    module = importlib.import_module(module_name)
    runner = getattr(module, name)
    if spec is None:
        warm = getattr(module, "warm", None)
        if warm is not None:
            warm()
        try:
            conn.send_bytes(b"rd")   # ready: the imports are done (the manager reports it in its stats)
            given = orjson.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return   # the server went away before giving this spare a job
        spec, workdir = given["spec"], given["workdir"]
    stop = False

    def emit(event: dict) -> None:
        conn.send_bytes(b"ev" + orjson.dumps(event))

    def should_stop() -> bool:
        nonlocal stop
        while not stop and conn.poll():
            stop = conn.recv_bytes() == b"stop"
        return stop

    try:
        result = runner(spec, emit, should_stop, workdir)
        conn.send_bytes((b"ca" if stop else b"ok") + orjson.dumps(result))
    except Exception as e:  # the runner's errors are user-facing messages (bad spec, program error)
        conn.send_bytes(b"er" + str(e).encode())


@dataclass(eq=False)
class Job:
    id: str
    spec: dict
    client: str = ""
    status: str = "queued"
    events: list = field(default_factory=list)
    result: dict | None = None
    error: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    process: mp.Process | None = None
    conn: Connection | None = None
    warm: bool = False                 # it started in a warm spare process
    workdir: str | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    readers: int = 0                   # event streams open on it now
    seen: float = field(default_factory=time.monotonic)   # when a client last asked about it

    def touch(self) -> None:
        """A client asked about this job: it is still wanted (see JobManager's `orphan_after`)."""
        self.seen = time.monotonic()

    def public(self) -> dict:
        return {"id": self.id, "status": self.status, "events": len(self.events), "error": self.error,
                "created": self.created, "started": self.started, "finished": self.finished,
                "result": self.result, "spec": self.spec, "warm": self.warm}

    def notify(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


class JobManager:
    def __init__(self, runner_path: str, max_running: int, max_queued: int, time_limit: float, keep: int = 64,
                 memory_bytes: int | None = None, workroot: str | os.PathLike | None = None, warm: int = 0,
                 per_client: int = 0, orphan_after: float | None = None):
        """`per_client`: jobs one client may have queued or running at once (0: no limit of its own); it
        never exceeds all the places but one (running and queued), so that one client always leaves room
        for others, and queued jobs start in turn across clients (the client with the fewest running
        first). `workroot`: where the jobs' temporary directories go (default: the system's temporary
        directory); what a previous server left there (killed with its jobs) is removed now. `warm`:
        spare processes kept started (imports done), so that a job starts at once. `orphan_after`:
        a job that no client follows (no event stream open, no status asked) for that many seconds is
        cancelled (its page was closed), so that it does not hold a slot others wait for."""
        self.runner_path = runner_path
        self.max_running, self.max_queued, self.time_limit, self.keep = max_running, max_queued, time_limit, keep
        self.memory_bytes = memory_bytes
        self.warm = warm
        places = max_running + max_queued
        self.per_client = min(per_client or places, max(1, places - 1))
        self.orphan_after = orphan_after
        self._spares: list[tuple[mp.Process, Connection]] = []
        self._ready: set[int] = set()   # pids of spares that said they are ready
        self.workroot = os.fspath(workroot) if workroot is not None else None
        if self.workroot is not None:
            shutil.rmtree(self.workroot, ignore_errors=True)
            os.makedirs(self.workroot, exist_ok=True)
        self.jobs: dict[str, Job] = {}
        self._queue: list[Job] = []
        self._running: set[Job] = set()
        self._last_start: dict[str, int] = {}   # client -> when it last had a job started (a count)
        self._starts = 0
        self._ctx = mp.get_context("spawn")

    # ---------------------------------------------------------------- public

    def submit(self, spec: dict, client: str = "") -> Job:
        if self.jobs_of(client) >= self.per_client:
            raise ClientFull()
        if len(self._queue) >= self.max_queued:
            raise QueueFull()
        job = Job(new_job_id(), spec, client)
        self.jobs[job.id] = job
        self._queue.append(job)
        self._forget_old()
        self._schedule()
        if self.orphan_after:
            asyncio.get_running_loop().call_later(self.orphan_after, self._cancel_if_orphaned, job)
        return job

    def jobs_of(self, client: str) -> int:
        """The client's jobs queued or running."""
        return sum(1 for j in self._queue if j.client == client) + sum(1 for j in self._running if j.client == client)

    def get(self, job_id: str) -> Job | None:
        return self.jobs.get(job_id)

    def cancel(self, job: Job) -> None:
        if job.status == "queued":
            self._queue.remove(job)
            self._finish(job, "cancelled")
        elif job.status == "running":
            try:
                job.conn.send_bytes(b"stop")
            except OSError:
                pass
            asyncio.get_running_loop().call_later(1.0, self._kill_if_running, job, "cancelled")

    async def close(self) -> None:
        for job in list(self._running):
            self._kill(job)
            self._finish(job, "cancelled")
        self.warm = 0
        for process, conn in self._spares:
            process.kill()
            process.join(timeout=2)
            conn.close()
        self._spares.clear()

    def fill_spares(self) -> None:
        """Start spare processes up to `warm` (only while no job runs: their start-up costs CPU)."""
        self._spares = [(p, c) for p, c in self._spares if p.is_alive()]
        while len(self._spares) < self.warm and not self._running:
            parent, child = self._ctx.Pipe(duplex=True)
            process = self._ctx.Process(target=_job_main, args=(child, self.runner_path, None, None), daemon=True,
                                        name="rasplay-job-spare")
            process.start()
            child.close()
            self._spares.append((process, parent))

    def stats(self) -> dict:
        ready = self._spares_ready()
        return {"running": len(self._running), "queued": len(self._queue), "max_running": self.max_running,
                "max_queued": self.max_queued, "per_client": self.per_client, "time_limit": self.time_limit,
                "memory_limit": self.memory_bytes,
                "warm": ready, "warm_starting": len(self._spares) - ready}

    def _spares_ready(self) -> int:
        """Spare processes that have done their imports (each says so once on its pipe)."""
        for process, conn in self._spares:
            try:
                while process.pid not in self._ready and conn.poll():
                    if conn.recv_bytes() == b"rd":
                        self._ready.add(process.pid)
            except (EOFError, OSError):
                pass
        alive = {p.pid for p, _ in self._spares if p.is_alive()}
        self._ready &= alive
        return len(self._ready)

    # ---------------------------------------------------------------- what the routes call (async, as
    # training_board.SharedJobs, which keeps jobs in Redis for replicas and runs them in `rasplay worker`)

    async def submit_job(self, spec: dict, client: str) -> dict:
        return self.submit(spec, client).public()

    async def status(self, job_id: str) -> dict | None:
        job = self.get(job_id)
        if job is None:
            return None
        job.touch()   # a client still follows it (a job nobody follows is cancelled: `orphan_after`)
        return job.public()

    async def cancel_job(self, job_id: str) -> dict | None:
        job = self.get(job_id)
        if job is None:
            return None
        self.cancel(job)
        return job.public()

    async def follow_job(self, job_id: str, start: int):
        """(index, event) from `start` until the job ends; while this is read, the job is wanted."""
        job = self.get(job_id)
        if job is None:
            return
        job.readers += 1
        try:
            async for item in follow(job, start):
                yield item
        finally:
            job.readers -= 1
            job.touch()

    async def final(self, job_id: str) -> dict:
        job = self.get(job_id)
        if job is None:
            return {"status": "failed", "error": "the job is no longer kept", "events": 0}
        return {"status": job.status, "error": job.error, "events": len(job.events)}

    # ---------------------------------------------------------------- internals

    def _schedule(self) -> None:
        """Start queued jobs while there is room: each time the oldest job of the client with the fewest
        jobs running (so clients take turns, whatever the order they queued in)."""
        while self._queue and len(self._running) < self.max_running:
            running: dict[str, int] = {}
            for j in self._running:
                running[j.client] = running.get(j.client, 0) + 1
            # fewest running first, then the client that started a job least recently; min keeps the
            # oldest of equals
            job = min(self._queue, key=lambda j: (running.get(j.client, 0), self._last_start.get(j.client, -1)))
            self._queue.remove(job)
            self._starts += 1
            self._last_start[job.client] = self._starts
            if len(self._last_start) > 1000:
                present = {j.client for j in self._queue} | {j.client for j in self._running}
                self._last_start = {c: t for c, t in self._last_start.items() if c in present}
            self._start(job)

    def _take_spare(self) -> tuple[mp.Process, Connection] | None:
        while self._spares:
            process, conn = self._spares.pop(0)
            if process.is_alive():
                return process, conn
            conn.close()
        return None

    def _start(self, job: Job) -> None:
        job.workdir = tempfile.mkdtemp(prefix=f"rasplay-job-{job.id}-", dir=self.workroot)
        spare = self._take_spare()
        job.warm = spare is not None
        if spare is not None:
            job.process, parent = spare
            parent.send_bytes(orjson.dumps({"spec": job.spec, "workdir": job.workdir}))
        else:
            parent, child = self._ctx.Pipe(duplex=True)
            job.process = self._ctx.Process(target=_job_main,
                                            args=(child, self.runner_path, job.spec, job.workdir),
                                            daemon=True, name=f"rasplay-job-{job.id}")
            job.process.start()
            child.close()
        job.conn = parent
        job.status, job.started = "running", time.time()
        self._running.add(job)
        loop = asyncio.get_running_loop()
        loop.add_reader(parent.fileno(), self._on_message, job)
        os.set_blocking(parent.fileno(), True)  # see process_pool.py: uvloop made it non-blocking
        loop.call_later(self.time_limit, self._kill_if_running, job, "timeout")
        if self.memory_bytes:
            loop.call_later(MEMORY_CHECK_INTERVAL, self._watch_memory, job)
        job.notify()

    def _cancel_if_orphaned(self, job: Job) -> None:
        if job.status in FINISHED:
            return
        idle = time.monotonic() - job.seen
        if job.readers == 0 and idle >= self.orphan_after:
            self.cancel(job)   # (nobody is left to read why: the page that started it is gone)
            return
        wait = self.orphan_after if job.readers else self.orphan_after - idle
        asyncio.get_running_loop().call_later(max(wait, 0.05), self._cancel_if_orphaned, job)

    def _watch_memory(self, job: Job) -> None:
        if job.status != "running":
            return
        if memory_of(job.process.pid)[1] > self.memory_bytes:
            self._stop_reading(job)
            self._kill(job)
            self._finish(job, "failed", error=f"stopped: the job used more than {show_bytes(self.memory_bytes)} of "
                                              "memory (the limit); try a smaller model, batch or max_len")
            return
        asyncio.get_running_loop().call_later(MEMORY_CHECK_INTERVAL, self._watch_memory, job)

    def _on_message(self, job: Job) -> None:
        try:
            message = job.conn.recv_bytes()
        except (EOFError, OSError):
            if job.status == "running":
                self._stop_reading(job)
                self._finish(job, "failed", error="the training process ended unexpectedly")
            return
        kind, body = message[:2], message[2:]
        if kind == b"rd":   # a spare given this job before it had said it was ready
            return
        if kind == b"ev":
            job.events.append(orjson.loads(body))
            job.notify()
            return
        self._stop_reading(job)
        if kind == b"er":
            self._finish(job, "failed", error=body.decode(errors="replace"))
        else:
            self._finish(job, "cancelled" if kind == b"ca" else "done", result=orjson.loads(body))

    def _stop_reading(self, job: Job) -> None:
        try:
            asyncio.get_running_loop().remove_reader(job.conn.fileno())
        except (OSError, ValueError):
            pass

    def _kill_if_running(self, job: Job, status: str) -> None:
        if job.status == "running":
            self._stop_reading(job)
            self._kill(job)
            error = f"stopped after the time limit of {self.time_limit:g} s" if status == "timeout" else None
            self._finish(job, status, error=error)

    def _kill(self, job: Job) -> None:
        try:
            job.process.kill()
            job.process.join(timeout=2)
            job.conn.close()
        except (OSError, ValueError, AttributeError):
            pass

    def _finish(self, job: Job, status: str, result: dict | None = None, error: str | None = None) -> None:
        job.status, job.finished = status, time.time()
        job.result, job.error = result, error
        self._running.discard(job)
        if job.process is not None:
            job.process.join(timeout=2)
        if job.workdir is not None:
            shutil.rmtree(job.workdir, ignore_errors=True)
            job.workdir = None
        job.notify()
        self._schedule()
        if self.warm:
            self.fill_spares()

    def _forget_old(self) -> None:
        finished = [j for j in self.jobs.values() if j.status in FINISHED]
        for job in finished[: max(0, len(self.jobs) - self.keep)]:
            del self.jobs[job.id]


async def follow(job: Job, start: int = 0):
    """Yield (index, event) for every event from `start`, then return when the job has finished."""
    index = start
    while True:
        while index < len(job.events):
            yield index, job.events[index]
            index += 1
        if job.status in FINISHED:
            return
        waiter = job.changed
        await waiter.wait()
