"""Notebooks: `rasplay.show` builds an anywidget (the real package) whose front end renders the page's
own views; rendered in Chromium (Playwright) from its self-contained HTML, guarded to 127.0.0.1."""
from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

import rasplay
from rasplay.interop.notebook import PAGE_MODULES, page_modules, widget_esm

anywidget = pytest.importorskip("anywidget")
from test_browser import Guarded  # noqa: E402   (the `browser` fixture is conftest's)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
REVERSE = (ROOT / "bench/tracr_programs/reverse.rasp").read_text()


@pytest.fixture
def served(tmp_path):
    """A static file server on 127.0.0.1 for the widget's HTML."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def render(browser, served, widget, name="view.html"):
    folder, base = served
    widget.save_html(folder / name)
    guard = Guarded(browser)
    page = guard.page()
    page.goto(f"{base}/{name}")
    page.wait_for_selector("#rasplay-view[data-rendered='1']", timeout=120_000)
    return guard, page


def test_widget_is_an_anywidget_carrying_the_page_modules():
    w = rasplay.show("x = tokens;", ["ab"])
    assert isinstance(w, anywidget.AnyWidget)
    assert set(w.modules) == set(PAGE_MODULES) | {"elk.js"} and w.modules == page_modules()
    assert w.modules["elk.js"] == (ROOT / "web/vendor/elk.bundle.js").read_text()   # the diagram's layout engine
    assert w.modules["values.js"] == (ROOT / "web/js/values.js").read_text()   # the page's file, unchanged
    assert w.data["doc"]["results"]["x"]["values"] == [["a", "b"]]
    assert "innerHTML" not in widget_esm()   # the widget's own DOM code writes text only


def test_views_render_in_chromium(browser, served):
    model = rasplay.compile(REVERSE, vocab="helo", max_len=6)
    guard, page = render(browser, served, rasplay.show(REVERSE, ["hello"], compiled=model))
    views = page.locator(".rw-section").evaluate_all("els => els.map(e => e.dataset.view)")
    assert views == ["values", "diagram", "heatmap", "compiled"]
    rows = page.locator("table.values-table tbody tr")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.name)") == ["n", "mirror", "reversed"]
    assert page.locator("table.values-table tr[data-name='reversed'] td").all_text_contents()[:5] == list("olleh")
    assert page.locator(".diagram svg g.layer-row").count() == 3          # input, L1, L2
    page.wait_for_selector(".diagram[data-layout='elk']", timeout=60_000)   # laid out by elkjs, as on the page
    assert page.locator(".diagram svg path.edge").count() > 0
    page.wait_for_selector(".heatmap-plot[data-drawn]", timeout=60_000)
    assert "select(indices, mirror, ==)" in page.locator(".heatmap-title").text_content()
    # clicking a name in the values table shows its selector, as on the page
    page.locator("table.values-table tr[data-name='n'] button").click()
    page.wait_for_function("document.querySelector('.heatmap-title').textContent.includes('full_s')")
    # compiled: the summary, one card of compiled attention per head, the residual stream decoded
    assert page.locator(".compile-summary table.summary").count() == 1
    assert page.locator(".compile-attention .overlay-card").count() == sum(model.summary()["heads_per_layer"])
    page.wait_for_selector(".compile-attention .overlay-plot[data-drawn='1']", timeout=60_000)
    assert page.locator(".compile-residual table.residual-table").count() == 1
    assert "1/1 agree" in page.locator("#compile-agreement").text_content()
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    page.screenshot(path=str(ROOT / "test-artifacts" / "notebook-widget.png"), full_page=True)
    guard.close()


@pytest.mark.train
def test_trained_overlay_renders(browser, served, tmp_path):
    pytest.importorskip("torch")
    from rasplay.engine.train import load_model, train

    saved = tmp_path / "model.pt"
    result = train(REVERSE, {"vocab": list("helo"), "max_len": 6, "steps": 30, "d_model": 16, "n_train": 400,
                             "n_test": 50, "example": "hello", "eval_every": 30, "match_examples": 50},
                   save_path=saved)
    for trained in (load_model(saved), result):
        w = rasplay.show(REVERSE, ["hello"], trained=trained)
        overlay = w.data["overlay"]
        guard, page = render(browser, served, w, "trained.html")
        assert page.locator(".rw-section[data-view='trained']").count() == 1
        cards = page.locator(".train-overlay .overlay-card")
        assert cards.count() == len(overlay["selectors"]) >= 2
        page.wait_for_selector(".train-overlay .overlay-plot[data-drawn='1']", timeout=60_000)
        assert page.locator(".train-overlay [data-mode='trained']").get_attribute("aria-checked") == "true"
        guard.close()
