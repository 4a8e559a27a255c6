"""What every router uses: the checks of program and inputs against this server's limits, running a
work kind in a pool (the pool's failures as clear 4xx/503 answers), the cached run of an evaluation
worker, the heavy run of compiler work (one client's share held), and whether PyTorch is installed."""
from __future__ import annotations

from fastapi import Request

from rasplay.engine.inputs import input_limit_error

from ..errors import ApiError
from ..process_pool import (EvaluationTimeout, MemoryLimit, NotEncodable, PoolBusy, ReplyTooLarge, WorkerFailed,
                            encode_message)
from ..quotas import client_of
from ..schemas import ERROR_RESPONSES
from ..seams import Pool
from ..settings import Settings, show_bytes
from .deps import Services

RESPONSES = {**ERROR_RESPONSES,
             429: ERROR_RESPONSES[422] | {"description": "Your address has too many large answers it has not read, "
                                                         "or (exercise checks) too many checks a minute (Retry-After)"},
             503: ERROR_RESPONSES[422] | {"description": "All evaluation workers stayed busy "
                                                         "(Retry-After says when to try again)"}}


def check_source(source: str, settings: Settings) -> None:
    if len(source) > settings.max_source_chars:
        raise ApiError(422, "limit", f"the program is {len(source)} characters long; "
                                     f"the limit is {settings.max_source_chars} (this server's --max-source-chars)")


def check_inputs(inputs, input_format: str | None, settings: Settings) -> None:
    """Inputs over the input limits are a 422 before any work is queued (the engine's own check)."""
    error = input_limit_error(inputs, input_format, settings.engine_limits())
    if error is not None:
        raise ApiError(422, "limit", error.message)


async def run_in_pool(pool: Pool, kind: str, payload: dict, settings: Settings,
                      timeout: float | None = None, message: bytes | None = None, client: str = "") -> bytes:
    """`kind` run in `pool`, in the queue of `client` (requests wait behind their own client's)."""
    try:
        return await pool.run(kind, payload, timeout, message, client=client)
    except EvaluationTimeout as e:
        limit = timeout or settings.eval_seconds
        detail = str(e) or f"the work took longer than {limit:g} s (the time limit) and was stopped"
        raise ApiError(422, "timeout", detail) from None
    except MemoryLimit:
        raise ApiError(422, "limit", f"the work needed more than {show_bytes(settings.worker_memory)} of memory "
                                     "(the limit per request) and was stopped; try smaller inputs or a "
                                     "smaller program") from None
    except PoolBusy:
        raise ApiError(503, "busy", f"every worker stayed busy for {pool.queue_timeout:g} s; try again in a moment",
                       headers={"Retry-After": "5"}) from None
    except NotEncodable as e:
        raise not_encodable(e) from None
    except ReplyTooLarge as e:
        raise ApiError(422, "limit", f"the answer would be {show_bytes(e.args[0])}; answers are limited to "
                                     f"{show_bytes(settings.max_response_bytes)}: ask for fewer names (`names`), "
                                     "fewer or shorter inputs, or no trace") from None
    except WorkerFailed as e:
        if str(e).startswith("RecursionError"):
            raise ApiError(422, "limit", "the request nests too deeply for rasplay (lists or expressions nested "
                                         "hundreds of levels); make it flatter") from None
        # an exception inside the engine on this request: the request is one rasplay cannot take
        raise ApiError(422, "unsupported", f"rasplay could not handle this request ({e}); please report it") from None


def not_encodable(e: Exception) -> ApiError:
    return ApiError(422, "validation", "the request holds a value rasplay cannot take: integers must fit in 64 bits "
                                       f"and text must be valid Unicode ({e})")


def message_for(kind: str, payload: dict) -> bytes:
    try:
        return encode_message(kind, payload)
    except NotEncodable as e:
        raise not_encodable(e) from None



async def cached_run(svc: Services, request: Request, kind: str, payload: dict, timeout: float | None = None) -> bytes:
    """`kind` on `payload` in the evaluation pool, answered from the response cache when it was run
    before (the message to the worker is the cache key)."""
    key = message_for(kind, payload)
    body = svc.cache.get(key)
    if body is None:
        body = await run_in_pool(svc.pool, kind, payload, svc.settings, timeout=timeout, message=key,
                                 client=client_of(request))
        svc.cache.put(key, body)
    return body


async def heavy_run(svc: Services, request: Request, kind: str, payload: dict) -> bytes:
    """Compiler work `kind` in the heavy pool, with the compile time limit, while the client holds one
    of its places (--client-heavy; 429 past it)."""
    client = client_of(request)
    with svc.heavy_per_client.hold(client):
        return await run_in_pool(svc.heavy, kind, payload, svc.settings, svc.settings.compile_seconds, client=client)


def torch_available() -> bool:
    """Whether PyTorch is installed, found without importing it: the server process never loads torch
    (importing it here took 1.9 s of the first Train click and ~200 MB; the jobs import it)."""
    import importlib.util

    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):   # a broken or blocked installation counts as none
        return False
