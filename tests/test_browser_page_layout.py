"""The page's layout and diagram in front of a class (issue 32): the diagram's words name what the student
wrote, empty MLP boxes are gone and the inputs' far edges are said in the box instead of drawn down the side;
a loaded example's heatmap shows without scrolling and grows with its panel; presenter mode shows the stepped
layer's boxes, large, inside the panel with the heatmap beside them; two inputs side by side. In Debian's
Chromium, every page guarded to 127.0.0.1; screenshots go to test-artifacts/ (look at them)."""
from __future__ import annotations

import re

import pytest

from rasplay.engine import analyze
from rasplay.engine.examples import load_examples
from test_browser import ARTIFACTS, Guarded, open_app, runs, wait_for_run

pytestmark = pytest.mark.browser

EXAMPLES = [e.id for e in load_examples()]
LAYERS = {e.id: analyze(e.source)["layers"] for e in load_examples()}


def load_example(page, example_id: str):
    before = runs(page)
    page.click("#examples-btn")
    page.click(f"[data-example='{example_id}']")
    wait_for_run(page, before)
    page.wait_for_selector("#diagram[data-layout='elk']", timeout=20000)
    page.evaluate("document.getElementById('toast').hidden = true")


# ------------------------------------------------------------------ 7. the diagram's words

WORDS = """() => {
  const boxes = [...document.querySelectorAll('#diagram g[data-unit]')].map(g => ({unit: g.dataset.unit,
    lines: [...g.querySelectorAll('text')].map(t => t.textContent.trim())}));
  const edges = [...document.querySelectorAll('#diagram path.edge')].map(p => [p.dataset.from, p.dataset.to]);
  return {boxes, edges}; }"""


