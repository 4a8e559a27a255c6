"""Share links (and compiled models' specs) in SQLite (WAL), content-addressed: the same state always
gets the same id.

A committed link survives a restart and a kill -9 of the server in the middle of other writes:
WAL mode with synchronous=FULL makes every committed insert durable before the request returns.
"""
from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
import threading
from pathlib import Path

ID_PATTERN = r"^[a-z2-7]{10,26}$"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS links (
    id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    created REAL NOT NULL DEFAULT (julianday('now'))
);
CREATE TABLE IF NOT EXISTS models (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    created REAL NOT NULL DEFAULT (julianday('now'))
)
"""


def canonical(state: dict) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_id(text: str, length: int = 12) -> str:
    digest = hashlib.sha256(text.encode()).digest()
    return base64.b32encode(digest).decode().lower().rstrip("=")[:length]


class ShareStore:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(_SCHEMA)

    def put(self, state: dict) -> str:
        text = canonical(state)
        with self._lock:
            for length in (12, 16, 26):  # a longer id only on a (never yet seen) collision
                link_id = content_id(text, length)
                row = self._db.execute("SELECT state FROM links WHERE id = ?", (link_id,)).fetchone()
                if row is None:
                    self._db.execute("INSERT INTO links (id, state) VALUES (?, ?)", (link_id, text))
                    return link_id
                if row[0] == text:
                    return link_id
        raise RuntimeError("share id collision")  # pragma: no cover - 130 bits of sha256

    def get(self, link_id: str) -> dict | None:
        with self._lock:
            row = self._db.execute("SELECT state FROM links WHERE id = ?", (link_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_model(self, spec: dict) -> str:
        """A compile request (source, output, vocab, max_len, bos): its id names the compiled model."""
        text = canonical(spec)
        model_id = "m" + content_id(text, 15)
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO models (id, spec) VALUES (?, ?)", (model_id, text))
        return model_id

    def get_model(self, model_id: str) -> dict | None:
        with self._lock:
            row = self._db.execute("SELECT spec FROM models WHERE id = ?", (model_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM links").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
