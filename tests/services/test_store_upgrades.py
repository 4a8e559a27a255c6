"""Rolling upgrades and backups of the store (issue 35, item 5; docs/deploy.md, "Backups" and "Upgrades").

A newer release's migration that is compatible (it only adds; server/migrations.py says what that means)
is tolerated by the release before it: an older replica opens, and keeps serving, a store a newer one
migrated, so replicas are upgraded one at a time; an incompatible one is refused with the version needed.
Backups: pg_dump and pg_restore of a real PostgreSQL store, and `rasplay store copy` into SQLite and back;
every link and model resolves after the database was dropped and restored."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import httpx
import pytest

from support.live_server import ROOT, LiveServer
from support.newer_rasplay import add_migration
from support.postgres_server import postgres_server, postgres_url  # noqa: F401 - fixtures
from rasplay.server import migrations
from rasplay.server.store import StoreCorrupt, open_store

STATE = {"source": "out = reverse(tokens);", "inputs": ["abc"]}
SPEC = {"source": "out = indices;", "output": "out", "vocab": ["a", "b"], "max_len": 5, "bos": "BOS"}
NEWER = [sys.executable, str(ROOT / "tests" / "support" / "newer_rasplay.py")]


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    return str(tmp_path) if request.param == "sqlite" else request.getfixturevalue("postgres_url")


def tables(location) -> set[str]:
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location) as conn:
            return {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    with sqlite3.connect(os.path.join(location, "links.sqlite3")) as db:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def newer_release(monkeypatch, compatible: bool) -> int:
    """This process's rasplay becomes the next release (one more migration) until `monkeypatch` undoes it."""
    monkeypatch.setattr(migrations, "MIGRATIONS", dict(migrations.MIGRATIONS))
    monkeypatch.setattr(migrations, "LATEST", migrations.LATEST)
    return add_migration(compatible)


def test_an_older_rasplay_opens_a_store_a_newer_one_migrated_compatibly(location, monkeypatch, caplog):
    older = open_store(location, None)
    link = older.put_link(STATE)
    older.close()
    with monkeypatch.context() as m:
        version = newer_release(m, compatible=True)
        newer = open_store(location, None)   # the newer release migrates the store
        model = newer.put_model(SPEC)
        newer.close()
    assert "notes" in tables(location) and migrations.LATEST == version - 1
    older = open_store(location, None)   # and this release still opens it, reads and writes it
    assert older.get_link(link) == STATE and older.get_model(model) == SPEC
    other = older.put_link({"source": "x = indices;"})
    older.close()
    assert f"schema is version {version}" in caplog.text and "compatible" in caplog.text
    with monkeypatch.context() as m:
        newer_release(m, compatible=True)
        newer = open_store(location, None)   # nothing applied twice; the older one's writes are there
        assert newer.get_link(other) == {"source": "x = indices;"}
        newer.close()


def test_an_incompatible_migration_is_refused_by_the_older_rasplay_naming_the_version_it_needs(location, monkeypatch):
    open_store(location, None).close()
    with monkeypatch.context() as m:
        version = newer_release(m, compatible=False)
        open_store(location, None).close()
    with pytest.raises(StoreCorrupt, match=f"newer rasplay.*version {version}.*needs a rasplay that knows version "
                                           f"{version}.*upgrade rasplay"):
        open_store(location, None)


def test_replicas_upgraded_one_at_a_time_keep_serving_one_store(tmp_path, postgres_url):  # noqa: F811
    """Two replicas of this release on one PostgreSQL; one is restarted as the next release (a compatible
    migration), then the other is restarted *as this release* (it must start: a failed upgrade rolled
    back, or a replica restarted before its turn) and then upgraded too. Links made on either open on the
    other at every step."""
    for name in ("a", "b", "a2", "b2", "a3"):
        (tmp_path / name).mkdir()
    flags = ("--workers", "1", "--heavy-workers", "1", "--store", postgres_url)

    def shared(one, other, text):
        made = httpx.post(f"{one.url}/api/v1/share", json={"state": {"source": text}}, timeout=60)
        assert made.status_code == 200, made.text
        opened = httpx.get(f"{other.url}/s/{made.json()['id']}", timeout=60)
        assert opened.status_code == 302 and opened.headers["location"].startswith("/#"), opened.text
        assert httpx.get(f"{other.url}/s/aaaaaaaaaaaa", timeout=60).status_code == 404

    servers = [LiveServer(tmp_path / "a", *flags), LiveServer(tmp_path / "b", *flags)]
    try:
        shared(servers[0], servers[1], "x = indices;")
        servers.pop(1).stop()
        servers.append(LiveServer(tmp_path / "b2", *flags, program=[*NEWER, "compatible"]))   # b: next release
        assert "notes" in tables(postgres_url)
        shared(servers[0], servers[1], "y = tokens;")          # the old a and the new b, both ways
        shared(servers[1], servers[0], "z = length;")
        servers.pop(0).stop()
        servers.insert(0, LiveServer(tmp_path / "a2", *flags))   # a restarted at this release: it starts
        shared(servers[0], servers[1], "w = indices + 1;")
        assert "compatible" in servers[0].log_path.read_text()
        servers.pop(0).stop()
        servers.insert(0, LiveServer(tmp_path / "a3", *flags, program=[*NEWER, "compatible"]))   # a: next release
        shared(servers[1], servers[0], "v = tokens;")
    finally:
        for s in servers:
            s.stop()


def rasplay(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rasplay.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def made(store_url: str) -> tuple[list[str], str]:
    store = open_store(store_url, None)
    try:
        links = [store.put_link({"source": f"x{i} = indices;"}) for i in range(25)]
        return links, store.put_model(SPEC)
    finally:
        store.close()


def resolve(store_url: str, links: list[str], model: str) -> None:
    store = open_store(store_url, None)
    try:
        assert [store.get_link(i) for i in links] == [{"source": f"x{i} = indices;"} for i in range(25)]
        assert store.get_model(model) == SPEC and store.count("links") == 25
    finally:
        store.close()


def recreate(postgres_server, store_url: str) -> None:  # noqa: F811
    """DROP DATABASE and CREATE it again, empty (the disaster the backup is for)."""
    import psycopg

    name = store_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    assert tables(store_url) == set()   # (no store opened on it: restore into an empty database)


def test_pg_dump_and_pg_restore_bring_back_every_link(tmp_path, postgres_server, postgres_url):  # noqa: F811
    links, model = made(postgres_url)
    dump = tmp_path / "rasplay.dump"
    bindir = postgres_server.bindir
    subprocess.run([bindir / "pg_dump", "--format=custom", f"--file={dump}", postgres_url], check=True, timeout=120)
    recreate(postgres_server, postgres_url)
    subprocess.run([bindir / "pg_restore", "--no-owner", f"--dbname={postgres_url}", dump], check=True, timeout=120)
    resolve(postgres_url, links, model)
    open_store(postgres_url, None).close()   # the restored schema opens as it is (its versions came along)


def test_store_copy_into_sqlite_and_back_brings_back_every_link(tmp_path, postgres_server, postgres_url):  # noqa: F811
    links, model = made(postgres_url)
    backup = tmp_path / "backup"
    out = rasplay("store", "copy", "--from", postgres_url, "--to", str(backup))
    assert out.returncode == 0 and "every link and model of the source is in the target" in out.stdout, out
    recreate(postgres_server, postgres_url)
    back = rasplay("store", "copy", "--from", str(backup), "--to", postgres_url)
    assert back.returncode == 0 and "links: 25 in the source, 25 in the target (25 copied now" in back.stdout, back
    resolve(postgres_url, links, model)
