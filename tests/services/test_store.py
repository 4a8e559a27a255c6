"""The store of links and models, the same tests against SQLite (the default) and a real PostgreSQL
(Debian's package, started by tests/support/postgres_server.py): ids, round trips, reopening, migrations, the
size cap, PostgreSQL stopping and coming back, `rasplay store copy`, and replicas sharing one store."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading

import pytest

from support.live_server import ROOT, LiveServer, free_port
from support.postgres_server import postgres_server, postgres_url  # noqa: F401 - fixtures
from rasplay.server.migrations import LATEST
from rasplay.server.store import StoreCorrupt, StoreFull, StoreUnavailable, open_store

STATE = {"source": "out = reverse(tokens);", "inputs": ["abc"]}
SPEC = {"source": "out = indices;", "output": "out", "vocab": ["a", "b"], "max_len": 5, "bos": "BOS"}


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """Where a store lives: a data directory (SQLite) or a PostgreSQL URL (a fresh database)."""
    return str(tmp_path) if request.param == "sqlite" else request.getfixturevalue("postgres_url")


def opened(location, max_bytes=None):
    return open_store(location, None, max_bytes)


def versions(location) -> list[int]:
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location) as conn:
            return [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")]
    with sqlite3.connect(os.path.join(location, "links.sqlite3")) as db:
        return [r[0] for r in db.execute("SELECT version FROM schema_version ORDER BY version")]


def test_links_are_content_addressed_and_round_trip(location):
    store = opened(location)
    assert store.link_id(STATE) == (store.link_id(STATE)[0], False) and store.get_link(store.link_id(STATE)[0]) is None
    link = store.put_link(STATE)
    assert store.put_link(dict(reversed(STATE.items()))) == link   # the same state, keys in another order
    assert store.link_id(STATE) == (link, True) and store.get_link(link) == STATE
    other = store.put_link({"source": "x = indices;"})
    assert other != link and store.count("links") == 2
    assert store.get_link("aaaaaaaaaaaa") is None
    store.close()


def test_models_round_trip(location):
    store = opened(location)
    model = store.put_model(SPEC)
    assert model.startswith("m") and store.has_model(model) and store.get_model(model) == SPEC
    assert store.put_model(SPEC) == model and store.count("models") == 1
    assert not store.has_model("mzzzzzzzzzzzzzzz") and store.get_model("mzzzzzzzzzzzzzzz") is None
    store.close()


def test_rows_survive_reopening_and_migrations_apply_once(location):
    store = opened(location)
    link, model = store.put_link(STATE), store.put_model(SPEC)
    store.close()
    assert versions(location) == list(range(1, LATEST + 1))
    store = opened(location)
    assert store.get_link(link) == STATE and store.get_model(model) == SPEC
    store.close()
    assert versions(location) == list(range(1, LATEST + 1))   # nothing applied twice


def test_replicas_starting_together_migrate_once(location):
    barrier = threading.Barrier(6)
    outcomes = []

    def start():
        barrier.wait()
        try:
            opened(location).close()
            outcomes.append("ok")
        except Exception as e:   # noqa: BLE001 - the test shows it
            outcomes.append(repr(e))
    threads = [threading.Thread(target=start) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes == ["ok"] * 6 and versions(location) == list(range(1, LATEST + 1))


def test_a_store_from_a_newer_rasplay_is_refused(location):
    opened(location).close()
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute("INSERT INTO schema_version VALUES (%s, 'later')", (LATEST + 1,))
    else:
        with sqlite3.connect(os.path.join(location, "links.sqlite3")) as db:
            db.execute("INSERT INTO schema_version VALUES (?, 'later')", (LATEST + 1,))
    with pytest.raises(StoreCorrupt, match=f"newer rasplay.*version {LATEST + 1}.*upgrade rasplay"):
        opened(location)


def test_a_store_made_before_migrations_opens_with_its_rows(tmp_path):
    with sqlite3.connect(tmp_path / "links.sqlite3") as db:   # the schema of earlier releases, no schema_version
        db.execute("CREATE TABLE links (id TEXT PRIMARY KEY, state TEXT NOT NULL, "
                   "created REAL NOT NULL DEFAULT (julianday('now')))")
        db.execute("CREATE TABLE models (id TEXT PRIMARY KEY, spec TEXT NOT NULL, "
                   "created REAL NOT NULL DEFAULT (julianday('now')))")
        db.execute("INSERT INTO links (id, state) VALUES ('abcdefghijkl', '{\"source\":\"x = indices;\"}')")
    store = opened(str(tmp_path))
    assert store.get_link("abcdefghijkl") == {"source": "x = indices;"}
    store.close()
    assert versions(str(tmp_path)) == list(range(1, LATEST + 1))


def test_the_store_cap_refuses_writes_and_keeps_what_it_has(location):
    cap = 1 << 20
    store = opened(location, max_bytes=cap)
    states = [{"source": f"# {os.urandom(3000).hex()}\nx{i} = indices;"} for i in range(600)]
    kept = []
    with pytest.raises(StoreFull, match="store is full .its limit is 1048576 bytes"):
        for state in states:
            kept.append(store.put_link(state))
            assert store.size() <= cap
    assert len(kept) > 20 and store.size() <= cap
    assert store.get_link(kept[0]) == states[0] and store.get_link(kept[-1]) == states[len(kept) - 1]
    store.close()


def test_the_default_store_imports_neither_psycopg_nor_redis(tmp_path):
    code = ("import sys; from pathlib import Path; import rasplay.server.app, rasplay.cli.main; "
            "from rasplay.server.store import open_store; "
            f"s = open_store(None, Path({str(tmp_path)!r})); s.put_link({{'source': 'x'}}); s.close(); "
            "assert 'psycopg' not in sys.modules and 'redis' not in sys.modules, sorted(sys.modules); "
            "print(type(s).__name__)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0 and p.stdout.strip() == "SQLiteStore", p.stderr
    assert (tmp_path / "links.sqlite3").is_file()


# ------------------------------------------------------------------ PostgreSQL going away and coming back

def test_postgresql_stopped_gives_unavailable_then_comes_back(postgres_server, postgres_url):  # noqa: F811
    store = opened(postgres_url)
    link = store.put_link(STATE)
    postgres_server.stop()
    try:
        with pytest.raises(StoreUnavailable, match="unavailable .connection"):
            store.get_link(link)
        with pytest.raises(StoreUnavailable):
            store.put_link({"source": "y = indices;"})
    finally:
        postgres_server.start()
    assert store.get_link(link) == STATE   # a new connection, by itself
    store.put_link({"source": "y = indices;"})
    assert store.count("links") == 2
    store.close()


def test_a_restart_of_postgresql_between_requests_goes_unnoticed(postgres_server, postgres_url):  # noqa: F811
    store = opened(postgres_url)
    link = store.put_link(STATE)
    postgres_server.stop()   # no request while it is down: the store still holds the dead connection
    postgres_server.start()
    assert store.get_link(link) == STATE
    store.close()


def test_a_frozen_postgresql_is_cut_off_not_waited_for(postgres_url):  # noqa: F811
    from rasplay.server.course.store_postgres import PostgresStore

    now = [1000.0]
    store = PostgresStore(postgres_url, statement_seconds=1, retry_seconds=5, clock=lambda: now[0])
    link = store.put_link(STATE)
    backend = store._run(lambda conn: conn.execute("SELECT pg_backend_pid()").fetchone()[0])
    outcome = []

    def read():
        try:
            outcome.append(store.get_link(link))
        except StoreUnavailable as e:
            outcome.append(e)
    os.kill(backend, signal.SIGSTOP)   # the connection stays open, and nothing answers on it
    try:
        reader = threading.Thread(target=read)
        reader.start()
        reader.join(120)   # a hang ends the test here rather than at pytest's timeout
        assert not reader.is_alive(), "the store waited for a frozen database"
    finally:
        os.kill(backend, signal.SIGCONT)
    assert isinstance(outcome[0], StoreUnavailable) and "no answer within 3 s" in str(outcome[0])
    # for retry_seconds, calls fail at once rather than each waiting as long (those queued behind it too)
    with pytest.raises(StoreUnavailable, match=r"no answer within 3 s; asked again within 5 s"):
        store.get_link(link)
    now[0] += 5
    assert store.get_link(link) == STATE   # a fresh connection
    store.close()


def test_serve_with_an_unreachable_database_stops_with_one_clear_line(tmp_path):
    url = f"postgresql://rasplay:secret@127.0.0.1:{free_port()}/rasplay"
    p = subprocess.run([sys.executable, "-m", "rasplay.cli", "serve", "--port", "0", "--data-dir",
                        str(tmp_path), "--store", url], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 1, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the store" in lines[0] and "Connection refused" in lines[0], p.stderr
    assert "secret" not in p.stderr and "rasplay:***@" in lines[0]


def test_two_servers_share_one_postgresql_store_and_answer_503_while_it_is_down(
        tmp_path, monkeypatch, postgres_server, postgres_url):  # noqa: F811
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = LiveServer(tmp_path / "a", "--workers", "1", "--store", postgres_url)
    monkeypatch.setenv("RASPLAY_STORE", postgres_url)   # the second replica takes the URL from the environment
    try:
        b = LiveServer(tmp_path / "b", "--workers", "1")
    except BaseException:
        a.stop()
        raise
    try:
        with a.client() as ca, b.client() as cb:
            r = ca.post("/api/v1/share", json={"state": STATE})
            assert r.status_code == 200, r.text
            link = r.json()["id"]
            r = cb.get(f"/s/{link}", follow_redirects=False)   # made on one replica, opened on the other
            assert r.status_code == 302 and r.headers["location"].startswith("/#v1=")
            health = ca.get("/api/v1/health").text   # the database's URL (and password) is never shown
            assert "postgresql" not in health and "127.0.0.1" not in health
            postgres_server.stop()
            try:
                for c, request in ((ca, lambda c: c.post("/api/v1/share", json={"state": {"source": "z = 1;"}})),
                                   (cb, lambda c: c.get(f"/s/{link}", follow_redirects=False))):
                    r = request(c)
                    assert r.status_code == 503, r.text
                    assert r.headers["retry-after"].isdigit() and r.json()["error"]["kind"] == "unavailable"
                # everything that needs no store still works
                r = cb.post("/api/v1/evaluate", json={"source": "out = indices;", "inputs": ["ab"]})
                assert r.status_code == 200
            finally:
                postgres_server.start()
            r = cb.get(f"/s/{link}", follow_redirects=False)   # back by itself, the link kept
            assert r.status_code == 302
            r = cb.post("/api/v1/share", json={"state": {"source": "z = 1;"}})
            assert r.status_code == 200 and ca.get(f"/s/{r.json()['id']}", follow_redirects=False).status_code == 302
    finally:
        a.stop()
        b.stop()


# ------------------------------------------------------------------ rasplay store copy

def test_store_copy_moves_every_link_and_model_to_postgresql(tmp_path, postgres_url):  # noqa: F811
    source = opened(str(tmp_path))
    links = {source.put_link({"source": f"x{i} = indices;", "inputs": ["ab"]}) for i in range(150)}
    models = {source.put_model(dict(SPEC, max_len=i)) for i in range(1, 21)}
    source.close()

    def copy():
        return subprocess.run([sys.executable, "-m", "rasplay.cli", "store", "copy", "--from", str(tmp_path),
                               "--to", postgres_url], capture_output=True, text=True, timeout=120, cwd=ROOT)
    p = copy()
    assert p.returncode == 0, p.stderr
    assert "links: 150 in the source, 150 in the target (150 copied now, 0 there already)" in p.stdout, p.stdout
    assert "models: 20 in the source, 20 in the target (20 copied now, 0 there already)" in p.stdout
    assert "every link and model of the source is in the target" in p.stdout
    p = copy()   # again: nothing new, nothing lost
    assert p.returncode == 0 and "(0 copied now, 150 there already)" in p.stdout, p.stdout
    target = opened(postgres_url)
    assert {row[0] for row in target.export_rows("links")} == links
    assert {row[0] for row in target.export_rows("models")} == models
    assert target.get_link(min(links))["inputs"] == ["ab"]
    target.close()


def test_store_copy_between_sqlite_stores_makes_the_target_directory(tmp_path):
    source = opened(str(tmp_path / "from"))
    link = source.put_link(STATE)
    source.close()
    p = subprocess.run([sys.executable, "-m", "rasplay.cli", "store", "copy", "--from", str(tmp_path / "from"),
                        "--to", str(tmp_path / "new" / "dir")], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0 and "links: 1 in the source, 1 in the target" in p.stdout, p.stderr
    assert opened(str(tmp_path / "new" / "dir" / "links.sqlite3")).get_link(link) == STATE


def test_store_copy_refuses_a_missing_source(tmp_path):
    p = subprocess.run([sys.executable, "-m", "rasplay.cli", "store", "copy", "--from",
                        str(tmp_path / "nowhere"), "--to", str(tmp_path / "to")], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert p.returncode == 1 and "no store at" in p.stderr and "Traceback" not in p.stderr
