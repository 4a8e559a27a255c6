"""POST /evaluate, POST /analyze and POST /provenance: the engine, run in a worker process with a hard time limit."""
from __future__ import annotations

import orjson
from fastapi import APIRouter, Depends, Request

from ...engine.inputs import input_limit_error

from ..errors import ApiError
from ..quotas import client_of
from ..responses import answer
from ..schemas import (ERROR_RESPONSES, AnalysisDocument, AnalyzeRequest, EvaluateRequest, EvaluationDocument,
                       ProvenanceDocument, ProvenanceRequest)
from ..settings import Settings
from ..settings import show_bytes
from ..process_pool import (EvaluationTimeout, MemoryLimit, NotEncodable, PoolBusy, ReplyTooLarge, WorkerFailed,
                       WorkerPool, encode_message)
from .deps import Services, services

router = APIRouter(tags=["evaluate"])
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


async def run_in_pool(pool: WorkerPool, kind: str, payload: dict, settings: Settings,
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


@router.post("/evaluate", response_model=EvaluationDocument, responses=RESPONSES,
             summary="Evaluate a RASP program on inputs")
async def evaluate(req: EvaluateRequest, request: Request, svc: Services = Depends(services)):
    """The evaluation document: every s-op's and selector's values per input, the layer/head analysis
    and the program's diagnostics (with line and column). Program errors are diagnostics, not HTTP
    errors; requests over a limit or the time limit are 422s."""
    settings, cache = svc.settings, svc.cache
    check_source(req.source, settings)
    check_inputs(req.inputs, req.input_format, settings)
    payload = {"source": req.source, "inputs": list(req.inputs), "names": req.names,
               "input_format": req.input_format, "limits": settings.engine_limits_json(), "trace": req.trace}
    key = message_for("evaluate", payload)   # the cache key is also the message to the worker
    body = cache.get(key)
    if body is None:
        body = await run_in_pool(svc.pool, "evaluate", payload, settings, message=key, client=client_of(request))
        cache.put(key, body)
    return await answer(body, client_of(request), svc.outgoing)


@router.post("/analyze", response_model=AnalysisDocument, responses=RESPONSES,
             summary="Layers, heads and the dependency graph of a program")
async def analyze(req: AnalyzeRequest, request: Request, svc: Services = Depends(services)):
    """The layer and head allocation (docs/language.md, "Layers and heads") with the dependency graph, for diagrams."""
    settings, cache = svc.settings, svc.cache
    check_source(req.source, settings)
    payload = {"source": req.source, "output": req.output, "limits": settings.engine_limits_json()}
    key = message_for("analyze", payload)
    body = cache.get(key)
    if body is None:
        body = await run_in_pool(svc.pool, "analyze", payload, settings, message=key, client=client_of(request))
        cache.put(key, body)
    return await answer(body, client_of(request), svc.outgoing)


@router.post("/provenance", response_model=ProvenanceDocument, responses=RESPONSES,
             summary="Where did a value come from: the cells it read, through every layer")
async def provenance(req: ProvenanceRequest, request: Request, svc: Services = Depends(services)):
    """The provenance of s-op `name` (or graph node `node`) at `position` on one input: per attention head
    on its path, the query rows and the keys each actually selected on this input (recursively, down to
    the input), and every s-op cell on the path. A name, node or position the program does not have is a
    422."""
    settings, cache = svc.settings, svc.cache
    check_source(req.source, settings)
    check_inputs([req.input], req.input_format, settings)
    if (req.name is None) == (req.node is None):
        raise ApiError(422, "validation", "give exactly one of `name` and `node`")
    payload = {"source": req.source, "inp": req.input, "input_format": req.input_format, "name": req.name,
               "node": req.node, "position": req.position, "limits": settings.engine_limits_json()}
    key = message_for("provenance", payload)
    body = cache.get(key)
    if body is None:
        body = await run_in_pool(svc.pool, "provenance", payload, settings, message=key, client=client_of(request))
        cache.put(key, body)
    error = orjson.loads(body).get("error")
    if error is not None:
        raise ApiError(422, error["kind"], error["message"])
    return await answer(body, client_of(request), svc.outgoing)
