"""The layer x head diagram laid out by elkjs, the provenance of a value, the grid of all heads (issue 22),
driven in Debian's Chromium against a real server on loopback (every page guarded: nothing may leave
127.0.0.1). The diagram's geometry is read from its SVG (tests/fixtures/diagram_geometry.js): no edge
segment crosses a box, no two edges from different sources share a stretch, edges arrive at distinct
points, no label is shortened or runs out of its box, every box stays in its layer's row, nothing
overflows the panel. Screenshots go to test-artifacts/diagram-*.png (look at them)."""
from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from support.provenance_reference import reference_provenance
from support.browser_kit import ARTIFACTS, Guarded, open_app, runs, set_program, wait_for_run

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GEOMETRY = (FIXTURES / "diagram_geometry.js").read_text()
SYNTHETIC = (FIXTURES / "synthetic_6_layers.rasp").read_text()
EXAMPLES = ("dyck2", "sort_unique", "most_frequent")
VIEWPORTS = ((1366, 768), (1920, 1080))


def laid_out(page):
    page.wait_for_selector("#diagram[data-layout='elk']", timeout=20000)


def load_example(page, example_id: str):
    before = runs(page)
    page.click("#examples-btn")
    page.click(f"[data-example='{example_id}']")
    wait_for_run(page, before)
    laid_out(page)


def set_input(page, text: str):
    before = runs(page)
    page.locator("#inputs input[type='text']").first.fill(text)
    wait_for_run(page, before)
    laid_out(page)


def check_drawing(page, what: str):
    problems = page.evaluate(GEOMETRY)
    assert problems == [], f"{what}: {problems}"
    texts = page.eval_on_selector_all("#diagram .head-box", "gs => gs.map(g => g.querySelector('text').textContent)")
    assert texts and len(set(texts)) == len(texts), f"{what}: heads that read the same: {texts}"


@pytest.mark.parametrize("width,height", VIEWPORTS)
def test_diagram_geometry_on_real_programs_and_a_wide_one(browser, live_server, width, height):
    g = Guarded(browser, viewport=(width, height))
    try:
        page = g.page()
        open_app(page, live_server.url)
        laid_out(page)
        for example in EXAMPLES:
            load_example(page, example)
            check_drawing(page, f"{example} at {width}x{height}")
            page.screenshot(path=ARTIFACTS / f"diagram-{example}-{width}x{height}.png")
        set_program(page, SYNTHETIC)
        laid_out(page)
        assert "6 layers · heads per layer: 2, 4, 1, 1, 1, 1" in page.inner_text("#diagram-totals")
        assert page.locator("#diagram .head-box[data-layer='2']").count() == 4
        check_drawing(page, f"6 layers at {width}x{height}")
        page.screenshot(path=ARTIFACTS / f"diagram-synthetic-{width}x{height}.png")
        # zoom enlarges the drawing and the panel scrolls; Fit brings it back inside the panel
        natural = float(page.get_attribute("#diagram svg", "width"))
        page.click("#diagram button[data-zoom='in']")
        assert float(page.get_attribute("#diagram svg", "width")) > natural
        page.click("#diagram button[data-zoom='fit']")
        assert float(page.get_attribute("#diagram svg", "width")) == natural
        assert page.evaluate(GEOMETRY) == []
    finally:
        g.close()


