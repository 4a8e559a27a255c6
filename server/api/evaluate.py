"""POST /evaluate, POST /analyze and POST /provenance: the engine, run in a worker process with a hard time limit."""
from __future__ import annotations

import orjson
from fastapi import APIRouter, Depends, Request

from ..errors import ApiError
from ..quotas import client_of
from ..responses import answer
from ..schemas import AnalysisDocument, AnalyzeRequest, EvaluateRequest, EvaluationDocument, ProvenanceDocument, \
    ProvenanceRequest
from .common import RESPONSES, cached_run, check_inputs, check_source
from .deps import Services, services

router = APIRouter(tags=["evaluate"])


@router.post("/evaluate", response_model=EvaluationDocument, responses=RESPONSES,
             summary="Evaluate a RASP program on inputs")
async def evaluate(req: EvaluateRequest, request: Request, svc: Services = Depends(services)):
    """The evaluation document: every s-op's and selector's values per input, the layer/head analysis
    and the program's diagnostics (with line and column). Program errors are diagnostics, not HTTP
    errors; requests over a limit or the time limit are 422s."""
    settings = svc.settings
    check_source(req.source, settings)
    check_inputs(req.inputs, req.input_format, settings)
    payload = {"source": req.source, "inputs": list(req.inputs), "names": req.names,
               "input_format": req.input_format, "limits": settings.engine_limits_json(), "trace": req.trace}
    body = await cached_run(svc, request, "evaluate", payload)
    return await answer(body, client_of(request), svc.outgoing)


@router.post("/analyze", response_model=AnalysisDocument, responses=RESPONSES,
             summary="Layers, heads and the dependency graph of a program")
async def analyze(req: AnalyzeRequest, request: Request, svc: Services = Depends(services)):
    """The layer and head allocation (docs/architecture.md; engine/analysis.py) with the dependency graph, for diagrams."""
    settings = svc.settings
    check_source(req.source, settings)
    payload = {"source": req.source, "output": req.output, "limits": settings.engine_limits_json()}
    body = await cached_run(svc, request, "analyze", payload)
    return await answer(body, client_of(request), svc.outgoing)


@router.post("/provenance", response_model=ProvenanceDocument, responses=RESPONSES,
             summary="Where did a value come from: the cells it read, through every layer")
async def provenance(req: ProvenanceRequest, request: Request, svc: Services = Depends(services)):
    """The provenance of s-op `name` (or graph node `node`) at `position` on one input: per attention head
    on its path, the query rows and the keys each actually selected on this input (recursively, down to
    the input), and every s-op cell on the path. A name, node or position the program does not have is a
    422."""
    settings = svc.settings
    check_source(req.source, settings)
    check_inputs([req.input], req.input_format, settings)
    if (req.name is None) == (req.node is None):
        raise ApiError(422, "validation", "give exactly one of `name` and `node`")
    payload = {"source": req.source, "inp": req.input, "input_format": req.input_format, "name": req.name,
               "node": req.node, "position": req.position, "limits": settings.engine_limits_json()}
    body = await cached_run(svc, request, "provenance", payload)
    error = orjson.loads(body).get("error")
    if error is not None:
        raise ApiError(422, error["kind"], error["message"])
    return await answer(body, client_of(request), svc.outgoing)
