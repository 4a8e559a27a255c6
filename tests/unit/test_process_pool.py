"""The worker pool's own decisions, without worker processes (server/process_pool.py): a worker's answers
(run in this process, on a fake pipe), the replies' decoding, which worker takes a request, the clients'
turns and shares, the watchdog's limits on an injected clock (one look at a time), what happens to the
requests of a worker that is lost, and starting and stopping. The pool's workers here are fake: a pipe end
that records what it is sent and hands out the replies a test gives it. One test at the end runs a real
worker for what only a real process shows. tests/services/test_worker_pool.py runs the pool end to end."""
from __future__ import annotations

import asyncio
import gc
import io
import os
import resource
import socket
import sys
import types
from collections import deque

import orjson
import pytest

from support.waiting import run_async

from rasplay.server import process_pool as pp
from rasplay.server.process_pool import (EvaluationTimeout, MemoryLimit, NotEncodable, PoolBusy, ReplyTooLarge,
                                         WorkerFailed, WorkerPool, WorkTimeout, _Call, _Worker, encode_message)

ZEROS = {"timeout": 0, "memory": 0, "retired": 0, "died": 0}


# ---------------------------------------------------------------- fakes

class Clock:
    """Stands in for the module `time` in process_pool: the pool reads only time.monotonic()."""

    def __init__(self, now: float = 1.0):
        self.now = now

    def monotonic(self) -> float:
        return self.now


class FakeProcess:
    def __init__(self, pid: int = 0, fail: BaseException | None = None):
        self.pid, self.fail = pid, fail
        self.killed, self.join_timeout, self.daemon = False, None, True

    def kill(self):
        if self.fail is not None:
            raise self.fail
        self.killed = True

    def join(self, timeout=None):
        self.join_timeout = timeout

    def is_alive(self):
        return not self.killed


class WouldBlock(Exception):
    """recv_bytes with nothing to read: a real connection would hold the event loop."""


class FakeConn:
    """The pool's end of a worker's pipe: records what is sent, hands out the replies queued in `replies`
    (an exception there is raised), raises OSError once closed, as multiprocessing's Connection does."""

    def __init__(self, fd: int = 10 ** 6):
        self.sent, self.replies, self.closed, self.fd, self.fail_send = [], deque(), False, fd, None

    def send_bytes(self, data):
        if self.closed:
            raise OSError("handle is closed")
        if self.fail_send is not None:
            raise self.fail_send
        self.sent.append(bytes(data))

    def recv_bytes(self):
        if self.closed:
            raise OSError("handle is closed")
        if not self.replies:
            raise WouldBlock
        reply = self.replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def poll(self, timeout=0.0):
        if self.closed:
            raise OSError("handle is closed")
        assert timeout <= 0, "a poll that waits holds the event loop"
        return bool(self.replies)

    def fileno(self):
        if self.closed:
            raise OSError("handle is closed")
        return self.fd

    def close(self):
        self.closed = True


def fake_worker(pool: WorkerPool, pid: int = 0, resident: int = 0) -> _Worker:
    w = _Worker(FakeProcess(pid), FakeConn(), idle_resident=resident)
    pool._all.append(w)
    return w


def new_pool(monkeypatch, size: int = 1, workers: int | None = None, **kw) -> tuple[WorkerPool, Clock]:
    """A pool of fake workers on an injected clock; the replacements it starts are fake workers too (the
    clock times of the requests for them are in pool.started)."""
    clock = Clock()
    monkeypatch.setattr(pp, "time", clock)
    kw.setdefault("timeout", 10.0)
    kw.setdefault("queue_timeout", 50.0)
    pool = WorkerPool(size, registry="support.pool_kinds", **kw)
    pool.started = []

    def add_worker():
        pool.started.append(clock.now)

        async def add():
            fake_worker(pool, pid=1000 + len(pool.started))
            pool._free_slot()
        return add()
    pool._add_worker = add_worker
    for i in range(size if workers is None else workers):
        fake_worker(pool, pid=100 + i)
    return pool, clock


async def call(pool: WorkerPool, name: str, client: str = "", **kw) -> asyncio.Task:
    """Start a request named `name` (its payload) and let it reach the pool (enqueued, maybe sent)."""
    payload = {"n": name, **kw.pop("payload", {})}
    task = asyncio.ensure_future(pool.run("k", payload, client=client, **kw))
    await asyncio.sleep(0)
    return task


def names(w: _Worker) -> list[str]:
    """The requests a (fake) worker was sent, by name, in order."""
    return [orjson.loads(m)[1]["n"] for m in w.conn.sent]


async def outcome(task: asyncio.Task):
    """The request's result or error, once the event loop has handed on what the pool set (one turn)."""
    await asyncio.sleep(0)
    assert task.done(), "the request was not answered"
    return task.exception() if task.exception() is not None else task.result()


def answer(pool: WorkerPool, w: _Worker, *replies: bytes) -> None:
    w.conn.replies.extend(replies)
    pool._on_readable(w)


class _Stop(Exception):
    pass


class _OneLook:
    """Stands in for the module asyncio in process_pool while the watchdog looks once."""

    def __init__(self):
        self.slept = []

    def __getattr__(self, name):
        return getattr(asyncio, name)

    async def sleep(self, delay):
        self.slept.append(delay)
        if len(self.slept) > 1:
            raise _Stop


