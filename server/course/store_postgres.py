"""The store in PostgreSQL (psycopg 3), for several replicas sharing one store (docs/deploy.md): the same
methods as store.Store, the same content-addressed ids, the schema of migrations.py.

Failure modes: the database unreachable, restarting or stopped makes every call raise StoreUnavailable
(a 503 with Retry-After), within `connect_seconds` to connect and `statement_seconds` per statement, never
a hang; a broken connection is replaced at the next call (one retry: every statement here is
idempotent), so service comes back by itself when the database does. A failure that took time (a
connection or an answer that did not come: a host gone, a frozen database) makes the calls of the next
`retry_seconds` fail at once, those waiting for the connection included, rather than each waiting as long
in turn; a refused connection fails at once anyway and is tried again at every call. The size cap (`max_bytes`) counts
the tables with their indexes and TOAST (pg_total_relation_size), a write needing room for its text twice
and two pages (so the tables stay under it): past it, and on a full disk, a write
raises StoreFull (a 507). Only this module imports psycopg (the `course` extra).
"""
from __future__ import annotations

import json
import os
import re
import socket
import threading
import time

try:
    import psycopg
    from psycopg import errors as pg_errors
except ImportError:   # pragma: no cover - the message is the point
    raise SystemExit("rasplay: a PostgreSQL store needs psycopg: pip install 'rasplay[course]'") from None

from ..migrations import TABLES, NewerSchema, migrate_postgresql
from ..store_base import StoreCorrupt, StoreFull, StoreUnavailable, _table, canonical, content_id, model_id_of


