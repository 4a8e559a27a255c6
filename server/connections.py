"""The HTTP connections `rasplay serve` accepts (uvicorn's httptools protocol, with three additions):

* a request's headers must arrive within `header_seconds` of the connection opening, or of the first
  byte of the request (keep-alive): a client sending them slowly, or nothing, is answered 408 and closed,
  so half-sent requests cannot pile up (the body has its own limit: server/bodies.py); bytes that have
  arrived but that a busy loop has not read yet when the time runs out are read first (once per request);
* one client address may hold at most `per_client` connections at once; more are answered 429 and
  closed at once (a class behind one NAT address shares it: raise --client-connections there). A
  connection from a trusted reverse proxy (clients.py) counts for the client of the request it carries,
  from its headers until its answer is sent (the proxy holds the client's own connections, and reuses its
  connections to rasplay for other clients): behind a proxy the limit is on a client's requests in flight;
* a connection kept alive is closed after `keep_alive` idle seconds (uvicorn's 5 s by default), one from a
  trusted proxy after `proxy_keep_alive` (default 130 s: longer than nginx's (60 s) and Caddy's (120 s)
  idle time for their upstream connections, so that the proxy, not rasplay, closes an idle connection: a
  request the proxy sends on a connection rasplay is closing at that moment is lost, and nginx does not
  resend a POST); and never while a request has arrived on it: uvloop runs due timers before it reads the
  sockets, so on a busy server uvicorn's keep-alive timer closed connections whose next request was already
  waiting, unanswered (the client saw "Server disconnected without sending a response");
* the answers uvicorn writes itself (400 for a request that is not HTTP, and these) carry the same
  security headers as every other answer (server/security.py).

WebSocket is off (`ws="none"` in the uvicorn config): an upgrade request is an ordinary request, which the
application answers (404) with its headers."""
from __future__ import annotations

import json
import os
import socket

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .clients import Proxies
from .security import headers_for

_REASONS = {400: "Bad Request", 408: "Request Timeout", 429: "Too Many Requests"}


def raw_error(status: int, kind: str, message: str) -> bytes:
    """A complete HTTP/1.1 error answer (JSON body, security headers, Connection: close)."""
    body = json.dumps({"error": {"kind": kind, "message": message}}).encode()
    lines = [f"HTTP/1.1 {status} {_REASONS[status]}", "content-type: application/json",
             f"content-length: {len(body)}", "connection: close"]
    lines += [f"{k}: {v}" for k, v in headers_for("/api/")]
    if status == 429:
        lines.append("retry-after: 5")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _too_many_in_flight(per_client: int):
    """An ASGI app answering 429 (as raw_error does) to a request from a proxied client over its limit."""
    body = json.dumps({"error": {"kind": "busy", "message": f"you already have {per_client} requests in flight "
                                                            "(the limit per client); wait for some to finish"}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close"), (b"retry-after", b"5")]
    headers += [(k.encode(), v.encode()) for k, v in headers_for("/api/")]

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 429, "headers": headers})
        await send({"type": "http.response.body", "body": body})
    return app


