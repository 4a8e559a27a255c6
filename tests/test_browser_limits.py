"""The page takes the Compile and Train forms' bounds from the server it talks to (GET /api/v1/limits),
in Debian's Chromium against a real `rasplay serve` given its own limits; every page guarded."""
from __future__ import annotations

import pytest

from test_browser import open_app

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def small_server(tmp_path_factory):
    from live_server import LiveServer

    s = LiveServer(tmp_path_factory.mktemp("limits"), "--workers", "1", "--compile-max-len", "4",
                   "--train-seconds", "100")
    yield s
    s.stop()


def test_the_forms_bounds_are_this_servers(guarded, small_server):
    page = guarded.page()
    open_app(page, small_server.url)
    page.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn", timeout=30000)
    page.click("#tab-compile")
    page.wait_for_function("() => document.getElementById('compile-max-len').max === '4'", timeout=20000)
    assert int(page.input_value("#compile-max-len")) <= 4   # the inputs are longer: the value is capped too
    page.click("#tab-train")
    page.wait_for_function("() => document.getElementById('train-time').max === '100'", timeout=20000)
    assert page.get_attribute("#train-max-len", "max") == "512" and page.get_attribute("#train-heads", "max") == "16"
    assert page.get_attribute("#train-d-model", "min") == "4" and page.get_attribute("#train-layers", "min") == "0"
