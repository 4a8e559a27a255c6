"""Prometheus metrics at GET /metrics (prometheus-client's text format), the access log, and a log line
for every 503 with its reason.

Counted per request (an ASGI middleware, RequestMetrics): requests by route template, method and status,
their latency (a histogram per route), and the refusals (429 and 503) by status and the error's `kind`.
Read at each scrape (Snapshot): the worker pools (live processes, requests in them, requests waiting),
training jobs by state, live `rasplay worker` processes per queue (with a broker), the store's size and
the response cache."""
from __future__ import annotations

import asyncio
import logging
import time

import orjson
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from starlette.concurrency import run_in_threadpool

from .logs import ACCESS

log = logging.getLogger("rasplay")
access = logging.getLogger(ACCESS)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
REFUSALS = (429, 503)


class Snapshot:
    """A custom collector: the figures gathered by `refresh` (in the event loop, before each scrape)."""

    def __init__(self):
        self.figures: dict = {}

    async def refresh(self, app) -> None:
        svc = app.state.services
        jobs = svc.jobs.stats()
        board = getattr(svc.jobs, "board", None)   # with a broker: counted now on the job board, not cached
        if board is not None:
            try:
                jobs = await asyncio.wait_for(board.counts(), svc.settings.ready_seconds)
            except (asyncio.TimeoutError, *board.errors) as e:
                log.warning("metrics: the job board is unreachable (%s)", type(e).__name__)
        figures = {"pools": {name: pool.stats() for name, pool in (("evaluation", svc.pool), ("heavy", svc.heavy))},
                   "jobs": {"running": jobs.get("running", 0), "queued": jobs.get("queued", 0)},
                   "workers": dict(jobs.get("workers") or {}), "cache": svc.cache.stats(),
                   "in_flight": app.state.drain.in_flight}
        try:
            figures["store_bytes"] = await run_in_threadpool(svc.store.size)
        except Exception as e:   # the store is down: no figure (readiness says why)
            log.warning("metrics: the store's size is unknown (%s: %s)", type(e).__name__, e)
        self.figures = figures

    def collect(self):
        f = self.figures
        if not f:
            return
        gauges = {"workers": GaugeMetricFamily("rasplay_pool_workers", "live worker processes of a pool",
                                               labels=["pool"]),
                  "running": GaugeMetricFamily("rasplay_pool_running", "requests in a pool's workers (running or "
                                               "pipelined): its busy workers", labels=["pool"]),
                  "waiting": GaugeMetricFamily("rasplay_pool_waiting", "requests waiting for a pool's worker (its "
                                               "queue)", labels=["pool"])}
        for name, stats in f["pools"].items():
            for key, gauge in gauges.items():
                if key in stats:
                    gauge.add_metric([name], stats[key])
        yield from gauges.values()
        jobs = GaugeMetricFamily("rasplay_training_jobs", "training jobs by state", labels=["state"])
        for state, n in f["jobs"].items():
            jobs.add_metric([state], n)
        yield jobs
        if f["workers"]:
            remote = GaugeMetricFamily("rasplay_remote_workers", "live `rasplay worker` processes per queue "
                                       "(with --broker)", labels=["queue"])
            for queue, n in f["workers"].items():
                remote.add_metric([queue], n)
            yield remote
        if "store_bytes" in f:
            yield GaugeMetricFamily("rasplay_store_bytes", "size of the store of links and models",
                                    value=f["store_bytes"])
        yield GaugeMetricFamily("rasplay_http_requests_in_flight", "requests being answered (this scrape included)",
                                value=f["in_flight"])
        cache = GaugeMetricFamily("rasplay_response_cache", "the response cache's entries, hits and misses",
                                  labels=["figure"])
        for key, n in f["cache"].items():
            cache.add_metric([key], n)
        yield cache


class Metrics:
    """The registry of one app (tests run several apps in one process)."""

    def __init__(self):
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("rasplay_http_requests", "HTTP requests answered, by route template, method and "
                                "status", ["route", "method", "status"], registry=self.registry)
        self.latency = Histogram("rasplay_http_request_duration_seconds", "time from a request's start to the end "
                                 "of its answer, by route template", ["route"], buckets=BUCKETS,
                                 registry=self.registry)
        self.refusals = Counter("rasplay_http_refusals", "429 and 503 answers by status and the error's kind "
                                "(busy, rate_limit, unavailable, ...)", ["status", "reason"], registry=self.registry)
        self.snapshot = Snapshot()
        self.registry.register(self.snapshot)

    async def render(self, app) -> bytes:
        await self.snapshot.refresh(app)
        return generate_latest(self.registry)


def _route(scope, prefix: str) -> str:
    """The route's template (/api/v1/train/{job_id}): a few labels, never one per path. (FastAPI may name the
    included router's own route, without the prefix it was included under.)"""
    template = getattr(scope.get("route"), "path", None)
    if template is None:
        return "unmatched"
    if prefix and scope["path"].startswith(prefix + "/") and not template.startswith(prefix + "/"):
        return prefix + template
    return template


def _reason(body: bytes) -> tuple[str, str]:
    """(kind, message) of an error answer's JSON body."""
    try:
        error = orjson.loads(body).get("error") or {}
        return str(error.get("kind") or "unknown"), str(error.get("message") or "")
    except (orjson.JSONDecodeError, AttributeError):
        return "unknown", body[:200].decode(errors="replace")


class RequestMetrics:
    """ASGI middleware: counts and times every HTTP request, logs it (access log, when on), and logs every
    503 with its reason."""

    def __init__(self, app, metrics: Metrics, access_log: bool = False, prefix: str = ""):
        self.app, self.metrics, self.access_log, self.prefix = app, metrics, access_log, prefix

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.perf_counter()
        status, body = 0, bytearray()

        async def sending(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif status in REFUSALS and len(body) < 4096:
                body.extend(message.get("body", b"")[:4096])
            await send(message)
        try:
            await self.app(scope, receive, sending)
        finally:
            self._record(scope, status, body, time.perf_counter() - started)

    def _record(self, scope, status: int, body: bytearray, seconds: float) -> None:
        route = _route(scope, self.prefix)
        m = self.metrics
        m.requests.labels(route, scope["method"], str(status or "none")).inc()
        m.latency.labels(route).observe(seconds)
        if status in REFUSALS:
            kind, message = _reason(bytes(body))
            m.refusals.labels(str(status), kind).inc()
            if status == 503:
                log.warning("503 %s %s (%s): %s", scope["method"], scope["path"], kind, message,
                            extra={"fields": {"status": 503, "path": scope["path"], "reason": kind}})
        if self.access_log:
            client = scope.get("client") or ("-", 0)
            access.info("%s %s %s %d %.1f ms", client[0], scope["method"], scope["path"], status, 1000 * seconds,
                        extra={"fields": {"client": client[0], "method": scope["method"], "path": scope["path"],
                                          "route": route, "status": status, "ms": round(1000 * seconds, 1)}})
