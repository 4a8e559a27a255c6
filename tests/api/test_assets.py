"""Light on the wire (server/assets.py): the app's files compressed (brotli where accepted, else gzip) once per
file, served under content-versioned immutable URLs; the pages revalidated by ETag (304); API answers
compressed by the middleware; event streams neither compressed nor buffered. Over real HTTP where it can be,
and on WebAssets itself for what needs a folder of our own. Sizes and timings live in bench/page_weight.py."""
from __future__ import annotations

import asyncio
import concurrent.futures
import gzip
import json
import re
from pathlib import Path

import brotli
import pytest

from rasplay.server import assets as assets_module
from rasplay.server.assets import IMMUTABLE, WebAssets, accepted_encoding

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
LOCAL_REF = re.compile(r"""\b(?:src|href)=["'](/[^"'#?]*)""")


def raw(api, path, encoding, **headers):
    """GET `path` asking for `encoding`; the body exactly as sent (not decoded)."""
    with api.stream("GET", path, headers={"accept-encoding": encoding, **headers}) as r:
        return r, b"".join(r.iter_raw())


def decode(body: bytes, encoding: str | None) -> bytes:
    return {"br": brotli.decompress, "gzip": gzip.decompress}.get(encoding, lambda b: b)(body)


def page_refs(api, path="/") -> list[str]:
    return LOCAL_REF.findall(api.get(path).text)


@pytest.mark.parametrize("encoding,expected", [("br", "br"), ("gzip", "gzip"), ("gzip, deflate, br", "br"),
                                               ("identity", None), ("br;q=0, gzip", "gzip")])
def test_files_and_api_answers_are_compressed_as_the_browser_accepts(api, encoding, expected):
    versioned = [u for u in page_refs(api) if u.endswith("main.js")][0]
    plotly = versioned.replace("js/main.js", "vendor/plotly.min.js")
    for path, original in (("/", None), (versioned, WEB / "js/main.js"), (plotly, WEB / "vendor/plotly.min.js"),
                           ("/style.css", WEB / "style.css")):
        r, body = raw(api, path, encoding)
        assert r.status_code == 200 and r.headers.get("content-encoding") == expected, (path, dict(r.headers))
        assert "accept-encoding" in r.headers["vary"].lower()
        plain = decode(body, expected)
        if original is not None:
            assert plain == original.read_bytes(), path
        if expected:
            assert len(body) < len(plain) / 2, path
    r, body = raw(api, "/api/v1/examples", encoding)
    assert r.headers.get("content-encoding") == expected
    assert decode(body, expected).startswith(b"[")
    doc = {"source": (ROOT / "examples/reverse.rasp").read_text(), "inputs": ["hello" * 12]}
    with api.stream("POST", "/api/v1/evaluate", json=doc, headers={"accept-encoding": encoding}) as r:
        body = b"".join(r.iter_raw())
    assert r.status_code == 200 and r.headers.get("content-encoding") == expected
    assert b'"results"' in decode(body, expected)


def test_the_page_names_every_file_by_an_immutable_versioned_url(api):
    for page in ("/", "/embed", "/docs"):
        refs = [u for u in page_refs(api, page) if u not in ("/", "/openapi.json", "/docs")]   # links to pages
        assert refs, page
        for url in refs:
            assert re.fullmatch(r"/v/[0-9a-f]{16}/.+", url), url
            r = api.get(url)
            assert r.status_code == 200, url
            assert r.headers["cache-control"] == IMMUTABLE == "public, max-age=31536000, immutable"
            assert r.content == (WEB / url.split("/", 3)[3]).read_bytes(), url
    # a file asked for without a version (an old link, a tool) is served too, but always revalidated
    r = api.get("/js/main.js")
    assert r.status_code == 200 and r.headers["cache-control"] == "no-cache" and r.headers["etag"]


