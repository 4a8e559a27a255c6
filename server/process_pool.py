"""A generic pool of worker processes with hard time and memory limits.

The pool knows nothing of RASP: a worker imports a *registry module* (by default
`rasplay.server.work_kinds`) whose `KINDS` maps a work kind to a function `payload -> result`, and runs
the kinds it is sent. The registry may also define `warm()` (run once before the first request)
and `release()` (drop the worker's caches).

* Time: the first request of a worker's pipeline is the one running; the watchdog kills the worker
  (SIGKILL) when it runs past its time limit and starts a replacement. The requests queued behind
  it go to other workers.
* Memory: a worker runs under an address-space limit (RLIMIT_AS = its idle size + `memory_bytes`):
  an allocation past it raises MemoryError in the worker, the request gets `MemoryLimit`, and the
  worker is replaced. The watchdog also kills a worker whose resident set grows past its idle size
  + `memory_bytes` (a second line, for memory mapped outside malloc).
* Kept memory: after each request, a worker whose resident set is more than `keep_bytes` over its
  idle size drops its caches; if that is not enough, it retires and a fresh worker replaces it. So
  caches are bounded by measured bytes, not by a count of entries.
* Queue: requests wait at most `queue_timeout` for a worker to start them (then `PoolBusy`); a
  request already pipelined behind a slow one that has not started by then is answered `PoolBusy`
  too (its result, when the worker reaches it, is dropped).
* Fairness: each client (the caller names it) has a queue of its own, and the pool takes from the
  clients' queues in turn (round robin), so a client's request waits behind that client's own
  requests, not behind everyone's. One client has at most `share` requests in the workers at once
  (default: all the workers but one), so that a free worker is always left for the others, and a
  request is pipelined only behind requests of its own client.

Workers return results as bytes (JSON, or binary), so the event loop only moves bytes, and take
requests from a short pipeline so that they never idle waiting for a busy event loop.
"""
from __future__ import annotations

import asyncio
import ctypes
import gc
import importlib
import multiprocessing as mp
import os
import resource
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

import orjson


PIPELINE_BYTES = 64 * 1024   # at most this much waiting in a busy worker's socket
WATCH_INTERVAL = 0.05        # how often the watchdog looks for requests past their limits
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
DEFAULT_REGISTRY = "rasplay.server.work_kinds"


class EvaluationTimeout(Exception):
    pass


class MemoryLimit(Exception):
    pass


class PoolBusy(Exception):
    pass


class WorkerFailed(Exception):
    pass


class ReplyTooLarge(Exception):
    """The result is over the pool's reply limit (its size in bytes is the argument); it was never sent."""


class NotEncodable(Exception):
    """The request holds a value the workers' JSON cannot carry (an integer beyond 64 bits, a lone
    surrogate in a string)."""


class WorkTimeout(Exception):
    """Raised by a work kind that stopped itself at its own (cooperative) time limit."""


def encode_message(kind: str, payload: dict) -> bytes:
    try:
        return orjson.dumps([kind, payload])
    except orjson.JSONEncodeError as e:
        raise NotEncodable(str(e)) from None


def memory_of(pid: int | str = "self") -> tuple[int, int]:
    """(virtual size, resident set) of a process in bytes; (0, 0) where /proc is missing."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            size, resident = f.read().split()[:2]
        return int(size) * PAGE, int(resident) * PAGE
    except (OSError, ValueError):
        return 0, 0


def _trim_heap() -> None:
    """Give freed heap pages back to the system (glibc keeps them otherwise)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


# ---------------------------------------------------------------- the worker process

