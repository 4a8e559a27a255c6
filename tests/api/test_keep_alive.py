"""Kept-alive connections and the header timer (server/connections.py) over real sockets, with uvicorn on
uvloop as `rasplay serve` runs it: the keep-alive timer never closes a connection whose next request has
already arrived, nor does the header timer answer 408 to headers that arrived in time but were not read
yet; a trusted proxy's connections are kept longer than a browser's.

The server is uvicorn with rasplay's protocol class and a small ASGI app answering "ok"; the test can hold
its event loop still where a busy server's stands: in reading a socket (a request for /hold blocks the read
callback until the test writes a line to the server's stdin)."""
from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from support.live_server import ROOT, free_port

SERVER = """
import sys, uvicorn
from rasplay.server.clients import proxies
from rasplay.server.connections import protocol

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})

port, keep_alive, trusted, header_seconds = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], float(sys.argv[4])

class http(protocol(header_seconds, 64, proxies((trusted,) if trusted else ()), proxy_keep_alive=3600)):
    def data_received(self, data):
        super().data_received(data)
        if b" /hold " in data:   # the loop stands still in its reading phase until the test lets it go on
            print("held", flush=True)
            sys.stdin.readline()

print("serving", flush=True)
uvicorn.run(app, host="127.0.0.1", port=port, http=http, loop="uvloop", lifespan="off", ws="none",
            timeout_keep_alive=keep_alive, log_level="warning")
"""


class Server:
    def __init__(self, keep_alive: float, trusted: str = "", header_seconds: float = 10):
        self.port = free_port()
        self.process = subprocess.Popen([sys.executable, "-c", SERVER, str(self.port), str(keep_alive), trusted,
                                         str(header_seconds)],
                                        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline() == "serving\n"
        while True:   # until uvicorn listens (a refused connect is immediate)
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=5).close()
                return
            except ConnectionRefusedError:
                if self.process.poll() is not None:
                    raise RuntimeError("the test server exited")

    def connect(self) -> socket.socket:
        s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        return s

    def hold(self) -> socket.socket:
        """A connection whose request holds the server's event loop (until release())."""
        s = self.connect()
        ask(s, "/hold")
        assert self.process.stdout.readline() == "held\n"
        return s

    def release(self) -> None:
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


def ask(s: socket.socket, path: str) -> None:
    s.sendall(f"GET {path} HTTP/1.1\r\nhost: test\r\n\r\n".encode())


def answer(s: socket.socket) -> bytes:
    """One whole answer (its body is 2 bytes), or what arrived before the server closed the connection."""
    data = b""
    while not (b"\r\n\r\n" in data and data.endswith(b"ok")):
        try:
            chunk = s.recv(4096)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk
    return data


@pytest.fixture
def server(request):
    s = Server(*request.param)
    yield s
    s.stop()


KEEP_ALIVE = 0.5


def ask_while_held(server, s, path, armed, seconds, hold_within=None):
    """Hold the server's event loop, send `path` on s meanwhile (it waits in the server's socket buffer),
    wait until the timer armed at `armed` for `seconds` is due, let the loop go on and return s's answer.
    None when the loop could not be held within `hold_within` (default `seconds`) of `armed`: a slow machine."""
    held = server.hold()
    try:
        if time.monotonic() - armed >= (seconds if hold_within is None else hold_within):
            server.release()
            answer(held)
            return None
        ask(s, path)
        while time.monotonic() < armed + 2 * seconds:   # until the timer is due
            time.sleep(0.05)
        server.release()
        return answer(s)
    finally:
        held.close()


@pytest.mark.parametrize("server", [(KEEP_ALIVE,)], indirect=True)
def test_a_request_that_arrived_is_answered_though_the_keep_alive_time_ran_out(server):
    """A connection is answered, then the server's loop is held (reading another socket) before its
    keep-alive runs out; its next request arrives meanwhile. When the loop goes on, uvloop runs the due
    keep-alive timer before it reads the sockets: the connection must stay and the request be answered."""
    for attempt in range(10):
        with server.connect() as s:
            ask(s, "/a")
            assert answer(s).startswith(b"HTTP/1.1 200")
            answered = time.monotonic()   # the server armed the keep-alive timer before this
            reply = ask_while_held(server, s, "/next", answered, KEEP_ALIVE)
            if reply is None:
                continue
            assert reply.startswith(b"HTTP/1.1 200")
            return
    pytest.fail("the loop could not be held within the keep-alive time in 10 attempts")


HEADER_SECONDS = 0.5


@pytest.mark.parametrize("server", [(5, "", HEADER_SECONDS)], indirect=True)
def test_headers_that_arrived_in_time_are_read_before_the_header_timer_answers_408(server):
    """A connection is opened (its header timer starts), the server's loop is held before the time runs out,
    and the request's headers arrive meanwhile; when the loop goes on the due timer runs before the socket is
    read: the request must be answered, not refused 408."""
    for attempt in range(10):
        with server.connect() as s:
            opened = time.monotonic()   # the server starts the header timer after this
            # (the holding connection is accepted after s, the listen queue being in order: s's timer runs)
            reply = ask_while_held(server, s, "/a", opened, HEADER_SECONDS, hold_within=HEADER_SECONDS / 2)
            if reply is None:
                continue
            assert reply.startswith(b"HTTP/1.1 200")
            return
    pytest.fail("the loop could not be held within the header time in 10 attempts")


@pytest.mark.parametrize("server", [(0, "127.0.0.1")], indirect=True)
def test_a_trusted_proxys_connection_is_kept_longer(server):
    """Keep-alive 0 s for clients; the proxy's (here every loopback peer's) connections are kept for an hour:
    after another connection's request was answered (the loop has run on), the first still answers."""
    with server.connect() as first, server.connect() as other:
        ask(first, "/a")
        assert answer(first).startswith(b"HTTP/1.1 200")
        ask(other, "/b")
        assert answer(other).startswith(b"HTTP/1.1 200")
        ask(first, "/c")
        assert answer(first).startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("server", [(0,)], indirect=True)
def test_a_clients_idle_connection_is_closed_after_its_keep_alive(server):
    """The same sequence from a client (no trusted proxy): its idle connection is closed (an EOF, no answer)."""
    with server.connect() as first, server.connect() as other:
        ask(first, "/a")
        assert answer(first).startswith(b"HTTP/1.1 200")
        ask(other, "/b")
        assert answer(other).startswith(b"HTTP/1.1 200")
        assert first.recv(1) == b""   # waits for the server's close
