"""GET /language: the language's vocabulary (keywords, built-ins, library names, node kinds), from the
engine, so that the page's editor and views hold no copy of their own; GET /language/reference: the
language reference (every built-in and library name with its signature, meaning and an example), which
the page shows in Help and when the pointer rests on a name in the editor."""
from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from ...engine.reference import reference
from ...engine.vocabulary import vocabulary

from ..schemas import Language, LanguageReference

router = APIRouter(tags=["language"])


@router.get("/language", response_model=Language, summary="The language's keywords, built-ins, library names "
                                                          "and node kinds")
async def language():
    # computed once per process (it reads the grammar and interprets the library): off the event loop
    return await run_in_threadpool(vocabulary)


@router.get("/language/reference", response_model=LanguageReference,
            summary="The language reference: every built-in and library name with its signature, meaning and a "
                    "runnable example")
async def language_reference():
    # a constant table of the engine's (engine/reference.py): no per-client limit is needed
    return {"entries": reference()}
