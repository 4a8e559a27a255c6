"""What every store shares, whichever the database (SQLite here, PostgreSQL in course/store_postgres.py):
the errors, the content-addressed ids and the check of a table name. The stores' common interface is
seams.Store."""
from __future__ import annotations

import base64
import hashlib
import json

from .migrations import TABLES

ID_PATTERN = r"^[a-z2-7]{10,26}$"


class StoreError(Exception):
    pass


class StoreFull(StoreError):
    pass


class StoreUnavailable(StoreError):
    pass


class StoreCorrupt(StoreError):
    pass


def canonical(state: dict) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_id(text: str, length: int = 12) -> str:
    digest = hashlib.sha256(text.encode()).digest()
    return base64.b32encode(digest).decode().lower().rstrip("=")[:length]


def model_id_of(spec: dict) -> str:
    """The id naming a compile request (source, output, vocab, max_len, bos)."""
    return "m" + content_id(canonical(spec), 15)


def _table(name: str) -> str:
    if name not in TABLES:
        raise ValueError(f"no table {name!r} in a store (there are {', '.join(TABLES)})")
    return name


def is_database_url(location: str | None) -> bool:
    return bool(location) and location.split("://", 1)[0] in ("postgresql", "postgres")
