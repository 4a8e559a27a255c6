"""Faults of a course deployment (issue 23, item 4), with real servers: two `rasplay serve` replicas sharing
a real PostgreSQL (and a real Redis) under a load of new links and compiles. A replica killed with -9 in
the middle of a request; PostgreSQL crashing (every process quits at once) and coming back; Redis stopped
and started again. Clients get an answer or a connection error, never a 500 and never a hang: 503 with
Retry-After and a JSON body while the store is gone, service again by itself when it is back, and every
link and model a replica acknowledged is in the database (counted there). Every wait is for an event."""
from __future__ import annotations

import threading
import uuid

import httpx

from support.postgres_server import postgres_server, postgres_url  # noqa: F401 - fixtures
from support.redis_server import redis_server  # noqa: F401 - fixture
from support.replica_servers import Load, stored_ids, two_replicas


def assert_no_link_or_model_lost(load: Load, store_url: str) -> tuple[int, int]:
    links, models = load.acknowledged("share"), load.acknowledged("compile")
    assert stored_ids(store_url, "links", links) == links
    assert stored_ids(store_url, "models", models) == models
    return len(links), len(models)


def assert_unavailable(o) -> None:
    """A 503 as the API promises it: Retry-After in seconds and a JSON error body."""
    assert o.status == 503 and o.headers["retry-after"].isdigit(), o
    assert o.body["error"]["kind"] == "unavailable" and "try again" in o.body["error"]["message"], o


def test_kill_9_of_a_replica_mid_request(tmp_path, postgres_url):  # noqa: F811
    with two_replicas(tmp_path, postgres_url, "--writes-per-minute", "0") as (a, b):
        with Load([a, b], kinds=("share",)) as load:
            for i in (0, 1):
                load.seen(lambda o: o.replica == i and o.status == 200)
            # a request to replica a, its headers and half its body sent
            started, release, result = threading.Event(), threading.Event(), []

            def body():
                yield b'{"state": {"source": "'
                started.set()
                release.wait(60)
                yield b'cut = indices;"}}'

            def send():
                try:
                    with a.client() as c:
                        result.append(c.post("/api/v1/share", content=body(),
                                             headers={"content-type": "application/json"}))
                except httpx.HTTPError as e:
                    result.append(e)
            sender = threading.Thread(target=send)
            sender.start()
            assert started.wait(60)
            load.phase = 1
            a.kill()   # kill -9 of the replica and its workers
            release.set()
            sender.join(120)
            assert not sender.is_alive()
            assert isinstance(result[0], httpx.TransportError), result   # a connection error, not an answer
            load.seen(lambda o: o.replica == 0 and o.phase == 1 and o.error is not None)
            for _ in range(3):   # the other replica keeps answering
                load.seen(lambda o: o.replica == 1 and o.phase == 1 and o.status == 200)
        failed = [o for o in load.outcomes if o.status != 200]
        assert all(o.replica == 0 and o.error and "Timeout" not in o.error for o in failed), failed[:3]
        links, _ = assert_no_link_or_model_lost(load, postgres_url)
        assert links >= 4


def test_postgresql_crashing_under_load_gives_503_then_service_by_itself(
        tmp_path, postgres_server, postgres_url):  # noqa: F811
    with two_replicas(tmp_path, postgres_url, "--writes-per-minute", "0") as (a, b):
        with Load([a, b]) as load:
            for i in (0, 1):
                for kind in ("share", "compile"):
                    load.seen(lambda o: o.replica == i and o.kind == kind and o.status == 200)
            load.phase = 1
            postgres_server.stop("immediate")   # every PostgreSQL process quits at once, as in a crash
            try:
                for i in (0, 1):
                    for kind in ("share", "compile"):
                        assert_unavailable(load.seen(lambda o: o.replica == i and o.kind == kind and o.phase == 1
                                                     and o.status != 200))
            finally:
                load.phase = 2
                postgres_server.start()   # recovers from the crash, then accepts connections
            for i in (0, 1):   # back by itself: no replica restarted
                for kind in ("share", "compile"):
                    load.seen(lambda o: o.replica == i and o.kind == kind and o.phase == 2 and o.status == 200)
        unexpected = [o for o in load.outcomes if o.status not in (200, 503)]
        assert not unexpected, unexpected[:3]   # no 500, no error, no timeout: every request was answered
        for o in load.outcomes:
            if o.status == 503:
                assert_unavailable(o)
        links, models = assert_no_link_or_model_lost(load, postgres_url)
        assert links and models


