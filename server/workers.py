"""Evaluation worker processes with a hard time limit.

Each evaluation runs in one of a fixed set of worker processes, off the event loop. A worker that
runs past the time limit is killed (SIGKILL) and replaced, so a hung or heavy program really stops
and never blocks the others. Workers return the response already serialised as JSON bytes, so the
event loop only moves bytes, and they take requests from a short pipeline so that they are never
idle waiting for a busy event loop.
"""
from __future__ import annotations

import asyncio
import gc
import multiprocessing as mp
import os
import time
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

import orjson


PIPELINE_BYTES = 64 * 1024   # at most this much waiting in a busy worker's socket
WATCH_INTERVAL = 0.05        # how often the watchdog looks for requests past their time limit


class EvaluationTimeout(Exception):
    pass


class PoolBusy(Exception):
    pass


class WorkerFailed(Exception):
    pass


class NotEncodable(Exception):
    """The request holds a value the workers' JSON cannot carry (an integer beyond 64 bits, a lone
    surrogate in a string)."""


def encode_message(kind: str, payload: dict) -> bytes:
    try:
        return orjson.dumps([kind, payload])
    except orjson.JSONEncodeError as e:
        raise NotEncodable(str(e)) from None


_MODELS: "dict[str, object]" = {}   # this worker's compiled models, by id (a small LRU)


def _compiled(model_id: str, spec: dict):
    from rasplay import engine

    model = _MODELS.pop(model_id, None) or engine.compile(spec["source"], spec.get("output"), vocab=spec["vocab"],
                                                          max_len=spec["max_len"], bos=spec.get("bos", "<bos>"))
    _MODELS[model_id] = model
    while len(_MODELS) > 16:
        _MODELS.pop(next(iter(_MODELS)))
    return model


def _compile_work(kind: str, payload: dict):
    """Compiler work; a RaspError (a program the compiler cannot take, a bad input) is the user's."""
    import io

    from rasplay.engine import RaspError

    try:
        model = _compiled(payload["id"], payload["spec"])
        if kind == "compile":
            return {"ok": True, "summary": model.summary()}
        if kind == "model_run":
            return {"ok": True, "run": model.run(payload["inputs"], mode=payload["mode"], beta=payload.get("beta"))}
        if kind == "model_soft":
            return {"ok": True, "study": model.soft_study(**payload.get("options", {}))}
        if kind == "model_npz":
            buffer = io.BytesIO()
            model.export_npz(buffer, beta=payload.get("beta"))
            return buffer.getvalue()
    except RaspError as e:
        error = {"message": e.message, "kind": e.kind}
        if e.span is not None and e.span.source == "<program>":
            error.update(line=e.span.line, col=e.span.col)
        return {"ok": False, "error": error}
    raise ValueError(f"unknown work {kind!r}")


def _work(kind: str, payload: dict):
    from rasplay import engine

    if kind in ("compile", "model_run", "model_soft", "model_npz"):
        return _compile_work(kind, payload)

    if "limits" in payload:
        payload = {**payload, "limits": engine.Limits(**payload["limits"])}
    if kind == "evaluate":
        return engine.evaluate(**payload)
    if kind == "analyze":
        return engine.analyze(**payload)
    if kind == "overlay":
        from rasplay.engine.train import TrainError, overlay_imported
        try:
            return {"ok": True, "overlay": overlay_imported(payload["source"], payload["maps"], payload.get("output"))}
        except TrainError as e:
            return {"ok": False, "message": str(e)}
    if kind == "train_check":
        from rasplay.engine.train import TrainError

        from .train_job import check
        try:
            return {"ok": True, **check(payload)}
        except TrainError as e:
            return {"ok": False, "message": str(e)}
    if kind == "exercise_check":
        from rasplay.engine.exercises import CheckLimits, check_text
        return check_text(payload["text"], payload["id"], payload["source"], payload["limits"],
                          CheckLimits(seconds=payload["seconds"]))
    if kind == "sleep":  # used by tests to stand for a hung evaluation
        time.sleep(payload["seconds"])
        return {"slept": payload["seconds"]}
    raise ValueError(f"unknown work {kind!r}")