def _bytes_waiting(transport) -> bool:
    """Whether the connection's socket has bytes the server has not read yet (peeked, not consumed)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return False
    try:   # uvloop's transport gives a stand-in that cannot recv: peek on a duplicate of the descriptor
        with socket.socket(fileno=os.dup(sock.fileno())) as dup:
            return bool(dup.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except OSError:   # nothing waiting (BlockingIOError) or the socket is gone
        return False


class ClientConnections:
    """How many connections (or, from a trusted proxy, requests in flight) each client holds, and its share."""

    def __init__(self, per_client: int):
        self.per_client = per_client
        self.open: dict[str, int] = {}

    def add(self, client: str) -> bool:
        """Count one more for `client`, unless it already has its share (0: no limit)."""
        if self.per_client and self.open.get(client, 0) >= self.per_client:
            return False
        self.open[client] = self.open.get(client, 0) + 1
        return True

    def remove(self, client: str) -> None:
        left = self.open.get(client, 1) - 1
        if left > 0:
            self.open[client] = left
        else:
            self.open.pop(client, None)


class RaspProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the limits of the module's docstring; `protocol()` makes the subclass
    that carries them (the class attributes below), one per server."""
    header_seconds: float
    proxy_keep_alive: float | None
    proxies: Proxies
    clients: ClientConnections

    _header_timer = None
    _counted = None
    _via_proxy = False
    _late_checked = False   # the header timer found unread bytes once (it waits for them only once)

    # ---- the connection: counted for its client (not one from a trusted proxy), closed when over the share

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        host = self.client[0] if self.client else "unknown"
        self._via_proxy = self.proxies.trusts(host)
        if self._via_proxy and self.proxy_keep_alive:
            self.timeout_keep_alive = self.proxy_keep_alive
        if not self._via_proxy and not self._count(host):
            transport.write(raw_error(429, "busy", f"your address already has {self.clients.per_client} connections "
                                                   "open (the limit per client); close some first"))
            transport.close()
            return
        self._await_headers()

    def _count(self, client: str) -> bool:
        """Count this connection for `client`, unless it already has its share."""
        if not self.clients.add(client):
            return False
        self._counted = client
        return True

    def _uncount(self) -> None:
        if self._counted is not None:
            self.clients.remove(self._counted)
            self._counted = None

    def connection_lost(self, exc) -> None:
        self._stop_header_timer()
        self._uncount()
        super().connection_lost(exc)

    # ---- a request from a trusted proxy: counted for the client it carries, from its headers to its answer

    def on_response_complete(self) -> None:
        if self._via_proxy:
            self._uncount()
        super().on_response_complete()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._await_headers()

    def on_headers_complete(self) -> None:
        self._stop_header_timer()
        if self._via_proxy:
            self._uncount()
            client = self.proxies.client(self.client[0] if self.client else None, self.headers)
            if not self._count(client):   # answered 429 by a small app in place of rasplay's, then closed
                app, self.app = self.app, _too_many_in_flight(self.clients.per_client)
                try:
                    super().on_headers_complete()
                finally:
                    self.app = app
                return
        super().on_headers_complete()

    # ---- the header timer (408) and the keep-alive timer

    def _await_headers(self) -> None:
        if self.header_seconds and self._header_timer is None:
            self._late_checked = False
            self._header_timer = self.loop.call_later(self.header_seconds, self._headers_late)

    def _stop_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        if not self._late_checked and _bytes_waiting(self.transport):
            # bytes came that the busy loop has not read yet (uvloop runs due timers first): look again once
            # they are read; if the headers are complete by then, the timer is stopped
            self._late_checked = True
            self._header_timer = self.loop.call_later(0.001, self._headers_late)
            return
        self.transport.write(raw_error(408, "timeout", f"the request's headers did not arrive within "
                                                       f"{self.header_seconds:g} s"))
        self.transport.close()

    def timeout_keep_alive_handler(self) -> None:
        if not self.transport.is_closing() and _bytes_waiting(self.transport):
            return   # the next request is here: read next (its answer arms the keep-alive timer again)
        super().timeout_keep_alive_handler()

    # ---- the answers uvicorn writes itself

    def send_400_response(self, msg: str) -> None:
        self._stop_header_timer()
        self.transport.write(raw_error(400, "bad_request", msg))
        self.transport.close()


def protocol(header_seconds: float, per_client: int, proxies: Proxies | None = None,
             proxy_keep_alive: float | None = None) -> type[RaspProtocol]:
    """The protocol class for uvicorn.Config(http=...), with these limits (its connections share one count
    per client)."""
    return type("RaspProtocol", (RaspProtocol,), {
        "header_seconds": header_seconds, "proxy_keep_alive": proxy_keep_alive,
        "proxies": proxies or Proxies(), "clients": ClientConnections(per_client)})
