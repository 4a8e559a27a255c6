"""Per-client quotas with an injected clock (server/quotas.py): the token bucket's refill, its burst cap,
Retry-After, forgetting full buckets; the concurrency limit per client. No server and no sleeping."""
from __future__ import annotations

import pytest

from rasplay.server.errors import ApiError
from rasplay.server.quotas import ConcurrencyLimit, RateLimit, client_of


class Clock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def refused(limit: RateLimit, client: str = "a") -> ApiError:
    with pytest.raises(ApiError) as info:
        limit.take(client)
    return info.value


def test_a_full_bucket_allows_a_burst_of_per_minute_then_refuses_with_retry_after():
    clock = Clock()
    limit = RateLimit(6, "links", clock=clock)
    for _ in range(6):
        limit.take("a")
    e = refused(limit)
    assert e.status == 429 and e.kind == "rate_limit"
    assert e.headers == {"Retry-After": "10"}   # one token comes back every 60/6 s
    assert "6 a minute" in e.message and "in 10 s" in e.message and "links" in e.message
    limit.take("b")                             # another client has its own bucket


def test_tokens_come_back_at_per_minute_over_sixty_seconds():
    clock = Clock(1.0)   # (a clock near zero: the time since the last take is a difference, not a remainder)
    limit = RateLimit(6, "links", clock=clock)
    for _ in range(6):
        limit.take("a")
    clock.now += 9.5
    assert refused(limit).headers == {"Retry-After": "1"}   # 0.95 of a token: one more second
    clock.now += 0.5                                          # 10 s after the burst: exactly one token
    limit.take("a")
    assert refused(limit).headers == {"Retry-After": "10"}
    clock.now += 25                                           # 2.5 tokens
    limit.take("a")
    limit.take("a")
    assert refused(limit).headers == {"Retry-After": "5"}     # half a token left: 5 s to the next
    fast = RateLimit(60, "checks", clock=clock)
    for _ in range(60):
        fast.take("a")
    clock.now += 63 / 64                                      # 0.98 of a token: not yet one
    assert refused(fast).headers == {"Retry-After": "1"}


def test_a_refused_request_costs_nothing_and_refill_is_capped_at_the_burst():
    clock = Clock()
    limit = RateLimit(60, "checks", clock=clock)
    for _ in range(60):
        limit.take("a")
    for _ in range(5):                      # refusals do not push the next token further away
        assert refused(limit).headers == {"Retry-After": "1"}
    clock.now += 1
    limit.take("a")
    clock.now += 3600                       # an hour idle refills to the burst, not to 3600 tokens
    for _ in range(60):
        limit.take("a")
    refused(limit)


def test_a_fractional_wait_is_rounded_up():
    clock = Clock()
    limit = RateLimit(11, "links", clock=clock)
    for _ in range(11):
        limit.take("a")
    assert refused(limit).headers == {"Retry-After": "6"}   # 60/11 = 5.45 s
    limit = RateLimit(59, "links", clock=clock)
    for _ in range(59):
        limit.take("a")
    assert refused(limit).headers == {"Retry-After": "2"}   # 60/59 = 1.02 s


def test_zero_means_no_limit():
    limit = RateLimit(0, "links", clock=Clock())
    for _ in range(1000):
        limit.take("a")
    assert limit._buckets == {}


def test_buckets_of_clients_that_are_full_again_are_forgotten_past_ten_thousand():
    clock = Clock()
    limit = RateLimit(2, "links", clock=clock)
    for i in range(10_000):
        limit.take(f"old{i}")
    assert len(limit._buckets) == 10_000              # not over the threshold: kept
    limit.take("busy")
    limit.take("busy")
    assert len(limit._buckets) == 10_001             # over it, but every bucket has spent a token: none full
    # 30 s on, each old client has regained its one token (full again); "busy" has one of two
    clock.now += 30
    limit.take("new")
    assert set(limit._buckets) == {"busy", "new"}
    # the pruning kept busy's state: one token regained, one spent now, the next refused
    limit.take("busy")
    assert refused(limit, "busy").status == 429


