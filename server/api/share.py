"""POST /share -> a short link; GET /s/{id} redirects to the playground with the state in the hash."""
from __future__ import annotations

import html
import json
import re

from fastapi import APIRouter, Depends, Header, Path, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse

from ..errors import ApiError
from ..links import link_fragment
from ..quotas import client_of
from ..schemas import ERROR_RESPONSES, ShareRequest, ShareResponse
from ..store import ID_PATTERN, canonical
from .deps import Services, services

router = APIRouter(tags=["share"])
redirects = APIRouter(tags=["share"])


RESPONSES = {**ERROR_RESPONSES,
             429: ERROR_RESPONSES[422] | {"description": "Too many new links and models from your address "
                                                         "(Retry-After says when to try again)"},
             503: ERROR_RESPONSES[422] | {"description": "The store could not be written"},
             507: ERROR_RESPONSES[422] | {"description": "The server's store or disk is full"}}


@router.post("/share", response_model=ShareResponse, responses=RESPONSES, summary="Make a short link")
async def share(req: ShareRequest, request: Request, svc: Services = Depends(services)):
    """Stores the state (content-addressed: the same state always gets the same id) and returns
    the short link. The state needs a `source` string; inputs are strings or lists of numbers.
    A new link counts against the client's rate of new links and models (429 past it)."""
    settings, store = svc.settings, svc.store
    state = req.state
    if not isinstance(state.get("source"), str):
        raise ApiError(422, "validation", "state.source must be a string (the program)")
    inputs = state.get("inputs", [])
    if not isinstance(inputs, list) or not all(isinstance(i, (str, list)) for i in inputs):
        raise ApiError(422, "validation", "state.inputs must be a list of strings or lists")
    _check_learned_part(state.get("learned"))
    try:
        json.dumps(state, allow_nan=False)
    except ValueError:
        raise ApiError(422, "validation", "the state holds NaN or Infinity, which JSON (and so a link) cannot "
                                          "carry") from None
    size = len(canonical(state).encode())
    if size > settings.max_share_bytes:
        raise ApiError(413, "too_large", f"the state is {size} bytes; shared states are limited to "
                                         f"{settings.max_share_bytes} bytes")
    link_id, stored = await run_in_threadpool(store.link_id, state)
    if not stored:
        svc.writes_per_client.take(client_of(request))
        link_id = await run_in_threadpool(store.put_link, state)
    return {"id": link_id, "url": f"/s/{link_id}"}


LEARNED_CHECK_KEYS = {"vocab": str, "min_length": int, "max_length": int, "beyond": int, "samples": int, "seed": int}


def _check_learned_part(part) -> None:
    """A link's learned program (the Learned tab, docs/learned_programs.md): `source` (its text), and
    optionally `origin`, `user_source` (the user's program while the editor shows the learned one) and
    `check` (the check's settings). Absent: no learned program."""
    if part is None:
        return
    if not isinstance(part, dict) or not isinstance(part.get("source"), str):
        raise ApiError(422, "validation", "state.learned must be an object with a source string (the learned program)")
    for key in ("origin", "user_source"):
        if key in part and not isinstance(part[key], str):
            raise ApiError(422, "validation", f"state.learned.{key} must be a string")
    check = part.get("check", {})
    if not isinstance(check, dict):
        raise ApiError(422, "validation", "state.learned.check must be an object (the check's settings)")
    for key, value in check.items():
        kind = LEARNED_CHECK_KEYS.get(key)
        if kind is None or not isinstance(value, kind) or isinstance(value, bool):
            raise ApiError(422, "validation", f"state.learned.check.{str(key)[:40]} must be one of "
                                              f"{', '.join(LEARNED_CHECK_KEYS)}, vocab a string and the others integers")


@redirects.get("/s/{link_id}", response_class=RedirectResponse, status_code=302,
               responses={302: {"description": "Redirect to /#v1=… with the shared state"},
                          404: ERROR_RESPONSES[422] | {"description": "No such link (for Accept: text/html, a page saying so)"}, 422: ERROR_RESPONSES[422]},
               summary="Open a short link")
async def open_link(link_id: str = Path(description=f"the link's id, matching {ID_PATTERN}"),
                    accept: str = Header(""), svc: Services = Depends(services)):
    """A browser (Accept: text/html) opening a link that does not exist, or a cut-off one, gets a page
    that says so; API clients get the JSON 404 (or 422 for an id that cannot be one)."""
    browser = "text/html" in accept
    if not re.match(ID_PATTERN, link_id):
        if browser:
            return HTMLResponse(dead_link_page(link_id), status_code=404)
        raise ApiError(422, "validation", f"'{link_id[:40]}' is not a short link id (expected {ID_PATTERN})")
    state = await run_in_threadpool(svc.store.get_link, link_id)
    if state is None:
        if browser:
            return HTMLResponse(dead_link_page(link_id), status_code=404)
        raise ApiError(404, "not_found", f"no shared link '{link_id}'")
    return RedirectResponse("/#" + link_fragment(state), status_code=302)


def dead_link_page(link_id: str) -> str:
    """A plain page for a short link this server does not hold (no script, no inline style)."""
    shown = html.escape(link_id)
    return f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link not found — rasplay</title><link rel="stylesheet" href="/style.css"></head>
<body class="dead-link">
<header class="topbar"><a class="brand" href="/">ras<span>play</span></a></header>
<main class="dead-link-box">
<h1>This short link does not exist</h1>
<p>There is no shared program <code>{shown}</code> on this server. The link may have been mistyped or cut
off, or it was made on another rasplay server (short links live on the server that made them; a long
link, with <code>#v1=</code>, works anywhere).</p>
<p><a href="/">Open the rasplay playground</a></p>
</main>
</body>
</html>
"""
