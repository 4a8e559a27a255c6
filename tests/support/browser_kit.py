"""The browser test kit: a Chromium context guarded to 127.0.0.1 (`Guarded`, and `Watched`, which also fails
on a dialog or a CSP violation), and the steps every browser test takes on the page (open it, set a program,
wait for a run, read the heatmap). The session's `browser` fixture and the `guarded` fixture are conftest.py's."""
from __future__ import annotations

import http.server
import re
import threading
import time
from contextlib import contextmanager
from pathlib import Path

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# (the session's `browser` fixture lives in conftest.py, so that every browser test module shares one Chromium)


# Only requests leaving loopback are routed (and failed). A regex is matched by the browser driver, so
# local requests are not intercepted at all: a download from our own server that was routed would be
# cancelled by Playwright.
OUTSIDE_LOOPBACK = re.compile(r"^(?!data:|blob:|https?://127\.0\.0\.1[:/]).*")


def _expected_api_error(text: str) -> bool:
    """The browser logs every 4xx answer; the app shows those to the user (they are not page errors)."""
    return text.startswith("Failed to load resource: the server responded with a status of 4")


class Guarded:
    """A browser context whose pages may only talk to 127.0.0.1."""

    def __init__(self, browser, viewport=(1280, 800), **kw):
        width, height = viewport
        self.context = browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True, **kw)
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.context.route(OUTSIDE_LOOPBACK, self._guard)

    def _guard(self, route):
        self.outside.append(route.request.url)
        route.abort()

    def page(self):
        page = self.context.new_page()
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("console", lambda m: m.type == "error" and not _expected_api_error(m.text) and self.errors.append(m.text))
        return page

    def close(self):
        self.context.close()
        assert self.outside == [], f"the page requested outside 127.0.0.1: {self.outside}"
        assert self.errors == [], f"errors in the page: {self.errors}"


def open_app(page, url, path="/"):
    start = time.monotonic()
    page.goto(url + path)
    page.wait_for_selector("body[data-ready='1']", timeout=15000)
    return time.monotonic() - start


def runs(page) -> int:
    return int(page.evaluate("document.body.dataset.runs || 0"))


def wait_for_run(page, before: int):
    page.wait_for_function(f"() => Number(document.body.dataset.runs || 0) > {before}", timeout=10000)


def drawn(page) -> int:
    return int(page.evaluate("document.getElementById('heatmap-plot').dataset.drawn || 0"))


# The Program view's heatmap (web/js/heatmapsvg.js) keeps what it drew on its element: z (the 0/1 matrix), x and y
# (key and query labels), widths, text (the dots), hover(q, k), cellCentre(q, k) and widthCentre(q) (page px).
HEATMAP = "document.getElementById('heatmap-plot').heatmap"


def heatmap_z(page):
    page.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn", timeout=15000)
    return page.evaluate(f"{HEATMAP}.z")


def heatmap_field(page, expression: str):
    """A field of the drawn heatmap: heatmap_field(page, "widths"), heatmap_field(page, "hover(0, 4)")."""
    heatmap_z(page)
    return page.evaluate(f"{HEATMAP}.{expression}")


def cell_centre(page, q: int, k: int) -> tuple[float, float]:
    """Page coordinates of heatmap cell (query q, key k)."""
    return tuple(heatmap_field(page, f"cellCentre({q}, {k})"))


PLOTLY_FILE = re.compile(r"^http://127\.0\.0\.1:\d+(/v/\w+)?/vendor/plotly\.min\.js$")


def address_writes(page) -> int:
    """How many of the page's delayed address-bar writes have settled (web/js/state.js counts them)."""
    return page.evaluate("Number(document.body.dataset.addressWrites || 0)")


def set_program(page, source: str):
    """Replace the editor's text the way a user would (select all, type)."""
    before = runs(page)
    page.click(".cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)
    page.keyboard.press("Control+Enter")
    wait_for_run(page, before)


REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (e) =>
  window.__rasplayCsp(`${e.effectiveDirective} blocked ${e.blockedURI || "inline"} in ${e.sourceFile}:${e.lineNumber}`));
"""


class Watched(Guarded):
    """A guarded context (no request outside 127.0.0.1, no page error) that also fails on any dialog (alert,
    confirm, prompt: the sign of injected script) and on any CSP violation."""

    def __init__(self, browser, **kw):
        super().__init__(browser, **kw)
        self.dialogs: list[str] = []
        self.violations: list[str] = []
        self.context.expose_function("__rasplayCsp", self._violation)
        self.context.add_init_script(REPORT_VIOLATIONS)

    def page(self):
        page = super().page()
        page.on("dialog", self._dialog)
        page.on("console", self._console)
        return page

    def _console(self, message):
        """Chromium warns of a header it could not apply (a policy it does not know)."""
        if message.type == "warning" and re.search(r"Policy|policy", message.text):
            self.errors.append(message.text)

    def _violation(self, text: str):
        self.violations.append(text)

    def _dialog(self, dialog):
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def close(self):
        self.context.close()
        assert self.dialogs == [], f"a dialog opened (injected script ran): {self.dialogs}"
        assert self.violations == [], f"Content-Security-Policy violations: {self.violations}"
        assert self.outside == [], f"the page requested outside 127.0.0.1: {self.outside}"
        assert self.errors == [], f"errors in the page: {self.errors}"


@contextmanager
def course_page(html: str):
    """A course page on another loopback origin that embeds rasplay (frame-ancestors needs an http page)."""
    body = html.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/course.html"
    finally:
        httpd.shutdown()
