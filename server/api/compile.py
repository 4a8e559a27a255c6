"""The compiler over HTTP: POST /compile -> a model id and its summary; POST /models/{id}/run runs the
compiled transformer (hard or soft attention) with its attention, residual decode and agreement;
POST /models/{id}/soft the soft-attention study; GET /models/{id}/weights.npz the weights.

A model is named by its compile request (stored like share links), and workers rebuild it from
that in well under a second, so ids survive restarts and any worker can serve any model."""
from __future__ import annotations

import orjson
from fastapi import APIRouter, Depends, Path
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from ..errors import ApiError
from ..schemas import ERROR_RESPONSES, CompiledModelSummary, CompileRequest, RunRequest, SoftStudyRequest
from ..store import ShareStore
from .deps import Services, services
from .evaluate import check_inputs, check_source, run_in_pool

router = APIRouter(tags=["compile"])
MODEL_ID = r"^m[a-z2-7]{15}$"
RESPONSES = {**ERROR_RESPONSES, 503: ERROR_RESPONSES[422] | {"description": "All workers stayed busy"}}
MODEL_RESPONSES = {**RESPONSES, 404: ERROR_RESPONSES[422] | {"description": "No such model"}}


def _unwrap(body: bytes, key: str):
    reply = orjson.loads(body)
    if not reply["ok"]:
        e = reply["error"]
        raise ApiError(422, "compile" if e["kind"] not in ("input", "limit") else e["kind"], e["message"],
                       line=e.get("line"), col=e.get("col"))
    return reply[key]


async def _model(model_id: str, store: ShareStore) -> dict:
    spec = await run_in_threadpool(store.get_model, model_id)
    if spec is None:
        raise ApiError(404, "not_found", f"no compiled model '{model_id}' (compile the program first)")
    return spec


@router.post("/compile", response_model=CompiledModelSummary, responses=RESPONSES,
             summary="Compile a program to transformer weights")
async def compile_program(req: CompileRequest, svc: Services = Depends(services)):
    """Builds a transformer whose forward pass on "BOS + input" reproduces the evaluator's value of the
    output s-op exactly, for every input over `vocab` of length 1..max_len. A program the compiler
    cannot take is a 422 naming the construct and its line."""
    settings, pool, store = svc.settings, svc.pool, svc.store
    check_source(req.source, settings)
    vocab = list(req.vocab) if isinstance(req.vocab, str) else req.vocab
    if not vocab or len(vocab) > settings.compile_max_vocab:
        raise ApiError(422, "limit", f"the vocabulary needs 1 to {settings.compile_max_vocab} tokens (it has {len(vocab)})")
    if req.max_len > settings.compile_max_len:
        raise ApiError(422, "limit", f"max_len {req.max_len} is over the limit of {settings.compile_max_len}")
    spec = {"source": req.source, "output": req.output, "vocab": vocab, "max_len": req.max_len, "bos": req.bos}
    model_id = await run_in_threadpool(store.put_model, spec)
    body = await run_in_pool(pool, "compile", {"id": model_id, "spec": spec}, settings, settings.compile_seconds)
    return {"id": model_id, "summary": _unwrap(body, "summary")}


@router.post("/models/{model_id}/run", responses=MODEL_RESPONSES, summary="Run a compiled model",
             response_description="outputs, expected values, agreement, every head's attention (BOS first), "
                                  "and every residual block decoded at every stage")
async def run_model(req: RunRequest, model_id: str = Path(pattern=MODEL_ID), svc: Services = Depends(services)) -> dict:
    settings, pool, store = svc.settings, svc.pool, svc.store
    check_inputs(req.inputs, None, settings)
    spec = await _model(model_id, store)
    payload = {"id": model_id, "spec": spec, "inputs": req.inputs, "mode": req.mode, "beta": req.beta}
    body = await run_in_pool(pool, "model_run", payload, settings, settings.compile_seconds)
    return _unwrap(body, "run")


@router.post("/models/{model_id}/soft", responses=MODEL_RESPONSES, summary="The soft-attention study of a model",
             response_description="the smallest exact beta (overall and per length), per-head uniform/tieless, "
                                  "and agreement and max error as functions of beta and n")
async def soft_study(req: SoftStudyRequest, model_id: str = Path(pattern=MODEL_ID),
                     svc: Services = Depends(services)) -> dict:
    settings, pool, store = svc.settings, svc.pool, svc.store
    spec = await _model(model_id, store)
    options = req.model_dump(exclude_none=True)
    body = await run_in_pool(pool, "model_soft", {"id": model_id, "spec": spec, "options": options}, settings,
                             settings.compile_seconds)
    return _unwrap(body, "study")


@router.get("/models/{model_id}/weights.npz", responses={200: {"content": {"application/octet-stream": {}},
                                                              "description": "weights named as docs/weights.md, "
                                                                             "plus the config as JSON"},
                                                        **MODEL_RESPONSES},
            response_class=Response, summary="Download a compiled model's weights")
async def weights(model_id: str = Path(pattern=MODEL_ID), svc: Services = Depends(services)):
    settings, pool, store = svc.settings, svc.pool, svc.store
    spec = await _model(model_id, store)
    body = await run_in_pool(pool, "model_npz", {"id": model_id, "spec": spec}, settings, settings.compile_seconds)
    if body[:1] == b"{":  # a compile error comes back as JSON
        _unwrap(body, "summary")
    name = f"rasplay-{spec.get('output') or 'model'}-{model_id}.npz"
    return Response(body, media_type="application/octet-stream",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})
