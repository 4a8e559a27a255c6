"""The store's one schema, as numbered migrations for both engines (SQLite and PostgreSQL).

A table `schema_version` records the versions applied; a store opens by applying the ones it lacks, in
order, inside one transaction (on PostgreSQL under an advisory lock, so that replicas starting together
migrate once). Migration 1 is the schema of the stores made before migrations existed (`CREATE TABLE IF
NOT EXISTS`), so those open unchanged and are recorded as version 1.

Rolling upgrades (one replica at a time, docs/deploy.md): a migration is **compatible** when a rasplay
that knows only the versions before it still reads and writes the store correctly once it is applied: it
only adds (a table, an index, a column that may be NULL or has a default) and changes the meaning of
nothing that exists (no column or table dropped, renamed or retyped, no row rewritten into a form the
older code would misread, no constraint an older writer would break). A compatible migration declares
`oldest`: the oldest schema version whose rasplay may still use the store after it (the previous
migration's `oldest`, or its version if that one was not compatible); any other migration leaves
`oldest` None (its own version: only rasplay that knows it may open the store). Each migration applied
is recorded with its `oldest` in `schema_compat`, so that an older rasplay, which cannot know the newer
migrations, opens a store whose newer versions all allow it (and writes nothing to the schema), and
refuses, saying which version it needs, a store with any newer version that does not.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger("rasplay")


@dataclass(frozen=True)
class Migration:
    what: str
    statements: dict[str, list[str]]   # engine -> statements
    oldest: int | None = None            # compatible: the oldest schema version that may still use the store


MIGRATIONS: dict[int, Migration] = {
    1: Migration("links and compiled models", {
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
    # compatible: only a table added, which releases before it never read
    2: Migration("the settings each replica of a shared store started with (course/agreement.py)", {
        "sqlite": [
            "CREATE TABLE IF NOT EXISTS replica_settings (replica TEXT NOT NULL, name TEXT NOT NULL, "
            "value TEXT NOT NULL, started TEXT NOT NULL, PRIMARY KEY (replica, name))",
        ],
        "postgresql": [
            "CREATE TABLE IF NOT EXISTS replica_settings (replica TEXT NOT NULL, name TEXT NOT NULL, "
            "value TEXT NOT NULL, started TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (replica, name))",
        ],
    }, oldest=1),
}
LATEST = max(MIGRATIONS)
VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)"
COMPAT_TABLE = "CREATE TABLE IF NOT EXISTS schema_compat (version INTEGER PRIMARY KEY, oldest INTEGER NOT NULL)"
# the tables a store copy moves, with the column holding each row's JSON
TABLES = {"links": "state", "models": "spec"}


class NewerSchema(Exception):
    pass


def pending(applied: int, newer: dict[int, int] | None = None) -> list[tuple[int, Migration]]:
    """The migrations after version `applied`, in order. Past the last one known, none, when every newer
    version's `oldest` (`newer`: version -> oldest, from schema_compat) allows this rasplay; else NewerSchema."""
    if applied > LATEST:
        newer = newer or {}
        unknown = [v for v in range(LATEST + 1, applied + 1) if v not in newer]
        needs = max([newer[v] for v in newer if v > LATEST] + [applied if unknown else 0])
        if needs > LATEST:
            raise NewerSchema(f"its schema is version {applied}, and this rasplay knows versions up to {LATEST}"
                              f"{'' if unknown else f'; the store needs a rasplay that knows version {needs}'}: "
                              "upgrade rasplay")
        log.warning("the store's schema is version %d (a newer rasplay's); this rasplay knows versions up to %d, "
                    "and every newer migration is compatible with it: opening it as it is", applied, LATEST)
        return []
    return [(v, MIGRATIONS[v]) for v in sorted(MIGRATIONS) if v > applied]


def _oldest(version: int) -> int:
    return MIGRATIONS[version].oldest or version


def migrate_sqlite(db) -> list[int]:
    """Apply the missing migrations to an SQLite connection (autocommit mode). Returns the versions applied."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(VERSION_TABLE)
        db.execute(COMPAT_TABLE)
        applied = db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]
        newer = dict(db.execute("SELECT version, oldest FROM schema_compat WHERE version > ?", (LATEST,)).fetchall())
        todo = pending(applied, newer)
        for version, migration in todo:
            for sql in migration.statements["sqlite"]:
                db.execute(sql)
            db.execute("INSERT INTO schema_version (version, applied) VALUES (?, datetime('now'))", (version,))
            db.execute("INSERT INTO schema_compat (version, oldest) VALUES (?, ?)", (version, _oldest(version)))
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
        conn.execute(COMPAT_TABLE)
        applied = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]
        newer = dict(conn.execute("SELECT version, oldest FROM schema_compat WHERE version > %s", (LATEST,)).fetchall())
        todo = pending(applied, newer)
        for version, migration in todo:
            for sql in migration.statements["postgresql"]:
                conn.execute(sql)
            conn.execute("INSERT INTO schema_version (version, applied) VALUES (%s, now()::text)", (version,))
            conn.execute("INSERT INTO schema_compat (version, oldest) VALUES (%s, %s)", (version, _oldest(version)))
    return [v for v, _ in todo]
