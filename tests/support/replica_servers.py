"""Two real `rasplay serve` replicas sharing one PostgreSQL store (and one Redis, when given), as a course
runs them (docs/deploy.md), plus what the fault tests need: a load of requests over both, recorded, and
the links and models the database holds."""
from __future__ import annotations

import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx

from .live_server import LiveServer


@contextmanager
def two_replicas(tmp_path, store_url: str, *flags: str):
    servers = []
    try:
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            servers.append(LiveServer(tmp_path / name, "--workers", "1", "--heavy-workers", "1",
                                      "--store", store_url, *flags))
        yield servers
    finally:
        for s in servers:
            s.stop()


def stored_ids(store_url: str, table: str, ids) -> set[str]:
    """Which of `ids` the database holds in `table` (links or models), asked of PostgreSQL itself."""
    import psycopg

    with psycopg.connect(store_url, connect_timeout=10) as conn:
        rows = conn.execute(f"SELECT id FROM {table} WHERE id = ANY(%s)", (list(ids),)).fetchall()
    return {r[0] for r in rows}


@dataclass
class Outcome:
    replica: int
    kind: str          # "share" or "compile"
    phase: int         # the load's phase when the request was sent
    status: int | None = None
    headers: dict = field(default_factory=dict)
    body: dict | None = None
    error: str | None = None   # a transport error or a timeout (no answer)
    sent: dict = field(default_factory=dict)   # the headers sent


class Load:
    """Threads sending new links and compiles to the replicas back to back until stopped; every answer
    (or error) is recorded with the phase the test was in when it was sent. `seen(pred)` waits for an event."""

    def __init__(self, servers, kinds=("share", "compile"), timeout: float = 60.0, headers=None):
        self.servers, self.timeout, self.headers = servers, timeout, headers or (lambda: {})
        self.phase = 0
        self.outcomes: list[Outcome] = []
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i, kind), daemon=True)
                         for i in range(len(servers)) for kind in kinds]

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(self.timeout + 30)
        assert not any(t.is_alive() for t in self._threads), "a load thread hangs"

    def _run(self, i: int, kind: str):
        with httpx.Client(base_url=self.servers[i].url, timeout=self.timeout) as c:
            while not self._stop.is_set():
                tag = uuid.uuid4().hex
                outcome = Outcome(i, kind, self.phase, sent=self.headers())
                try:
                    if kind == "share":
                        r = c.post("/api/v1/share", json={"state": {"source": f"# {tag}\nx = indices;"}},
                                   headers=outcome.sent)
                    else:
                        r = c.post("/api/v1/compile", json={"source": f"# {tag}\ncopy = tokens;", "vocab": "ab",
                                                            "max_len": 2}, headers=outcome.sent)
                    outcome.status, outcome.headers = r.status_code, dict(r.headers)
                    outcome.body = r.json() if r.headers.get("content-type", "").startswith("application/json") \
                        else None
                except httpx.HTTPError as e:
                    outcome.error = f"{type(e).__name__}: {e}"
                with self._changed:
                    self.outcomes.append(outcome)
                    self._changed.notify_all()

    def seen(self, pred, timeout: float = 180.0) -> Outcome:
        """Wait until an outcome satisfies pred (an event), and return it; fail after `timeout`."""
        with self._changed:
            found = []

            def check():
                found[:] = [o for o in self.outcomes if pred(o)][:1]
                return bool(found)
            assert self._changed.wait_for(check, timeout), f"the awaited answer never came; got {self.summary()}"
            return found[0]

    def summary(self) -> dict:
        """How many outcomes of each (replica, kind, phase, status or error), with an example body of each."""
        seen: dict = {}
        for o in self.outcomes:
            key = (o.replica, o.kind, o.phase, o.status or (o.error or "")[:80])
            count, example = seen.get(key, (0, o.body))
            seen[key] = (count + 1, example)
        return seen

    def acknowledged(self, kind: str) -> set[str]:
        """Ids the replicas answered 200 for: these must all be in the database."""
        return {o.body["id"] for o in self.outcomes if o.kind == kind and o.status == 200}