def _worker_main(conn: Connection) -> None:
    from rasplay import engine  # noqa: F401  (import once, before the first request)


    engine.evaluate("x = length;", ["ab"])  # warm the parser and library caches
    gc.collect()
    gc.freeze()   # the parser tables and library never need collecting: keep collections short
    conn.send_bytes(b"ready")
    while True:
        try:
            kind, payload = orjson.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        try:
            result = _work(kind, payload)
            if isinstance(result, bytes):
                conn.send_bytes(b"ok" + result)
                continue
            timeout = next((d for d in result.get("diagnostics", ()) if d.get("kind") == "timeout"), None)
            out = b"to" + timeout["message"].encode() if timeout else b"ok" + orjson.dumps(result)
        except Exception as e:  # a bug in rasplay: report it, keep the worker
            out = b"er" + f"{type(e).__name__}: {e}".encode()
        conn.send_bytes(out)


@dataclass(eq=False)
class _Call:
    message: bytes
    future: asyncio.Future
    limit: float


@dataclass(eq=False)
class _Worker:
    process: mp.Process
    conn: Connection
    calls: deque = field(default_factory=deque)   # sent, not yet answered; the worker takes them in order
    head_started: float = 0.0                      # when the worker started the first of them

    def queued_bytes(self) -> int:
        return sum(len(c.message) for c in self.calls)


