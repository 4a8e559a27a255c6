"""The SQLite store's own decisions, without a server (server/store.py): where it goes (a missing data
directory is made), the parts of its cap (the log's share, the database's pages) and that a full store
uses its cap without passing it, the errors it raises, ids on a collision, moving rows. test_store.py
runs the behaviour both stores share against SQLite and PostgreSQL."""
from __future__ import annotations

import os
import sqlite3

import pytest

from rasplay.server import store as store_module
from rasplay.server.store import (SHM_BYTES, StoreCorrupt, StoreFull, StoreUnavailable, content_id,
                                  is_database_url, model_id_of, open_store)
from rasplay.server.store import SQLiteStore as Store


def test_a_missing_data_directory_is_made(tmp_path):
    data = tmp_path / "not" / "yet" / "there"
    store = open_store(None, data)
    store.put_link({"source": "x = indices;"})
    store.close()
    assert (data / "links.sqlite3").is_file()
    other = tmp_path / "elsewhere"
    store = open_store(str(other), tmp_path / "unused")      # a location that is a directory (made if missing)
    assert store.path == other / "links.sqlite3" and not (tmp_path / "unused").exists()
    store.close()
    store = open_store(str(other / "links.sqlite3"), tmp_path / "unused")   # an existing file: used as it is
    assert store.path == other / "links.sqlite3" and store.describe() == f"SQLite {other / 'links.sqlite3'}"
    store.close()


def test_the_log_takes_an_eighth_of_the_cap_within_its_bounds():
    assert Store.wal_allowance(1 << 20) == 128 * 1024          # at least 128 KiB
    assert Store.wal_allowance(8 << 20) == 1 << 20             # an eighth
    assert Store.wal_allowance((8 << 20) + 8) == (1 << 20) + 1
    assert Store.wal_allowance(64 << 20) == 8 << 20
    assert Store.wal_allowance(1 << 30) == 8 << 20             # at most 8 MiB


def test_the_cap_is_shared_between_the_log_its_index_and_the_database(tmp_path):
    cap = 4 << 20
    store = Store(tmp_path / "s.sqlite3", cap)
    pragma = lambda name: store._db.execute(f"PRAGMA {name}").fetchone()[0]   # noqa: E731
    page = pragma("page_size")
    wal = Store.wal_allowance(cap)
    assert pragma("journal_size_limit") == wal
    assert pragma("wal_autocheckpoint") == wal // 2 // page
    assert pragma("max_page_count") == (cap - wal - SHM_BYTES) // page
    assert pragma("journal_mode") == "wal" and pragma("synchronous") == 2   # FULL
    assert pragma("busy_timeout") == 5000
    store.close()
    store = Store(tmp_path / "t.sqlite3", 1)                   # a tiny cap: the log keeps its least
    assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 128 * 1024 // 2 // page
    store.close()


def test_a_full_store_has_used_its_cap_and_not_more(tmp_path):
    cap = 1 << 20
    store = Store(tmp_path / "s.sqlite3", cap)
    with pytest.raises(StoreFull, match=r"store is full \(its limit is 1048576 bytes\)"):
        for i in range(1000):
            store.put_link({"source": f"# {os.urandom(1500).hex()}\nx{i} = indices;"})
            assert store.size() <= cap
    assert store.size() <= cap
    page = store._db.execute("PRAGMA page_size").fetchone()[0]
    used = store._db.execute("PRAGMA page_count").fetchone()[0] * page
    assert used >= 0.9 * (cap - Store.wal_allowance(cap) - SHM_BYTES)   # the database had the rest of the cap
    store.close()


class Failing:
    """A connection whose writes fail with `message` (reads go to the real one)."""

    def __init__(self, db, message):
        self.db, self.message = db, message

    def execute(self, sql, *args):
        if sql.startswith("INSERT"):
            raise sqlite3.OperationalError(self.message)
        return self.db.execute(sql, *args)

    def close(self):
        self.db.close()


def test_write_failures_say_which(tmp_path):
    store = Store(tmp_path / "s.sqlite3", 1 << 20)
    real = store._db
    store._db = Failing(real, "database or disk is full")    # the store's pages are far from used: the disk
    with pytest.raises(StoreFull, match="^the server's disk is full$"):
        store.put_link({"source": "a"})
    store._db = Failing(real, "disk I/O error")
    with pytest.raises(StoreUnavailable, match=r"could not write its store \(disk I/O error\)"):
        store.put_model({"source": "a"})
    store._db = real
    store.close()
    uncapped = Store(tmp_path / "u.sqlite3")
    uncapped._db = Failing(uncapped._db, "database or disk is full")
    with pytest.raises(StoreFull, match="^the server's disk is full$"):
        uncapped.put_link({"source": "a"})
    uncapped.close()


