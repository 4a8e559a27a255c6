"""The API reference at /docs, in Chromium: Swagger UI from web/vendor/swagger-ui renders every operation of our
OpenAPI schema with no request leaving 127.0.0.1 and no Content-Security-Policy violation."""
from __future__ import annotations

import pytest

from support.browser_kit import Watched

pytestmark = pytest.mark.browser


def operations(schema: dict) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in schema["paths"].items() for method in item
            if method in {"get", "post", "put", "patch", "delete"}}


def test_docs_render_every_operation_offline_under_the_csp(browser, live_server, api):
    expected = operations(api.get("/openapi.json").json())
    assert ("POST", "/api/v1/evaluate") in expected and len(expected) >= 8
    watched = Watched(browser)
    try:
        page = watched.page()
        page.goto(live_server.url + "/docs")
        page.wait_for_selector(".opblock .opblock-summary-path", timeout=20000)
        shown = {tuple(x) for x in page.eval_on_selector_all(".opblock", """blocks => blocks.map((b) => [
          b.querySelector('.opblock-summary-method').textContent,
          b.querySelector('.opblock-summary-path').dataset.path])""")}
        assert shown == expected
        assert "rasplay" in page.inner_text(".info .title")
        # open one operation: its parameters and responses render too
        page.click(".opblock-post .opblock-summary")
        page.wait_for_selector(".opblock-post.is-open .responses-wrapper")
        page.wait_for_load_state("networkidle")   # whatever the opened operation would fetch has been asked for
        assert page.locator(".swagger-ui .download-url-wrapper, img[src*='validator']").count() == 0
    finally:
        watched.close()
