"""Learned programs over HTTP (docs/learned_programs.md, "Checking"): POST /learned/check compares a
learned program with the task's program on every input up to a length; POST /learned/import reads a
TransformerPrograms program (its Python text and weights CSV, never run) into rasplay's RASP. Both run in
the heavy pool (with a broker: `rasplay worker`'s heavy queue) under the compile time limit, while the
client holds one of its places (--client-heavy; 429 past it)."""
from __future__ import annotations

import orjson
from fastapi import APIRouter, Depends, Request

from ..errors import ApiError
from ..quotas import client_of
from ..responses import answer
from ..schemas_learned import LearnedCheckReport, LearnedCheckRequest, LearnedImportRequest, LearnedImportResult
from ..settings import Settings
from .common import check_source, heavy_run
from .compile import RESPONSES
from .deps import Services, services

router = APIRouter(tags=["learned programs"])

# The most one check may do over HTTP (the engine's CheckLimits; the CLI allows more)
CHECK_LIMITS = {"max_length": 12, "max_vocab": 64, "max_exhaustive": 200_000, "max_samples": 10_000,
                "max_inputs": 250_000, "max_show": 20}
MAX_WEIGHTS_CHARS = 4_000_000


def check_limits(settings: Settings) -> dict:
    """The check's limits on this server: CHECK_LIMITS, and 90% of the compile time limit (the worker is
    stopped at the whole of it)."""
    return {**CHECK_LIMITS, "seconds": settings.compile_seconds * 0.9}


def _unwrap(body: bytes, key: str):
    reply = orjson.loads(body)
    if not reply["ok"]:
        e = reply["error"]
        raise ApiError(422, e.get("kind", "input"), e["message"], line=e.get("line"), col=e.get("col"))
    return reply[key]


@router.post("/learned/check", response_model=LearnedCheckReport, responses=RESPONSES,
             summary="Check a learned program against the task's program on every input up to a length")
async def check(req: LearnedCheckRequest, request: Request, svc: Services = Depends(services)):
    """Every input over `vocab` of each length from min_length to max_length (and `beyond` lengths past
    it) when there are at most `exhaustive` of that length, else `samples` seeded ones: agreement by
    length, the shortest failing inputs (expected and got), which of the learned program's selectors
    equal one of the task's, the time taken. A learned program that disagrees is a 200 saying so; a
    program with an error, options over the limits (max length 12 with beyond, 200,000 inputs enumerated
    per length, 10,000 samples per length, 250,000 inputs in all, 64 tokens) or a check past the time
    limit is a 422."""
    settings = svc.settings
    check_source(req.learned, settings)
    check_source(req.task, settings)
    vocab = list(req.vocab) if isinstance(req.vocab, str) else req.vocab
    options = req.model_dump(include={"min_length", "max_length", "beyond", "exhaustive", "samples", "seed",
                                      "show"})
    payload = {"learned": req.learned, "task": req.task, "vocab": vocab, "output": req.output,
               "learned_output": req.learned_output, "options": options, "check_limits": check_limits(settings),
               "limits": settings.engine_limits_json()}
    body = await heavy_run(svc, request, "learned_check", payload)
    report = _unwrap(body, "report")
    return await answer(orjson.dumps(report), client_of(request), svc.outgoing)


@router.post("/learned/import", response_model=LearnedImportResult, responses=RESPONSES,
             summary="Read a TransformerPrograms program into rasplay's RASP")
async def import_program(req: LearnedImportRequest, request: Request, svc: Services = Depends(services)):
    """The program's Python text is read, never run: the parts it is made of (its heads' predicates,
    its MLPs' tables, the classifier weights from the CSV) become a RASP program that reads the input
    with "<s>" before it (and "</s>" after it where the program uses one). Text that is not such a
    program is a 422 saying what was not understood, with its line."""
    check_source(req.program, svc.settings)
    if len(req.weights) > MAX_WEIGHTS_CHARS:
        raise ApiError(422, "limit", f"the weights are {len(req.weights)} characters long; the limit is "
                                     f"{MAX_WEIGHTS_CHARS}")
    body = await heavy_run(svc, request, "learned_import", {"program": req.program, "weights": req.weights,
                                                            "title": req.title})
    return {"source": _unwrap(body, "source")}