async def look(pool: WorkerPool, monkeypatch) -> list[float]:
    """The watchdog's loop, once, then one turn of the event loop (what it answered reaches the requests):
    what it slept before looking."""
    one = _OneLook()
    monkeypatch.setattr(pp, "asyncio", one)
    try:
        with pytest.raises(_Stop):
            await pool._watch()
    finally:
        monkeypatch.setattr(pp, "asyncio", asyncio)
    await asyncio.sleep(0)
    return one.slept


# ---------------------------------------------------------------- pure pieces

def test_a_message_is_json_and_one_the_json_cannot_carry_is_refused():
    assert encode_message("evaluate", {"n": 1}) == b'["evaluate",{"n":1}]'
    with pytest.raises(NotEncodable):
        encode_message("evaluate", {"n": 2 ** 70})


def test_memory_of_reads_size_and_resident_pages_from_statm(monkeypatch):
    opened = []

    def statm(path):
        opened.append(path)
        return io.StringIO("10 3 2 1 0 5 0\n")
    monkeypatch.setattr(pp, "open", statm, raising=False)
    page = resource.getpagesize()
    assert pp.memory_of(1234) == (10 * page, 3 * page)
    assert opened == ["/proc/1234/statm"]
    monkeypatch.setattr(pp, "open", lambda path: io.StringIO("not numbers\n"), raising=False)
    assert pp.memory_of(1234) == (0, 0)


def test_memory_of_a_process_that_is_not_there_is_zero():
    size, resident = pp.memory_of()
    assert size >= resident > 0
    assert pp.memory_of(-1) == (0, 0)


def test_trimming_the_heap_keeps_no_padding_and_survives_a_libc_without_it(monkeypatch):
    pads = []

    class Libc:
        def malloc_trim(self, pad):
            pads.append(pad)
    monkeypatch.setattr(pp.ctypes, "CDLL", lambda name: Libc())
    pp._trim_heap()
    assert pads == [0]

    def missing(name):
        raise OSError(f"{name}: cannot open shared object file")
    monkeypatch.setattr(pp.ctypes, "CDLL", missing)
    pp._trim_heap()
    monkeypatch.setattr(pp.ctypes, "CDLL", lambda name: object())   # a libc without malloc_trim
    pp._trim_heap()


@pytest.mark.parametrize("cpus, workers", [(None, 4), (1, 2), (3, 6), (4, 8), (5, 8)])
def test_default_workers_are_two_per_core_from_2_to_8(monkeypatch, cpus, workers):
    monkeypatch.setattr(pp.os, "cpu_count", lambda: cpus)
    assert pp.default_workers() == workers


@pytest.mark.parametrize("size, share, expected", [(1, 0, 1), (2, 0, 1), (3, 0, 2), (3, 1, 1), (3, 5, 2)])
def test_a_clients_share_leaves_a_worker_for_the_others(size, share, expected):
    kw = {"share": share} if share else {}
    pool = WorkerPool(size, 1.0, 1.0, registry="support.pool_kinds", **kw)
    assert pool.stats() == {"workers": 0, "resident_bytes": [], "replaced": ZEROS, "share": expected,
                            "running": 0, "waiting": 0, "clients_waiting": 0}


# ---------------------------------------------------------------- a worker's answers (in this process)

def worker_run(monkeypatch, kinds, requests, memory, memory_bytes=None, keep_bytes=None, reply_bytes=None,
               setup=None, **registry_attrs):
    """Run _worker_main here on a fake pipe: `requests` are handed out in order (then EOF); `memory` is what
    each memory reading returns, in order; `setup(pipe)` may change the pipe first; the registry has `kinds`
    and `registry_attrs` (warm, release). Returns (what it sent, the address-space limits it set)."""
    module = types.ModuleType("pool_unit_registry")
    module.KINDS = kinds
    for name, value in registry_attrs.items():
        setattr(module, name, value)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    readings = deque(memory)

    def memory_of(pid="self"):
        assert pid == "self" and readings, "a memory reading the test did not expect"
        return readings.popleft()
    monkeypatch.setattr(pp, "memory_of", memory_of)
    limits = []
    monkeypatch.setattr(pp.resource, "setrlimit", lambda which, limit: limits.append((which, limit)))
    monkeypatch.setattr(pp, "gc", types.SimpleNamespace(collect=gc.collect, freeze=lambda: None))

    class Pipe:
        def __init__(self):
            self.requests, self.sent = deque(requests), []

        def recv_bytes(self):
            if not self.requests:
                raise EOFError
            r = self.requests.popleft()
            if isinstance(r, BaseException):
                raise r
            return r

        def send_bytes(self, data):
            self.sent.append(bytes(data))
    pipe = Pipe()
    if setup is not None:
        setup(pipe)
    pp._worker_main(pipe, module.__name__, memory_bytes, keep_bytes, reply_bytes)
    assert not readings, "memory readings the worker did not take"
    return pipe.sent, limits


def msg(kind, payload=None):
    return encode_message(kind, payload or {})


def test_a_worker_warms_up_says_ready_with_its_idle_size_and_limits_its_address_space(monkeypatch):
    warmed = []
    sent, limits = worker_run(monkeypatch, {}, [], memory=[(5000, 3000)], memory_bytes=700,
                              warm=lambda: warmed.append(True))
    assert warmed == [True]
    assert sent == [b"ready" + orjson.dumps({"size": 5000, "resident": 3000})]
    assert limits == [(resource.RLIMIT_AS, (5700, 5700))]


@pytest.mark.parametrize("memory, memory_bytes", [((5000, 3000), None), ((0, 0), 700)])
def test_a_worker_sets_no_address_space_limit_without_one_or_without_its_size(monkeypatch, memory, memory_bytes):
    sent, limits = worker_run(monkeypatch, {}, [], memory=[memory], memory_bytes=memory_bytes)
    assert limits == [] and len(sent) == 1


