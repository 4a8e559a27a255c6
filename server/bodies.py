"""Request bodies, read once for every route (an ASGI middleware): at most `max_bytes` (413), within
`seconds` of the request's start (408: a client sending its body slowly cannot hold a connection and a
task for ever), and, for JSON, text that is valid Unicode (422: a lone surrogate such as `\\ud800` can be
written in JSON but not encoded as UTF-8, so it would fail wherever the text is stored, hashed or sent
on) and nesting at most MAX_DEPTH levels deep (422, rather than a parser's recursion error). Request
headers have their own time limit in the HTTP protocol (server/connections.py)."""
from __future__ import annotations

import asyncio
import re

import orjson

from .errors import error_response

# a \\u escape of a surrogate code point (U+D800-U+DFFF): only then is the body parsed here, to tell a
# lone surrogate from a pair (an emoji) and from an escaped backslash followed by "ud800"
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


MAX_DEPTH = 512   # levels of nesting in a request's JSON (Python's parser fails a little under 1000)


def depth(value) -> int:
    """How deeply lists and objects nest in `value` (a loop, not recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item)
                         if isinstance(child, (list, dict)))
    return deepest


def json_problem(body: bytes) -> str | None:
    """Why the JSON `body` cannot be taken (a string with a lone surrogate, nesting past MAX_DEPTH), or
    None. The body is parsed here (orjson, fast) only when it could have either problem."""
    surrogate = _SURROGATE_ESCAPE.search(body)
    nested = body.count(b"[") + body.count(b"{") > MAX_DEPTH
    if not (surrogate or nested):
        return None
    too_deep = f"the request's JSON nests more than {MAX_DEPTH} levels deep; make it flatter"
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        if "surrogate" in str(e):
            return ("the request holds text that is not valid Unicode (a lone surrogate such as \\ud800): "
                    f"{e}")
        if "depth" in str(e) or "recursion" in str(e):
            return too_deep
        return None   # invalid JSON: the application says so
    return too_deep if nested and depth(value) > MAX_DEPTH else None


class RequestBody:
    """ASGI middleware: reads a request's body (up to `max_bytes`, within `seconds`) and hands it on
    whole; see the module's docstring."""

    def __init__(self, app, max_bytes: int, seconds: float):
        self.app, self.max_bytes, self.seconds = app, max_bytes, seconds

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            return await self._reject(scope, receive, send, 413, "too_large",
                                      f"the request body is over the limit of {self.max_bytes} bytes")
        if scope.get("method") in ("GET", "HEAD", "OPTIONS", "DELETE") and declared in (None, b"0"):
            return await self.app(scope, receive, send)
        chunks, seen = [], 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                return await self._reject(scope, receive, send, 408, "timeout",
                                          f"the request body did not arrive within {self.seconds:g} s")
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_bytes:
                return await self._reject(scope, receive, send, 413, "too_large",
                                          f"the request body is over the limit of {self.max_bytes} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body, sent = b"".join(chunks), False
        problem = json_problem(body)
        if problem is not None:
            return await error_response(422, "validation", problem)(scope, receive, send)

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _reject(self, scope, receive, send, status, kind, message):
        response = error_response(status, kind, message, headers={"Connection": "close"})
        await response(scope, receive, send)
