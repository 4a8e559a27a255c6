"""The FastAPI dependency of every router: the server's services (settings, the evaluation and heavy
worker pools, the store, the response cache, training jobs, per-client quotas, answers being sent), created with the app
and kept on app.state. One dependency, resolved once per request."""
from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from ..cache import ResponseCache
from ..quotas import ConcurrencyLimit, RateLimit
from ..responses import Outgoing
from ..seams import Jobs, Pool, Store
from ..settings import Settings


@dataclass
class Services:
    settings: Settings
    pool: Pool                   # evaluations: evaluate, analyze, overlay, training checks (a WorkerPool)
    heavy: Pool                  # compiler work: compile, run, soft-attention study, weights (a WorkerPool, or
                                 # with a broker course.heavy_queue.RemotePool, run by `rasplay worker`)
    store: Store                 # SQLite, or PostgreSQL with --store (course.store_postgres)
    cache: ResponseCache
    jobs: Jobs                   # training (or, with a broker, course.training_board.SharedJobs)
    heavy_per_client: ConcurrencyLimit
    writes_per_client: RateLimit
    checks_per_client: RateLimit
    outgoing: Outgoing           # large answers being sent from temporary files, per client


async def services(request: Request) -> Services:
    return request.app.state.services