def test_pruning_starts_only_past_ten_thousand_clients():
    clock = Clock()
    limit = RateLimit(2, "links", clock=clock)
    for i in range(9_999):
        limit.take(f"c{i}")
    clock.now += 60                                 # all full again, but only 10,000 clients with the next
    limit.take("x")
    assert len(limit._buckets) == 10_000
    limit.take("y")                                 # the 10,001st: the full ones go
    assert set(limit._buckets) == {"x", "y"}


def test_a_bucket_with_part_of_a_token_left_is_forgotten_when_full_again():
    clock = Clock(1.0)
    limit = RateLimit(2, "links", clock=clock)
    for i in range(10_000):
        limit.take(f"c{i}")
    clock.now += 15
    limit.take("c0")                                # 1.5 tokens, then 0.5
    clock.now += 45                                 # c0: 0.5 + 1.5 = 2 tokens, full; the others full too
    limit.take("new")
    assert set(limit._buckets) == {"new"}


def test_few_clients_are_never_pruned():
    clock = Clock()
    limit = RateLimit(2, "links", clock=clock)
    limit.take("a")
    clock.now += 60
    limit.take("b")
    assert set(limit._buckets) == {"a", "b"}


def test_buckets_not_yet_full_are_kept_when_pruning():
    clock = Clock()
    limit = RateLimit(2, "links", clock=clock)
    for i in range(10_001):
        limit.take(f"c{i}")
    clock.now += 29.5                               # every bucket is at 1.98 tokens: not full
    limit.take("late")
    assert len(limit._buckets) == 10_002
    clock.now += 0.5                                # now the first 10,001 are full again (exactly 2 tokens)
    limit.take("later")
    assert set(limit._buckets) == {"late", "later"}


def test_the_concurrency_limit_counts_per_client_and_frees_on_exit():
    limit = ConcurrencyLimit(2, "trainings")
    with limit.hold("a"):
        with limit.hold("a"):
            with pytest.raises(ApiError) as info:
                with limit.hold("a"):
                    pass
            e = info.value
            assert e.status == 429 and e.kind == "busy" and e.headers == {"Retry-After": "2"}
            assert "you already have 2 trainings running" in e.message and "is 2" in e.message
            with limit.hold("b"):
                assert limit._running == {"a": 2, "b": 1}
        with limit.hold("a"):   # one finished: room for one more
            pass
    assert limit._running == {}   # nothing kept for clients with nothing running
    with pytest.raises(RuntimeError):
        with limit.hold("c"):
            raise RuntimeError("the work failed")
    assert limit._running == {}   # freed on an exception too


def test_a_large_concurrency_limit_is_counted_exactly():
    from contextlib import ExitStack

    limit = ConcurrencyLimit(1000, "requests")
    with ExitStack() as stack:
        for _ in range(1000):
            stack.enter_context(limit.hold("a"))
        with pytest.raises(ApiError):
            stack.enter_context(limit.hold("a"))


def test_a_concurrency_limit_of_zero_is_no_limit():
    limit = ConcurrencyLimit(0, "trainings")
    with limit.hold("a"), limit.hold("a"), limit.hold("a"):
        assert limit._running == {"a": 3}


def test_the_client_is_the_peer_address():
    from types import SimpleNamespace

    from starlette.requests import Request

    from rasplay.server.settings import Settings

    app = SimpleNamespace(state=SimpleNamespace(settings=Settings()))   # no trusted proxy: the peer it is

    def request(client, headers=()):
        return Request({"type": "http", "app": app, "client": client, "headers": list(headers)})

    assert client_of(request(("10.0.0.7", 5000))) == "10.0.0.7"
    assert client_of(request(("10.0.0.7", 5000), [(b"x-forwarded-for", b"1.2.3.4")])) == "10.0.0.7"
    assert client_of(request(None)) == "unknown"
