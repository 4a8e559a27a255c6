"""The compiler over HTTP: POST /compile -> a model id and its summary; POST /models/{id}/run runs the
compiled transformer (hard or soft attention) with its attention, residual decode and agreement;
POST /models/{id}/soft the soft-attention study; GET /models/{id}/weights.npz the weights;
GET /models/{id}/model.onnx the model as an ONNX graph (the onnx extra).

A model is named by its compile request (stored like share links), and workers rebuild it from
that in well under a second, so ids survive restarts and any worker can serve any model."""
from __future__ import annotations

import re
from urllib.parse import quote

import orjson
from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from ..errors import ApiError
from ..quotas import client_of
from ..responses import answer
from ..schemas import ERROR_RESPONSES, CompiledModelSummary, CompileRequest, RunRequest, SoftStudyRequest
from ..seams import Store
from ..store import model_id_of
from .deps import Services, services
from .common import check_inputs, check_source, heavy_run

router = APIRouter(tags=["compile"])
MODEL_ID = r"^m[a-z2-7]{15}$"
RESPONSES = {**ERROR_RESPONSES,
             429: ERROR_RESPONSES[422] | {"description": "Too many compiler requests from your address (Retry-After)"},
             503: ERROR_RESPONSES[422] | {"description": "All compiler workers stayed busy (Retry-After)"},
             507: ERROR_RESPONSES[422] | {"description": "The server's store or disk is full"}}
MODEL_RESPONSES = {**RESPONSES, 404: ERROR_RESPONSES[422] | {"description": "No such model"}}


def _unwrap(body: bytes, key: str):
    reply = orjson.loads(body)
    if not reply["ok"]:
        e = reply["error"]
        raise ApiError(422, "compile" if e["kind"] not in ("input", "limit", "validation") else e["kind"], e["message"],
                       line=e.get("line"), col=e.get("col"))
    return reply[key]


def attachment(filename: str) -> str:
    """A Content-Disposition for `filename` (RFC 6266): a quoted ASCII fallback, and the name itself
    percent-encoded in filename* (RFC 5987)."""
    fallback = re.sub(r'[^A-Za-z0-9._ -]', "_", filename)
    return f'attachment; filename="{fallback}"; filename*=UTF-8\'\'{quote(filename, safe="")}'


async def _model(model_id: str, store: Store) -> dict:
    spec = await run_in_threadpool(store.get_model, model_id)
    if spec is None:
        raise ApiError(404, "not_found", f"no compiled model '{model_id}' (compile the program first)")
    return spec


@router.post("/compile", response_model=CompiledModelSummary, responses=RESPONSES,
             summary="Compile a program to transformer weights")
async def compile_program(req: CompileRequest, request: Request, svc: Services = Depends(services)):
    """Builds a transformer whose forward pass on "BOS + input" reproduces the evaluator's value of the
    output s-op exactly, for every input over `vocab` of length 1..max_len. A program the compiler
    cannot take is a 422 naming the construct and its line (and is not stored). A new model counts
    against the client's rate of new links and models (429 past it)."""
    settings, store = svc.settings, svc.store
    check_source(req.source, settings)
    vocab = list(req.vocab) if isinstance(req.vocab, str) else req.vocab
    if not vocab or len(vocab) > settings.compile_max_vocab:
        raise ApiError(422, "limit", f"the vocabulary needs 1 to {settings.compile_max_vocab} tokens (it has {len(vocab)})")
    if req.length_free:    # no max_len: weights that do not depend on the length (a different model id)
        spec = {"source": req.source, "output": req.output, "vocab": vocab, "bos": req.bos, "length_free": True}
    elif req.max_len is None:
        raise ApiError(422, "input", "max_len is required (or ask for a length_free model)")
    elif req.max_len > settings.compile_max_len:
        raise ApiError(422, "limit", f"max_len {req.max_len} is over the limit of {settings.compile_max_len}")
    else:
        spec = {"source": req.source, "output": req.output, "vocab": vocab, "max_len": req.max_len, "bos": req.bos}
    if req.causal:   # only when asked: the ids of models compiled before causal mode stay the same
        spec["causal"] = True
    if not req.reuse_residual:   # likewise: only the wider layout asked for changes the id
        spec["reuse_residual"] = False
    model_id = model_id_of(spec)
    stored = await run_in_threadpool(store.has_model, model_id)
    body = await heavy_run(svc, request, "compile", {"id": model_id, "spec": spec})
    summary = _unwrap(body, "summary")   # a program that does not compile stops here, unstored
    if not stored:
        svc.writes_per_client.take(client_of(request))
        await run_in_threadpool(store.put_model, spec)
    return {"id": model_id, "summary": summary}


