"""The browser app's files (everything in web/, web/vendor/ included), light on a classroom network.

- Versioned URLs: the pages (index.html, apidocs.html) are served with every reference to a file of the app
  (`src="/js/main.js"`, `href="/style.css"`) rewritten to `/v/<version>/js/main.js`, where <version> is a
  hash of the content of every file in web/. Those URLs are immutable (`Cache-Control: public,
  max-age=31536000, immutable`): a second visit and every other student of a class costs only the pages and
  the API calls. The page's modules name each other (and the vendored bundles) by relative URLs, so a whole
  version of the app is one tree under /v/<version>/. A version that is no longer the current one is still
  answered (a page open during an upgrade keeps working), with the current files, but never as immutable.
- Revalidation: the pages, and every file asked for without a version, carry an ETag and `Cache-Control:
  no-cache`; a request with a matching If-None-Match gets a 304 with no body, so an upgrade reaches everyone.
- Compression, once per file: brotli where the request accepts it, else gzip, else none. A file's first
  request compresses it quickly (off the event loop); a background thread then compresses every file of the
  app at the best settings and swaps them in, so compression is never paid per request. (Dynamic responses,
  the API's JSON, are compressed by the ASGI middleware of `compression_middleware`.)

A file added to web/ (for instance another vendored bundle) gets all of this with no change here; a file
changed under a running server gives a new version at the next page request.
"""
from __future__ import annotations

import brotli
import gzip
import hashlib
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import Response

VERSIONED = "/v/"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
PAGES = frozenset({"index.html", "apidocs.html"})
SKIP_PARTS = frozenset({"__pycache__", "node_modules"})
MIN_COMPRESS = 500           # bytes: smaller bodies go as they are (as the middleware's minimum_size)
FAST = {"br": 5, "gzip": 6}  # first use: quick
BEST = {"br": 11, "gzip": 9}  # then, in the background: as small as the codecs make it