def test_a_worker_answers_each_request_with_its_outcome(monkeypatch):
    def boom(payload):
        raise TypeError("boom \ud800")

    def deep(payload):
        raise RecursionError("maximum recursion depth exceeded")

    def stop(payload):
        raise WorkTimeout("stopped after 2 s")
    kinds = {"doc": lambda p: {"got": p}, "bytes": lambda p: b"\x00raw", "boom": boom, "deep": deep, "stop": stop}
    requests = [msg("doc", {"a": 1}), msg("bytes"), msg("nope"), msg("boom"), msg("deep"), msg("stop"),
                msg("doc", {"b": 2})]
    sent, _ = worker_run(monkeypatch, kinds, requests, memory=[(5000, 3000)])
    assert sent[1:] == [b'ok{"got":{"a":1}}', b"ok\x00raw", b"erValueError: unknown work 'nope'",
                        b"erTypeError: boom ?", b"erRecursionError: the work nests too deeply",
                        b"tostopped after 2 s", b'ok{"got":{"b":2}}']


@pytest.mark.parametrize("error", [EOFError(), OSError("connection reset")])
def test_a_worker_stops_when_its_pipe_ends(monkeypatch, error):
    sent, _ = worker_run(monkeypatch, {"doc": lambda p: {}}, [msg("doc"), error, msg("doc")], memory=[(5000, 3000)])
    assert sent[1:] == [b"ok{}"]


def test_a_result_over_the_reply_limit_is_replaced_by_its_size(monkeypatch):
    kinds = {"blob": lambda p: b"x" * p["n"], "doc": lambda p: {"s": "y" * p["n"]}}
    requests = [msg("blob", {"n": 5}), msg("blob", {"n": 100}), msg("blob", {"n": 101}), msg("doc", {"n": 92}),
                msg("doc", {"n": 93})]
    sent, _ = worker_run(monkeypatch, kinds, requests, memory=[(5000, 3000)], reply_bytes=100)
    # every byte of the result counts, the JSON's punctuation too ({"s":""} is 8 bytes)
    assert sent[1:] == [b"ok" + b"x" * 5, b"ok" + b"x" * 100, b"tl101", b'ok{"s":"' + b"y" * 92 + b'"}', b"tl101"]
    sent, _ = worker_run(monkeypatch, kinds, [msg("blob", {"n": 10 ** 5})], memory=[(5000, 3000)])
    assert sent[1:] == [b"ok" + b"x" * 10 ** 5]   # no limit


def test_a_worker_out_of_memory_drops_its_caches_and_says_so(monkeypatch):
    released = []

    def hog(payload):
        raise MemoryError
    sent, _ = worker_run(monkeypatch, {"hog": hog, "doc": lambda p: {}}, [msg("hog"), msg("doc")],
                         memory=[(5000, 3000)], release=lambda: released.append(True))
    assert sent[1:] == [b"me", b"ok{}"] and released == [True]


def test_a_reply_the_worker_cannot_send_for_lack_of_memory_is_answered_memory_limit(monkeypatch):
    def setup(pipe):
        def send(data, pipe=pipe):
            if data.startswith(b"ok"):
                raise MemoryError
            pipe.sent.append(bytes(data))
        pipe.send_bytes = send
    sent, _ = worker_run(monkeypatch, {"doc": lambda p: {"big": 1}}, [msg("doc")], memory=[(5000, 3000)],
                         setup=setup)
    assert sent[1:] == [b"me"]


def test_a_worker_over_its_kept_bytes_drops_its_caches_and_retires_if_that_is_not_enough(monkeypatch):
    released = []
    requests = [msg("doc")] * 5
    # idle resident 1000 bytes and keep_bytes 500: up to 1500 is kept; over it, the caches go; still over, it retires
    memory = [(9000, 1000), (9, 1200), (9, 1500), (9, 1501), (9, 1100), (9, 1501), (9, 1500), (9, 1501), (9, 1501)]
    sent, _ = worker_run(monkeypatch, {"doc": lambda p: {}}, requests, memory=memory, keep_bytes=500,
                         release=lambda: released.append(True))
    assert sent[1:] == [b"ok{}"] * 5 + [b"rt"] and released == [True, True, True]


def test_a_worker_without_a_kept_bytes_limit_never_measures_itself(monkeypatch):
    sent, _ = worker_run(monkeypatch, {"doc": lambda p: {}}, [msg("doc"), msg("doc")], memory=[(9000, 1000)])
    assert sent[1:] == [b"ok{}", b"ok{}"]


# ---------------------------------------------------------------- which worker takes a request

def calls_of(client: str, *sizes: int) -> deque:
    return deque(_Call(b"x" * n, None, 1.0, 0.0, client) for n in sizes)


def a_call(client: str = "A", size: int = 1) -> _Call:
    return _Call(b"m" * size, None, 1.0, 0.0, client)


def test_a_request_goes_to_the_least_busy_worker_that_can_take_it():
    pool = WorkerPool(4, 1.0, 1.0, registry="support.pool_kinds")
    w = [_Worker(FakeProcess(), FakeConn()) for _ in range(4)]
    w[0].calls, w[2].calls = calls_of("A", 1, 1), calls_of("A", 1)
    pool._all = list(w)
    assert pool._pick(a_call()) is w[1]             # the first idle one
    pool._all = [w[0], w[2]]
    assert pool._pick(a_call()) is w[2]             # else the shortest pipeline of the same client
    pool._all = [w[2], w[0]]
    assert pool._pick(a_call()) is w[2]
    pool._all = [_Worker(FakeProcess(), FakeConn(), calls=calls_of("B", 1)), w[1]]
    assert pool._pick(a_call()) is w[1]             # past a worker busy with another client
    assert pool._pick(a_call(size=10 ** 6)) is w[1]   # an idle worker takes a request of any size
    pool._all = []
    assert pool._pick(a_call()) is None


