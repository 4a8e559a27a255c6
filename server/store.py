"""The server's store, in SQLite (WAL): short links (table `links`: id -> shared state) and compiled
models (table `models`: id -> the compile request that rebuilds the model). Both are
content-addressed: the same state or compile request always gets the same id.

A committed row survives a restart and a kill -9 of the server in the middle of other writes: WAL
mode with synchronous=FULL makes every committed insert durable before the request returns.

The store has a size cap (`max_bytes`) on its files together, the write-ahead log and its index
included: the log may take an eighth of it (at least 128 KiB, at most 8 MiB: SQLite checkpoints it at
half that and truncates it to it), the log's index 32 KiB, and the database the rest (SQLite's
max_page_count). Past it, and on a full disk, a write raises StoreFull; any other failure to write raises StoreUnavailable. Opening a file
that is not a sound rasplay store raises StoreCorrupt with one line saying so.

The schema comes from migrations.py (applied at open). With a PostgreSQL URL (`rasplay serve --store
postgresql://...` or RASPLAY_STORE), open_store gives course/store_postgres.PostgresStore instead, with the same
methods; psycopg is imported only then.
"""
from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

from .migrations import TABLES, NewerSchema, migrate_sqlite
from .store_base import (ID_PATTERN, StoreCorrupt, StoreError, StoreFull, StoreUnavailable,  # noqa: F401
                         _table, canonical, content_id, is_database_url, model_id_of)

SHM_BYTES = 32 * 1024   # the write-ahead log's index (its -shm file) for a store of this size


