"""Settings that replicas and workers must agree on, checked as they meet (issue 35, item 6).

* A worker says, in its heartbeat (`rasplay:worker:QUEUE:NAME`, celery_app.Runtime.beat), the settings the
  replicas must share with it (AGREED: the time limits the replicas wait by); a replica with `--broker`
  compares them with its own at start and whenever it counts the workers, and logs a WARNING once per
  worker and setting that differs (a refusal would stop a replica over a worker it does not control).
* A replica without `--broker` but with `--redis` looks, once at start, for live workers' heartbeats in
  every database of that Redis server: workers there mean the course runs its jobs through a broker, and
  this replica, which runs its trainings and compiles itself, was most likely started without it. It logs a
  WARNING saying so (a replica with neither has no Redis to look in: nothing can be known).
* Replicas sharing a PostgreSQL store record, as each starts, the settings they must share with each other
  (STORE_AGREED: the store's size cap, which each replica enforces on its own) in the store's
  `replica_settings` table, and a starting replica logs a WARNING for every other replica recorded there
  with another value (a warning, as above: the replica cannot tell which value is meant)."""
from __future__ import annotations

import asyncio
import json
import logging
import socket

from .celery_base import WORKER_KEY

log = logging.getLogger("rasplay")
AGREED = ("train_seconds", "compile_seconds")   # replicas wait for the workers' work by these
STORE_AGREED = ("max_store_bytes",)             # each replica of a shared store enforces it on its own
DATABASES = 16                                  # Redis's default number of databases


def agreed(settings) -> dict:
    return {name: getattr(settings, name) for name in AGREED}


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def disagreements(mine: dict, workers: dict[str, dict]) -> list[tuple[str, str, str]]:
    """(worker, setting, the sentence) for every agreed setting a worker has with another value."""
    found = []
    for worker, theirs in sorted(workers.items()):
        for name in AGREED:
            if name in theirs and theirs[name] != mine.get(name):
                found.append((worker, name, f"rasplay worker {worker} has {flag(name)} {theirs[name]:g} and this "
                                            f"replica {mine.get(name):g}: give workers and replicas the same value "
                                            "(docs/deploy.md)"))
    return found


class Agreement:
    """A replica's side: each disagreement logged once."""

    def __init__(self, settings):
        self.mine = agreed(settings)
        self.said: set[tuple[str, str, object]] = set()

    def check(self, workers: dict[str, dict]) -> list[str]:
        told = []
        for worker, name, sentence in disagreements(self.mine, workers):
            key = (worker, name, workers[worker][name])
            if key not in self.said:
                self.said.add(key)
                log.warning("settings disagree: %s", sentence)
                told.append(sentence)
        return told


def heartbeat_settings(raw: bytes | str | None) -> dict:
    """The agreed settings in a worker's heartbeat value (none from a worker of an older release)."""
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value.get("settings") or {} if isinstance(value, dict) else {}


async def workers_without_broker(redis_url: str, timeout: float = 2.0) -> list[int]:
    """The databases of the Redis server at `redis_url` that hold live workers' heartbeats."""
    import redis.asyncio as aioredis
    from redis import RedisError

    found = []
    given = aioredis.ConnectionPool.from_url(redis_url, socket_connect_timeout=timeout, socket_timeout=timeout)
    for db in range(DATABASES):   # (the URL's own database wins over a `db` argument: set it in the pool's)
        pool = aioredis.ConnectionPool(connection_class=given.connection_class, **{**given.connection_kwargs, "db": db})
        client = aioredis.Redis(connection_pool=pool)
        try:
            async for _ in client.scan_iter(match=WORKER_KEY + "*", count=1000):
                found.append(db)
                break
        except (RedisError, OSError):
            break   # no such database (fewer configured), or Redis away: nothing more to learn
        finally:
            await client.aclose()
            await pool.disconnect()
    await given.disconnect()
    return found


async def warn_without_broker(redis_url: str) -> None:
    dbs = await workers_without_broker(redis_url)
    if dbs:
        log.warning("settings disagree: live `rasplay worker` processes use the Redis of --redis (database %s) "
                    "but this replica has no --broker: it runs its trainings and compiles itself, and those "
                    "workers get none of its work; start it with the workers' --broker (RASPLAY_BROKER)",
                    ", ".join(map(str, dbs)))


def start_check(settings) -> asyncio.Task | None:
    """At a replica's start: the no-broker check, in the background (it never delays serving)."""
    if settings.broker or not settings.redis:
        return None
    return asyncio.get_running_loop().create_task(warn_without_broker(settings.redis))


def store_disagreements(replica: str, mine: dict[str, str], recorded) -> list[str]:
    """The sentences for the other replicas of a store recorded with values other than `mine`."""
    return [f"replica {other} of this store started on {started} UTC with {flag(name)} {value} and this replica "
            f"({replica}) has {mine[name]}: give every replica of a store the same value (docs/deploy.md); a "
            f"replica that no longer runs: DELETE FROM replica_settings WHERE replica = '{other}'"
            for other, name, value, started in recorded if name in mine and value != mine[name]]


def check_store(store, settings) -> list[str]:
    """At a replica's start, with a shared (PostgreSQL) store: record this replica's STORE_AGREED settings,
    log a WARNING for each other replica recorded with another value; the sentences. A store that cannot be
    asked now is left alone (the replica's requests say so)."""
    from ..store_base import StoreUnavailable

    if not hasattr(store, "record_settings"):
        return []   # SQLite: one server writes it
    replica = f"{socket.gethostname()}:{settings.port}"
    mine = {name: str(getattr(settings, name)) for name in STORE_AGREED}
    try:
        recorded = store.record_settings(replica, mine)
    except StoreUnavailable as e:
        log.warning("could not record this replica's settings in the store: %s", e)
        return []
    told = store_disagreements(replica, mine, recorded)
    for sentence in told:
        log.warning("settings disagree: %s", sentence)
    return told
