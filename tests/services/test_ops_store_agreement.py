"""Replicas sharing one PostgreSQL store must agree on its size cap (--max-store-bytes), which each enforces on
its own (issue 35, item 6): each records its value in the store as it starts (the `replica_settings` table of
migration 2), and a replica that starts with another value than a replica recorded there says so (a WARNING
naming that replica and both values). Real replicas on a real PostgreSQL."""
from __future__ import annotations

import socket

from support.live_server import LiveServer
from support.postgres_server import postgres_server, postgres_url  # noqa: F401 - fixtures
from support.waiting import wait_for


def recorded(store_url: str) -> dict[str, str]:
    import psycopg

    with psycopg.connect(store_url, connect_timeout=10) as conn:
        rows = conn.execute("SELECT replica, value FROM replica_settings WHERE name = 'max_store_bytes'").fetchall()
    return dict(rows)


def test_replicas_of_one_store_warn_when_their_store_caps_differ(tmp_path, postgres_url):  # noqa: F811
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    flags = ("--workers", "1", "--heavy-workers", "1", "--store", postgres_url)
    host = socket.gethostname()
    a = LiveServer(tmp_path / "a", *flags, "--max-store-bytes", "1000000")
    b = None
    try:
        wait_for(lambda: recorded(postgres_url).get(f"{host}:{a.port}") == "1000000", what="replica a's value recorded")
        assert "settings disagree" not in a.log_path.read_text()
        b = LiveServer(tmp_path / "b", *flags, "--max-store-bytes", "2000000")
        said = wait_for(lambda: [line for line in b.log_path.read_text().splitlines() if "settings disagree" in line],
                        what="replica b naming replica a")
        assert len(said) == 1, said
        assert (f"replica {host}:{a.port} of this store started on " in said[0]
                and f"with --max-store-bytes 1000000 and this replica ({host}:{b.port}) has 2000000" in said[0]), said
        assert recorded(postgres_url) == {f"{host}:{a.port}": "1000000", f"{host}:{b.port}": "2000000"}
        # a restarted (same port) with b's value: its row is replaced, and nobody disagrees any more
        a.stop()
        a = LiveServer(tmp_path / "a", *flags, "--max-store-bytes", "2000000", port=a.port)
        wait_for(lambda: recorded(postgres_url).get(f"{host}:{a.port}") == "2000000", what="replica a's new value")
        with a.client() as c:   # it serves, and says nothing about b
            assert c.get("/api/v1/ready").status_code == 200
        assert "settings disagree" not in a.log_path.read_text()
    finally:
        for s in (a, b):
            if s is not None:
                s.stop()
