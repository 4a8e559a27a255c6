"""Evaluation worker processes with a hard time limit.

Each evaluation runs in one of a fixed set of worker processes, off the event loop. A worker that
runs past the time limit is killed (SIGKILL) and replaced, so a hung or heavy program really stops
and never blocks the others. Workers return the response already serialised as JSON bytes, so the
event loop only moves bytes.
"""
from __future__ import annotations

import asyncio
import gc
import multiprocessing as mp
import os
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection

import orjson


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
    import engine

    model = _MODELS.pop(model_id, None) or engine.compile(spec["source"], spec.get("output"), vocab=spec["vocab"],
                                                          max_len=spec["max_len"], bos=spec.get("bos", "<bos>"))
    _MODELS[model_id] = model
    while len(_MODELS) > 16:
        _MODELS.pop(next(iter(_MODELS)))
    return model


def _compile_work(kind: str, payload: dict):
    """Compiler work; a RaspError (a program the compiler cannot take, a bad input) is the user's."""
    import io

    from engine import RaspError

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
    import engine

    if kind in ("compile", "model_run", "model_soft", "model_npz"):
        return _compile_work(kind, payload)

    if "limits" in payload:
        payload = {**payload, "limits": engine.Limits(**payload["limits"])}
    if kind == "evaluate":
        return engine.evaluate(**payload)
    if kind == "analyze":
        return engine.analyze(**payload)
    if kind == "overlay":
        from engine.train import TrainError, overlay_imported
        try:
            return {"ok": True, "overlay": overlay_imported(payload["source"], payload["maps"], payload.get("output"))}
        except TrainError as e:
            return {"ok": False, "message": str(e)}
    if kind == "train_check":
        from engine.train import TrainError

        from .train_job import check
        try:
            return {"ok": True, **check(payload)}
        except TrainError as e:
            return {"ok": False, "message": str(e)}
    if kind == "sleep":  # used by tests to stand for a hung evaluation
        time.sleep(payload["seconds"])
        return {"slept": payload["seconds"]}
    raise ValueError(f"unknown work {kind!r}")


def _worker_main(conn: Connection) -> None:
    import engine  # noqa: F401  (import once, before the first request)


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
class _Worker:
    process: mp.Process
    conn: Connection
    pending: asyncio.Future | None = None


class EvaluationPool:
    def __init__(self, size: int, timeout: float, queue_timeout: float):
        self.size = size
        self.timeout = timeout
        self.queue_timeout = queue_timeout
        self._ctx = mp.get_context("spawn")
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._all: set[_Worker] = set()
        self._closing = False

    async def start(self) -> None:
        await asyncio.gather(*(self._add_worker() for _ in range(self.size)))

    async def close(self) -> None:
        self._closing = True
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
        self._all.add(worker)
        self._idle.put_nowait(worker)

    def _on_readable(self, worker: _Worker) -> None:
        """A worker's reply (or its death) arrived: hand it to the request waiting for it."""
        try:
            reply = worker.conn.recv_bytes()
        except (EOFError, OSError) as e:
            asyncio.get_running_loop().remove_reader(worker.conn.fileno())
            reply = e
        if worker.pending is not None and not worker.pending.done():
            worker.pending.set_result(reply)

    def _kill(self, worker: _Worker) -> None:
        self._all.discard(worker)
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

    async def run(self, kind: str, payload: dict, timeout: float | None = None, message: bytes | None = None) -> bytes:
        """The JSON bytes of the work's result (raw bytes for binary results). Raises PoolBusy,
        EvaluationTimeout or WorkerFailed. `timeout` overrides the pool's time limit for this call;
        `message` is orjson.dumps([kind, payload]) when the caller has it already."""
        message = message or encode_message(kind, payload)
        try:
            worker = await asyncio.wait_for(self._idle.get(), self.queue_timeout)
        except asyncio.TimeoutError:
            raise PoolBusy() from None
        worker.pending = asyncio.get_running_loop().create_future()
        try:
            worker.conn.send_bytes(message or encode_message(kind, payload))
            reply = await asyncio.wait_for(worker.pending, timeout or self.timeout)
        except asyncio.TimeoutError:
            self._replace(worker)
            raise EvaluationTimeout() from None
        except (EOFError, OSError, asyncio.CancelledError):
            self._replace(worker)
            raise
        if isinstance(reply, Exception):
            self._replace(worker)
            raise WorkerFailed(f"an evaluation worker died ({reply!r})")
        worker.pending = None
        self._idle.put_nowait(worker)
        if reply[:2] == b"to":
            raise EvaluationTimeout(reply[2:].decode())
        if reply[:2] != b"ok":
            raise WorkerFailed(reply[2:].decode(errors="replace"))
        return reply[2:]

    def _replace(self, worker: _Worker) -> None:
        self._kill(worker)
        if not self._closing:
            asyncio.get_running_loop().create_task(self._add_worker())

    def alive(self) -> int:
        return sum(1 for w in self._all if w.process.is_alive())


def default_workers() -> int:
    return max(2, min(8, (os.cpu_count() or 2) * 2))
