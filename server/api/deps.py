"""The FastAPI dependency of every router: the server's services (settings, the evaluation and heavy
worker pools, the store, the response cache, training jobs, per-client quotas, answers being sent), created with the app
and kept on app.state. One dependency, resolved once per request."""
from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from ..cache import ResponseCache
from ..training_jobs import JobManager
from ..settings import Settings
from ..quotas import ConcurrencyLimit, RateLimit
from ..responses import Outgoing
from ..store import Store
from ..process_pool import WorkerPool


@dataclass
class Services:
    settings: Settings
    pool: WorkerPool             # evaluations: evaluate, analyze, overlay, training checks
    heavy: WorkerPool            # compiler work: compile, run, soft-attention study, weights (or, with a broker,
                                 # heavy_queue.RemotePool: the same interface, run by `rasplay worker`)
    store: Store
    cache: ResponseCache
    jobs: JobManager             # training (or, with a broker, training_board.SharedJobs: the same async methods)
    heavy_per_client: ConcurrencyLimit
    writes_per_client: RateLimit
    checks_per_client: RateLimit
    outgoing: Outgoing           # large answers being sent from temporary files, per client


async def services(request: Request) -> Services:
    return request.app.state.services