def _worker_main(conn: Connection, registry_path: str, memory_bytes: int | None, keep_bytes: int | None,
                 reply_bytes: int | None = None) -> None:
    registry = importlib.import_module(registry_path)
    kinds = registry.KINDS
    release = getattr(registry, "release", lambda: None)
    if hasattr(registry, "warm"):
        registry.warm()
    gc.collect()
    gc.freeze()   # what the warm-up built never needs collecting: keep collections short
    _trim_heap()
    idle_size, idle_resident = memory_of()
    if memory_bytes and idle_size:
        limit = idle_size + memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    conn.send_bytes(b"ready" + orjson.dumps({"size": idle_size, "resident": idle_resident}))
    while True:
        try:
            kind, payload = orjson.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        try:
            work = kinds.get(kind)
            if work is None:
                raise ValueError(f"unknown work {kind!r}")
            result = work(payload)
            out = b"ok" + (result if isinstance(result, bytes) else orjson.dumps(result))
            if reply_bytes and len(out) - 2 > reply_bytes:   # every byte counts, whatever it holds
                out = b"tl" + str(len(out) - 2).encode()
        except WorkTimeout as e:
            out = b"to" + str(e).encode()
        except MemoryError:
            result = None
            release()
            gc.collect()
            out = b"me"
        except RecursionError:
            out = b"er" + b"RecursionError: the work nests too deeply"
        except Exception as e:  # a bug in rasplay: report it, keep the worker
            out = b"er" + f"{type(e).__name__}: {e}".encode(errors="replace")
        result = None
        try:
            conn.send_bytes(out)
        except MemoryError:
            conn.send_bytes(b"me")
        out = None
        if keep_bytes is not None and memory_of()[1] > idle_resident + keep_bytes:
            release()
            gc.collect()
            _trim_heap()
            if memory_of()[1] > idle_resident + keep_bytes:
                conn.send_bytes(b"rt")   # still too large: ask to be replaced
                return


# ---------------------------------------------------------------- the pool

@dataclass(eq=False)
class _Call:
    message: bytes
    future: asyncio.Future
    limit: float       # seconds of running
    deadline: float    # when, still not started, it is answered PoolBusy
    client: str = ""   # who asked: each client has a queue of its own


@dataclass(eq=False)
class _Worker:
    process: mp.Process
    conn: Connection
    idle_resident: int = 0
    calls: deque = field(default_factory=deque)   # sent, not yet answered; the worker takes them in order
    head_started: float = 0.0                      # when the worker started the first of them

    def queued_bytes(self) -> int:
        return sum(len(c.message) for c in self.calls)

    def clients(self) -> set[str]:
        return {c.client for c in self.calls}