class SQLiteStore:
    def __init__(self, path: Path, max_bytes: int | None = None):
        self.path = path
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            raise StoreCorrupt(f"cannot open the store {path}: {e}") from None
        try:
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            check = self._db.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise sqlite3.DatabaseError(check)
            migrate_sqlite(self._db)
            if max_bytes:
                page = self._db.execute("PRAGMA page_size").fetchone()[0]
                wal = self.wal_allowance(max_bytes)
                self._db.execute(f"PRAGMA journal_size_limit = {wal}")
                self._db.execute(f"PRAGMA wal_autocheckpoint = {max(1, wal // 2 // page)}")
                self._db.execute(f"PRAGMA max_page_count = {max(1, (max_bytes - wal - SHM_BYTES) // page)}")
        except NewerSchema as e:
            self._db.close()
            raise StoreCorrupt(f"the store {path} was written by a newer rasplay: {e}") from None
        except sqlite3.Error as e:
            self._db.close()
            raise StoreCorrupt(f"the store {path} is damaged or not a rasplay store ({e}); move it away "
                               f"or start with another --data-dir") from None

    def _write(self, sql: str, args: tuple) -> None:
        try:
            self._db.execute(sql, args)
        except sqlite3.OperationalError as e:
            text = str(e)
            if "full" in text:
                if self.max_bytes and self._pages_used() >= 0.95:
                    raise StoreFull(f"the server's store is full (its limit is {self.max_bytes} bytes)") from None
                raise StoreFull("the server's disk is full") from None
            raise StoreUnavailable(f"the server could not write its store ({text})") from None

    # ---------------------------------------------------------------- links

    def link_id(self, state: dict) -> tuple[str, bool]:
        """The id the state has or would get, and whether it is stored already."""
        text = canonical(state)
        with self._lock:
            for length in (12, 16, 26):  # a longer id only on a (never yet seen) collision
                link_id = content_id(text, length)
                row = self._db.execute("SELECT state FROM links WHERE id = ?", (link_id,)).fetchone()
                if row is None:
                    return link_id, False
                if row[0] == text:
                    return link_id, True
        raise RuntimeError("share id collision")  # pragma: no cover - 130 bits of sha256

    def put_link(self, state: dict) -> str:
        link_id, stored = self.link_id(state)
        if not stored:
            with self._lock:
                self._write("INSERT OR IGNORE INTO links (id, state) VALUES (?, ?)", (link_id, canonical(state)))
        return link_id

    def get_link(self, link_id: str) -> dict | None:
        with self._lock:
            row = self._db.execute("SELECT state FROM links WHERE id = ?", (link_id,)).fetchone()
        return json.loads(row[0]) if row else None

    # ---------------------------------------------------------------- compiled models

    def has_model(self, model_id: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM models WHERE id = ?", (model_id,)).fetchone() is not None

    def put_model(self, spec: dict) -> str:
        """A compile request that compiled (source, output, vocab, max_len, bos): its id names the model."""
        model_id = model_id_of(spec)
        with self._lock:
            self._write("INSERT OR IGNORE INTO models (id, spec) VALUES (?, ?)", (model_id, canonical(spec)))
        return model_id

    def get_model(self, model_id: str) -> dict | None:
        with self._lock:
            row = self._db.execute("SELECT spec FROM models WHERE id = ?", (model_id,)).fetchone()
        return json.loads(row[0]) if row else None

    # ----------------------------------------------------------------

    def _pages_used(self) -> float:
        """The share of the database's pages (max_page_count) in use."""
        count = self._db.execute("PRAGMA page_count").fetchone()[0]
        return count / self._db.execute("PRAGMA max_page_count").fetchone()[0]

    @staticmethod
    def wal_allowance(max_bytes: int) -> int:
        """The part of the cap the write-ahead log may take."""
        return max(128 * 1024, min(max_bytes // 8, 8 << 20))

    def size(self) -> int:
        """Bytes of the database's pages in use and of its write-ahead log (the size the cap applies to)."""
        with_pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        logs = 0
        for suffix in ("-wal", "-shm"):
            try:
                logs += Path(str(self.path) + suffix).stat().st_size
            except OSError:
                pass
        return with_pages * self._db.execute("PRAGMA page_size").fetchone()[0] + logs

    # ---------------------------------------------------------------- moving a store (`rasplay store copy`)

    def count(self, table: str) -> int:
        with self._lock:
            return self._db.execute(f"SELECT COUNT(*) FROM {_table(table)}").fetchone()[0]

    def export_rows(self, table: str) -> list[tuple[str, str, float]]:
        """Every row of `links` or `models`: (id, JSON text, created as Unix seconds)."""
        with self._lock:
            return self._db.execute(f"SELECT id, {TABLES[_table(table)]}, (created - 2440587.5) * 86400.0 "
                                    f"FROM {table} ORDER BY id").fetchall()

    def import_rows(self, table: str, rows: list[tuple[str, str, float]]) -> int:
        """Add rows (as export_rows gives them) that are not stored yet; returns how many were new."""
        column = TABLES[_table(table)]
        with self._lock:
            before = self._db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            self._db.execute("BEGIN")
            try:
                self._db.executemany(f"INSERT OR IGNORE INTO {table} (id, {column}, created) "
                                     f"VALUES (?, ?, ? / 86400.0 + 2440587.5)", rows)
                self._db.execute("COMMIT")
            except sqlite3.Error as e:
                self._db.execute("ROLLBACK")
                raise StoreUnavailable(f"the server could not write its store ({e})") from None
            return self._db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] - before

    def describe(self) -> str:
        return f"SQLite {self.path}"

    def close(self) -> None:
        with self._lock:
            self._db.close()


def open_store(location: str | Path | None, data_dir: Path, max_bytes: int | None = None):
    """The store at `location`: a PostgreSQL URL, else an existing SQLite file, else a data directory
    (made if missing) holding links.sqlite3; no location: links.sqlite3 in data_dir."""
    if isinstance(location, str) and is_database_url(location):
        from .course.store_postgres import PostgresStore   # psycopg only where a database is named

        return PostgresStore(location, max_bytes)
    path = Path(location) if location else data_dir
    if not path.is_file():   # a data directory, made if missing
        path = path / "links.sqlite3"
    return SQLiteStore(path, max_bytes)
