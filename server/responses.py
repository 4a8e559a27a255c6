"""Answers that a client may not read: what the main process holds for them stays bounded.

* A large answer (over SPILL_BYTES) is written to an unnamed temporary file and sent from there, 64 KiB
  at a time, so the main process holds a chunk per connection, not the answer. The bytes of one
  client's answers not yet sent are limited (`Outgoing`, 429 past it).
* Every answer goes out in chunks of at most CHUNK bytes, each of which the client must take within
  `send_seconds` (`SendLimits`, an ASGI middleware): a client that stops reading has its connection
  closed, and what it held is freed.
The size of any one answer is limited where it is made (the worker pools' reply limit)."""
from __future__ import annotations

import asyncio
import os
import tempfile
import zlib

import brotli

from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from .errors import ApiError, log
from .settings import show_bytes

CHUNK = 64 * 1024           # one write to a connection
SPILL_BYTES = 256 * 1024    # answers larger than this are sent from a temporary file


class Outgoing:
    """Bytes of spilled answers not yet sent, per client, at most `per_client` each."""

    def __init__(self, per_client: int, directory: str | os.PathLike | None = None):
        self.per_client, self.directory = per_client, directory
        self._bytes: dict[str, int] = {}
        self.answers = 0   # spilled answers being sent

    def reserve(self, client: str, n: int) -> None:
        held = self._bytes.get(client, 0)
        if self.per_client and held + n > self.per_client:
            raise ApiError(429, "busy", f"your address has {show_bytes(held)} of answers it has not read yet; the "
                                        f"limit is {show_bytes(self.per_client)}: read them (or close those "
                                        "connections) first", headers={"Retry-After": "5"})
        self._bytes[client] = held + n
        self.answers += 1

    def release(self, client: str, n: int) -> None:
        left = self._bytes.get(client, 0) - n
        if left > 0:
            self._bytes[client] = left
        else:
            self._bytes.pop(client, None)
        self.answers -= 1

    def stats(self) -> dict:
        return {"spilled_answers": self.answers, "spilled_bytes": sum(self._bytes.values()),
                "clients": len(self._bytes)}


class SpilledResponse(Response):
    """An answer sent from an open (unnamed) temporary file; the file is closed and the client's bytes
    released however the sending ends."""

    def __init__(self, file, size: int, release, media_type: str, headers: dict | None = None):
        super().__init__(None, media_type=media_type, headers=headers)
        self.file, self.size, self.release = file, size, release
        self.headers["content-length"] = str(size)

    async def __call__(self, scope, receive, send):
        # compressed as it goes where the client takes it, with a small window: brotli at 64 KiB (lgwin 16) or
        # gzip hold ~100-300 KiB per connection, where the compression middleware's brotli (4 MiB window) would
        # hold several MiB for every unread answer. (Its Content-Encoding makes the middleware leave it alone.)
        encoding = _encoding_for(scope)
        packer = None
        if encoding == "br":
            packer = brotli.Compressor(quality=4, lgwin=16)
            pack = lambda chunk, last: packer.process(chunk) + (packer.finish() if last else b"")  # noqa: E731
        elif encoding == "gzip":
            packer = zlib.compressobj(6, zlib.DEFLATED, 31)
            pack = lambda chunk, last: packer.compress(chunk) + (packer.flush() if last else b"")  # noqa: E731
        if packer is not None:
            del self.headers["content-length"]
            self.headers["content-encoding"] = encoding
            self.headers["vary"] = "Accept-Encoding"
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            while True:
                chunk = self.file.read(CHUNK)   # from the page cache: microseconds
                more = self.file.tell() < self.size
                if packer is not None:
                    chunk = pack(chunk, not more)
                await send({"type": "http.response.body", "body": chunk, "more_body": more})
                if not more:
                    break
        finally:
            self.file.close()
            self.release()


def _encoding_for(scope) -> str | None:
    """"br" or "gzip" as the request's Accept-Encoding takes them (a q above 0), br first; else None."""
    taken = set()
    for name, value in scope.get("headers", ()):
        if name == b"accept-encoding":
            for item in value.decode("latin-1").split(","):
                coding, _, params = item.strip().partition(";")
                params = params.strip()
                try:
                    q = float(params[2:]) if params.startswith("q=") else 1.0
                except ValueError:
                    q = 0.0
                if q > 0:
                    taken.add(coding.strip().lower())
    return next((c for c in ("br", "gzip") if c in taken or "*" in taken), None)
    return False


def _spill(body: bytes, directory) -> object:
    file = tempfile.TemporaryFile(dir=directory)
    file.write(body)
    file.seek(0)
    return file


async def answer(body: bytes, client: str, outgoing: Outgoing, media_type: str = "application/json",
                 headers: dict | None = None) -> Response:
    """`body` as a response: small ones as they are, large ones spilled to a temporary file (counted
    against the client's bytes not yet read)."""
    if len(body) <= SPILL_BYTES:
        return Response(body, media_type=media_type, headers=headers)
    size = len(body)
    outgoing.reserve(client, size)
    try:
        file = await run_in_threadpool(_spill, body, outgoing.directory)
    except BaseException:
        outgoing.release(client, size)
        raise
    return SpilledResponse(file, size, lambda: outgoing.release(client, size), media_type, headers)


class SlowReader(BaseException):
    """A client took none of an answer for `send_seconds`. A BaseException, so that it passes the
    application's error handlers (the answer has started: nothing can be sent instead) up to SendLimits."""


class SendLimits:
    """ASGI middleware: sends every answer in chunks of at most CHUNK bytes, each within `seconds`
    (the client reads, or its connection is closed), and counts the answers being sent."""

    def __init__(self, app, seconds: float):
        self.app, self.seconds = app, seconds
        self.sending = 0   # answers started and not yet wholly handed to their connection
        self.started = 0   # answers started, in all

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = finished = False

        async def send_in_chunks(message):
            nonlocal started, finished
            if message["type"] == "http.response.start":
                started = True
                self.sending += 1
                self.started += 1
                return await self._send(send, message)
            if message["type"] != "http.response.body":
                return await send(message)
            body, more = message.get("body", b""), message.get("more_body", False)
            for start in range(0, max(len(body), 1), CHUNK):
                piece = body[start:start + CHUNK]
                last = start + CHUNK >= len(body)
                await self._send(send, {"type": "http.response.body", "body": piece, "more_body": more or not last})
            if not more and not finished:
                finished = True
                self.sending -= 1

        try:
            await self.app(scope, receive, send_in_chunks)
        except SlowReader:
            log.warning("closed a connection whose client read nothing for %g s", self.seconds)
        finally:
            if started and not finished:
                self.sending -= 1

    async def _send(self, send, message):
        try:
            async with asyncio.timeout(self.seconds):
                await send(message)
        except TimeoutError:
            raise SlowReader() from None
