"""GET /exercises, GET /exercises/{id} (never the reference) and POST /exercises/{id}/check: the
check runs in an evaluation worker with its own time limit (Settings.check_seconds)."""
from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Request

from ...engine.exercises import Catalog, Exercise
from ...engine.exercises.format import ID_PATTERN

from ..errors import ApiError
from ..quotas import client_of
from ..responses import answer
from ..schemas import ERROR_RESPONSES, CheckRequest, CheckResult, ExercisePublic, ExerciseSummary
from .deps import Services, services
from .common import RESPONSES, cached_run, check_source

router = APIRouter(tags=["exercises"])
NOT_FOUND = {404: ERROR_RESPONSES[422] | {"description": "No such exercise"}}
ExerciseId = Path(pattern=ID_PATTERN, max_length=64)


def catalog(request: Request) -> Catalog:
    return request.app.state.exercises


def _find(catalog: Catalog, exercise_id: str) -> Exercise:
    exercise = catalog.get(exercise_id)
    if exercise is None:
        raise ApiError(404, "not_found", f"no exercise '{exercise_id}'")
    return exercise


@router.get("/exercises", response_model=list[ExerciseSummary], summary="The exercises, in teaching order")
async def list_exercises(cat: Catalog = Depends(catalog)):
    return [e.summary() for e in cat.ordered()]


@router.get("/exercises/{exercise_id}", response_model=ExercisePublic, responses={**NOT_FOUND, 422: ERROR_RESPONSES[422]},
            summary="One exercise: task, starter code, inputs and budget (never the reference)")
async def get_exercise(exercise_id: str = ExerciseId, cat: Catalog = Depends(catalog)):
    return _find(cat, exercise_id).public()


@router.post("/exercises/{exercise_id}/check", response_model=CheckResult, responses={**RESPONSES, **NOT_FOUND},
             summary="Check a program against an exercise")
async def check_exercise(req: CheckRequest, request: Request, exercise_id: str = ExerciseId,
                         cat: Catalog = Depends(catalog), svc: Services = Depends(services)):
    """Evaluates the program and the hidden reference on the exercise's inputs (hundreds, at most
    1000 of up to 64 tokens) and compares the target s-op: pass, wrong (with the shortest
    counterexample and the first s-op that differs), over_budget (layers and heads against the
    budget) or error (the program does not define the target). A wrong program is a 200, not an
    error; a check past the time limit is a 422. Checks are rate-limited per client (429 past it): each
    counterexample shows a little of the hidden reference."""
    exercise = _find(cat, exercise_id)
    settings = svc.settings
    check_source(req.source, settings)
    svc.checks_per_client.take(client_of(request))
    payload = {"text": exercise.text, "id": exercise.id, "source": req.source,
               "limits": settings.engine_limits_json(), "seconds": settings.check_seconds * 0.9}
    body = await cached_run(svc, request, "exercise_check", payload, timeout=settings.check_seconds)
    return await answer(body, client_of(request), svc.outgoing)