def test_the_diagram_names_what_the_student_wrote_on_every_example(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    for example in EXAMPLES:
        load_example(page, example)
        drawn = page.evaluate(WORDS)
        doc = page.evaluate("window.rasplay.state.doc.analysis")
        texts = [line for box in drawn["boxes"] for line in box["lines"]]
        assert not [t for t in texts if "unnamed" in t or re.search(r"\bhead \d", t) or re.match(r"L\d+ head", t)
                    or t in ("—", "-")], (example, texts)
        # an MLP box only where the layer has elementwise ops
        mlps = {box["unit"] for box in drawn["boxes"] if box["unit"].startswith("mlp:")}
        assert mlps == {f"mlp:{layer}" for layer, ops in enumerate(doc["mlps"]) if ops}, example
        # no edge from the inputs to a box three rows or more below them; the box says it reads them
        rows = {box["unit"]: int(page.get_attribute(f"#diagram g[data-unit='{box['unit']}']", "data-layer"))
                for box in drawn["boxes"]}
        far = [e for e in drawn["edges"] if e[0].startswith("in:") and rows[e[1]] >= 3]
        assert far == [], (example, far)
    # Dyck-2: its parts are named after what is built on them, and the tokens it reads late are said
    load_example(page, "dyck2")
    boxes = {b["unit"]: b["lines"] for b in page.evaluate(WORDS)["boxes"]}
    assert boxes["h:1:0"] == ["prefix", "→ part of depth"]
    assert boxes["mlp:0"] == ["MLP on the input alone", "is_open, is_close", "parts of depth"]
    assert boxes["h:2:1"][0] == "selector of opens_at_my_depth"
    assert "reads tokens" in boxes["h:3:0"] and "reads tokens" in boxes["mlp:3"]
    page.locator(".diagram-panel").screenshot(path=ARTIFACTS / "diagram-words-dyck2.png")


# ------------------------------------------------------------------ 1. presenter mode on a projector

SIZES = ((1366, 768), (1920, 1080))
SMALL = [e for e in EXAMPLES if LAYERS[e] <= 4]

# The stepped layer's cards, each inside the visible part of its panel and of the window, their smallest text,
# and the heatmap inside the window beside them.
PRESENTED = """() => {
  const row = document.getElementById('present-row'), panel = row.closest('.panel').getBoundingClientRect();
  const inside = (r, box) => r.width > 0 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1 && r.left >= box.left - 1
    && r.right <= box.right + 1;
  const view = {top: 0, left: 0, bottom: innerHeight, right: innerWidth};
  const cards = [...row.querySelectorAll('.present-card')];
  const texts = cards.flatMap(c => [...c.querySelectorAll('.card-line')]);
  const heat = document.querySelector('#heatmap-plot .heatmap-svg');
  return {layer: Number(row.dataset.layer), cards: cards.map(c => c.dataset.unit),
    outside: cards.filter(c => !inside(c.getBoundingClientRect(), panel) || !inside(c.getBoundingClientRect(), view))
      .map(c => c.dataset.unit),
    smallest: Math.min(...texts.map(t => parseFloat(getComputedStyle(t).fontSize))),
    heatmap: Boolean(heat) && inside(heat.getBoundingClientRect(), view),
    pageScrolls: document.scrollingElement.scrollHeight > innerHeight + 1}; }"""

# The whole diagram: every box inside the visible part of the diagram's pane.
WHOLE = """() => { const pane = document.getElementById('diagram').getBoundingClientRect();
  const boxes = [...document.querySelectorAll('#diagram g[data-unit] rect.frame')];
  return {count: boxes.length, outside: boxes.filter(b => { const r = b.getBoundingClientRect();
    return r.top < pane.top - 1 || r.bottom > pane.bottom + 1 || r.left < pane.left - 1 || r.right > pane.right + 1; })
    .map(b => b.parentNode.dataset.unit)}; }"""


def step_to(page, layer: int, layers: int):
    page.wait_for_function(f"() => document.getElementById('layer-label').textContent === 'Layer {layer} of {layers}'"
                           f" && document.getElementById('present-row').dataset.layer === '{layer}'")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_presenter_shows_each_layers_boxes_large_inside_the_panel_with_the_heatmap_beside(browser, live_server, size):
    g = Guarded(browser, viewport=size)
    try:
        page = g.page()
        open_app(page, live_server.url)
        for example in SMALL:
            load_example(page, example)
            layers = page.evaluate("window.rasplay.state.doc.analysis.layers")
            page.click("#present-btn")
            for layer in range(1, layers + 1):
                if layer > 1:
                    page.keyboard.press("ArrowRight")
                step_to(page, layer, layers)
                shown = page.evaluate(PRESENTED)
                units = page.evaluate(f"window.rasplay.state.doc.analysis.heads[{layer - 1}].length")
                assert len([c for c in shown["cards"] if c.startswith("h:")]) == units, (example, layer, shown)
                assert shown["outside"] == [] and shown["heatmap"] and not shown["pageScrolls"], (example, layer, shown)
                assert shown["smallest"] >= 18, (example, layer, shown)
            # the whole diagram is one click away, every box inside the panel, and back
            page.click("#present-row .whole-toggle")
            page.wait_for_selector("#present-row .whole-toggle[data-whole='1']")
            page.wait_for_selector("#diagram[data-layout='elk']")
            whole = page.evaluate(WHOLE)
            assert whole["count"] and whole["outside"] == [], (example, whole)
            assert page.evaluate(PRESENTED)["heatmap"], example
            if example == "dyck2":
                page.screenshot(path=ARTIFACTS / f"present-whole-{size[0]}x{size[1]}.png")
            page.click("#present-row .whole-toggle")
            page.wait_for_selector("#present-row .whole-toggle[data-whole='0']")
            if example == "dyck2":
                page.screenshot(path=ARTIFACTS / f"present-layer-{size[0]}x{size[1]}.png")
            page.keyboard.press("Escape")
            page.wait_for_selector("#present-bar", state="hidden")
            assert page.is_hidden("#present-row")
    finally:
        g.close()


# ------------------------------------------------------------------ 5. the heatmap on screen, growing with its panel

HEATMAP_ON_SCREEN = """() => { const r = document.querySelector('#heatmap-plot .heatmap-svg').getBoundingClientRect();
  return {inside: r.top >= 0 && r.bottom <= innerHeight + 1 && r.right <= innerWidth + 1,
    cell: Number(document.getElementById('heatmap-plot').dataset.cell),
    scrolled: document.scrollingElement.scrollTop + document.querySelector('.right').scrollTop}; }"""


def test_a_loaded_examples_heatmap_shows_without_scrolling_and_grows_with_the_panel(browser, live_server):
    deep = [e for e in EXAMPLES if LAYERS[e] in (3, 4)]
    assert "dyck2" in deep
    cells = {}
    for size in SIZES:
        g = Guarded(browser, viewport=size)
        try:
            page = g.page()
            open_app(page, live_server.url)
            for example in deep:
                load_example(page, example)
                page.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn")
                shown = page.evaluate(HEATMAP_ON_SCREEN)
                assert shown["inside"] and shown["scrolled"] == 0, (example, size, shown)
                assert shown["cell"] <= 48, (example, size, shown)
                cells[example, size] = shown["cell"]
            load_example(page, "dyck2")
            page.screenshot(path=ARTIFACTS / f"heatmap-dyck2-{size[0]}x{size[1]}.png")
        finally:
            g.close()
    # a 7 x 7 heatmap (Dyck-2) grows past the old 30-px cells on a projector, and is readable at 1366x768
    assert cells["dyck2", (1920, 1080)] >= 40, cells
    assert cells["dyck2", (1366, 768)] >= 14, cells


# ------------------------------------------------------------------ 6. two inputs side by side, all heads crossed

def set_inputs(page, texts):
    for i, text in enumerate(texts):
        if i >= page.locator("#inputs input[type='text']").count():
            before = runs(page)
            page.click("#add-input")
            wait_for_run(page, before)
        before = runs(page)
        page.locator("#inputs input[type='text']").nth(i).fill(text)
        wait_for_run(page, before)


def test_two_inputs_side_by_side_have_labels_hover_widths_and_marked_differences(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    load_example(page, "dyck2")
    set_inputs(page, ["(())", "()()"])
    page.locator("#head-grid .head-tile[data-layer='3']").click()    # partner: who each closing bracket pairs with
    page.wait_for_selector("#head-compare figure[data-drawn='1'] + figure[data-drawn='1']")
    page.wait_for_function("() => document.getElementById('head-compare').dataset.differ !== undefined")
    sides = page.evaluate("""() => [...document.querySelectorAll('#head-compare .compare-plot')].map(p => ({
        texts: [...p.querySelectorAll('svg text')].map(t => t.textContent), z: p.heatmap.z, widths: p.heatmap.widths,
        marks: p.querySelectorAll('svg .marks rect').length}))""")
    assert len(sides) == 2
    for side, tokens in zip(sides, ("(())", "()()")):
        assert {"keys", "queries", "width"} <= set(side["texts"])
        assert {f"q{i} {t}" for i, t in enumerate(tokens)} <= set(side["texts"])
        assert side["widths"] == [sum(map(bool, row)) for row in side["z"]]
    differ = sum(bool(a) != bool(b) for ra, rb in zip(sides[0]["z"], sides[1]["z"]) for a, b in zip(ra, rb))
    assert differ > 0 and sides[0]["marks"] == sides[1]["marks"] == differ
    assert page.get_attribute("#head-compare", "data-differ") == str(differ)
    assert page.inner_text("#head-compare .compare-differ").startswith(f"{differ} cell")
    # hover on the right side names both tokens of that input
    right = page.locator("#head-compare .compare-plot").nth(1)
    x, y = right.evaluate("p => p.heatmap.cellCentre(3, 2)")
    page.mouse.move(x, y)
    page.wait_for_selector("#head-compare .compare-plot >> nth=1 >> .heatmap-hover:not([hidden])")
    assert right.locator(".heatmap-hover").inner_text().startswith("query 3 ()) ← key 2 (()")
    page.locator("#head-compare").screenshot(path=ARTIFACTS / "side-by-side.png")


# Each head's canvas pixel at the centre of cells (4, 0), (0, 2), (n-1, 2) (on the cross) and (0, 0) (off it).
PIXELS = """(n) => [...document.querySelectorAll('#head-grid .head-tile canvas')].map(c => {
    const ctx = c.getContext('2d'), cell = c.width / n;
    const at = (q, k) => [...ctx.getImageData(Math.floor((k + .5) * cell), Math.floor((q + .5) * cell), 1, 1).data].join();
    return [at(4, 0), at(0, 2), at(n - 1, 2), at(0, 0)]; })"""


def test_hovering_a_cell_in_all_heads_marks_its_row_and_column_in_every_head(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    load_example(page, "dyck2")
    tiles = page.locator("#head-grid .head-tile canvas")
    tiles.nth(0).scroll_into_view_if_needed()
    box = tiles.nth(0).bounding_box()
    n = len(page.evaluate("window.rasplay.state.doc.inputs[0]"))
    cell = box["width"] / n
    before = page.evaluate(PIXELS, n)
    page.mouse.move(box["x"] + 2.5 * cell, box["y"] + 4.5 * cell)      # query 4, key 2 of the first head
    page.wait_for_function("() => document.getElementById('head-grid').dataset.cross === '4,2'")
    tokens = page.evaluate("window.rasplay.state.doc.inputs[0]")
    assert page.inner_text("#head-grid-cross") == f"query 4 ({tokens[4]}) and key 2 ({tokens[2]}), marked in every head"
    # every head's canvas changed over row 4 and column 2, and nowhere else
    after = page.evaluate(PIXELS, n)
    assert len(after) == page.evaluate("window.rasplay.state.doc.analysis.heads.flat().length")
    for was, now in zip(before, after):
        assert [w != v for w, v in zip(was, now)] == [True, True, True, False], (was, now)
    page.mouse.move(2, 2)
    page.wait_for_function("() => document.getElementById('head-grid').dataset.cross === ''")
    assert page.inner_text("#head-grid-cross") == ""
