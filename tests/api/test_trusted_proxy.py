"""Client addresses behind a trusted reverse proxy (server/clients.py): the proxy's header is read only for
connections from the proxies the operator names (`--trusted-proxy`), and then its right-most address that
is not a trusted proxy is the client, for every per-client limit. Real servers over HTTP, and the rule
alone (with hypothesis: no prefix a client writes changes who it is)."""
from __future__ import annotations

import socket
import uuid

import httpx
import pytest
from hypothesis import given, strategies as st

from support.live_server import LiveServer
from rasplay.server.clients import Proxies, parse_networks, proxies

TRUSTED = Proxies(parse_networks("127.0.0.1, 10.0.0.0/8, fd00::/8"))


def xff(value: str) -> list[tuple[bytes, bytes]]:
    return [(b"x-forwarded-for", value.encode())]


# ------------------------------------------------------------------ the rule

def test_the_right_most_untrusted_address_is_the_client():
    assert TRUSTED.client("127.0.0.1", xff("203.0.113.5")) == "203.0.113.5"
    assert TRUSTED.client("127.0.0.1", xff("198.51.100.7, 203.0.113.5, 10.1.2.3")) == "203.0.113.5"
    assert TRUSTED.client("127.0.0.1", xff("203.0.113.5") + xff("10.9.9.9")) == "203.0.113.5"   # two header lines
    assert TRUSTED.client("127.0.0.1", xff("[2001:db8::1]:4711")) == "2001:db8::1"
    assert TRUSTED.client("127.0.0.1", xff("203.0.113.5:1234")) == "203.0.113.5"
    assert TRUSTED.client("127.0.0.1", xff("::ffff:203.0.113.5")) == "203.0.113.5"


def test_without_a_header_or_with_only_proxies_the_left_most_proxy_is_the_client():
    assert TRUSTED.client("127.0.0.1", []) == "127.0.0.1"
    assert TRUSTED.client("127.0.0.1", xff("10.0.0.7, 10.0.0.8")) == "10.0.0.7"


def test_what_is_not_an_address_stops_the_walk():
    assert TRUSTED.client("127.0.0.1", xff("203.0.113.5, unknown, 10.0.0.8")) == "10.0.0.8"
    assert TRUSTED.client("127.0.0.1", xff("garbage")) == "127.0.0.1"


def test_an_untrusted_peer_is_the_client_whatever_it_sends():
    assert TRUSTED.client("192.0.2.1", xff("203.0.113.5")) == "192.0.2.1"
    assert Proxies().client("127.0.0.1", xff("203.0.113.5")) == "127.0.0.1"   # no proxy named: header ignored
    assert TRUSTED.client(None, xff("203.0.113.5")) == "unknown"


def test_the_forwarded_header():
    fwd = Proxies(parse_networks("127.0.0.1"), "forwarded")
    headers = [(b"forwarded", b'for=198.51.100.7;proto=https, For="[2001:db8:cafe::17]:4711";by=10.0.0.1')]
    assert fwd.client("127.0.0.1", headers) == "2001:db8:cafe::17"
    assert fwd.client("127.0.0.1", [(b"forwarded", b"for=_hidden, for=203.0.113.9")]) == "203.0.113.9"
    assert fwd.client("127.0.0.1", [(b"forwarded", b"for=203.0.113.9, for=unknown")]) == "127.0.0.1"
    assert fwd.client("127.0.0.1", xff("203.0.113.5")) == "127.0.0.1"   # only the one header named is read


def test_networks_are_checked_and_named():
    with pytest.raises(ValueError, match="'10.0.0.300'"):
        parse_networks("127.0.0.1,10.0.0.300")
    with pytest.raises(ValueError):
        Proxies(header="x-real-ip")
    assert proxies(("127.0.0.1,10.0.0.0/8", "::1")).trusts("10.2.3.4")
    assert not proxies(("127.0.0.1",)).trusts("127.0.0.2")


addresses = st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)).map(str)


@given(forged=st.lists(st.one_of(addresses, st.text(max_size=12)), max_size=6), client=addresses,
       proxies_after=st.lists(st.sampled_from(["10.0.0.1", "10.200.3.4", "fd00::5"]), max_size=3))
def test_no_prefix_a_client_writes_changes_who_it_is(forged, client, proxies_after):
    from rasplay.server.clients import _address

    if TRUSTED._trusted(_address(client)):
        client = "203.0.113.77"
    honest = xff(", ".join([client, *proxies_after]))
    spoofed = xff(", ".join([*(f.replace(",", " ") for f in forged), client, *proxies_after]))
    assert TRUSTED.client("127.0.0.1", spoofed) == TRUSTED.client("127.0.0.1", honest)


# ------------------------------------------------------------------ real servers over HTTP

def share(c: httpx.Client, headers: dict | None = None) -> int:
    return c.post("/api/v1/share", json={"state": {"source": f"# {uuid.uuid4().hex}\nx = indices;"}},
                  headers=headers or {}).status_code