@pytest.mark.parametrize("path", ["/", "/index.html", "/embed", "/docs", "/js/main.js"])
def test_pages_revalidate_with_an_etag_and_get_304(api, path):
    first = api.get(path)
    assert first.status_code == 200 and first.headers["cache-control"] == "no-cache"
    etag = first.headers["etag"]
    again = api.get(path, headers={"if-none-match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag and "content-encoding" not in again.headers
    assert again.headers["content-security-policy"] == first.headers["content-security-policy"]
    assert api.get(path, headers={"if-none-match": 'W/"something-else"'}).status_code == 200


def test_unknown_files_are_json_404s_and_paths_cannot_leave_the_app(api):
    for path in ("/no-such-file.js", "/v/0123456789abcdef/no-such.js", "/../pyproject.toml", "/%2e%2e/server/app.py",
                 "/__init__.py"):
        r = api.get(path)
        assert r.status_code == 404 and r.json()["error"]["kind"] == "not_found", path


# ------------------------------------------------------------------ WebAssets on a folder of our own

@pytest.fixture
def site(tmp_path):
    (tmp_path / "js").mkdir()
    (tmp_path / "vendor").mkdir()
    (tmp_path / "index.html").write_text('<script type="module" src="/js/main.js"></script><a href="/">home</a>'
                                         '<link href="/vendor/big.js"><img src="/missing.png">' + "<p>text</p>" * 100)
    (tmp_path / "js/main.js").write_text('import "./other.js";\n' + "const x = 1;\n" * 200)
    (tmp_path / "js/other.js").write_text("export const y = 2;\n" * 100)
    (tmp_path / "vendor/big.js").write_text("var big = 'abc';\n" * 5000)
    return tmp_path


def request(path, encoding="br", **headers):
    from starlette.requests import Request

    raw_headers = [(b"accept-encoding", encoding.encode())] + [(k.encode(), v.encode()) for k, v in headers.items()]
    return Request({"type": "http", "method": "GET", "path": path, "headers": raw_headers, "query_string": b""})


def run_async(coroutine):
    """The coroutine run to its end on a loop of its own, in a thread of its own: the session's browser
    (Playwright's sync API) keeps an event loop running in this thread, where asyncio.run refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def serve(web: WebAssets, path: str, **kw):
    return run_async(web.respond(request(path, **kw), path.lstrip("/")))


def test_a_page_links_its_files_by_version_and_a_change_makes_a_new_version(site):
    web = WebAssets(site, background=False)
    html = brotli.decompress(serve(web, "/").body).decode()
    v = web.version
    assert f'src="/v/{v}/js/main.js"' in html and f'href="/v/{v}/vendor/big.js"' in html
    assert 'href="/"' in html and 'src="/missing.png"' in html       # pages and missing files are left alone
    assert serve(web, f"/v/{v}/js/other.js").headers["cache-control"] == IMMUTABLE
    (site / "js/other.js").write_text("export const y = 3;\n" * 100)
    brotli.decompress(serve(web, "/").body)                             # the next page request sees the change
    assert web.version != v
    stale = serve(web, f"/v/{v}/js/other.js")                           # an old version: current file, revalidated
    assert stale.headers["cache-control"] == "no-cache"
    assert brotli.decompress(stale.body) == (site / "js/other.js").read_bytes()
    # any new file (another vendored bundle) is versioned and compressed with no change to the server
    (site / "vendor/elk.js").write_text("var elk = 1;\n" * 3000)
    serve(web, "/")
    new = serve(web, f"/v/{web.version}/vendor/elk.js", encoding="gzip")
    assert new.headers["content-encoding"] == "gzip" and new.headers["cache-control"] == IMMUTABLE
    assert gzip.decompress(new.body) == (site / "vendor/elk.js").read_bytes()


def test_each_file_is_compressed_once_not_per_request(site, monkeypatch):
    calls = []
    real = assets_module.compress
    monkeypatch.setattr(assets_module, "compress", lambda body, enc, level: calls.append((len(body), enc)) or
                        real(body, enc, level))
    web = WebAssets(site, background=False)
    bodies = [serve(web, f"/v/{web.version}/vendor/big.js", encoding=e).body for e in ("br", "br", "gzip", "gzip")]
    assert calls == [(len((site / "vendor/big.js").read_bytes()), "br"),
                     (len((site / "vendor/big.js").read_bytes()), "gzip")]
    assert bodies[0] is bodies[1] and bodies[2] is bodies[3]
    web.compress_all(web.version)                  # the background pass: best settings, swapped in, once
    best = serve(web, f"/v/{web.version}/vendor/big.js").body
    assert len(best) <= len(bodies[0]) and brotli.decompress(best) == (site / "vendor/big.js").read_bytes()
    n = len(calls)
    web.compress_all(web.version)
    assert len(calls) == n


def test_small_and_binary_files_go_uncompressed(site):
    (site / "tiny.css").write_text("a{}")
    (site / "pic.png").write_bytes(b"\x89PNG" + bytes(2000))
    web = WebAssets(site, background=False)
    for name in ("tiny.css", "pic.png"):
        r = serve(web, f"/{name}")
        assert "content-encoding" not in r.headers and r.body == (site / name).read_bytes()


def test_accept_encoding_prefers_brotli_then_gzip():
    assert accepted_encoding("gzip, deflate, br, zstd") == "br"
    assert accepted_encoding("gzip;q=1.0, br;q=0.5") == "br"
    assert accepted_encoding("gzip, br;q=0") == "gzip"
    assert accepted_encoding("deflate") is None and accepted_encoding("") is None
    assert accepted_encoding("*") == "br"


# ------------------------------------------------------------------ event streams: not compressed, not held

def test_event_streams_pass_uncompressed_and_each_event_leaves_at_once():
    """An SSE response through the app's compression middleware: no Content-Encoding, and the first event
    reaches the client while the stream is still waiting to produce the second."""
    from fastapi import FastAPI
    from fastapi.responses import StreamingResponse

    app = FastAPI()
    assets_module.compression_middleware(app)
    released = asyncio.Event()

    async def events():
        yield "data: first\n\n"
        await released.wait()
        yield "data: second\n\n"

    @app.get("/events")
    async def stream():
        return StreamingResponse(events(), media_type="text/event-stream")

    async def run():
        sent = []
        first_arrived = asyncio.Event()

        async def send(message):
            sent.append(message)
            if message["type"] == "http.response.body" and b"first" in message.get("body", b""):
                first_arrived.set()

        async def receive():
            await asyncio.Event().wait()

        scope = {"type": "http", "method": "GET", "path": "/events", "raw_path": b"/events", "query_string": b"",
                 "headers": [(b"accept-encoding", b"gzip, deflate, br")], "http_version": "1.1",
                 "scheme": "http", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1), "root_path": ""}
        task = asyncio.create_task(app.middleware_stack(scope, receive, send) if app.middleware_stack
                                   else app(scope, receive, send))
        await asyncio.wait_for(first_arrived.wait(), 30)
        assert not released.is_set()                     # the first event left before the second was made
        released.set()
        await asyncio.wait_for(task, 30)
        return sent

    sent = run_async(run())
    start = sent[0]
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    assert start["status"] == 200 and "content-encoding" not in headers, headers
    body = b"".join(m.get("body", b"") for m in sent[1:])
    assert body == b"data: first\n\ndata: second\n\n"



def test_the_page_modules_name_the_apps_files_by_relative_urls():
    """A module imports other files of the app by relative URLs ("./x.js", "../vendor/y.js"), so a versioned
    page's modules all come from the same immutable tree; an absolute "/js/..." or "/vendor/..." would load the
    file outside it (unversioned, revalidated on every visit)."""
    absolute = re.compile(r"""["'`]/(?:js|vendor)/""")
    hits = [f"{p.relative_to(WEB)}:{n}" for p in sorted((WEB / "js").rglob("*.js"))
            for n, line in enumerate(p.read_text().splitlines(), 1) if absolute.search(line)]
    assert hits == []
    assert absolute.search('await import("/vendor/codemirror.bundle.js")')


@pytest.mark.parametrize("encoding,expected", [("gzip, deflate, br", "br"), ("br", "br"), ("gzip", "gzip"),
                                               ("gzip;q=0, br;q=0", None), ("identity", None)])
def test_a_large_answer_sent_from_its_file_is_compressed_as_it_goes(api, encoding, expected):
    """An answer over 256 KiB is sent from a temporary file (server/responses.py); it is compressed chunk by
    chunk with a small window (the middleware's brotli would hold a 4 MiB window per unread answer), or sent
    as it is: what arrives decodes to the answer either way."""
    source = "\n".join(f"s{i} = select(indices, indices + {i}, <=);" for i in range(8))
    payload = {"source": source, "inputs": ["ab" * 32] * 8}
    plain = api.post("/api/v1/evaluate", json=payload).json()
    with api.stream("POST", "/api/v1/evaluate", json=payload, headers={"accept-encoding": encoding}) as r:
        sent = b"".join(r.iter_raw())
    assert r.status_code == 200 and r.headers.get("content-encoding") == expected, dict(r.headers)
    body = {"gzip": gzip.decompress, "br": brotli.decompress, None: bytes}[expected](sent)
    assert len(body) > 256 * 1024 and json.loads(body) == plain
    if expected:
        assert len(sent) < len(body) / 5 and "content-length" not in r.headers
