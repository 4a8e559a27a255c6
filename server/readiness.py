"""Readiness: whether this replica can serve now, dependency by dependency (GET /api/v1/ready).

Each check runs with a time limit (settings.ready_seconds) and says ok, or why not:

* store: a count of the links, in a thread (SQLite, or PostgreSQL with --store);
* broker (with --broker): a PING of its Redis; workers: the live `rasplay worker` processes per queue (their
  heartbeats), and without a broker the live processes of this server's own pools;
* redis (with --redis): a PING of the Redis holding the per-client write buckets; reported, never required
  (without it each replica limits writes on its own);
* training: whether this replica can train (a live train worker, or PyTorch here); reported, never required:
  a course without training still serves everything else;
* draining: the server was told to stop (SIGTERM) and accepts no new work.

The replica is ready when every required check is ok; otherwise the answer is a 503 with every reason."""
from __future__ import annotations

import asyncio
import time

from starlette.concurrency import run_in_threadpool


async def _timed(coro, seconds: float) -> dict:
    """{"ok": True, ...} or {"ok": False, "reason": ...}; never raises, never waits past `seconds`."""
    started = time.monotonic()
    try:
        found = await asyncio.wait_for(coro, seconds)
    except asyncio.TimeoutError:
        return {"ok": False, "reason": f"no answer within {seconds:g} s"}
    except Exception as e:   # any failure of a dependency is a reason, never a 500
        return {"ok": False, "reason": f"{type(e).__name__}: {e}"[:300]}
    return {"ok": True, "ms": round(1000 * (time.monotonic() - started), 1), **(found or {})}


async def _store(svc) -> dict:
    links = await run_in_threadpool(svc.store.count, "links")
    return {"links": links}


async def _ping(client) -> dict:
    await client.ping()
    return {}


async def _ping_sync(client) -> dict:
    await run_in_threadpool(client.ping)
    return {}


async def _local_workers(svc) -> dict:
    return {"evaluation": svc.pool.alive(), "heavy": svc.heavy.alive()}


async def check(app) -> tuple[bool, dict]:
    """(ready, checks): every check of this replica, run at once."""
    svc = app.state.services
    settings = svc.settings
    seconds = settings.ready_seconds
    from .api.common import torch_available

    jobs_board = getattr(svc.jobs, "board", None)   # training_board.SharedJobs (with a broker)
    tasks = {"store": _timed(_store(svc), seconds)}
    if settings.broker and jobs_board is not None:
        tasks["broker"] = _timed(_ping(jobs_board.redis), seconds)
        tasks["workers"] = _timed(jobs_board.counts(), seconds)
    else:
        tasks["workers"] = _timed(_local_workers(svc), seconds)
    shared = getattr(svc.writes_per_client, "_redis", None)   # quotas_shared.RedisRateLimit's client
    if settings.redis and shared is not None:
        tasks["redis"] = _timed(_ping_sync(shared), seconds)
    results = dict(zip(tasks, await asyncio.gather(*tasks.values())))
    workers = results["workers"]
    if settings.broker:
        counts = workers.get("workers", {}) if workers["ok"] else {}
        results["workers"] = {"ok": workers["ok"] and counts.get("heavy", 0) > 0, "train": counts.get("train", 0),
                              "heavy": counts.get("heavy", 0), **({"reason": workers["reason"]} if not workers["ok"]
                                                                else {})}
        if workers["ok"] and not counts.get("heavy"):
            results["workers"]["reason"] = "no live `rasplay worker` serves the heavy queue (compile, run, weights)"
        training = {"ok": counts.get("train", 0) > 0, "where": "workers"}
        if not training["ok"]:
            training["reason"] = "no live `rasplay worker` serves the train queue"
    else:
        if workers["ok"] and not workers["evaluation"]:
            results["workers"] = {**workers, "ok": False, "reason": "no live evaluation worker process"}
        training = {"ok": torch_available(), "where": "this server"}
        if not training["ok"]:
            training["reason"] = "PyTorch is not installed here (the train extra)"
    results["training"] = {**training, "required": False}
    if "redis" in results:   # without it each replica limits writes on its own (quotas_shared.py): reported only
        results["redis"]["required"] = False
    drain = getattr(app.state, "drain", None)
    draining = drain is not None and drain.draining
    results["draining"] = {"ok": not draining, **({"reason": "the server is stopping (SIGTERM)"} if draining else {})}
    ready = all(c["ok"] for c in results.values() if c.get("required", True))
    return ready, results


def reasons(checks: dict) -> str:
    return "; ".join(f"{name}: {c['reason']}" for name, c in checks.items()
                     if not c["ok"] and c.get("required", True))