def test_without_a_trusted_proxy_x_forwarded_for_is_ignored(tmp_path):
    server = LiveServer(tmp_path, "--workers", "1", "--writes-per-minute", "2")
    try:
        with server.client() as c:
            statuses = [share(c, {"X-Forwarded-For": f"203.0.113.{i}", "Forwarded": f"for=203.0.113.{i}"})
                        for i in range(3)]
            assert statuses == [200, 200, 429]   # one client (the peer), whatever it claims
    finally:
        server.stop()


@pytest.fixture(scope="module")
def behind_proxy(tmp_path_factory):
    server = LiveServer(tmp_path_factory.mktemp("proxied"), "--workers", "1", "--writes-per-minute", "2",
                        "--client-connections", "2", "--trusted-proxy", "127.0.0.1,10.0.0.0/8")
    yield server
    server.stop()


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_allowance(behind_proxy):
    a, b = "203.0.113.5", "203.0.113.6"
    with behind_proxy.client() as c:
        assert [share(c, {"X-Forwarded-For": a}) for _ in range(2)] == [200, 200]
        assert share(c, {"X-Forwarded-For": a}) == 429
        assert share(c, {"X-Forwarded-For": b}) == 200                     # another student
        assert share(c, {"X-Forwarded-For": f"198.51.100.1, {a}"}) == 429   # a forged prefix changes nothing
        assert share(c, {"X-Forwarded-For": f"{b}, 10.1.2.3"}) == 200        # through a second trusted proxy: b
        assert share(c, {"X-Forwarded-For": f"{b}, 10.1.2.3"}) == 429
        assert share(c, {"X-Forwarded-For": "192.0.2.44, 198.51.100.9"}) == 200   # the right-most untrusted one


def test_a_peer_that_is_not_a_named_proxy_is_counted_by_its_own_address(behind_proxy):
    with behind_proxy.client(transport=httpx.HTTPTransport(local_address="127.0.0.2")) as c:
        statuses = [share(c, {"X-Forwarded-For": f"198.51.100.{i}"}) for i in range(3)]
    assert statuses == [200, 200, 429]


def _held_request(server: LiveServer, forwarded_for: str) -> socket.socket:
    """A request whose headers have arrived and whose body has not: in flight until the body is sent."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(f"POST /api/v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"X-Forwarded-For: {forwarded_for}\r\nContent-Length: {len(BODY)}\r\n\r\n".encode())
    return sock


BODY = b'{"source": "x = indices;", "inputs": ["ab"]}'


def _finish(sock: socket.socket) -> bytes:
    sock.sendall(BODY)
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(65536)
    return answer


def test_connections_through_a_trusted_proxy_count_for_the_forwarded_client(behind_proxy):
    """--client-connections 2: behind the proxy, a client's requests in flight (the proxy holds its
    connections, and its own connections to rasplay carry everyone's requests)."""
    held = [_held_request(behind_proxy, "203.0.113.20") for _ in range(2)]
    try:
        with behind_proxy.client() as c:
            r = c.post("/api/v1/evaluate", json={"source": "x = indices;", "inputs": ["ab"]},
                       headers={"X-Forwarded-For": "203.0.113.20"})
            assert r.status_code == 429 and r.json()["error"]["kind"] == "busy"
            assert r.headers["retry-after"] == "5" and "content-security-policy" in r.headers
            r = c.post("/api/v1/evaluate", json={"source": "x = indices;", "inputs": ["ab"]},
                       headers={"X-Forwarded-For": "203.0.113.21"})
            assert r.status_code == 200   # the proxy's connections are not the limit: another client passes
            for sock in held:   # their answers sent, the client's requests are no longer in flight
                assert _finish(sock).startswith(b"HTTP/1.1 200")
            r = c.post("/api/v1/evaluate", json={"source": "x = indices;", "inputs": ["ab"]},
                       headers={"X-Forwarded-For": "203.0.113.20"})
            assert r.status_code == 200
    finally:
        for sock in held:
            sock.close()


def test_the_forwarded_header_when_the_operator_says_so(tmp_path):
    server = LiveServer(tmp_path, "--workers", "1", "--writes-per-minute", "1", "--trusted-proxy", "127.0.0.1",
                        "--proxy-header", "forwarded")
    try:
        with server.client() as c:
            assert share(c, {"Forwarded": "for=203.0.113.5;proto=https"}) == 200
            assert share(c, {"Forwarded": "for=198.51.100.1, for=203.0.113.5"}) == 429
            assert share(c, {"Forwarded": 'for="[2001:db8::1]:4711"'}) == 200
            assert share(c, {"X-Forwarded-For": "203.0.113.99"}) == 200   # no Forwarded: the proxy itself
            assert share(c, {"X-Forwarded-For": "203.0.113.98"}) == 429   # ... which X-Forwarded-For cannot change
    finally:
        server.stop()


def test_a_bad_trusted_proxy_stops_the_server_with_one_line(tmp_path):
    import subprocess
    import sys

    from support.live_server import ROOT
    p = subprocess.run([sys.executable, "-m", "rasplay.cli", "serve", "--port", "0", "--data-dir",
                        str(tmp_path), "--trusted-proxy", "10.0.0.0/33"], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert p.returncode == 2 and "not an address or network: '10.0.0.0/33'" in p.stderr, p.stderr