def test_a_head_shows_its_full_expression_on_focus(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    load_example(page, "dyck2")
    heads = page.evaluate("window.rasplay.state.doc.analysis.heads.flat()")
    unnamed = next(h for h in heads if h["display"].startswith("selector of "))
    box = f"#diagram .head-box[data-selector='{unnamed['selector']}']"
    assert page.text_content(f"{box} text").strip() == unnamed["display"]   # (a line ends in a space for screen readers)
    page.focus(box)
    tip = page.locator("#diagram .diagram-tip")
    assert tip.is_visible() and unnamed["expression"] in tip.inner_text()
    assert unnamed["expression"] in page.get_attribute(box, "aria-label")
    page.focus("#diagram button[data-zoom='fit']")
    assert tip.is_hidden()


def test_the_diagram_scales_down_in_a_narrow_panel(browser, live_server):
    g = Guarded(browser, viewport=(640, 800))
    try:
        page = g.page()
        open_app(page, live_server.url)
        load_example(page, "dyck2")
        svg = page.locator("#diagram svg")
        assert float(svg.get_attribute("width")) < float(svg.get_attribute("data-natural-width"))
        check_drawing(page, "dyck2 at 640 px")
    finally:
        g.close()


# ------------------------------------------------------------------ provenance

def page_highlights(page):
    values = page.evaluate("""() => [...document.querySelectorAll('.values-table td.prov-read, .values-table td.prov-origin')]
        .map(td => [td.closest('tr').dataset.name, Number(td.dataset.pos)])""")
    units = page.evaluate("() => [...document.querySelectorAll('#diagram g.on-path')].map(g => g.dataset.unit)")
    return {tuple(v) for v in values}, set(units)


def test_provenance_equals_the_walk_over_the_selector_matrices(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    load_example(page, "dyck2")
    set_input(page, "({}){(}")
    source = page.evaluate("window.rasplay.state.source")
    doc = httpx.post(f"{live_server.url}/api/v1/evaluate", json={"source": source, "inputs": ["({}){(}"], "trace": 0}).json()
    nodes = {n["id"]: n for n in doc["analysis"]["graph"]["nodes"]}
    by_name = {name: n["id"] for n in nodes.values() for name in n["names"]}
    for name, position in (("dyck2", 6), ("partner_token", 3), ("open_number", 5)):
        page.click(f".values-table tr[data-name='{name}'] td[data-pos='{position}']")
        page.wait_for_function(f"() => document.getElementById('values').dataset.provenance === '{name}:{position}'")
        page.click("#provenance-bar button[data-provenance='all']")
        page.wait_for_function("() => document.getElementById('provenance-bar').dataset.step === '0'")
        cells, used = reference_provenance(doc, by_name[name], position)
        shown_values, shown_units = page_highlights(page)
        expected_values = {(nm, p) for (node, p) in cells for nm in nodes[node]["names"] if nm in doc["results"]}
        assert shown_values == expected_values, name
        expected_units = {f"h:{nodes[node]['layer']}:{nodes[node]['head']}" for node, _ in cells
                          if nodes[node]["kind"] in ("aggregate", "selector_width")}
        expected_units |= {f"mlp:{nodes[node]['layer']}" for node, _ in cells if nodes[node]["kind"] in ("map", "sequencemap")}
        expected_units |= {f"in:{nodes[node]['kind']}" for node, _ in cells if nodes[node]["kind"] in ("tokens", "indices")}
        assert shown_units == expected_units, name
        # each head on the path: its tile in the grid and, opened large, the heatmap marks the query rows and the
        # keys read, as the reference says
        for head in (n for n, _ in cells if nodes[n]["kind"] in ("aggregate", "selector_width")):
            sel = next(e["source"] for e in doc["analysis"]["graph"]["edges"] if e["target"] == head and e["role"] == "selector")
            expected = sorted([q, k] for (s, q, k) in used if s == sel)
            reads = page.evaluate(f"""() => {{ const r = document.querySelector('#head-grid [data-selector="{sel}"]'); return r !== null; }}""")
            assert reads
            shown = page.evaluate(f"""async () => {{ const main = document.querySelector('script[type=module][src*="/js/main.js"]').src; const m = await import(main.replace(/js\\/main\\.js$/, 'js/provenance.js'));   // the page's own instance (versioned URL)
                return (m.readsOf({sel}) || []).flatMap(r => r.keys.map(k => [r.query, k])).sort((a, b) => a[0] - b[0] || a[1] - b[1]); }}""")
            assert sorted({tuple(c) for c in shown}) == [tuple(c) for c in expected], (name, sel)
    page.screenshot(path=ARTIFACTS / "diagram-provenance-dyck2.png")


def test_provenance_steps_back_one_layer_at_a_time_in_presenter_mode(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    load_example(page, "dyck2")
    set_input(page, "({}){(}")
    page.click("#present-btn")
    page.click(".values-table tr[data-name='partner_token'] td[data-pos='3']")
    page.wait_for_function("() => document.getElementById('values').dataset.provenance === 'partner_token:3'")
    bar = page.locator("#provenance-bar")
    assert bar.get_attribute("data-step") == "3" and page.is_visible("#provenance-bar")
    # at layer 3: partner's head on the path, nothing from layers 1 and 2 yet
    units = page_highlights(page)[1]
    assert "h:3:0" in units and not any(u.startswith(("h:1", "h:2")) for u in units)
    # the stepped layer's card on the path is marked too (presenter mode's cards, issue 32)
    assert "on-path" in page.get_attribute("#present-row .present-card[data-unit='h:3:0']", "class").split()
    # it read open_number (its selector compares it), not yet what open_number read
    assert page.locator(".values-table tr[data-name='open_number'] td.prov-read").count() > 0
    assert page.locator(".values-table tr[data-name='depth'] td.prov-read").count() == 0
    page.click("#provenance-bar button[data-provenance='back']")
    page.wait_for_function("() => document.getElementById('provenance-bar').dataset.step === '2'")
    units = page_highlights(page)[1]
    assert any(u.startswith("h:2") for u in units) and not any(u.startswith("h:1") for u in units)
    assert page.locator(".values-table tr[data-name='depth'] td.prov-read").count() == 0
    # the presenter follows the step; the heatmap shows the first head on the path in layer 2, its read cells marked
    assert page.inner_text("#layer-label") == "Layer 2 of 4"
    assert "same_depth_opens" in page.text_content("#heatmap-title")
    page.wait_for_function("() => Number(document.getElementById('heatmap-plot').dataset.provenanceShapes) > 0")
    assert page.locator("#heatmap-plot svg .marks rect").count() == \
        int(page.get_attribute("#heatmap-plot", "data-provenance-shapes"))     # drawn over the heatmap's cells
    page.keyboard.press("[")
    page.wait_for_function("() => document.getElementById('provenance-bar').dataset.step === '1'")
    assert any(u.startswith("h:1") for u in page_highlights(page)[1])
    assert page.inner_text("#layer-label") == "Layer 1 of 4"
    assert page.locator(".values-table tr[data-name='depth'] td.prov-read").count() > 0
    page.screenshot(path=ARTIFACTS / "diagram-provenance-presenter.png")
    page.click("#provenance-bar button[data-provenance='clear']")
    assert page.locator("#diagram g.on-path").count() == 0 and page.is_hidden("#provenance-bar")


def test_all_heads_grid_opens_a_head_and_compares_two_inputs(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    load_example(page, "most_frequent")
    heads = page.evaluate("window.rasplay.state.doc.analysis.heads.flat().length")
    tiles = page.locator("#head-grid .head-tile")
    assert tiles.count() == heads
    last = tiles.nth(heads - 1)
    selector = last.get_attribute("data-selector")
    last.click()
    page.wait_for_function(f"() => document.querySelector('#head-grid .head-tile[data-selector=\"{selector}\"]')"
                           ".getAttribute('aria-pressed') === 'true'")
    assert page.get_attribute("#diagram .head-box.selected", "data-selector") == selector
    # a second input: the selected head side by side on both
    before = runs(page)
    page.click("#add-input")
    wait_for_run(page, before)
    before = runs(page)
    page.locator("#inputs input[type='text']").nth(1).fill("aab")
    wait_for_run(page, before)
    page.wait_for_selector("#head-compare figure[data-drawn='1'] + figure[data-drawn='1']")
    sizes = page.evaluate("[...document.querySelectorAll('#head-compare svg title')].map(t => t.textContent)")
    assert len(sizes) == 2 and "input 1" in sizes[0] and "input 2" in sizes[1]
    page.screenshot(path=ARTIFACTS / "diagram-head-grid.png", full_page=True)


def test_a_value_is_traced_from_the_keyboard(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    assert page.locator(".values-table td[data-pos][tabindex='0']").count() == 1   # one tab stop for all values
    page.focus(".values-table td[data-pos][tabindex='0']")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('values').dataset.provenance === 'reverse:1'")
    assert page.locator(".values-table tr[data-name='reverse'] td.prov-origin").get_attribute("data-pos") == "1"


def test_provenance_view_exports_to_svg_and_png(guarded, live_server, tmp_path):
    page = guarded.page()
    open_app(page, live_server.url)
    page.click(".values-table tr[data-name='reverse'] td[data-pos='0']")
    page.wait_for_function("() => document.getElementById('values').dataset.provenance === 'reverse:0'")
    for fmt in ("svg", "png"):
        with page.expect_download() as info:
            page.click(f"#provenance-bar button[data-provenance='{fmt}']")
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        data = path.read_bytes()
        assert path.name == f"rasplay-provenance.{fmt}"
        if fmt == "png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
        else:
            text = data.decode()
            assert "Where did reverse at position 0 come from?" in text and "on-path" in text
