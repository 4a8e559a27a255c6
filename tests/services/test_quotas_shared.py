"""Per-client write buckets shared by replicas through a real Redis (Debian's redis-server, started by
tests/support/redis_server.py): two real servers give a client one allowance between them, not one each; with
Redis stopped each falls back to its own bucket, and uses Redis again once it is back."""
from __future__ import annotations

import uuid

import pytest

from support.live_server import LiveServer
from support.redis_server import redis_server  # noqa: F401 - fixture
from rasplay.server.errors import ApiError
from rasplay.server.course.quotas_shared import RedisRateLimit, rate_limit


def test_two_replicas_share_one_write_allowance(tmp_path, redis_server):  # noqa: F811
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    flags = ("--workers", "1", "--writes-per-minute", "4", "--redis", redis_server.url)
    a = LiveServer(tmp_path / "a", *flags)
    try:
        b = LiveServer(tmp_path / "b", *flags)
    except BaseException:
        a.stop()
        raise
    try:
        with a.client() as ca, b.client() as cb:
            tag = uuid.uuid4().hex
            statuses = [c.post("/api/v1/share", json={"state": {"source": f"# {tag} {i}\nx = indices;"}}).status_code
                        for i, c in enumerate([ca, cb, ca, cb, ca, cb])]
            assert statuses == [200, 200, 200, 200, 429, 429]
            r = cb.post("/api/v1/share", json={"state": {"source": f"# {tag} again\nx = indices;"}})
            assert r.status_code == 429 and r.json()["error"]["kind"] == "rate_limit"
            assert 1 <= int(r.headers["retry-after"]) <= 15
            assert "redis" not in ca.get("/api/v1/health").text   # Redis's URL is never shown
    finally:
        a.stop()
        b.stop()


def test_without_redis_each_replica_has_its_own_allowance(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = LiveServer(tmp_path / "a", "--workers", "1", "--writes-per-minute", "2")
    try:
        b = LiveServer(tmp_path / "b", "--workers", "1", "--writes-per-minute", "2")
    except BaseException:
        a.stop()
        raise
    try:
        with a.client() as ca, b.client() as cb:
            statuses = [c.post("/api/v1/share", json={"state": {"source": f"# own {i}\nx = indices;"}}).status_code
                        for i, c in enumerate([ca, cb, ca, cb, ca])]
            assert statuses == [200, 200, 200, 200, 429]   # what Redis is for: 2 replicas, twice the allowance
    finally:
        a.stop()
        b.stop()


def test_a_bucket_falls_back_while_redis_is_down_and_returns_to_it(redis_server):  # noqa: F811
    now = [1000.0]
    limit = RedisRateLimit(redis_server.url, 2, "writes", retry_seconds=5, clock=lambda: now[0])
    other = RedisRateLimit(redis_server.url, 2, "writes", clock=lambda: now[0])   # another replica
    client = uuid.uuid4().hex
    limit.take(client)
    other.take(client)
    with pytest.raises(ApiError) as refused:
        limit.take(client)
    assert refused.value.status == 429
    redis_server.stop()
    try:
        limit.take(client)   # Redis down: this replica's own bucket (fresh for the client), no error
        limit.take(client)
        with pytest.raises(ApiError):
            limit.take(client)
    finally:
        redis_server.start()   # an empty Redis: the buckets there start full
    now[0] += 6                # past retry_seconds: Redis is asked again
    other.take(client)
    limit.take(client)
    with pytest.raises(ApiError):
        limit.take(client)     # the shared bucket, emptied by both replicas


def test_no_url_gives_the_in_process_bucket():
    assert type(rate_limit(None, 5, "writes")).__name__ == "RateLimit"
