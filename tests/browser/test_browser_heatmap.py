"""The Program view's selector heatmap, drawn by the page itself as one SVG (web/js/heatmapsvg.js, no plotly.js):
hover names both sides and the width, a click locks a cell, the keyboard moves a cursor, provenance marks lie
over cells, and the SVG and PNG exports hold the drawing with its title. In Chromium, guarded to 127.0.0.1."""
from __future__ import annotations

import struct
import xml.etree.ElementTree as ET

import pytest

from support.browser_kit import cell_centre, heatmap_field, heatmap_z, open_app

pytestmark = pytest.mark.browser

SVG = "{http://www.w3.org/2000/svg}"
LABEL = "#heatmap-plot .heatmap-hover"


def test_hover_names_both_sides_and_the_width_and_leaves_with_the_pointer(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)   # Reverse on "hello": the selector flip, the anti-diagonal
    heatmap_z(page)
    page.mouse.move(*cell_centre(page, 1, 3))
    page.wait_for_selector(f"{LABEL}:not([hidden])")
    assert page.inner_text(LABEL) == "query 1 (e, query value 3) ← key 3 (l, key value 3)\nselected"
    assert page.text_content(f"{LABEL} b") == "selected"          # selected in bold, not by colour alone
    page.mouse.move(*cell_centre(page, 1, 0))
    page.wait_for_function(f"() => document.querySelector('{LABEL}').textContent.endsWith('not selected')")
    assert page.locator(f"{LABEL} b").count() == 0
    assert page.inner_text(LABEL).startswith("query 1 (e, query value 3) ← key 0 (h, key value 0)")
    page.mouse.move(*heatmap_field(page, "widthCentre(2)"))
    page.wait_for_function(f"() => document.querySelector('{LABEL}').textContent === 'query 2: selects 1 key'")
    page.mouse.move(2, 2)
    page.wait_for_selector(LABEL, state="hidden")


def test_a_click_locks_a_cell_and_the_keyboard_moves_a_cursor(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    heatmap_z(page)
    page.mouse.click(*cell_centre(page, 2, 2))
    page.wait_for_function("() => document.getElementById('heatmap-note').textContent.includes('locked:')")
    assert "locked: query 2 (l, query value 2) ← key 2 (l, key value 2), selected" in page.text_content("#heatmap-note")
    assert page.text_content("#heatmap-cell").startswith("locked: query 2 (l, query value 2) ← key 2")
    note = page.text_content("#heatmap-note")
    page.mouse.click(*heatmap_field(page, "widthCentre(1)"))       # the widths column locks nothing
    page.mouse.click(*cell_centre(page, 0, 0))
    page.wait_for_function("() => document.getElementById('heatmap-note').textContent.includes('query 0 (h')")
    assert note != page.text_content("#heatmap-note")
    # the keyboard starts from the locked cell
    page.focus("#heatmap-plot")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#heatmap-plot", "data-cursor") == "1,1"
    assert page.text_content("#heatmap-cell") == ("query 1 (e, query value 3) ← key 1 (e, key value 1), not selected "
                                                  "(query 1 selects 1 key)")
    cursor = page.evaluate("""() => { const c = document.querySelector('#heatmap-plot svg .cursor');
      const h = document.getElementById('heatmap-plot').heatmap;
      return [c.getAttribute('visibility'), (+c.getAttribute('x') - h.left) / h.size, (+c.getAttribute('y') - h.top) / h.size]; }""")
    assert cursor == ["visible", 1, 1]
    assert page.inner_text(LABEL).startswith("query 1 (e, query value 3) ← key 1 (e")   # its hover label shows
    page.keyboard.press("Enter")
    assert page.text_content("#heatmap-cell").startswith("locked: query 1 (e")
    assert page.get_attribute("#heatmap-plot", "aria-label").startswith("Selector heatmap: arrow keys")


def test_svg_and_png_exports_hold_the_drawing_and_its_title(guarded, live_server, tmp_path):
    page = guarded.page()
    open_app(page, live_server.url)
    heatmap_z(page)
    files = {}
    for fmt in ("svg", "png"):
        with page.expect_download() as info:
            page.click(f"button[data-export='heatmap'][data-format='{fmt}']")
        files[fmt] = tmp_path / info.value.suggested_filename
        info.value.save_as(files[fmt])
    root = ET.fromstring(files["svg"].read_text())
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert texts[0] == "Reverse — selector flip on “hello”"                       # the title, then the drawing
    assert {"q0 h", "q4 o", "k0 h", "k4 o", "keys", "queries", "width"} <= set(texts)
    assert texts.count("●") == 5 and texts.count("1") == 5                         # a dot per selected cell, the widths
    selected = [p for p in root.iter(f"{SVG}path") if p.get("class") == "selected"]
    assert len(selected) == 1 and selected[0].get("d").count("M") == 5 and selected[0].get("fill") == "#0072B2"
    assert root.find(f".//{SVG}rect[@class='cursor']") is None                     # the keyboard cursor is not drawn
    png = files["png"].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (int(root.get("width")) * 2, int(root.get("height")) * 2)   # drawn at twice the size


def test_provenance_marks_lie_over_the_cells_read(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    heatmap_z(page)
    page.evaluate("document.getElementById('heatmap-plot').heatmap.mark([{q0: 2, q1: 2, k0: 0, k1: 4, stroke: '#D55E00', width: 2},"
                  " {q0: 2, q1: 2, k0: 2, k1: 2, stroke: '#D55E00', width: 3, fill: 'rgba(230,159,0,0.45)'}])")
    marks = page.evaluate("""() => { const h = document.getElementById('heatmap-plot').heatmap;
      return [...document.querySelectorAll('#heatmap-plot svg .marks rect')].map((r) =>
        [(+r.getAttribute('x') - h.left) / h.size, (+r.getAttribute('y') - h.top) / h.size, +r.getAttribute('width') / h.size]); }""")
    assert marks == [[0, 2, 5], [2, 2, 1]]
