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

from support.needs import need
anywidget = need("anywidget")
from support.browser_kit import Guarded  # noqa: E402   (the `browser` fixture is conftest's)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
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
    assert set(w.modules) == set(PAGE_MODULES) and w.modules == page_modules()   # the layout engine is asked for
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
    need("torch")
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
    # the view shows the input shown above it: a model on another input, a training result refused there
    other = rasplay.show(REVERSE, ["hel"], trained=load_model(saved))
    assert [t for t in other.data["overlay"]["tokens"] if t in "hel"] == list("hel")
    with pytest.raises(ValueError, match="pass the trained model"):
        rasplay.show(REVERSE, ["hel"], trained=result)


# ------------------------------------------------------------------ page weight: plotly once, small notebooks

def saved_notebook(widgets) -> str:
    """A notebook as Jupyter saves it with its widget state: each widget's output (its mimebundle) in a cell,
    and every widget's synced state in the notebook's metadata."""
    cells = []
    state = {}
    for w in widgets:
        data, _ = w._repr_mimebundle_()
        cells.append({"cell_type": "code", "execution_count": 1, "metadata": {}, "source": "rasplay.show(...)",
                      "outputs": [{"output_type": "display_data", "data": data, "metadata": {}}]})
        state[w.model_id] = {"model_name": w._model_name, "model_module": w._model_module,
                             "model_module_version": w._model_module_version, "state": w.get_state()}
    import json

    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": cells, "metadata": {
        "widgets": {"application/vnd.jupyter.widget-state+json": {"version_major": 2, "version_minor": 0,
                                                                   "state": state}}}}, default=str)


def test_no_widget_carries_plotly_and_five_widgets_save_under_2_mb():
    from rasplay.interop.notebook import elk_source, plotly_source

    model = rasplay.compile(REVERSE, vocab="helo", max_len=6)
    widgets = [rasplay.show(REVERSE, ["hello"], compiled=model)] + \
              [rasplay.show(REVERSE, [w]) for w in ("hel", "oleh", "hole", "eh")]
    assert all("plotly" not in w.get_state() for w in widgets)
    saved = saved_notebook(widgets)
    assert len(saved.encode()) < 2_000_000, len(saved)
    assert plotly_source()[:2000] not in saved
    assert elk_source()[:2000] not in saved   # nor the diagram's layout engine
    assert plotly_source() == (ROOT / "web/vendor/plotly.min.js").read_text()   # the page's partial bundle


def test_the_kernel_sends_plotly_and_the_layout_engine_once_asked():
    from rasplay.interop.notebook import elk_source, plotly_source

    w = rasplay.show("x = tokens;", ["ab"])
    sent = []
    w.send = lambda content, buffers=None: sent.append(content)
    w._answer(w, {"kind": "something else"}, [])
    assert sent == []
    w._answer(w, {"kind": "plotly"}, [])
    assert sent == [{"kind": "plotly", "source": plotly_source()}]
    w._answer(w, {"kind": "elk"}, [])
    assert sent[1] == {"kind": "elk", "source": elk_source()}
    assert elk_source() == (ROOT / "web/vendor/elk.bundle.js").read_text()   # the diagram's layout engine


def test_the_mimebundle_has_a_static_picture_for_a_notebook_without_a_kernel():
    hostile = "<img src=x onerror=alert(1)>"
    w = rasplay.show(REVERSE, [hostile])
    data, _ = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "RaspView object" not in data["text/plain"] and "reverse" in data["text/plain"]
    picture = data["text/html"]
    assert "<script" not in picture and "<img" not in picture and "<th>&lt;</th>" in picture   # text, not markup
    assert picture.count("<table>") == 3          # the values, and the two selectors of reverse
    assert "select(indices, mirror, ==) (layer 2)" in picture
    reversed_row = "".join(f"<td>{v}</td>" for v in reversed(hostile)).replace("<td><</td>", "<td>&lt;</td>") \
        .replace("<td>></td>", "<td>&gt;</td>")
    assert f"<tr><th>reversed</th>{reversed_row}</tr>" in picture
    assert "&#9632;" in picture                                                   # selected cells are marked


