"""The security headers' middleware and policies without a live server (server/security.py): a route that
sets its own CSP still gets exactly one, `form-action`, the policy per kind of path, the embed origins.
The live-server tests of the same headers are in test_security_headers.py."""
from __future__ import annotations

import pytest

from support.waiting import run_async
from fastapi.responses import PlainTextResponse
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from rasplay.server.security import (API_POLICY, COMMON_HEADERS, PAGE_POLICY, SecurityHeaders, check_origin,
                                     frame_ancestors, headers_for)


def directives(policy: str) -> dict[str, list[str]]:
    out = {}
    for part in policy.split(";"):
        name, *sources = part.split()
        assert name not in out, f"{name} twice"
        out[name] = sources
    return out


def through(middleware_of, path: str, headers: list[tuple[bytes, bytes]], scope_type: str = "http"):
    """The messages an app sending `headers` produces at `path` through the middleware."""
    sent = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": list(headers)})
        await send({"type": "http.response.body", "body": b"x"})

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    run_async(middleware_of(app)({"type": scope_type, "path": path}, receive, send))
    return sent


def header_list(message) -> list[tuple[bytes, bytes]]:
    return [(k.lower(), v) for k, v in message["headers"]]


# ------------------------------------------------------------------ a route that sets its own headers

def test_a_route_of_the_app_that_sets_its_own_csp_gets_exactly_ours(tmp_path):
    from rasplay.server.app import create_app
    from rasplay.server.settings import Settings

    def own_headers():
        return PlainTextResponse("hi", headers={"Content-Security-Policy": "default-src *; script-src * 'unsafe-eval'",
                                                "X-Frame-Options": "SAMEORIGIN", "Referrer-Policy": "unsafe-url"})

    app = create_app(Settings(data_dir=tmp_path))
    app.router.routes.insert(0, APIRoute("/own-headers", own_headers))
    app.router.routes.insert(0, APIRoute("/api/v1/own-headers", own_headers))
    client = TestClient(app)   # (no lifespan: no workers needed)
    for path, policy in (("/own-headers", PAGE_POLICY), ("/api/v1/own-headers", API_POLICY)):
        r = client.get(path)
        assert r.status_code == 200 and r.text == "hi"
        values = r.headers.get_list("content-security-policy")
        assert values == ["; ".join(policy + ("frame-ancestors 'none'",))], values
        assert r.headers.get_list("x-frame-options") == ["DENY"]
        assert r.headers.get_list("referrer-policy") == ["no-referrer"]


def test_a_header_set_in_other_letter_case_is_replaced_too():
    """ASGI header names should be lower case, but an app may send any case: ours still appear once."""
    sent = through(SecurityHeaders, "/", [(b"Content-Security-Policy", b"default-src *"),
                                          (b"X-Frame-Options", b"ALLOWALL"), (b"content-type", b"text/plain")])
    start, body = sent
    headers = header_list(start)
    assert [v for k, v in headers if k == b"content-security-policy"] == [b"; ".join(
        p.encode() for p in PAGE_POLICY + ("frame-ancestors 'none'",))]
    assert [v for k, v in headers if k == b"x-frame-options"] == [b"DENY"]
    assert (b"content-type", b"text/plain") in headers            # the route's other headers are kept
    assert body == {"type": "http.response.body", "body": b"x"}   # the body goes through untouched


def test_other_scopes_pass_through_untouched():
    sent = through(SecurityHeaders, "/", [(b"x-own", b"1")], scope_type="websocket")
    assert sent[0]["headers"] == [(b"x-own", b"1")]


# ------------------------------------------------------------------ the policies

def test_form_action_is_limited_on_pages_and_refused_on_the_api():
    for path in ("/", "/embed", "/docs", "/index.html"):
        assert directives(dict(headers_for(path))["content-security-policy"])["form-action"] == ["'self'"], path
    for path in ("/api/v1/evaluate", "/api/v1/health"):
        assert directives(dict(headers_for(path))["content-security-policy"])["form-action"] == ["'none'"], path


def test_each_kind_of_path_gets_its_own_policy_from_the_middleware_cache():
    middleware = None

    def keep(app):
        nonlocal middleware
        middleware = middleware or SecurityHeaders(app, embed_origins=(" https://course.example.edu/ ",))
        return middleware

    seen = {}
    for path in ("/embed", "/api/v1/evaluate", "/", "/embed", "/js/main.js", "/api/v1/health", "/embed/"):
        headers = dict((k.decode(), v.decode()) for k, v in header_list(through(keep, path, [])[0]))
        seen[path] = headers
        policy = directives(headers["content-security-policy"])
        if path == "/embed":
            assert policy["frame-ancestors"] == ["https://course.example.edu"] and "x-frame-options" not in headers
            assert policy["script-src"] == ["'self'"]
        else:
            assert policy["frame-ancestors"] == ["'none'"] and headers["x-frame-options"] == "DENY"
        if path.startswith("/api/"):
            assert policy["default-src"] == ["'none'"] and "script-src" not in policy
        else:
            assert policy["default-src"] == ["'self'"]
        for name, value in COMMON_HEADERS:
            assert headers[name] == value


def test_frame_ancestors_and_origins():
    assert frame_ancestors(()) == "*"
    assert frame_ancestors(("https://a.example", "https://b.example")) == "https://a.example https://b.example"
    assert check_origin("  https://a.example/ ") == "https://a.example"
    assert check_origin("http://localhost:8000") == "http://localhost:8000"
    assert check_origin("https://*.school.example:8443") == "https://*.school.example:8443"
    assert check_origin("https://a.b-c.example") == "https://a.b-c.example"
    for bad in ("https://a.example:123456", "ftp://a.example", "https://a..example", "https://", "xhttps://a.example",
                "https://a.example x", "https://*.*.example"):
        with pytest.raises(ValueError, match="not an origin"):
            check_origin(bad)
    with pytest.raises(ValueError, match="not an origin"):
        SecurityHeaders(lambda *a: None, embed_origins=("https://a.example; script-src *",))
    embed = directives(dict(headers_for("/embed", ("https://a.example",)))["content-security-policy"])
    assert embed["frame-ancestors"] == ["https://a.example"]
    assert "x-frame-options" not in dict(headers_for("/embed", ("https://a.example",)))


def test_only_the_start_of_a_response_gets_the_headers():
    """Trailers (sent after the body) carry headers of their own: they pass unchanged."""
    sent = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [], "trailers": True})
        await send({"type": "http.response.body", "body": b"x"})
        await send({"type": "http.response.trailers", "headers": [(b"x-checksum", b"abc")], "more_trailers": False})

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    run_async(SecurityHeaders(app)({"type": "http", "path": "/"}, receive, send))
    assert any(k == b"content-security-policy" for k, _ in sent[0]["headers"])
    assert sent[1:] == [{"type": "http.response.body", "body": b"x"},
                        {"type": "http.response.trailers", "headers": [(b"x-checksum", b"abc")], "more_trailers": False}]