@router.post("/models/{model_id}/run", responses=MODEL_RESPONSES, summary="Run a compiled model",
             response_description="outputs, expected values, agreement, every head's attention (BOS first), "
                                  "and every residual block decoded at every stage")
async def run_model(req: RunRequest, request: Request, model_id: str = Path(pattern=MODEL_ID),
                    svc: Services = Depends(services)) -> dict:
    settings, store = svc.settings, svc.store
    check_inputs(req.inputs, None, settings)
    spec = await _model(model_id, store)
    payload = {"id": model_id, "spec": spec, "inputs": req.inputs, "mode": req.mode, "beta": req.beta}
    body = await heavy_run(svc, request, "model_run", payload)
    return _unwrap(body, "run")


@router.post("/models/{model_id}/soft", responses=MODEL_RESPONSES, summary="The soft-attention study of a model",
             response_description="the smallest exact beta (overall and per length), per-head uniform/tieless, "
                                  "and agreement and max error as functions of beta and n")
async def soft_study(req: SoftStudyRequest, request: Request, model_id: str = Path(pattern=MODEL_ID),
                     svc: Services = Depends(services)) -> dict:
    spec = await _model(model_id, svc.store)
    options = req.model_dump(exclude_none=True)
    body = await heavy_run(svc, request, "model_soft", {"id": model_id, "spec": spec, "options": options})
    return _unwrap(body, "study")


@router.get("/models/{model_id}/weights.npz", responses={200: {"content": {"application/octet-stream": {}},
                                                              "description": "weights named as docs/weights.md, "
                                                                             "plus the config as JSON"},
                                                        **MODEL_RESPONSES},
            response_class=Response, summary="Download a compiled model's weights")
async def weights(request: Request, model_id: str = Path(pattern=MODEL_ID), svc: Services = Depends(services)):
    spec = await _model(model_id, svc.store)
    body = await heavy_run(svc, request, "model_npz", {"id": model_id, "spec": spec})
    if body[:1] == b"{":  # a compile error comes back as JSON
        _unwrap(body, "summary")
    name = f"rasplay-{spec.get('output') or 'model'}-{model_id}.npz"
    return await answer(body, client_of(request), svc.outgoing, media_type="application/octet-stream",
                        headers={"Content-Disposition": attachment(name)})


def onnx_available() -> bool:
    """Whether onnx is installed, found without importing it (the workers import it)."""
    from ...interop.onnx_graph import onnx_available as available

    return available()


@router.get("/models/{model_id}/model.onnx",
            responses={200: {"content": {"application/octet-stream": {}},
                             "description": "an ONNX graph (opset 17): input `input_ids` (int64 [batch, seq], BOS "
                                            "first), output `logits` (categorical) or `values` (numerical); the "
                                            "vocabulary and output classes in its metadata (docs/interop.md)"},
                       **MODEL_RESPONSES,
                       501: ERROR_RESPONSES[422] | {"description": "The onnx package is not installed on the server"}},
            response_class=Response, summary="Download a compiled model as ONNX")
async def onnx_model(request: Request, model_id: str = Path(pattern=MODEL_ID),
                     dtype: str = Query("float64", pattern="^(float64|float32)$",
                                        description="the graph's float type"),
                     attention: str = Query("hard", pattern="^(hard|soft)$",
                                            description="average-hard attention (the exact model) or softmax at "
                                                        "the model's attention scale (max_len models only)"),
                     svc: Services = Depends(services)):
    """The compiled model as a standard ONNX graph that onnxruntime runs. A length-free model exports with
    a dynamic sequence axis and hard attention (any length); softmax attention for it is refused with the
    reason (422)."""
    spec = await _model(model_id, svc.store)
    if not onnx_available():
        raise ApiError(501, "unavailable", "ONNX export needs the onnx package on the server: "
                                           "pip install 'rasplay[onnx]'")
    body = await heavy_run(svc, request, "model_onnx",
                           {"id": model_id, "spec": spec, "dtype": dtype, "attention": attention})
    if body[:1] == b"{":  # a compile error comes back as JSON
        _unwrap(body, "summary")
    name = f"rasplay-{spec.get('output') or 'model'}-{model_id}.onnx"
    return await answer(body, client_of(request), svc.outgoing, media_type="application/octet-stream",
                        headers={"Content-Disposition": attachment(name)})
