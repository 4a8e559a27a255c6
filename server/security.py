"""Security headers on every response (an ASGI middleware), and the policies they carry.

The page runs only our own scripts: no inline script, no inline event handler, no eval, nothing from another
origin. Styles may be inline (plotly and CodeMirror set styles from script; the SVG export writes style
attributes). Only `/embed` may be framed, by the origins in `Settings.embed_origins` (any site by default);
every other response refuses to be framed. docs/security.md explains each header."""
from __future__ import annotations

import re

EMBED_PATHS = frozenset({"/embed"})   # the only framable page (the app serves the embed view at exactly /embed)

# The browser app, the embed view and the API reference at /docs.
PAGE_POLICY = (
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self' data:",   # data: only for the export, which reads plotly's image (a data: URL) by fetch
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
)
# JSON, downloads and redirects: nothing in them is ever run or shown as a page.
API_POLICY = ("default-src 'none'", "base-uri 'none'", "form-action 'none'")

COMMON_HEADERS = (
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cross-origin-opener-policy", "same-origin"),
    ("permissions-policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=(), serial=(), hid=(), "
                           "midi=(), display-capture=()"),
)


ORIGIN = re.compile(r"^https?://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?$")


def check_origin(text: str) -> str:
    """`text` if it is an origin a CSP source list can hold (`https://host[:port]`, `https://*.host`), else
    ValueError: anything else (a path, a space, a `;`) could change the policy."""
    origin = text.strip().rstrip("/")
    if not ORIGIN.match(origin):
        raise ValueError(f"not an origin: {text!r} (expected e.g. https://course.example.edu)")
    return origin


def frame_ancestors(embed_origins: tuple[str, ...]) -> str:
    """The `frame-ancestors` source list for /embed: `*` (any site) unless origins are given."""
    return " ".join(embed_origins) if embed_origins else "*"


def headers_for(path: str, embed_origins: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """The security headers of a response to `path`."""
    if path in EMBED_PATHS:
        policy = PAGE_POLICY + (f"frame-ancestors {frame_ancestors(embed_origins)}",)
        framing = []
    else:
        policy = (API_POLICY if path.startswith("/api/") else PAGE_POLICY) + ("frame-ancestors 'none'",)
        framing = [("x-frame-options", "DENY")]
    return [("content-security-policy", "; ".join(policy)), *COMMON_HEADERS, *framing]


class SecurityHeaders:
    """ASGI middleware: adds `headers_for(path)` to every HTTP response (replacing any header of the same
    name a route set), including errors, redirects, static files and streamed responses."""

    def __init__(self, app, embed_origins: tuple[str, ...] = ()):
        self.app = app
        self.embed_origins = tuple(check_origin(o) for o in embed_origins)
        self._cache: dict[str, list[tuple[bytes, bytes]]] = {}

    def _encoded(self, path: str) -> list[tuple[bytes, bytes]]:
        kind = "embed" if path in EMBED_PATHS else "api" if path.startswith("/api/") else "page"
        if kind not in self._cache:
            self._cache[kind] = [(k.encode(), v.encode()) for k, v in headers_for(path, self.embed_origins)]
        return self._cache[kind]

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        extra = self._encoded(scope.get("path", "/"))
        names = {k for k, _ in extra}

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": headers + extra}
            await send(message)

        await self.app(scope, receive, send_with_headers)
