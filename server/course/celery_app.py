"""Training and compiler work through Celery, with Redis as broker and result backend
(`rasplay serve --broker redis://...` on every replica, `rasplay worker --broker redis://...` on any
machine). Only course/ imports celery and redis (the `course` extra); without a
broker nothing here is imported.

A worker is two Celery workers (thread pools), one per queue, each in a process of its own (`rasplay
worker`, cli/worker.py, starts and supervises them; run_queue here is one of them), so that long
trainings never hold up compiler requests:

* `rasplay-train`: a task per training job. The job runs in the worker's own training_jobs.JobManager (the same
  runner, server/training_run.py, with its warm spare processes, time limit and memory watchdog as in
  `rasplay serve`); the task forwards the job's progress events to the job board in Redis
  (training_board.JobBoard), renews the job's lease every second, and stops the job when a cancel is
  asked or no page follows it any more.
* `rasplay-heavy`: compile, run, soft study and weights, run in the worker's own process_pool.WorkerPool
  (with its time and memory limits); the result goes back through Celery's Redis result backend.
"""
from __future__ import annotations

import asyncio
import base64
import logging
import os
import socket
import threading
import time

import orjson

from .agreement import agreed
from .celery_base import HEAVY_TASK, QUEUES, TRAIN_TASK, WORKER_KEY, make_app

log = logging.getLogger("rasplay.worker")
BOARD_ANSWER_SECONDS = 5.0
END_TRIES = 30   # a job's end is tried once a second this many times while Redis is away


# ---------------------------------------------------------------- the worker's side

class Runtime:
    """What one worker process keeps: an event loop in a thread of its own, holding the job manager
    (training) or the heavy pool (compiler work), and the job board."""

    def __init__(self, url: str, settings, queue: str):
        from .training_board import JobBoard

        self.settings, self.queue, self.url = settings, queue, url
        self.name = f"{queue}@{socket.gethostname()}:{os.getpid()}"
        self.stopping = False
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="rasplay-worker-loop", daemon=True)
        self.thread.start()
        self.board = self.call(self._board(JobBoard, url, settings.train_orphan_seconds))
        self.jobs = self.heavy = None
        self.call(self._start())
        asyncio.run_coroutine_threadsafe(self.beat(), self.loop)

    @staticmethod
    async def _board(cls, url, orphan_after):
        # a Redis that froze fails a call after 5 s (the loops below try again), instead of holding it forever
        return cls(url, orphan_after, answer_seconds=BOARD_ANSWER_SECONDS)

    async def _start(self) -> None:
        from ..training_jobs import JobManager
        from ..process_pool import WorkerPool

        s = self.settings
        if self.queue == "train":
            self.jobs = JobManager("rasplay.server.training_run.run", s.train_jobs, s.train_jobs + 1, s.train_seconds,
                                   memory_bytes=s.train_memory, workroot=s.data_dir / "jobs", warm=s.train_warm)
            self.jobs.fill_spares()
        else:
            self.heavy = WorkerPool(s.heavy_pool_size, s.compile_seconds, s.queue_seconds, depth=1,
                                    name="rasplay-heavy", memory_bytes=s.worker_memory, keep_bytes=s.worker_keep,
                                    reply_bytes=s.max_response_bytes)
            await self.heavy.start()

    async def beat(self) -> None:
        """Say every second that this worker is alive (`rasplay:worker:QUEUE:NAME`, expiring after 5 s):
        the replicas' /health and /ready count the live workers of each queue. A stopping worker says
        at once that it is gone (it takes no new work)."""
        key = f"{WORKER_KEY}{self.queue}:{self.name}"
        while not self.stopping:
            try:
                warm = self.jobs.stats()["warm"] if self.jobs is not None else 0
                await self.board.redis.set(key, orjson.dumps({"warm": warm, "settings": agreed(self.settings)}), ex=5)
            except self.board.errors:
                pass
            await asyncio.sleep(1)
        try:
            await self.board.redis.delete(key)
        except self.board.errors:
            pass

    def call(self, coro, timeout: float | None = None):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def drain(self, grace_seconds: float) -> None:
        """The worker was told to stop (SIGTERM): Celery takes no new task and waits for the running ones;
        the trainings running here get `grace_seconds` to finish, then they are stopped and end `failed`
        with that reason (train() says it to the student)."""
        self.stopping = True
        self.grace_seconds = grace_seconds
        if self.jobs is not None:
            log.warning("stopping: %d training(s) running get %g s to finish", len(self.jobs._running), grace_seconds)
            self.loop.call_soon_threadsafe(self.loop.call_later, grace_seconds, self._stop_jobs)

    def _stop_jobs(self) -> None:
        for local in list(self.jobs._running):
            self.jobs.cancel(local)

    def stop(self) -> None:
        """The worker has stopped taking and running tasks: its processes are killed (any job still running
        ends `failed`, saying why)."""
        self.stopping = True
        try:
            if self.jobs is not None:
                self.call(self.jobs.close(), timeout=30)
            if self.heavy is not None:
                self.call(self.heavy.close(), timeout=30)
        except Exception:   # stopping anyway
            log.exception("stopping the worker's processes")

    # ---------------------------------------------------------------- a training job

    async def train(self, job_id: str) -> None:
        from ..training_jobs import FINISHED

        job = await self.board.start(job_id, self.name)
        if job is None:
            return   # cancelled while queued, or ended already
        local = self.jobs.submit(orjson.loads(job["spec"]), "")
        sent, renewed, stopping, stop_sent = 0, 0.0, False, False
        while True:
            try:
                if sent < len(local.events):
                    events = local.events[sent:]
                    if not await self.board.add_events(job_id, events, sent):
                        stopping = True   # the job ended elsewhere (its lease lapsed): stop it here too
                    sent += len(events)
                if local.status in FINISHED:
                    break
                if time.monotonic() - renewed >= 0.5:
                    status, cancel, wanted = await self.board.renew(job_id, warm=local.warm if not renewed else None)
                    renewed = time.monotonic()
                    if status is None:   # Redis restarted without its data: say so on the board, then stop
                        await self.board.lost(job_id, job)
                    if status != "running" or cancel or not wanted:
                        stopping = True
            except self.board.errors as e:   # Redis is away: the job goes on; its lease may lapse meanwhile
                log.warning("job %s: the job board is unreachable (%s)", job_id, e)
                await asyncio.sleep(1)
            if stopping and local.status == "running" and not stop_sent:
                stop_sent = True          # the runner's should_stop() says so; killed if it does not stop in 1 s
                self.jobs.cancel(local)
            waiter = local.changed
            try:
                await asyncio.wait_for(waiter.wait(), 0.5)
            except asyncio.TimeoutError:
                pass
        status, error = local.status, local.error
        if self.stopping and status == "cancelled":
            grace = getattr(self, "grace_seconds", None)
            status, error = "failed", ("the worker training this job was stopped (a restart)" +
                                       (f" and the training did not finish within its {grace:g} s" if grace else "") +
                                       "; start the training again")
        for attempt in range(END_TRIES):   # Redis may be restarting: the job's end must reach the board
            try:
                if not await self.board.finish(job_id, status, error=error, result=local.result):
                    await self.board.lost(job_id, job)   # (written only when Redis lost the job)
                return
            except self.board.errors as e:
                log.warning("job %s: cannot record its end yet (%s)", job_id, e)
                await asyncio.sleep(1)

    # ---------------------------------------------------------------- compiler work

    async def heavy_work(self, kind: str, payload: dict, timeout: float | None, client: str) -> dict:
        from ..process_pool import EvaluationTimeout, MemoryLimit, PoolBusy, ReplyTooLarge, WorkerFailed

        try:
            body = await self.heavy.run(kind, payload, timeout, client=client)
        except EvaluationTimeout as e:
            return {"error": "timeout", "message": str(e)}
        except MemoryLimit:
            return {"error": "memory"}
        except PoolBusy:
            return {"error": "busy"}
        except ReplyTooLarge as e:
            return {"error": "too_large", "size": e.args[0]}
        except WorkerFailed as e:
            return {"error": "failed", "message": str(e)}
        return {"ok": base64.b64encode(body).decode()}