def redact(url: str) -> str:
    """The URL without its password (for messages and logs)."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


class PostgresStore:
    SLOW_FAILURE = 1.0   # seconds: a failure that took this long was a timeout, not a refusal

    def __init__(self, url: str, max_bytes: int | None = None, connect_seconds: float = 5.0,
                 statement_seconds: float = 10.0, retry_seconds: float = 2.0, clock=time.monotonic):
        self.url = url
        self.max_bytes = max_bytes
        self.connect_seconds = connect_seconds
        self.statement_seconds = statement_seconds
        self.retry_seconds, self.clock = retry_seconds, clock
        self._down_until, self._down_reason = 0.0, ""
        self._lock = threading.Lock()
        self._conn: psycopg.Connection | None = None
        with self._lock:
            try:
                migrate_postgresql(self._connection())
            except NewerSchema as e:
                self._drop()
                raise StoreCorrupt(f"the store {redact(url)} was written by a newer rasplay: {e}") from None
            except psycopg.OperationalError as e:
                self._drop()
                raise StoreUnavailable(f"cannot reach the store {redact(url)}: {_first_line(e)}") from None
            except psycopg.Error as e:
                self._drop()
                raise StoreCorrupt(f"the store {redact(url)} is not a rasplay store ({_first_line(e)})") from None

    # ---------------------------------------------------------------- connection

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=max(1, round(self.connect_seconds)),
                options=f"-c statement_timeout={int(self.statement_seconds * 1000)}",
                # a database host that vanishes (no RST) is noticed within seconds, not the kernel's hours
                keepalives=1, keepalives_idle=5, keepalives_interval=2, keepalives_count=2,
                application_name="rasplay")
        return self._conn

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:   # pragma: no cover - a connection already broken
                pass
            self._conn = None

    def _run(self, work):
        """work(connection) under the lock; a broken connection is replaced once, then StoreUnavailable.
        A database that stops answering (its process frozen, its host gone) is cut off by a watchdog after
        statement_seconds + 2, and a call waits for the lock at most twice that: never a hang."""
        self._fail_fast()
        if not self._lock.acquire(timeout=2 * (self.statement_seconds + self.connect_seconds + 2)):
            raise StoreUnavailable("the server's store (PostgreSQL) is not answering")
        try:
            self._fail_fast()   # the call before this one, which it waited for, timed out
            for attempt in (0, 1):
                reused = self._conn is not None and not self._conn.closed
                cut = threading.Event()
                started = time.monotonic()
                try:
                    conn = self._connection()
                    watchdog = threading.Timer(self.statement_seconds + 2, _cut_off, (conn, cut))
                    watchdog.daemon = True
                    watchdog.start()
                    try:
                        return work(conn)
                    finally:
                        watchdog.cancel()
                except pg_errors.DiskFull:
                    raise StoreFull("the server's database disk is full") from None
                except (psycopg.OperationalError, psycopg.InterfaceError) as e:
                    self._drop()
                    if attempt == 0 and reused and not cut.is_set():
                        continue   # the database restarted since: a fresh connection may work
                    reason = f"no answer within {self.statement_seconds + 2:g} s" if cut.is_set() else _first_line(e)
                    if cut.is_set() or time.monotonic() - started >= self.SLOW_FAILURE:
                        self._down_until, self._down_reason = self.clock() + self.retry_seconds, reason
                    raise StoreUnavailable(f"the server's store (PostgreSQL) is unavailable ({reason})") from None
                except psycopg.Error as e:
                    raise StoreUnavailable(f"the server could not use its store ({_first_line(e)})") from None
        finally:
            self._lock.release()
        raise AssertionError("unreachable")   # pragma: no cover

    def _fail_fast(self) -> None:
        if self._down_until:
            if self.clock() < self._down_until:
                raise StoreUnavailable(f"the server's store (PostgreSQL) is unavailable ({self._down_reason}; "
                                       f"asked again within {self.retry_seconds:g} s)")
            self._down_until = 0.0

    def _insert(self, table: str, column: str, row_id: str, text: str) -> None:
        def work(conn):
            # room for the text twice over (table or TOAST, and WAL-free page slack) and two new pages
            if self.max_bytes and _size(conn) + 2 * len(text.encode()) + 2 * 8192 > self.max_bytes:
                raise StoreFull(f"the server's store is full (its limit is {self.max_bytes} bytes)")
            conn.execute(f"INSERT INTO {table} (id, {column}) VALUES (%s, %s) ON CONFLICT (id) DO NOTHING",
                         (row_id, text))
        self._run(work)

    # ---------------------------------------------------------------- links

    def link_id(self, state: dict) -> tuple[str, bool]:
        text = canonical(state)

        def work(conn):
            for length in (12, 16, 26):  # a longer id only on a (never yet seen) collision
                link_id = content_id(text, length)
                row = conn.execute("SELECT state FROM links WHERE id = %s", (link_id,)).fetchone()
                if row is None:
                    return link_id, False
                if row[0] == text:
                    return link_id, True
            raise RuntimeError("share id collision")  # pragma: no cover - 130 bits of sha256
        return self._run(work)

    def put_link(self, state: dict) -> str:
        link_id, stored = self.link_id(state)
        if not stored:
            self._insert("links", "state", link_id, canonical(state))
        return link_id

    def get_link(self, link_id: str) -> dict | None:
        row = self._run(lambda conn: conn.execute("SELECT state FROM links WHERE id = %s", (link_id,)).fetchone())
        return json.loads(row[0]) if row else None

    # ---------------------------------------------------------------- compiled models

    def has_model(self, model_id: str) -> bool:
        return self._run(lambda conn: conn.execute("SELECT 1 FROM models WHERE id = %s",
                                                   (model_id,)).fetchone()) is not None

    def put_model(self, spec: dict) -> str:
        model_id = model_id_of(spec)
        self._insert("models", "spec", model_id, canonical(spec))
        return model_id

    def get_model(self, model_id: str) -> dict | None:
        row = self._run(lambda conn: conn.execute("SELECT spec FROM models WHERE id = %s", (model_id,)).fetchone())
        return json.loads(row[0]) if row else None

    # ---------------------------------------------------------------- replicas' settings

    def record_settings(self, replica: str, values: dict[str, str]) -> list[tuple[str, str, str, str]]:
        """Record this replica's `values` (name -> value) as it starts; every other replica's recorded ones:
        (replica, name, value, when it started, UTC)."""
        def work(conn):
            with conn.transaction():
                with conn.cursor() as cur:
                    cur.executemany("INSERT INTO replica_settings (replica, name, value, started) VALUES "
                                    "(%s, %s, %s, now()) ON CONFLICT (replica, name) DO UPDATE SET "
                                    "value = EXCLUDED.value, started = EXCLUDED.started",
                                    [(replica, name, value) for name, value in values.items()])
                return [tuple(r) for r in conn.execute(
                    "SELECT replica, name, value, to_char(started AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') "
                    "FROM replica_settings WHERE replica <> %s ORDER BY replica, name", (replica,)).fetchall()]
        return self._run(work)

    # ---------------------------------------------------------------- size, moving, closing

    def size(self) -> int:
        return self._run(_size)

    def count(self, table: str) -> int:
        return self._run(lambda conn: conn.execute(f"SELECT COUNT(*) FROM {_table(table)}").fetchone()[0])

    def export_rows(self, table: str) -> list[tuple[str, str, float]]:
        column = TABLES[_table(table)]
        return self._run(lambda conn: [tuple(r) for r in conn.execute(
            f"SELECT id, {column}, EXTRACT(EPOCH FROM created)::float8 FROM {table} ORDER BY id").fetchall()])

    def import_rows(self, table: str, rows: list[tuple[str, str, float]]) -> int:
        """Add rows (id, JSON text, created as Unix seconds) not stored yet, in one transaction; how many were new."""
        column = TABLES[_table(table)]

        def work(conn):
            with conn.transaction():
                before = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                with conn.cursor() as cur:
                    cur.executemany(f"INSERT INTO {table} (id, {column}, created) VALUES (%s, %s, to_timestamp(%s)) "
                                    f"ON CONFLICT (id) DO NOTHING", rows)
                return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] - before
        return self._run(work)

    def describe(self) -> str:
        return f"PostgreSQL {redact(self.url)}"

    def close(self) -> None:
        with self._lock:
            self._drop()


def _cut_off(conn, cut: threading.Event) -> None:
    """Shut the connection's socket down under a call waiting for an answer: the call fails at once."""
    cut.set()
    try:
        fd = conn.pgconn.socket
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except (OSError, psycopg.Error):
        pass   # already closed


def _size(conn) -> int:
    return conn.execute("SELECT pg_total_relation_size('links') + pg_total_relation_size('models')").fetchone()[0]


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