def test_a_frozen_postgresql_under_load_gives_503_within_its_timeouts_then_service(
        tmp_path, postgres_server, postgres_url):  # noqa: F811
    """Every PostgreSQL process stopped (SIGSTOP): connections stay open and nothing answers, as when its
    host vanishes. Requests are answered 503 by the store's own timeouts (the load's clients give up only
    after 60 s, which would count as a hang), and service returns by itself when it continues."""
    with two_replicas(tmp_path, postgres_url, "--writes-per-minute", "0") as (a, b):
        with Load([a, b]) as load:
            for i in (0, 1):
                load.seen(lambda o: o.replica == i and o.status == 200)
            load.phase = 1
            postgres_server.freeze()
            try:
                for i in (0, 1):
                    assert_unavailable(load.seen(lambda o: o.replica == i and o.phase == 1 and o.status != 200))
            finally:
                load.phase = 2
                postgres_server.freeze(False)
            for i in (0, 1):
                for kind in ("share", "compile"):
                    load.seen(lambda o: o.replica == i and o.kind == kind and o.phase == 2 and o.status == 200)
        unexpected = [o for o in load.outcomes if o.status not in (200, 503)]
        assert not unexpected, unexpected[:3]   # no 500, no timeout
        for o in load.outcomes:
            if o.status == 503:
                assert_unavailable(o)
        links, models = assert_no_link_or_model_lost(load, postgres_url)
        assert links and models


def test_redis_stopped_under_load_costs_no_request_and_is_used_again(tmp_path, postgres_url, redis_server):  # noqa: F811
    import redis

    flags = ("--redis", redis_server.url, "--trusted-proxy", "127.0.0.1", "--writes-per-minute", "3")

    def fresh_student() -> dict:   # each request of the load from a new forwarded address: never limited
        n = uuid.uuid4().int
        return {"X-Forwarded-For": f"198.18.{n % 250}.{(n >> 8) % 250 + 1}"}

    shared = redis.Redis.from_url(redis_server.url, socket_timeout=5)
    used_redis: dict[str, bool] = {}

    def counted_in_redis(o) -> bool:
        """The replica took this request's token from Redis (the client's bucket is there)."""
        client = o.sent["X-Forwarded-For"]
        if client not in used_redis:
            used_redis[client] = bool(shared.exists(f"rasplay:bucket:new-links-and-models:{client}"))
        return used_redis[client]

    with two_replicas(tmp_path, postgres_url, *flags) as (a, b):
        with Load([a, b], headers=fresh_student) as load:
            for i in (0, 1):
                load.seen(lambda o: o.replica == i and o.status == 200 and o.kind == "share" and counted_in_redis(o))
            load.phase = 1
            redis_server.stop()
            try:
                for i in (0, 1):   # each replica keeps answering, on its own buckets
                    for _ in range(3):
                        load.seen(lambda o: o.replica == i and o.phase == 1 and o.status == 200)
            finally:
                load.phase = 2
                redis_server.start()   # an empty Redis
            for i in (0, 1):   # each replica uses Redis again by itself
                load.seen(lambda o: o.replica == i and o.phase == 2 and o.status == 200 and o.kind == "share"
                          and counted_in_redis(o))
        unexpected = [o for o in load.outcomes if o.status != 200]
        assert not unexpected, unexpected[:3]
        assert_no_link_or_model_lost(load, postgres_url)
        # and one allowance across the replicas again
        student = {"X-Forwarded-For": "192.0.2.200"}
        with a.client() as ca, b.client() as cb:
            statuses = [c.post("/api/v1/share", json={"state": {"source": f"# {uuid.uuid4().hex}"}},
                               headers=student).status_code for c in (ca, cb, ca, cb)]
        assert statuses == [200, 200, 200, 429]
