"""Security headers on every response, over real HTTP: a CSP that runs only our own scripts, nosniff, a referrer
policy, and framing refused everywhere except /embed. The API reference at /docs is served from local files."""
from __future__ import annotations

import re

import pytest

from support.live_server import LiveServer
from rasplay.server.security import check_origin, headers_for

PAGES = ["/", "/embed", "/docs", "/index.html", "/style.css", "/js/main.js", "/vendor/plotly.min.js",
         "/vendor/codemirror.bundle.js", "/vendor/swagger-ui/swagger-ui-bundle.js", "/openapi.json", "/favicon.svg",
         "/no-such-file"]
API = [("GET", "/api/v1/health"), ("GET", "/api/v1/examples"), ("GET", "/api/v1/nothing-here"),
       ("DELETE", "/api/v1/evaluate"), ("POST", "/api/v1/evaluate")]


def csp(response) -> dict[str, list[str]]:
    """The Content-Security-Policy header as {directive: [sources]} (there must be exactly one)."""
    values = response.headers.get_list("content-security-policy")
    assert len(values) == 1, values
    directives = {}
    for part in values[0].split(";"):
        name, *sources = part.split()
        assert name not in directives, f"{name} twice"
        directives[name] = sources
    return directives


def assert_common(response):
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    policy = csp(response)
    scripts = policy.get("script-src", policy["default-src"])
    assert scripts in (["'self'"], ["'none'"]), scripts
    assert not any("unsafe-eval" in s or "unsafe-inline" in s for s in scripts)
    assert policy["base-uri"] == ["'none'"]
    return policy


def assert_not_framable(response):
    assert csp(response)["frame-ancestors"] == ["'none'"]
    assert response.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize("path", PAGES)
def test_every_page_and_file_has_the_headers_and_refuses_framing(api, path):
    r = api.get(path)
    assert r.status_code == (404 if path == "/no-such-file" else 200), path
    policy = assert_common(r)
    assert policy["script-src"] == ["'self'"] and policy["object-src"] == ["'none'"]
    assert policy["connect-src"] == ["'self'", "data:"]
    if path == "/embed":
        assert policy["frame-ancestors"] == ["*"]
        assert "x-frame-options" not in r.headers
    else:
        assert_not_framable(r)


@pytest.mark.parametrize("method,path", API)
def test_every_api_answer_has_the_headers_and_runs_nothing(api, method, path):
    r = api.request(method, path, content=b"{not json" if method == "POST" else None,
                    headers={"content-type": "application/json"} if method == "POST" else None)
    assert r.status_code in (200, 400, 404, 405), (path, r.status_code)
    policy = assert_common(r)
    assert policy["default-src"] == ["'none'"] and "script-src" not in policy
    assert_not_framable(r)


def test_redirects_and_rejected_bodies_have_the_headers(api):
    link = api.get("/s/aaaaaaaaaaaa")
    assert link.status_code == 404
    assert_not_framable(link)
    assert_common(link)
    too_big = api.post("/api/v1/evaluate", content=b"x" * 300_000, headers={"content-type": "application/json"})
    assert too_big.status_code == 413
    assert_not_framable(too_big)
    redoc = api.get("/redoc", follow_redirects=False)
    assert redoc.status_code == 308 and redoc.headers["location"] == "/docs"
    assert_not_framable(redoc)


def test_headers_replace_what_a_route_sets_and_appear_once(api):
    r = api.get("/vendor/plotly.min.js")
    for name in ("content-security-policy", "x-content-type-options", "referrer-policy", "x-frame-options"):
        assert len(r.headers.get_list(name)) == 1, name
    assert r.headers["content-type"].startswith("text/javascript")


def test_the_api_reference_is_served_from_local_files_only(api):
    html = api.get("/docs").text
    assert "swagger-ui" in html
    sources = re.findall(r"""(?:src|href)=["']([^"']+)""", html)
    assert sources and all(s.startswith("/") and not s.startswith("//") for s in sources), sources
    assert re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html) is None   # no inline script
    assert re.search(r"\son[a-z]+\s*=", html) is None                 # no inline handler
    for path in ("/vendor/swagger-ui/swagger-ui-bundle.js", "/vendor/swagger-ui/swagger-ui.css", "/js/apidocs.js"):
        assert api.get(path).status_code == 200, path
    assert "swagger-ui-dist@5.35.0 (Apache-2.0)" in api.get("/vendor/swagger-ui/LICENSE.txt").text


# ------------------------------------------------------------------ who may frame /embed

def test_embed_origins_limit_framing_to_those_sites(tmp_path):
    server = LiveServer(tmp_path, "--workers", "1", "--embed-origin", "https://course.example.edu",
                        "--embed-origin", "https://*.school.example:8443/")
    try:
        with server.client() as client:
            embed = client.get("/embed")
            assert csp(embed)["frame-ancestors"] == ["https://course.example.edu", "https://*.school.example:8443"]
            assert_not_framable(client.get("/"))
    finally:
        server.stop()


@pytest.mark.parametrize("bad", ["https://a.example; script-src *", "course.example.edu", "https://a.example/path",
                                 "javascript:alert(1)", "https://a example", "*", "'self'"])
def test_an_embed_origin_that_could_change_the_policy_is_refused(bad):
    with pytest.raises(ValueError, match="not an origin"):
        check_origin(bad)


def test_the_embed_flag_rejects_a_bad_origin_with_a_clear_message(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "rasplay.cli", "serve", "--data-dir", str(tmp_path),
                           "--embed-origin", "https://a.example; script-src *"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "not an origin" in done.stderr and "Traceback" not in done.stderr


def test_api_answers_never_carry_the_page_policy():
    assert dict(headers_for("/api/v1/evaluate"))["content-security-policy"].startswith("default-src 'none'")
    assert "frame-ancestors *" in dict(headers_for("/embed"))["content-security-policy"]
    assert "x-frame-options" in dict(headers_for("/embed/x"))
    assert "x-frame-options" in dict(headers_for("/embed/"))


def test_an_unexpected_server_error_has_the_headers_too(tmp_path):
    """Starlette answers an unhandled exception from its outermost middleware; the headers wrap even that."""
    from fastapi.routing import APIRoute
    from fastapi.testclient import TestClient

    from rasplay.server.app import create_app
    from rasplay.server.settings import Settings

    def boom():
        raise RuntimeError("a bug")

    app = create_app(Settings(data_dir=tmp_path))
    app.router.routes.insert(0, APIRoute("/boom", boom))
    r = TestClient(app, raise_server_exceptions=False).get("/boom")   # (no lifespan: no workers needed)
    assert r.status_code == 500 and r.json()["error"]["kind"]
    assert_not_framable(r)
    assert_common(r)
