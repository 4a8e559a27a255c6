"""GET /examples and GET /examples/{id}: the gallery in examples/."""
from __future__ import annotations

from fastapi import APIRouter, Path

from ..errors import ApiError
from ...engine.examples import ID_PATTERN, find_example, load_examples
from ..schemas import ERROR_RESPONSES, Example, ExampleSummary

router = APIRouter(tags=["examples"])


@router.get("/examples", response_model=list[ExampleSummary], summary="The example gallery")
async def list_examples():
    return [e.summary() for e in load_examples()]


@router.get("/examples/{example_id}", response_model=Example, responses={404: ERROR_RESPONSES[422] | {"description": "No such example"}, 422: ERROR_RESPONSES[422]},
            summary="One example with its source")
async def get_example(example_id: str = Path(pattern=ID_PATTERN, max_length=64)):
    example = find_example(example_id)
    if example is None:
        raise ApiError(404, "not_found", f"no example '{example_id}'")
    return {**example.summary(), "source": example.source}