def test_a_training_result_is_shown_only_on_its_own_example_input():
    from rasplay.interop.notebook import view_data

    result = {"output": "reversed", "program": {"layers": 2, "heads_per_layer": [1, 1]},
              "example": {"input": list("hello"), "tokens": ["<bos>", *"hello"], "attention": [[[[1.0]]]],
                          "selectors": []}}
    assert view_data(REVERSE, ["hello"], trained=result)["overlay"]["input"] == list("hello")
    with pytest.raises(ValueError, match="example input 'hello' only, not on 'hel'"):
        view_data(REVERSE, ["hel"], trained=result)


HOST = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<script type="module">
const esm = %s;
const widget = await import(URL.createObjectURL(new Blob([esm], { type: "text/javascript" })));
window.asked = {};
function host(state) {
  // anywidget's front-end model, with a kernel that answers the plotly and layout-engine requests (in the
  // next task); window.asked counts the requests of each kind
  const listeners = [];
  return { get: (k) => state[k], set() {}, save_changes() {}, on: (n, f) => listeners.push([n, f]),
    off: (n, f) => { const i = listeners.findIndex((l) => l[1] === f); if (i >= 0) listeners.splice(i, 1); },
    send: (msg) => { window.asked[msg.kind] = (window.asked[msg.kind] || 0) + 1;
      fetch(`/${msg.kind}.js`).then((r) => r.text()).then((source) => {
        for (const [n, f] of [...listeners]) if (n === "msg:custom") f({ kind: msg.kind, source }); }); } };
}
const states = %s;
await Promise.all(states.map((state) => widget.default.render({ model: host(state),
  el: document.body.appendChild(document.createElement("div")) })));
document.body.dataset.rendered = "1";
</script></body></html>"""


def test_widgets_on_one_page_ask_for_the_layout_engine_once_and_for_plotly_once_where_a_view_needs_it(browser, served):
    """Plain views (values, diagram, the selector heatmap in the page's own SVG) never ask for plotly.js; a page
    with compiled views asks for it once, however many widgets show them."""
    import json

    folder, base = served
    plain = [rasplay.show(REVERSE, ["hello"]), rasplay.show(REVERSE, ["hel"])]
    compiled = rasplay.show(REVERSE, ["hello"], compiled=rasplay.compile(REVERSE, vocab="helo", max_len=6))
    (folder / "plotly.js").write_bytes((ROOT / "web/vendor/plotly.min.js").read_bytes())
    (folder / "elk.js").write_bytes((ROOT / "web/vendor/elk.bundle.js").read_bytes())
    for name, widgets, asked in (("plain.html", plain, {"elk": 1}),
                                 ("mixed.html", [plain[0], compiled, plain[1], compiled], {"plotly": 1, "elk": 1})):
        states = [{"modules": w.modules, "data": w.data} for w in widgets]
        (folder / name).write_text(HOST % (json.dumps(widget_esm()), json.dumps(states).replace("<", "\\u003c")))
        guard = Guarded(browser)
        page = guard.page()
        page.goto(f"{base}/{name}")
        page.wait_for_selector("body[data-rendered='1']", timeout=120_000)
        assert page.evaluate("window.asked") == asked, name
        page.wait_for_function(f"document.querySelectorAll('.heatmap-plot[data-drawn]').length === {len(widgets)}",
                               timeout=60_000)
        if "plotly" in asked:
            page.wait_for_selector(".compile-attention .overlay-plot[data-drawn='1']", timeout=60_000)
        else:
            assert page.evaluate("typeof window.Plotly") == "undefined"
        guard.close()


def test_a_training_result_with_test_lengths_shows_the_chart_by_length(browser, served):
    need("torch")
    from rasplay.engine.train import train

    result = train('y = tokens == "h";', {"vocab": list("helo"), "max_len": 4, "test_min_len": 5, "test_max_len": 8,
                                          "positional": "none", "steps": 30, "d_model": 16, "n_train": 300,
                                          "n_test": 30, "example": "hel", "eval_every": 30, "match_examples": 30})
    w = rasplay.show('y = tokens == "h";', ["hel"], trained=result)
    assert [b["lo"] for b in w.data["lengths"]["lengths"]["bins"]] == [1, 5]
    guard, page = render(browser, served, w, "lengths.html")
    assert page.locator(".rw-section[data-view='lengths']").count() == 1
    page.wait_for_function("() => document.getElementById('lengths-plot').dataset.drawn", timeout=60_000)
    names = page.evaluate("document.getElementById('lengths-plot').data.map(t => t.name)")
    assert "length-free compiled model" in names and any("trained, per sequence" in n for n in names)
    assert page.locator("#lengths-summary tr[data-bin='5-8']").count() == 1
    guard.close()