def test_a_request_is_pipelined_only_behind_its_own_clients_in_a_short_pipeline_of_few_bytes():
    pool = WorkerPool(2, 1.0, 1.0, registry="support.pool_kinds")
    busy = _Worker(FakeProcess(), FakeConn(), calls=calls_of("A", 1, 1, 1))
    pool._all = [busy]
    assert pool._pick(a_call("A")) is busy
    assert pool._pick(a_call("B")) is None                         # behind another client's: never
    busy.calls.append(_Call(b"x", None, 1.0, 0.0, "A"))
    assert pool._pick(a_call("A")) is None                         # four deep (the default depth): full
    one = _Worker(FakeProcess(), FakeConn(), calls=calls_of("A", 1))
    pool._all = [one]
    assert pool._pick(a_call("A", pp.PIPELINE_BYTES - 1)) is one   # 64 KiB waiting in its socket at most
    assert pool._pick(a_call("A", pp.PIPELINE_BYTES)) is None
    assert pp.PIPELINE_BYTES == 64 * 1024


@pytest.mark.parametrize("depth", [0, 1])
def test_a_pool_of_depth_one_or_less_never_pipelines(depth):
    pool = WorkerPool(2, 1.0, 1.0, depth=depth, registry="support.pool_kinds")
    busy, idle = (_Worker(FakeProcess(), FakeConn(), calls=calls_of("A", 1)), _Worker(FakeProcess(), FakeConn()))
    pool._all = [busy]
    assert pool._pick(a_call("A")) is None
    pool._all = [busy, idle]
    assert pool._pick(a_call("A")) is idle


def test_a_clients_requests_in_the_workers_are_counted_by_name():
    pool = WorkerPool(2, 1.0, 1.0, registry="support.pool_kinds")
    pool._all = [_Worker(FakeProcess(), FakeConn(), calls=calls_of("client-a", 1) + calls_of("client-b", 1)),
                 _Worker(FakeProcess(), FakeConn(), calls=calls_of("client-b", 1) + calls_of("client-c", 1)
                         + calls_of("client-b", 1))]
    client = "-".join(["client", "b"])   # equal to the calls' names, not the same object (as a server's would be)
    assert pool.in_workers(client) == 3
    assert pool.in_workers("client-d") == 0


# ---------------------------------------------------------------- replies

@pytest.mark.parametrize("reply, expected", [
    (b'ok{"a":1}', b'{"a":1}'),
    (b"ok\x00binary", b"\x00binary"),
    (b"tostopped at its own limit", EvaluationTimeout("stopped at its own limit")),
    (b"me", MemoryLimit()),
    (b"tl123456", ReplyTooLarge(123456)),
    (b"erValueError: bad \xff", WorkerFailed("ValueError: bad \ufffd")),
    (b"zzno such reply", WorkerFailed("no such reply")),   # a reply the pool does not know: a failure
])
def test_a_reply_becomes_the_result_or_its_error(monkeypatch, reply, expected):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        w = pool._all[0]
        task = await call(pool, "x")
        answer(pool, w, reply)
        got = await outcome(task)
        if isinstance(expected, bytes):
            assert got == expected
        else:
            assert type(got) is type(expected) and got.args == expected.args
        if reply == b"me":   # out of memory: a fresh worker replaces this one
            assert pool.replaced == {**ZEROS, "memory": 1} and w not in pool._all and w.process.killed
        else:
            assert pool.replaced == ZEROS and pool._all == [w] and not w.process.killed
    run_async(main())


def test_two_replies_in_the_pipe_are_read_at_once(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=3, workers=1)   # one worker, share 2: a pipeline of two
        w = pool._all[0]
        first, second = await call(pool, "a1", "A"), await call(pool, "a2", "A")
        assert names(w) == ["a1", "a2"]
        answer(pool, w, b'ok"one"', b'ok"two"')   # one readable event, two replies
        assert await outcome(first) == b'"one"' and await outcome(second) == b'"two"'
        assert not w.calls and not w.conn.replies
    run_async(main())