class WorkerPool:
    """`size` worker processes running the kinds of `registry`; see the module's docstring."""

    def __init__(self, size: int, timeout: float, queue_timeout: float, depth: int = 4, *,
                 registry: str = DEFAULT_REGISTRY, memory_bytes: int | None = None, keep_bytes: int | None = None,
                 name: str = "rasplay-worker", share: int = 0, reply_bytes: int | None = None):
        self.size = size
        self.share = min(share or size, max(1, size - 1))   # requests of one client in the workers at once
        self.timeout = timeout
        self.queue_timeout = queue_timeout
        self.depth = depth
        self.registry = registry
        self.memory_bytes = memory_bytes
        self.keep_bytes = keep_bytes
        self.reply_bytes = reply_bytes   # the largest result a worker sends back (ReplyTooLarge past it)
        self.name = name
        self.replaced = {"timeout": 0, "memory": 0, "retired": 0, "died": 0}
        self._ctx = mp.get_context("spawn")
        self._all: list[_Worker] = []
        self._waiting: OrderedDict[str, deque[_Call]] = OrderedDict()   # per client, in order of arrival
        self._served: dict[str, int] = {}   # client -> the turn it was last served (clients in the pool)
        self._turn = 0
        self._closing = False
        self._replacing: set[asyncio.Task] = set()   # workers being started (the loop keeps only weak references)
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
        process = self._ctx.Process(target=_worker_main, args=(child, self.registry, self.memory_bytes,
                                                               self.keep_bytes, self.reply_bytes),
                                    daemon=True, name=self.name)
        process.start()
        child.close()
        hello = parent.recv_bytes()
        if not hello.startswith(b"ready"):
            raise WorkerFailed("a worker did not start")
        return _Worker(process, parent, idle_resident=orjson.loads(hello[5:])["resident"])

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
        """A worker may take more now: start what waits."""
        self._pump()

    # ---------------------------------------------------------------- sending and receiving

    def _pick(self, call: _Call) -> _Worker | None:
        """The least busy worker that can take `call` now: an idle one, or one busy only with requests of
        the same client, with a short pipeline and never more than PIPELINE_BYTES waiting in its socket
        (so that a send cannot block the event loop)."""
        best = None
        for w in self._all:
            if w.calls and (len(w.calls) >= self.depth or w.clients() != {call.client}
                            or w.queued_bytes() + len(call.message) > PIPELINE_BYTES):
                continue
            if best is None or len(w.calls) < len(best.calls):
                best = w
        return best

    def in_workers(self, client: str) -> int:
        """The client's requests sent to workers and not yet answered."""
        return sum(1 for w in self._all for c in w.calls if c.client == client)

    def _pump(self) -> None:
        """Hand waiting requests to workers, the clients in turn: each time, of the clients under their
        share, the one served least recently (a client new to the pool first) sends its oldest request."""
        while self._waiting:
            for client in sorted(self._waiting, key=lambda c: self._served.get(c, -1)):
                queue = self._waiting[client]
                while queue and queue[0].future.done():   # answered already (past its wait, or gone)
                    queue.popleft()
                if not queue:
                    del self._waiting[client]
                    break   # the line changed: look again
                if self.in_workers(client) >= self.share:
                    continue
                worker = self._pick(queue[0])
                if worker is None:
                    continue
                self._turn += 1
                self._served[client] = self._turn
                call = queue.popleft()
                if not queue:
                    del self._waiting[client]
                self._send(worker, call)
                break
            else:
                return   # no one can go now

    def _enqueue(self, call: _Call, front: bool = False) -> None:
        queue = self._waiting.setdefault(call.client, deque())
        if front:
            queue.appendleft(call)
        else:
            queue.append(call)
        self._pump()

    def _send(self, worker: _Worker, call: _Call) -> None:
        if not worker.calls:
            worker.head_started = time.monotonic()
        worker.calls.append(call)
        try:
            worker.conn.send_bytes(call.message)
        except OSError as e:  # the worker died: its calls fail or move
            self._lost(worker, WorkerFailed(f"a worker died ({e!r})"), "died")

    def _on_readable(self, worker: _Worker) -> None:
        """Replies (or the worker's death) arrived: hand them to the requests waiting, in order."""
        while True:
            try:
                reply = worker.conn.recv_bytes()
            except (EOFError, OSError) as e:
                self._lost(worker, WorkerFailed(f"a worker died ({e!r})"), "died")
                return
            if reply == b"rt":              # it holds too much memory even without its caches
                self._lost(worker, None, "retired")
                return
            if worker.calls:
                call = worker.calls.popleft()
                if not call.future.done():
                    call.future.set_result(reply)
            worker.head_started = time.monotonic()
            self._free_slot()
            if reply == b"me":              # out of memory: a fresh worker, not a fragmented one
                self._lost(worker, None, "memory")
                return
            try:
                if not worker.conn.poll(0):
                    return
            except (OSError, ValueError):
                return

    # ---------------------------------------------------------------- limits and failures

    async def _watch(self) -> None:
        while not self._closing:
            await asyncio.sleep(WATCH_INTERVAL)
            now = time.monotonic()
            for client, queue in list(self._waiting.items()):   # still waiting for a worker past the queue wait
                for call in queue:
                    if now > call.deadline and not call.future.done():
                        call.future.set_exception(PoolBusy())
                kept = deque(c for c in queue if not c.future.done())
                if kept:
                    self._waiting[client] = kept
                else:
                    del self._waiting[client]
            if len(self._served) > 1000:   # forget the turns of clients with nothing in the pool
                present = set(self._waiting) | {c.client for w in self._all for c in w.calls}
                self._served = {c: t for c, t in self._served.items() if c in present}
            for worker in list(self._all):
                if not worker.calls:
                    continue
                if now - worker.head_started > worker.calls[0].limit:
                    self._lost(worker, EvaluationTimeout(), "timeout")
                    continue
                if self.memory_bytes and memory_of(worker.process.pid)[1] > worker.idle_resident + self.memory_bytes:
                    self._lost(worker, MemoryLimit(), "memory")
                    continue
                for call in list(worker.calls)[1:]:   # pipelined behind a slow one, past the queue wait
                    if now > call.deadline and not call.future.done():
                        call.future.set_exception(PoolBusy())

    def _lost(self, worker: _Worker, error: Exception | None, reason: str) -> None:
        """Kill `worker` and start another: its running call fails with `error` (when given); the calls
        queued behind it never started and go to other workers."""
        if worker not in self._all:
            return
        self.replaced[reason] += 1
        self._kill(worker)
        calls = list(worker.calls)
        worker.calls.clear()
        if error is not None and calls:
            head = calls.pop(0)
            if not head.future.done():
                head.future.set_exception(error)
        loop = asyncio.get_running_loop()
        for call in reversed(calls):   # back to the front of their clients' queues, in their order
            if not call.future.done():
                self._waiting.setdefault(call.client, deque()).appendleft(call)
        if not self._closing:
            task = loop.create_task(self._add_worker())
            self._replacing.add(task)
            task.add_done_callback(self._replacing.discard)
        self._free_slot()

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

    async def run(self, kind: str, payload: dict, timeout: float | None = None, message: bytes | None = None,
                  client: str = "") -> bytes:
        """The result's bytes (JSON, or raw bytes for binary results). Raises PoolBusy,
        EvaluationTimeout, MemoryLimit or WorkerFailed. `timeout` overrides the pool's time limit for
        this call; `message` is orjson.dumps([kind, payload]) when the caller has it already; `client`
        names the queue the request waits in."""
        call = _Call(message or encode_message(kind, payload), asyncio.get_running_loop().create_future(),
                     timeout or self.timeout, time.monotonic() + self.queue_timeout, client)
        self._enqueue(call)
        # a request whose client goes away stays in its worker's pipeline and finishes there (bounded
        # by the time limit); its reply is dropped. One still waiting for a worker leaves its queue.
        try:
            reply = await call.future
        except asyncio.CancelledError:
            queue = self._waiting.get(client)
            if queue is not None and call in queue:
                queue.remove(call)
                if not queue:
                    del self._waiting[client]
            raise
        if reply[:2] == b"to":
            raise EvaluationTimeout(reply[2:].decode())
        if reply[:2] == b"me":
            raise MemoryLimit()
        if reply[:2] == b"tl":
            raise ReplyTooLarge(int(reply[2:]))
        if reply[:2] != b"ok":
            raise WorkerFailed(reply[2:].decode(errors="replace"))
        return reply[2:]

    def alive(self) -> int:
        return sum(1 for w in self._all if w.process.is_alive())

    def stats(self) -> dict:
        """Live workers, their resident memory (bytes), how many were replaced, and why, and the requests
        sent to workers (running or pipelined) and waiting for one."""
        return {"workers": self.alive(), "resident_bytes": [memory_of(w.process.pid)[1] for w in self._all],
                "replaced": dict(self.replaced), "share": self.share,
                "running": sum(len(w.calls) for w in self._all),
                "waiting": sum(len(q) for q in self._waiting.values()), "clients_waiting": len(self._waiting)}


def default_workers() -> int:
    return max(2, min(8, (os.cpu_count() or 2) * 2))