TYPES = {
    ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml",
    ".json": "application/json", ".txt": "text/plain; charset=utf-8", ".md": "text/markdown; charset=utf-8",
    ".map": "application/json", ".png": "image/png", ".ico": "image/x-icon", ".woff2": "font/woff2",
}
COMPRESSIBLE = frozenset({".html", ".js", ".mjs", ".css", ".svg", ".json", ".txt", ".md", ".map", ".ico"})
# a page's references to the app's own files: src="/..." or href="/..." (query and fragment kept)
REFERENCE = re.compile(r"""(\b(?:src|href)\s*=\s*)(["'])/(?!/)([^"'?#]*)""")
MODULE_SCRIPT = re.compile(r"""<script\b[^>]*\btype=["']module["'][^>]*\bsrc=["']/([^"'?#]+)""")
# a module's imports of other files: import/export ... from "./x.js", import "./x.js", import("../y.js")
MODULE_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)(["'])(\.{1,2}/[^"'?#]+)\1""")


def compress(body: bytes, encoding: str, level: int) -> bytes:
    if encoding == "br":
        return brotli.compress(body, quality=level)
    return gzip.compress(body, compresslevel=level, mtime=0)


def accepted_encoding(header: str) -> str | None:
    """br if the Accept-Encoding header accepts it, else gzip, else None (identity)."""
    accepted = set()
    for item in header.split(","):
        coding, _, params = item.partition(";")
        coding = coding.strip().lower()
        q = params.strip()
        if q.startswith("q="):
            try:
                if float(q[2:]) <= 0:
                    continue
            except ValueError:
                continue
        accepted.add(coding)
    if "br" in accepted or "*" in accepted:
        return "br"
    if "gzip" in accepted:
        return "gzip"
    return None


def etag_matches(header: str, etag: str) -> bool:
    if header.strip() == "*":
        return True
    bare = etag.removeprefix("W/")
    return any(t.strip().removeprefix("W/") == bare for t in header.split(","))


class Asset:
    """One file as served: its body (pages rewritten), type, ETag and compressed forms."""

    __slots__ = ("body", "media_type", "etag", "encoded", "compressible")

    def __init__(self, body: bytes, suffix: str):
        self.body = body
        self.media_type = TYPES.get(suffix, "application/octet-stream")
        self.etag = f'W/"{hashlib.sha256(body).hexdigest()[:20]}"'
        self.encoded: dict[str, tuple[int, bytes]] = {}    # encoding -> (level, body)
        self.compressible = suffix in COMPRESSIBLE and len(body) >= MIN_COMPRESS


class WebAssets:
    """The files of `root`, versioned, revalidated and compressed as the module docstring says."""

    def __init__(self, root: Path, background: bool = True):
        self.root = Path(root)
        self.background = background
        self._lock = threading.Lock()
        self._signature = None
        self.version = ""
        self._files: dict[str, Path] = {}
        self._assets: dict[str, Asset] = {}
        self._background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rasplay-assets")
        self.best_version = ""   # the version whose files are all compressed at the best settings
        self._refresh()

    def stats(self) -> dict:
        return {"version": self.version, "best_ready": self.best_version == self.version}

    # ------------------------------------------------------------------ the files and their version

    def _scan(self) -> dict[str, os.stat_result]:
        found = {}
        for folder, dirs, files in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_PARTS and not d.startswith("."))
            for name in files:
                if name.endswith((".py", ".pyc")) or name.startswith("."):
                    continue
                path = Path(folder) / name
                found[path.relative_to(self.root).as_posix()] = path.stat()
        return found

    def _refresh(self) -> None:
        """Re-read the file list (cheap: names, sizes, times); on any change, a new version."""
        stats = self._scan()
        signature = tuple(sorted((k, s.st_size, s.st_mtime_ns) for k, s in stats.items()))
        if signature == self._signature:
            return
        digest = hashlib.sha256()
        for rel in sorted(stats):
            digest.update(rel.encode() + b"\0" + hashlib.sha256((self.root / rel).read_bytes()).digest())
        with self._lock:
            self._files = {rel: self.root / rel for rel in stats}
            self._assets = {}
            self.version = digest.hexdigest()[:16]
            self._signature = signature
        if self.background:
            self._background.submit(self.compress_all, self.version)

    def url(self, rel: str) -> str:
        """The immutable URL of one file of the app."""
        return f"{VERSIONED}{self.version}/{rel}"

    def _module_graph(self, entries: list[str]) -> list[str]:
        """Every module a page's module scripts import, statically or by import("..."), in the order found."""
        seen, todo = [], list(entries)
        while todo:
            rel = todo.pop(0)
            if rel in seen or rel not in self._files:
                continue
            seen.append(rel)
            try:
                text = self._files[rel].read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            base = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
            for m in MODULE_IMPORT.finditer(text):
                todo.append(os.path.normpath(base + m.group(2)).replace(os.sep, "/"))
        return seen

    def _rewrite(self, html: str) -> str:
        """A page with its files' versioned URLs, and a modulepreload link for every module its scripts
        import (so the browser fetches the whole module graph at once, not one level of imports per round
        trip)."""
        def versioned(m: re.Match) -> str:
            rel = m.group(3)
            if rel in self._files and rel not in PAGES and not rel.endswith(".html"):
                return f"{m.group(1)}{m.group(2)}{self.url(rel)}"
            return m.group(0)
        entries = MODULE_SCRIPT.findall(html)
        preload = "".join(f'<link rel="modulepreload" href="/{rel}">\n' for rel in self._module_graph(entries)
                          if rel not in entries)
        if preload and "</head>" in html:
            html = html.replace("</head>", preload + "</head>", 1)
        return REFERENCE.sub(versioned, html)

    def asset(self, rel: str) -> Asset | None:
        with self._lock:
            found = self._assets.get(rel)
            if found is not None:
                return found
            path = self._files.get(rel)
        if path is None:
            return None
        try:
            body = path.read_bytes()
        except OSError:
            return None
        if rel in PAGES:
            body = self._rewrite(body.decode("utf-8")).encode("utf-8")
        made = Asset(body, path.suffix.lower())
        with self._lock:
            return self._assets.setdefault(rel, made)

    # ------------------------------------------------------------------ compression, once per file

    def _encode(self, asset: Asset, encoding: str, level: int) -> bytes:
        have = asset.encoded.get(encoding)
        if have is not None and have[0] >= level:
            return have[1]
        body = compress(asset.body, encoding, level)
        have = asset.encoded.get(encoding)
        if have is None or have[0] < level:
            # a higher setting replaces a lower one (kept if, rarely, it came out smaller)
            asset.encoded[encoding] = (level, body if have is None or len(body) <= len(have[1]) else have[1])
        return asset.encoded[encoding][1]

    def _first_visit(self) -> set[str]:
        """The files the main page fetches at once: what it references and its module graph."""
        try:
            html = self._files["index.html"].read_text(encoding="utf-8")
        except (KeyError, OSError):
            return set()
        named = {m.group(3) for m in REFERENCE.finditer(html)}
        return {"index.html"} | named | set(self._module_graph(MODULE_SCRIPT.findall(html)))

    def compress_all(self, version: str) -> None:
        """(In the background) every compressible file of this version at the best settings: the main page's
        files first, the largest first, in a pass of brotli then one of gzip."""
        sizes = {rel: size for rel, size, _ in self._signature or ()}
        first = self._first_visit()
        names = sorted(self._files, key=lambda rel: (rel not in first, -sizes.get(rel, 0)))
        for encoding in ("br", "gzip"):
            for rel in names:
                if self.version != version:
                    return   # a newer version took over
                asset = self.asset(rel)
                if asset is not None and asset.compressible:
                    self._encode(asset, encoding, BEST[encoding])
        self.best_version = version   # (GET /health: assets.best_ready)

    async def encoded(self, asset: Asset, encoding: str) -> bytes:
        have = asset.encoded.get(encoding)
        if have is not None:
            return have[1]
        return await anyio.to_thread.run_sync(self._encode, asset, encoding, FAST[encoding])

    # ------------------------------------------------------------------ answering a request

    async def respond(self, request: Request, path: str) -> Response | None:
        """The response for `path` (the URL path without its leading "/"), or None if no such file."""
        cache = REVALIDATE
        if path.startswith(VERSIONED[1:]):
            version, _, path = path[len(VERSIONED) - 1:].partition("/")
            if version == self.version:
                cache = IMMUTABLE
        if path == "" or path.endswith("/"):
            path += "index.html"
        if path in PAGES:
            self._refresh()
        asset = self.asset(path)
        if asset is None:
            return None
        headers = {"cache-control": cache, "etag": asset.etag, "vary": "Accept-Encoding"}
        if etag_matches(request.headers.get("if-none-match", ""), asset.etag):
            return Response(status_code=304, headers=headers)
        body = asset.body
        encoding = accepted_encoding(request.headers.get("accept-encoding", "")) if asset.compressible else None
        if encoding:
            body = await self.encoded(asset, encoding)
            headers["content-encoding"] = encoding
        if request.method == "HEAD":
            headers["content-length"] = str(len(body))
            return Response(status_code=200, headers=headers, media_type=asset.media_type)
        return Response(body, headers=headers, media_type=asset.media_type)

    async def page(self, request: Request, name: str) -> Response:
        response = await self.respond(request, name)
        assert response is not None, name
        return response


def install(app: FastAPI, root: Path) -> WebAssets:
    """Serve the files of `root` at / (after every other route): the app's static files."""
    from . import errors

    assets = WebAssets(root)
    app.state.assets = assets

    @app.api_route("/{path:path}", methods=["GET", "HEAD"], include_in_schema=False)
    async def web_file(request: Request, path: str):
        response = await assets.respond(request, path)
        if response is None:
            return errors.error_response(404, "not_found", f"nothing at /{path}")
        return response

    return assets


def compression_middleware(app: FastAPI) -> None:
    """Compress dynamic responses (the API's JSON, error pages): brotli where accepted, else gzip, with the
    maintained `starlette-compress` middleware. Responses that are compressed already (the app's files,
    above) pass through; server-sent event streams are never compressed, so each event leaves at once."""
    from starlette_compress import CompressMiddleware, remove_compress_type

    remove_compress_type("text/event-stream")
    app.add_middleware(CompressMiddleware, zstd=False, brotli_quality=4, gzip_level=6, minimum_size=MIN_COMPRESS)
