"""The worker pool (server/process_pool.py) on the tests' own work kinds (support/pool_kinds.py)."""
from rasplay.server.process_pool import WorkerPool

from .waiting import run_async

KINDS = "support.pool_kinds"


def with_pool(scenario, *args, **kw):
    """`scenario(pool)` run against a started pool of `args` and `kw`, in a loop of its own; the pool closed after."""
    async def main():
        pool = WorkerPool(*args, registry=KINDS, **kw)
        await pool.start()
        try:
            return await scenario(pool)
        finally:
            await pool.close()
    return run_async(main())
