"""Draining at SIGTERM (`rasplay serve`; docs/deploy.md, "Restarts"). uvicorn stops listening and closes idle
connections; then the requests in flight get settings.shutdown_seconds to finish. An answer that has not
started by then is a 503 JSON with Retry-After ("the server is restarting"), never uvicorn's 500 text;
an event stream (a training's progress) is ended cleanly at once, since the browser's EventSource resumes it
on another replica from its last event id."""
from __future__ import annotations

import asyncio
import logging

import orjson

log = logging.getLogger("rasplay")
RESTARTING = orjson.dumps({"error": {"kind": "unavailable", "message": "the server is restarting; try again in "
                                                                      "a moment (another replica may answer)"}})


class Drain:
    """The state of a draining server: `begin()` is called when the server is told to stop."""

    def __init__(self, grace_seconds: float):
        self.grace_seconds = grace_seconds
        self.draining = False
        self.in_flight = 0   # requests being answered (a metric: rasplay_http_requests_in_flight)
        self._deadline: asyncio.Future | None = None
        self._streams: set[asyncio.Task] = set()

    def deadline(self) -> asyncio.Future:
        """Done when the grace has passed (one future for every request)."""
        loop = asyncio.get_running_loop()
        if self._deadline is None or self._deadline.get_loop() is not loop:   # (tests run apps in several loops)
            self._deadline = loop.create_future()
        return self._deadline

    def _expire(self) -> None:
        if not self.deadline().done():
            self.deadline().set_result(None)

    def begin(self) -> None:
        if self.draining:
            return
        self.draining = True
        log.warning("stopping: requests in flight have %g s to finish (%d event stream(s) ended now)",
                    self.grace_seconds, len(self._streams))
        for task in list(self._streams):
            task.cancel()
        loop = asyncio.get_running_loop()
        loop.call_later(self.grace_seconds, self._expire)


class DrainRequests:
    """ASGI middleware: runs each request as a task that a drain can end (see the module's docstring)."""

    def __init__(self, app, drain: Drain):
        self.app, self.drain = app, drain

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, finished = False, False
        drain = self.drain

        async def sending(message):
            nonlocal started, finished
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or [])
                if headers.get(b"content-type", b"").startswith(b"text/event-stream"):
                    if drain.draining:   # a new stream while draining: a 503, the page asks another replica
                        raise asyncio.CancelledError()
                    drain._streams.add(task)
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                finished = True
            await send(message)
        task = asyncio.ensure_future(self.app(scope, receive, sending))
        drain.in_flight += 1
        try:
            await asyncio.wait({task, drain.deadline()}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:   # this request's own task was cancelled: so is its work
            task.cancel()
            raise
        finally:
            drain.in_flight -= 1
            drain._streams.discard(task)
        if not task.done():
            task.cancel()
        try:
            await task
            return
        except asyncio.CancelledError:
            if not drain.draining:
                raise   # the server's own cancellation (not a drain): let it through
        if not started:
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"application/json"), (b"retry-after", b"5"),
                                    (b"connection", b"close"), (b"content-length", str(len(RESTARTING)).encode())]})
            await send({"type": "http.response.body", "body": RESTARTING})
        elif not finished:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
