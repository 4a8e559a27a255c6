"""The server's services (api/deps.Services), made from its settings when the app starts: on one
machine the local half of each seam (seams.py), in a course the shared half from course/ (imported
only then), and closed when it stops."""
from __future__ import annotations

from .api.common import torch_available
from .api.deps import Services
from .cache import ResponseCache
from .process_pool import WorkerPool
from .quotas import ConcurrencyLimit, RateLimit
from .responses import Outgoing
from .seams import Jobs, Pool
from .settings import Settings
from .store import open_store
from .training_jobs import JobManager


def make_services(settings: Settings) -> Services:
    memory = dict(memory_bytes=settings.worker_memory, keep_bytes=settings.worker_keep,
                  share=settings.client_workers, reply_bytes=settings.max_response_bytes)
    heavy, jobs = training_and_compiler(settings, memory)
    return Services(settings=settings,
                    pool=WorkerPool(settings.workers, settings.eval_seconds, settings.queue_seconds,
                                    name="rasplay-eval", **memory),
                    heavy=heavy, store=open_store(settings.store, settings.data_dir, settings.max_store_bytes),
                    cache=ResponseCache(), jobs=jobs,
                    heavy_per_client=ConcurrencyLimit(settings.client_heavy, "compiler requests"),
                    writes_per_client=rate_limit(settings.redis, settings.writes_per_minute, "new links and models"),
                    checks_per_client=rate_limit(settings.redis, settings.checks_per_minute, "exercise checks"),
                    outgoing=Outgoing(settings.client_pending_bytes, settings.data_dir))


def training_and_compiler(settings: Settings, memory: dict) -> tuple[Pool, Jobs]:
    """The heavy pool and the training jobs: in this server's processes, or with a broker through
    Celery, run by `rasplay worker` (course/celery_app.py)."""
    if settings.broker:
        from .course.agreement import Agreement
        from .course.heavy_queue import RemotePool
        from .course.queue_gate import QueueGate
        from .course.training_board import SharedJobs

        gate = QueueGate(settings.broker)   # one view of the broker's Redis for both (a 503 at once while it is away)
        return (RemotePool(settings.broker, settings.compile_seconds, settings.queue_seconds, gate=gate),
                SharedJobs(settings.broker, settings.train_queue, settings.client_jobs, settings.train_seconds,
                           orphan_after=settings.train_orphan_seconds, memory_bytes=settings.train_memory, gate=gate,
                           agreement=Agreement(settings)))
    heavy = WorkerPool(settings.heavy_pool_size, settings.compile_seconds, settings.queue_seconds,
                       depth=1, name="rasplay-heavy", **memory)
    jobs = JobManager("rasplay.server.training_run.run", settings.train_jobs, settings.train_queue,
                      settings.train_seconds, memory_bytes=settings.train_memory,
                      workroot=settings.data_dir / "jobs",
                      warm=settings.train_warm if torch_available() else 0,   # no torch: no spares
                      per_client=settings.client_jobs, orphan_after=settings.train_orphan_seconds)
    return heavy, jobs


def rate_limit(redis_url: str | None, per_minute: int, what: str) -> RateLimit:
    """A per-client write bucket: shared by the replicas through Redis with --redis (course/), else this
    server's own."""
    if redis_url:
        from .course.quotas_shared import rate_limit as shared

        return shared(redis_url, per_minute, what)
    return RateLimit(per_minute, what)


async def close_services(svc: Services) -> None:
    await svc.jobs.close()
    await svc.pool.close()
    await svc.heavy.close()
    svc.store.close()
