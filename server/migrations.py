"""The store's one schema, as numbered migrations for both engines (SQLite and PostgreSQL).

A table `schema_version` records the versions applied; a store opens by applying the ones it lacks, in
order, inside one transaction (on PostgreSQL under an advisory lock, so that replicas starting together
migrate once). A store written by a newer rasplay (a version above the last one here) is refused.
Migration 1 is the schema of the stores made before migrations existed (`CREATE TABLE IF NOT EXISTS`),
so those open unchanged and are recorded as version 1.
"""
from __future__ import annotations

# version -> (what it does, {engine: [statements]})
MIGRATIONS: dict[int, tuple[str, dict[str, list[str]]]] = {
    1: ("links and compiled models", {
        "sqlite": [
            "CREATE TABLE IF NOT EXISTS links (id TEXT PRIMARY KEY, state TEXT NOT NULL, "
            "created REAL NOT NULL DEFAULT (julianday('now')))",
            "CREATE TABLE IF NOT EXISTS models (id TEXT PRIMARY KEY, spec TEXT NOT NULL, "
            "created REAL NOT NULL DEFAULT (julianday('now')))",
        ],
        "postgresql": [
            "CREATE TABLE IF NOT EXISTS links (id TEXT PRIMARY KEY, state TEXT NOT NULL, "
            "created TIMESTAMPTZ NOT NULL DEFAULT now())",
            "CREATE TABLE IF NOT EXISTS models (id TEXT PRIMARY KEY, spec TEXT NOT NULL, "
            "created TIMESTAMPTZ NOT NULL DEFAULT now())",
        ],
    }),
}
LATEST = max(MIGRATIONS)
VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)"
# the tables a store copy moves, with the column holding each row's JSON
TABLES = {"links": "state", "models": "spec"}


class NewerSchema(Exception):
    pass


def pending(applied: int) -> list[tuple[int, dict[str, list[str]]]]:
    """The migrations after version `applied`, in order. Raises NewerSchema past the last one known."""
    if applied > LATEST:
        raise NewerSchema(f"its schema is version {applied}, and this rasplay knows versions up to {LATEST}: "
                          f"upgrade rasplay")
    return [(v, MIGRATIONS[v][1]) for v in sorted(MIGRATIONS) if v > applied]


def migrate_sqlite(db) -> list[int]:
    """Apply the missing migrations to an SQLite connection (autocommit mode). Returns the versions applied."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(VERSION_TABLE)
        applied = db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]
        todo = pending(applied)
        for version, statements in todo:
            for sql in statements["sqlite"]:
                db.execute(sql)
            db.execute("INSERT INTO schema_version (version, applied) VALUES (?, datetime('now'))", (version,))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return [v for v, _ in todo]


def migrate_postgresql(conn) -> list[int]:
    """Apply the missing migrations over a psycopg connection, once however many replicas start together."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(7250011)")   # any constant: rasplay's migration lock
        conn.execute(VERSION_TABLE)
        applied = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]
        todo = pending(applied)
        for version, statements in todo:
            for sql in statements["postgresql"]:
                conn.execute(sql)
            conn.execute("INSERT INTO schema_version (version, applied) VALUES (%s, now()::text)", (version,))
    return [v for v, _ in todo]