_runtime: Runtime | None = None


def register_tasks(app) -> None:
    @app.task(name=TRAIN_TASK, ignore_result=True)
    def train(job_id: str) -> None:
        _runtime.call(_runtime.train(job_id))

    @app.task(name=HEAVY_TASK)
    def heavy(kind: str, payload: dict, timeout: float | None, client: str) -> dict:
        return _runtime.call(_runtime.heavy_work(kind, payload, timeout, client))


def run_queue(url: str, settings, queue: str, log_level: str, name: str | None) -> int:
    """One Celery worker for one queue, in this process."""
    from celery import signals

    global _runtime
    app = make_app(url)
    register_tasks(app)
    concurrency = settings.train_jobs if queue == "train" else settings.heavy_pool_size

    @signals.worker_init.connect(weak=False)
    def started(**_):
        global _runtime
        _runtime = Runtime(url, settings, queue)

    @signals.worker_shutting_down.connect(weak=False)
    def stopping(**_):   # SIGTERM: no new task; the running ones finish (trainings within the grace)
        if _runtime is not None:
            _runtime.drain(settings.worker_stop_seconds)

    @signals.worker_shutdown.connect(weak=False)
    def stopped(**_):    # every task has ended
        if _runtime is not None:
            _runtime.stop()

    node = name or f"{queue}-{os.getpid()}@{socket.gethostname()}"
    app.worker_main(["worker", "--pool", "threads", "--concurrency", str(concurrency), "--queues", QUEUES[queue],
                     "--hostname", node, "--loglevel", log_level.upper(), "--without-gossip", "--without-mingle",
                     "--without-heartbeat"])
    return 0