class EvaluationPool:
    """Workers take their requests in order from a short pipeline (up to `depth` each), so they never
    wait for the event loop between two requests; the first request of a worker's pipeline is the one
    running, and the watchdog kills the worker when it runs past its time limit. The requests queued
    behind it go to other workers."""

    def __init__(self, size: int, timeout: float, queue_timeout: float, depth: int = 4):
        self.size = size
        self.timeout = timeout
        self.queue_timeout = queue_timeout
        self.depth = depth
        self._ctx = mp.get_context("spawn")
        self._all: list[_Worker] = []
        self._slot_free = asyncio.Event()
        self._closing = False
        self._watchdog: asyncio.Task | None = None

    async def start(self) -> None:
        await asyncio.gather(*(self._add_worker() for _ in range(self.size)))
        self._watchdog = asyncio.get_running_loop().create_task(self._watch())

    async def close(self) -> None:
        self._closing = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        for w in list(self._all):
            self._kill(w)

    def _spawn(self) -> _Worker:
        parent, child = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(target=_worker_main, args=(child,), daemon=True, name="rasplay-eval")
        process.start()
        child.close()
        if parent.recv_bytes() != b"ready":
            raise WorkerFailed("an evaluation worker did not start")
        return _Worker(process, parent)

    async def _add_worker(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            worker = await loop.run_in_executor(None, self._spawn)
        except (EOFError, OSError, WorkerFailed):
            if self._closing:
                return          # the server is stopping: its process group went down with the new worker
            raise
        if self._closing:
            self._kill(worker)
            return
        loop.add_reader(worker.conn.fileno(), self._on_readable, worker)
        # uvloop makes watched descriptors non-blocking; a reply larger than the socket buffer is then
        # read in pieces. Blocking reads of a message the worker is writing in full are brief and whole.
        os.set_blocking(worker.conn.fileno(), True)
        self._all.append(worker)
        self._free_slot()

    def _free_slot(self) -> None:
        self._slot_free.set()
        self._slot_free = asyncio.Event()

    # ---------------------------------------------------------------- sending and receiving

    def _pick(self, message: bytes) -> _Worker | None:
        """The least busy worker that can take `message` now: a short pipeline, and never more than
        PIPELINE_BYTES waiting in its socket (so that a send cannot block the event loop)."""
        best = None
        for w in self._all:
            if len(w.calls) >= self.depth or (w.calls and w.queued_bytes() + len(message) > PIPELINE_BYTES):
                continue
            if best is None or len(w.calls) < len(best.calls):
                best = w
        return best

    async def _dispatch(self, call: _Call, deadline: float) -> None:
        while True:
            worker = self._pick(call.message)
            if worker is not None:
                break
            waiter = self._slot_free
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PoolBusy()
            try:
                await asyncio.wait_for(waiter.wait(), remaining)
            except asyncio.TimeoutError:
                raise PoolBusy() from None
        if not worker.calls:
            worker.head_started = time.monotonic()
        worker.calls.append(call)
        try:
            worker.conn.send_bytes(call.message)
        except OSError as e:  # the worker died: its calls fail or move
            self._lost(worker, WorkerFailed(f"an evaluation worker died ({e!r})"))

    def _on_readable(self, worker: _Worker) -> None:
        """Replies (or the worker's death) arrived: hand them to the requests waiting, in order."""
        while True:
            try:
                reply = worker.conn.recv_bytes()
            except (EOFError, OSError) as e:
                self._lost(worker, WorkerFailed(f"an evaluation worker died ({e!r})"))
                return
            if worker.calls:
                call = worker.calls.popleft()
                if not call.future.done():
                    call.future.set_result(reply)
            worker.head_started = time.monotonic()
            self._free_slot()
            try:
                if not worker.conn.poll(0):
                    return
            except (OSError, ValueError):
                return

    # ---------------------------------------------------------------- time limits and failures

    async def _watch(self) -> None:
        while not self._closing:
            await asyncio.sleep(WATCH_INTERVAL)
            now = time.monotonic()
            for worker in list(self._all):
                if worker.calls and now - worker.head_started > worker.calls[0].limit:
                    self._lost(worker, EvaluationTimeout())

    def _lost(self, worker: _Worker, error: Exception) -> None:
        """Kill `worker` (past its time limit, or dead): its running call fails with `error`; the calls
        queued behind it never started and go to other workers; a new worker takes its place."""
        if worker not in self._all:
            return
        self._kill(worker)
        calls = list(worker.calls)
        worker.calls.clear()
        if calls and not calls[0].future.done():
            calls[0].future.set_exception(error)
        loop = asyncio.get_running_loop()
        for call in calls[1:]:
            if not call.future.done():
                loop.create_task(self._redispatch(call))
        if not self._closing:
            loop.create_task(self._add_worker())
        self._free_slot()

    async def _redispatch(self, call: _Call) -> None:
        try:
            await self._dispatch(call, time.monotonic() + self.queue_timeout)
        except PoolBusy as e:
            if not call.future.done():
                call.future.set_exception(e)

    def _kill(self, worker: _Worker) -> None:
        if worker in self._all:
            self._all.remove(worker)
        try:
            asyncio.get_running_loop().remove_reader(worker.conn.fileno())
        except (OSError, ValueError, RuntimeError):
            pass
        try:
            worker.process.kill()
            worker.process.join(timeout=1)
            worker.conn.close()
        except (OSError, ValueError):
            pass

    # ---------------------------------------------------------------- the public call

    async def run(self, kind: str, payload: dict, timeout: float | None = None, message: bytes | None = None) -> bytes:
        """The JSON bytes of the work's result (raw bytes for binary results). Raises PoolBusy,
        EvaluationTimeout or WorkerFailed. `timeout` overrides the pool's time limit for this call;
        `message` is orjson.dumps([kind, payload]) when the caller has it already."""
        call = _Call(message or encode_message(kind, payload), asyncio.get_running_loop().create_future(),
                     timeout or self.timeout)
        await self._dispatch(call, time.monotonic() + self.queue_timeout)
        # a request whose client goes away stays in its worker's pipeline and finishes there (bounded
        # by the time limit); its reply is dropped
        reply = await call.future
        if reply[:2] == b"to":
            raise EvaluationTimeout(reply[2:].decode())
        if reply[:2] != b"ok":
            raise WorkerFailed(reply[2:].decode(errors="replace"))
        return reply[2:]

    def alive(self) -> int:
        return sum(1 for w in self._all if w.process.is_alive())


def default_workers() -> int:
    return max(2, min(8, (os.cpu_count() or 2) * 2))
