"""GET /language: the language's vocabulary (keywords, built-ins, library names, node kinds), from the
engine, so that the page's editor and views hold no copy of their own."""
from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from ...engine.vocabulary import vocabulary

from ..schemas import Language

router = APIRouter(tags=["language"])


@router.get("/language", response_model=Language, summary="The language's keywords, built-ins, library names "
                                                          "and node kinds")
async def language():
    # computed once per process (it reads the grammar and interprets the library): off the event loop
    return await run_in_threadpool(vocabulary)