def test_a_worker_whose_pipe_cannot_be_polled_after_a_reply_is_left_to_the_watchdog(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        w = pool._all[0]
        task = await call(pool, "a1")

        def poll(timeout=0.0):
            raise ValueError("invalid file descriptor")
        w.conn.poll = poll
        answer(pool, w, b'ok"one"')
        assert await outcome(task) == b'"one"' and pool._all == [w] and pool.replaced == ZEROS
    run_async(main())


def test_a_worker_that_retires_answers_first_and_its_pipelined_requests_move(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=3, workers=2)   # share 2
        w, other = pool._all
        other.calls.append(a_call("B"))
        first, second = await call(pool, "a1", "A"), await call(pool, "a2", "A")
        assert names(w) == ["a1", "a2"]
        other.calls.clear()
        answer(pool, w, b'ok"one"', b"rt")   # the result, then: too large even without its caches
        assert await outcome(first) == b'"one"'
        assert pool.replaced == {**ZEROS, "retired": 1} and w.process.killed and pool.started == [1.0]
        assert names(other) == ["a2"] and not second.done()   # a2 never started: it moved, not failed
        answer(pool, other, b'ok"two"')
        assert await outcome(second) == b'"two"'
    run_async(main())


@pytest.mark.parametrize("reply", [b"me", EOFError(), ConnectionResetError("reset")])
def test_a_worker_lost_while_answering_fails_its_running_request_and_moves_the_others(monkeypatch, reply):
    async def main():
        pool, _ = new_pool(monkeypatch, size=3, workers=2)
        w, other = pool._all
        other.calls.append(a_call("B"))
        first, second = await call(pool, "a1", "A"), await call(pool, "a2", "A")
        other.calls.clear()
        answer(pool, w, reply)
        error = await outcome(first)
        if reply == b"me":
            assert isinstance(error, MemoryLimit) and pool.replaced == {**ZEROS, "memory": 1}
        else:
            assert isinstance(error, WorkerFailed) and "a worker died" in str(error)
            assert pool.replaced == {**ZEROS, "died": 1}
        assert w not in pool._all and w.process.killed and w.conn.closed and len(pool.started) == 1
        assert names(other) == ["a2"] and not second.done()
        answer(pool, other, b'ok"two"')
        assert await outcome(second) == b'"two"'
        await asyncio.sleep(0)
        assert len(pool._all) == 2   # the replacement
    run_async(main())


def test_a_worker_that_dies_while_sent_a_request_fails_it_and_is_replaced(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        w = pool._all[0]
        first, second = await call(pool, "a1", "A"), await call(pool, "a2", "A")   # a2 waits: A's share is 1
        w.conn.fail_send = BrokenPipeError("the worker is gone")
        answer(pool, w, b'ok"one"')   # a1 answered; a2 goes to the same worker, whose pipe is broken
        assert await outcome(first) == b'"one"'
        error = await outcome(second)
        assert isinstance(error, WorkerFailed) and "BrokenPipeError" in str(error)
        assert pool.replaced == {**ZEROS, "died": 1} and w not in pool._all and w.conn.closed
    run_async(main())


def test_an_idle_worker_that_dies_is_replaced_once(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        w = pool._all[0]
        answer(pool, w, EOFError())
        pool._lost(w, WorkerFailed("again"), "died")   # noticed twice: replaced once
        assert pool.replaced == {**ZEROS, "died": 1} and pool.started == [1.0] and w.process.join_timeout > 0
        await asyncio.sleep(0)
        task = await call(pool, "b1")
        assert names(pool._all[0]) == ["b1"]
        task.cancel()
    run_async(main())


# ---------------------------------------------------------------- requests whose client went away

def test_a_request_whose_client_goes_away_leaves_its_queue_and_its_late_reply_is_dropped(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        w = pool._all[0]
        a1 = await call(pool, "a1", "A")
        a2, a3 = await call(pool, "a2", "A"), await call(pool, "a3", "A")
        assert pool.stats()["waiting"] == 2
        a1.cancel()   # sent to the worker: it stays there, and its other requests keep waiting
        await asyncio.sleep(0)
        assert a1.cancelled() and pool.stats()["waiting"] == 2 and pool.in_workers("A") == 1
        a2.cancel()
        await asyncio.sleep(0)
        assert a2.cancelled() and pool.stats()["waiting"] == 1 and pool.stats()["clients_waiting"] == 1
        a3.cancel()
        await asyncio.sleep(0)
        assert a3.cancelled() and pool.stats()["waiting"] == 0 and pool.stats()["clients_waiting"] == 0
        answer(pool, w, b'ok"late"')   # a1's reply: nobody waits for it any more
        b1 = await call(pool, "b1", "B")
        assert names(w) == ["a1", "b1"]
        answer(pool, w, b'ok"b"')
        assert await outcome(b1) == b'"b"' and pool.replaced == ZEROS
    run_async(main())


def test_a_request_whose_client_went_away_while_it_waited_is_never_sent(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        w = pool._all[0]
        a1, a2, a3 = await call(pool, "a1", "A"), await call(pool, "a2", "A"), await call(pool, "a3", "A")
        a2.cancel()                     # its answer is settled now; it leaves its queue on its next turn
        answer(pool, w, b'ok"one"')     # ... but the worker is free before that
        assert names(w) == ["a1", "a3"]
        assert await outcome(a1) == b'"one"'
        await asyncio.sleep(0)
        assert a2.cancelled() and pool.stats()["waiting"] == 0
        a3.cancel()
    run_async(main())


# ---------------------------------------------------------------- the clients' turns

async def serve_in_turn(pool: WorkerPool, w: _Worker, n: int) -> None:
    """Answer the worker's running request `n` times."""
    for _ in range(n):
        answer(pool, w, b"ok{}")
        await asyncio.sleep(0)


def test_clients_take_turns_new_ones_first_each_in_its_own_order(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        w = pool._all[0]
        tasks = [await call(pool, name, name[0].upper()) for name in ("a1", "a2", "a3", "b1", "b2", "c1")]
        await serve_in_turn(pool, w, 6)
        assert names(w) == ["a1", "b1", "c1", "a2", "b2", "a3"]
        assert all(t.done() for t in tasks)
    run_async(main())


def test_the_client_served_longest_ago_goes_first_wherever_it_waits(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        w = pool._all[0]
        tasks = [await call(pool, "p1", "P"), await call(pool, "q1", "Q"), await call(pool, "q2", "Q"),
                 await call(pool, "p2", "P")]   # P waits again after Q: P's queue is behind Q's
        await serve_in_turn(pool, w, 4)
        assert names(w) == ["p1", "q1", "p2", "q2"]   # P was served longer ago than Q
        assert all(t.done() for t in tasks)
    run_async(main())


def test_a_client_at_its_share_lets_the_next_client_go(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=2)   # share 1
        w0, w1 = pool._all
        tasks = [await call(pool, n, n[0].upper()) for n in ("a1", "a2", "b1", "b2")]
        assert names(w0) == ["a1"] and names(w1) == ["b1"]   # a2 and b2 wait: each client is at its share
        answer(pool, w1, b"ok{}")   # B's turn came after A's, and A is at its share: B goes
        assert names(w1) == ["b1", "b2"] and names(w0) == ["a1"]
        for t in tasks:
            t.cancel()
    run_async(main())


def test_a_client_no_worker_can_take_lets_the_next_client_go(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=3)   # share 2
        tasks = [await call(pool, n, n[0].upper()) for n in ("b1", "c1", "d1")]
        tasks.append(await call(pool, "a1", "A"))   # every worker is busy with another client
        tasks.append(await call(pool, "b2", "B"))   # B may pipeline behind its own
        assert [names(w) for w in pool._all] == [["b1", "b2"], ["c1"], ["d1"]]
        assert pool.stats()["waiting"] == 1 and pool.stats()["running"] == 4
        for t in tasks:
            t.cancel()
    run_async(main())


def test_a_freed_worker_takes_as_many_as_it_can(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=3)   # share 2
        tasks = [await call(pool, n, n[0].upper()) for n in ("x1", "y1", "z1", "a1", "a2")]
        w0 = pool._all[0]
        assert pool.stats()["waiting"] == 2
        answer(pool, w0, b"ok{}")   # x1 done: a1 takes the worker, and a2 is pipelined behind it at once
        assert names(w0) == ["x1", "a1", "a2"] and pool.stats()["waiting"] == 0
        for t in tasks:
            t.cancel()
    run_async(main())


def test_a_pipeline_takes_a_clients_first_waiting_request_by_its_size(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=3)   # share 2
        tasks = [await call(pool, n, n[0].upper()) for n in ("y1", "z1", "a1", "a2")]
        w = pool._all[2]
        assert names(w) == ["a1", "a2"]
        tasks.append(await call(pool, "a3", "A"))   # small
        tasks.append(await call(pool, "a4", "A", payload={"pad": "x" * pp.PIPELINE_BYTES}))   # never fits behind
        answer(pool, w, b"ok{}")
        assert names(w) == ["a1", "a2", "a3"] and pool.stats()["waiting"] == 1
        for t in tasks:
            t.cancel()
    run_async(main())


def test_a_client_never_has_more_than_its_share_in_the_workers(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=300)   # share 299: counts past CPython's small integers
        tasks = [asyncio.ensure_future(pool.run("k", {"n": str(i)}, client="A")) for i in range(300)]
        await asyncio.sleep(0)
        assert pool.in_workers("A") == 299 and pool.stats()["waiting"] == 1
        for t in tasks:
            t.cancel()
    run_async(main())


def test_a_client_has_its_own_queue_even_after_its_requests_went(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        task = await call(pool, "a1", "A")
        assert pool.stats()["clients_waiting"] == 0 and pool.stats()["running"] == 1
        waiting = await call(pool, "a2", "A")
        assert pool.stats()["clients_waiting"] == 1
        answer(pool, pool._all[0], b"ok{}")
        assert pool.stats()["clients_waiting"] == 0 and pool.stats()["waiting"] == 0
        task.cancel(), waiting.cancel()
    run_async(main())


def test_a_request_sent_with_its_message_goes_as_it_is(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        task = asyncio.ensure_future(pool.run("k", {"n": "x"}, message=b'["k",{"n":"pre-encoded"}]'))
        await asyncio.sleep(0)
        assert names(pool._all[0]) == ["pre-encoded"]
        task.cancel()
    run_async(main())


# ---------------------------------------------------------------- the watchdog (injected clock)

def test_the_watchdog_looks_often(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        slept = await look(pool, monkeypatch)
        assert 0 < slept[0] <= 0.1
    run_async(main())


def test_a_running_request_is_timed_from_its_own_start_to_its_own_limit(monkeypatch):
    async def main():
        pool, clock = new_pool(monkeypatch, size=4, workers=3, timeout=2.0)   # share 3
        w0, w1, w2 = pool._all
        a1 = await call(pool, "a1", "A")                  # the pool's limit: 2 s
        b1 = await call(pool, "b1", "B", timeout=30)      # its own, longer
        c1 = await call(pool, "c1", "C", timeout=2.0)     # its own, as long as the pool's
        clock.now = 2.0
        a2 = await call(pool, "a2", "A", timeout=30)      # pipelined behind a1: a1's start is still the head's
        assert names(w0) == ["a1", "a2"]
        idle = fake_worker(pool, pid=99)
        pool._all.insert(0, pool._all.pop())              # an idle worker first: the watchdog looks past it
        clock.now = 3.0                                    # a1 and c1 at their limit, not past it
        await look(pool, monkeypatch)
        assert pool.replaced == ZEROS and not any(t.done() for t in (a1, b1, c1, a2))
        clock.now = 3.5
        await look(pool, monkeypatch)
        assert isinstance(await outcome(a1), EvaluationTimeout) and isinstance(await outcome(c1), EvaluationTimeout)
        assert pool.replaced == {**ZEROS, "timeout": 2} and pool.started == [3.5, 3.5]
        assert w0 not in pool._all and w2 not in pool._all and w1 in pool._all
        assert names(idle) == ["a2"] and not a2.done() and not b1.done()   # a2 never started: it moved
        for t in (a2, b1):
            t.cancel()
    run_async(main())


def test_a_pipelined_request_is_timed_from_when_the_one_before_it_answered(monkeypatch):
    async def main():
        pool, clock = new_pool(monkeypatch, size=3, workers=1, timeout=2.0)
        w = pool._all[0]
        a1, a2 = await call(pool, "a1", "A"), await call(pool, "a2", "A")
        clock.now = 2.5
        answer(pool, w, b"ok{}")   # a2 starts now
        clock.now = 4.5
        await look(pool, monkeypatch)
        assert pool.replaced == ZEROS and not a2.done()
        clock.now = 4.6
        await look(pool, monkeypatch)
        assert isinstance(await outcome(a2), EvaluationTimeout) and a1.done()
    run_async(main())


def test_a_worker_over_its_memory_is_replaced(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=3, memory_bytes=500)
        resident = {100: 1500, 101: 1501, 102: 1501}   # idle 1000 each: 1500 is the limit
        monkeypatch.setattr(pp, "memory_of", lambda pid: (7, resident[pid]))
        for w in pool._all:
            w.idle_resident = 1000
        tasks = [await call(pool, n, n[0].upper()) for n in ("a1", "b1", "c1")]
        await look(pool, monkeypatch)
        assert [type(await outcome(t)) for t in tasks[1:]] == [MemoryLimit, MemoryLimit] and not tasks[0].done()
        assert pool.replaced == {**ZEROS, "memory": 2} and [w.process.pid for w in pool._all][0] == 100
        tasks[0].cancel()
    run_async(main())


def test_a_pool_without_a_memory_limit_never_measures_its_workers(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        monkeypatch.setattr(pp, "memory_of", lambda pid: (1 << 40, 1 << 40))
        task = await call(pool, "a1")
        await look(pool, monkeypatch)
        assert pool.replaced == ZEROS and not task.done()
        task.cancel()
    run_async(main())


def test_requests_not_started_by_the_queue_wait_are_answered_busy(monkeypatch):
    async def main():
        pool, clock = new_pool(monkeypatch, size=3, queue_timeout=5.0)   # share 2
        clock.now = 100.0                      # waits end at 105
        b1, c1 = await call(pool, "b1", "B"), await call(pool, "c1", "C")
        a1, a2, a3 = await call(pool, "a1", "A"), await call(pool, "a2", "A"), await call(pool, "a3", "A")
        d1, e1 = await call(pool, "d1", "D"), await call(pool, "e1", "E")
        assert names(pool._all[2]) == ["a1", "a2"]   # a2 pipelined behind a1; a3 (A's share), d1, e1 wait
        clock.now = 102.0                      # these wait until 107
        a4, d2 = await call(pool, "a4", "A"), await call(pool, "d2", "D")
        everyone = (a1, a2, a3, a4, b1, c1, d1, d2, e1)
        for now in (101.0, 105.0):             # before the wait's end, and at it
            clock.now = now
            await look(pool, monkeypatch)
            assert not any(t.done() for t in everyone) and pool.stats()["waiting"] == 5
        clock.now = 105.5
        await look(pool, monkeypatch)
        for t in (a2, a3, d1, e1):
            assert isinstance(await outcome(t), PoolBusy)
        assert not any(t.done() for t in (a1, a4, b1, c1, d2))   # a1 runs: the queue wait is not its limit
        assert pool.stats()["waiting"] == 2 and pool.stats()["clients_waiting"] == 2   # E has nothing left
        clock.now = 106.0
        await look(pool, monkeypatch)          # past the wait again: answered once
        answer(pool, pool._all[2], b'ok"a1"', b'ok"a2"')   # a2's late result is dropped
        assert await outcome(a1) == b'"a1"'
        for t in everyone:
            t.cancel()
    run_async(main())


def test_the_turns_of_clients_gone_are_forgotten_past_a_thousand(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        a1, b1 = await call(pool, "a1", "A"), await call(pool, "b1", "B")   # A in a worker, B waiting
        pool._served["gone"] = 2
        await look(pool, monkeypatch)
        assert set(pool._served) == {"A", "gone"}   # a few turns are kept
        pool._served.update({f"gone{i}": 2 + i for i in range(997)}, B=5000)
        assert len(pool._served) == 1000
        await look(pool, monkeypatch)
        assert len(pool._served) == 1000   # a thousand turns are kept
        pool._served["gone-too"] = 6000
        await look(pool, monkeypatch)
        assert set(pool._served) == {"A", "B"} and pool._served["B"] == 5000   # those of clients present stay
        a1.cancel(), b1.cancel()
    run_async(main())


# ---------------------------------------------------------------- starting, stopping, losing workers

def test_a_lost_worker_without_requests_is_replaced_and_requests_whose_client_left_do_not_move(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=3, workers=2)
        w, other = pool._all
        other.calls.append(a_call("B"))
        a1, a2, a3 = await call(pool, "a1", "A"), await call(pool, "a2", "A"), await call(pool, "a3", "A")
        assert names(w) == ["a1", "a2"] and pool.stats()["waiting"] == 1
        a1.cancel(), a2.cancel()
        await asyncio.sleep(0)
        other.calls.clear()
        pool._lost(w, EvaluationTimeout(), "timeout")   # a1's client left: nothing to answer; a2 is dropped
        assert names(other) == ["a3"] and pool.replaced == {**ZEROS, "timeout": 1}
        pool._lost(other, None, "retired")               # a3 had not started: it moves, it does not fail
        assert pool.stats()["waiting"] == 1
        await asyncio.sleep(0)                           # a replacement comes up and takes it
        assert not a3.done() and any(names(x) == ["a3"] for x in pool._all)
        a3.cancel()
    run_async(main())


def test_a_closing_pool_starts_no_replacement(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=1)
        w = pool._all[0]
        pool._closing = True
        pool._lost(w, WorkerFailed("gone"), "died")
        assert pool.started == [] and w.process.killed
    run_async(main())


def spawned(pool: WorkerPool, sockets: list) -> _Worker:
    """What _spawn would return: a fake worker on a real descriptor (the event loop watches it)."""
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    sockets += [ours, theirs]
    return _Worker(FakeProcess(), FakeConn(fd=ours.fileno()), idle_resident=1)


def test_a_started_pool_watches_its_workers_blocking_and_close_stops_everything(monkeypatch):
    sockets = []

    async def main():
        pool = WorkerPool(2, 10.0, 10.0, registry="support.pool_kinds")
        pool._spawn = lambda: spawned(pool, sockets)
        await pool.start()
        assert len(pool._all) == 2 and pool.replaced == ZEROS
        assert all(os.get_blocking(w.conn.fd) for w in pool._all)   # whole messages, never pieces
        workers, watchdog = list(pool._all), pool._watchdog
        await pool.close()
        with pytest.raises(asyncio.CancelledError):
            await watchdog
        assert pool._all == [] and all(w.process.killed and w.process.join_timeout > 0 for w in workers)
        await pool._add_worker()   # a worker that comes up while the pool closes is stopped at once
        assert pool._all == [] and pool._closing
    try:
        run_async(main())
    finally:
        for s in sockets:
            s.close()


def test_a_pool_never_started_closes_quietly(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=2)
        workers = list(pool._all)
        await pool.close()
        assert pool._all == [] and all(w.process.killed and w.conn.closed for w in workers)
    run_async(main())


def test_a_new_worker_takes_what_waits(monkeypatch):
    sockets = []

    async def main():
        pool = WorkerPool(1, 10.0, 10.0, registry="support.pool_kinds")
        task = asyncio.ensure_future(pool.run("k", {"n": "early"}))
        await asyncio.sleep(0)
        assert pool.stats()["waiting"] == 1
        pool._spawn = lambda: spawned(pool, sockets)
        await pool._add_worker()
        assert names(pool._all[0]) == ["early"] and pool.stats()["waiting"] == 0
        task.cancel()
        await pool.close()
    try:
        run_async(main())
    finally:
        for s in sockets:
            s.close()


@pytest.mark.parametrize("error", [EOFError(), OSError("fork failed"), WorkerFailed("a worker did not start")])
def test_a_worker_that_cannot_start_is_an_error_unless_the_pool_is_closing(error):
    async def main():
        pool = WorkerPool(1, 10.0, 10.0, registry="support.pool_kinds")

        def spawn():
            raise error
        pool._spawn = spawn
        with pytest.raises(type(error)):
            await pool._add_worker()
        pool._closing = True
        await pool._add_worker()   # the server is stopping: nothing to report
        assert pool._all == []
    run_async(main())


@pytest.mark.parametrize("conn_fd, closed", [(-1, False), (10 ** 6, True)])
def test_killing_a_worker_whose_pipe_is_odd_or_closed_still_kills_it(conn_fd, closed):
    async def main():
        pool = WorkerPool(1, 10.0, 10.0, registry="support.pool_kinds")
        w = fake_worker(pool)
        w.conn.fd, w.conn.closed = conn_fd, closed
        pool._kill(w)
        assert w.process.killed and pool._all == []
    run_async(main())


def test_killing_a_worker_outside_the_event_loop_still_kills_it():
    pool = WorkerPool(1, 10.0, 10.0, registry="support.pool_kinds")
    w = fake_worker(pool)
    pool._kill(w)
    assert w.process.killed and w.conn.closed and pool._all == []


@pytest.mark.parametrize("error", [OSError("no such process"), ValueError("process object is closed")])
def test_killing_a_worker_that_is_gone_already_is_quiet(error):
    pool = WorkerPool(1, 10.0, 10.0, registry="support.pool_kinds")
    w = _Worker(FakeProcess(fail=error), FakeConn())
    pool._all.append(w)
    pool._kill(w)
    assert pool._all == []


def test_stats_count_live_workers_and_their_memory(monkeypatch):
    async def main():
        pool, _ = new_pool(monkeypatch, size=3, workers=2)
        monkeypatch.setattr(pp, "memory_of", lambda pid: (pid * 1000, pid * 10))
        pool._all[1].process.killed = True   # dead, not yet noticed
        task = await call(pool, "a1")
        assert pool.stats() == {"workers": 1, "resident_bytes": [1000, 1010], "replaced": ZEROS, "share": 2,
                                "running": 1, "waiting": 0, "clients_waiting": 0}
        task.cancel()
    run_async(main())


# ---------------------------------------------------------------- a real worker

def test_a_real_worker_sends_a_reply_larger_than_its_pipe_whole_and_dies_with_the_server():
    from support.pools import with_pool

    async def scenario(pool):
        assert all(w.process.daemon for w in pool._all)   # never keeps a stopping server alive
        reply = await pool.run("blob", {"bytes": 8 << 20})
        assert len(reply) == 8 << 20 and reply == b"x" * (8 << 20)
        assert pool.replaced == ZEROS
    with_pool(scenario, 1, timeout=60, queue_timeout=60)