def test_a_file_that_is_not_a_store_is_refused(tmp_path):
    bad = tmp_path / "links.sqlite3"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreCorrupt, match="damaged or not a rasplay store"):
        Store(bad)
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreCorrupt, match="cannot open the store"):
        Store(tmp_path / "file" / "below" / "links.sqlite3")


def test_ids_are_content_addressed_and_longer_on_a_collision(tmp_path):
    assert len(content_id("x")) == 12 and len(content_id("x", 26)) == 26
    assert content_id("x") == content_id("x", 26)[:12] and content_id("x") != content_id("y")
    assert set(content_id("some text", 26)) <= set("abcdefghijklmnopqrstuvwxyz234567")
    spec = {"source": "x = indices;", "max_len": 5}
    assert model_id_of(spec) == "m" + content_id(store_module.canonical(spec), 15)
    assert store_module.canonical({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    store = Store(tmp_path / "s.sqlite3")
    state = {"source": "x = indices;"}
    short = content_id(store_module.canonical(state))
    store._db.execute("INSERT INTO links (id, state) VALUES (?, ?)", (short, '{"source":"another"}'))
    assert store.link_id(state) == (content_id(store_module.canonical(state), 16), False)
    link = store.put_link(state)
    assert len(link) == 16 and store.get_link(link) == state and store.link_id(state) == (link, True)
    assert store.get_link(short) == {"source": "another"}
    store.close()


def test_rows_move_between_stores_once(tmp_path):
    a, b = Store(tmp_path / "a.sqlite3"), Store(tmp_path / "b.sqlite3")
    links = [a.put_link({"source": f"x{i} = indices;"}) for i in range(3)]
    model = a.put_model({"source": "y = indices;"})
    rows = a.export_rows("links")
    assert [r[0] for r in rows] == sorted(links) and all(abs(r[2] - rows[0][2]) < 60 for r in rows)
    assert b.import_rows("links", rows) == 3 and b.import_rows("links", rows) == 0
    assert b.import_rows("models", a.export_rows("models")) == 1
    assert b.count("links") == 3 and b.count("models") == 1 and b.get_model(model) == {"source": "y = indices;"}
    assert b.export_rows("links") == rows                  # the times of creation come along
    with pytest.raises(ValueError, match="no table 'secrets'"):
        a.count("secrets")
    with pytest.raises(ValueError, match="no table"):
        a.export_rows("links; DROP TABLE links")
    a.close()
    b.close()


def test_which_locations_name_a_database():
    assert is_database_url("postgresql://u@h/db") and is_database_url("postgres://u@h/db")
    assert not is_database_url("sqlite:///x") and not is_database_url(None) and not is_database_url("")
    assert not is_database_url("/data/postgresql://x")


def test_the_size_is_the_pages_in_use_and_both_log_files(tmp_path):
    """size() against the files themselves: the database's pages (read by a second connection) and the
    bytes of the -wal and -shm files on disk."""
    store = Store(tmp_path / "s.sqlite3")
    for i in range(40):
        store.put_link({"source": f"x{i} = indices;", "note": "n" * 500})
    other = sqlite3.connect(str(tmp_path / "s.sqlite3"))
    pages, page_size = other.execute("PRAGMA page_count").fetchone()[0], other.execute("PRAGMA page_size").fetchone()[0]
    other.close()
    logs = [os.path.getsize(f"{tmp_path / 's.sqlite3'}{suffix}") for suffix in ("-wal", "-shm")]
    assert pages > 1 and all(n > 0 for n in logs)
    assert store.size() == pages * page_size + sum(logs)
    store.close()


def test_the_share_of_pages_used_is_a_fraction_of_the_cap(tmp_path):
    store = Store(tmp_path / "s.sqlite3", max_bytes=4 << 20)
    store.put_link({"source": "x = indices;"})
    used, most = (store._db.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "max_page_count"))
    assert 0 < store._pages_used() < 1 and store._pages_used() == used / most
    store.close()


def test_a_model_is_known_once_stored_and_only_then(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    spec = {"source": "x = indices;", "output": "x", "vocab": ["a"], "max_len": 3, "bos": "<bos>"}
    assert not store.has_model(model_id_of(spec))
    model_id = store.put_model(spec)
    assert model_id == model_id_of(spec) and store.has_model(model_id) and store.get_model(model_id) == spec
    assert not store.has_model("0" * 12)
    store.close()


def test_a_location_given_as_a_path_is_a_directory_or_file(tmp_path):
    store = open_store(tmp_path / "dir", tmp_path / "unused")          # a Path, not a string
    assert store.path == tmp_path / "dir" / "links.sqlite3"
    store.close()


def test_the_store_is_used_from_the_server_s_threads(tmp_path):
    """The app calls the store from worker threads (run_in_threadpool), not the thread that opened it."""
    import threading

    store = Store(tmp_path / "s.sqlite3")
    out = []
    t = threading.Thread(target=lambda: out.append(store.put_link({"source": "x = indices;"})))
    t.start()
    t.join()
    assert out and store.get_link(out[0]) == {"source": "x = indices;"}
    store.close()


def test_the_database_gets_the_cap_less_the_log_and_the_log_index_sqlite_writes(tmp_path):
    """The cap is split into the log's allowance, the log's index (the -shm file, as big as SQLite really
    makes it, measured here) and the database's pages: every whole page left goes to the database. The caps
    are chosen so that a reserve off by 32 bytes either way changes the page count."""
    for n, cap in enumerate((4 << 20, (4 << 20) - 1024, (4 << 20) + 4648)):
        path = tmp_path / f"s{n}.sqlite3"
        store = Store(path, cap)
        store.put_link({"source": "x = indices;"})
        index = os.path.getsize(f"{path}-shm")
        page = store._db.execute("PRAGMA page_size").fetchone()[0]
        assert index == 32 * 1024
        assert store._db.execute("PRAGMA max_page_count").fetchone()[0] == (cap - Store.wal_allowance(cap) - index) // page
        store.close()


def test_a_cap_smaller_than_the_empty_store_keeps_it_from_growing(tmp_path):
    """A cap below what the empty store already takes: writes fill the pages it has, then are refused as
    the store being full; the database never takes another page."""
    store = Store(tmp_path / "s.sqlite3", 1)
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    with pytest.raises(StoreFull, match=r"store is full \(its limit is 1 bytes\)"):
        for i in range(100):
            store.put_link({"source": f"x{i} = indices;", "note": "n" * 500})
    assert store._db.execute("PRAGMA page_count").fetchone()[0] == pages
    store.close()


def test_a_store_at_95_percent_of_its_pages_is_full_and_just_below_is_the_disk(tmp_path, monkeypatch):
    """A write the database refuses as full is the store's cap from 95% of its pages used, the disk below."""
    store = Store(tmp_path / "s.sqlite3", 1 << 20)
    real = store._db
    store._db = Failing(real, "database or disk is full")
    monkeypatch.setattr(store, "_pages_used", lambda: 0.95)
    with pytest.raises(StoreFull, match="store is full"):
        store.put_link({"source": "a"})
    monkeypatch.setattr(store, "_pages_used", lambda: 0.9499)
    with pytest.raises(StoreFull, match="^the server's disk is full$"):
        store.put_link({"source": "a"})
    store._db = real
    store.close()


def test_a_collision_with_a_text_sorting_after_it_still_takes_a_longer_id(tmp_path):
    """Whatever the colliding row's text (sorting before or after the new one), only the same text is the
    same link; a second collision takes the 26-character id."""
    store = Store(tmp_path / "s.sqlite3")
    state = {"source": "b = indices;"}
    text = store_module.canonical(state)
    store._db.execute("INSERT INTO links (id, state) VALUES (?, ?)", (content_id(text), '{"source":"zzz"}'))
    store._db.execute("INSERT INTO links (id, state) VALUES (?, ?)", (content_id(text, 16), '{"source":"a"}'))
    assert store.link_id(state) == (content_id(text, 26), False)
    link = store.put_link(state)
    assert len(link) == 26 and store.get_link(link) == state and store.get_link(content_id(text)) == {"source": "zzz"}
    store.close()


def test_a_damaged_database_is_refused_on_opening(tmp_path):
    """A file SQLite opens whose pages are damaged (quick_check reports it, rather than failing) is refused."""
    path = tmp_path / "s.sqlite3"
    store = Store(path)
    for i in range(200):
        store.put_link({"source": f"x{i} = indices;", "note": "n" * 300})
    page = store._db.execute("PRAGMA page_size").fetchone()[0]
    store.close()
    data = bytearray(path.read_bytes())
    data[10 * page + 3: 10 * page + 5] = b"\x00\x50"    # page 11's count of cells
    path.write_bytes(bytes(data))
    check = sqlite3.connect(str(path))
    assert check.execute("PRAGMA quick_check").fetchone()[0].startswith("*** in database main ***")
    check.close()
    with pytest.raises(StoreCorrupt, match="damaged or not a rasplay store"):
        Store(path)


def test_the_size_counts_a_log_file_that_is_gone_as_nothing(tmp_path):
    path = tmp_path / "s.sqlite3"
    store = Store(path)
    store.put_link({"source": "x = indices;"})
    os.unlink(f"{path}-shm")
    pages, page = (store._db.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size"))
    assert store.size() == pages * page + os.path.getsize(f"{path}-wal")
    store.close()


def test_an_import_that_fails_midway_adds_nothing_and_says_so(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    good = ("aaaaaaaaaaaa", '{"source":"a"}', 1.7e9)
    with pytest.raises(StoreUnavailable, match="could not write its store"):
        store.import_rows("links", [good, ("bbbbbbbbbbbb", '{"source":"b"}')])   # a row without its time
    assert store.count("links") == 0
    assert store.import_rows("links", [good]) == 1
    store.close()
