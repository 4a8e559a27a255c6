"""The page on its partial plotly.js bundle (core + heatmap: web/vendor/plotly-build), in Chromium, guarded to 127.0.0.1: every kind of chart the
page draws (the selector heatmap in the page's own SVG; with plotly: compiled attention, the soft-attention
study's curves, imported attention overlays) renders (plotly's with trace types the served bundle holds), the
selector heatmap exports to PNG and SVG, and every file comes compressed under a versioned URL. (Training curves and the trained overlay: test_browser_page.py's train test, on the same
bundle; timings and sizes: bench/page_weight.py.)"""
from __future__ import annotations

import json

import pytest

from rasplay.server.assets import MIN_COMPRESS
from support.browser_kit import ARTIFACTS, heatmap_z, open_app  # noqa: F401   (the `guarded` fixture is test_browser's)

pytestmark = pytest.mark.browser

# every drawn plotly chart on the page: its trace types as plotly resolved them
DRAWN_TYPES = """() => [...document.querySelectorAll('.js-plotly-plot')].filter((p) => p._fullData)
  .map((p) => ({ id: p.id || p.className, types: p._fullData.map((t) => t.type) }))"""


def registered(page) -> set[str]:
    return set(page.evaluate("Object.keys(Plotly.PlotSchema.get().traces)"))


def test_every_chart_renders_on_the_partial_bundle_and_exports(guarded, live_server, tmp_path):
    page = guarded.page()
    open_app(page, live_server.url)
    heatmap_z(page)
    # selector heatmap (the page's own SVG): PNG and SVG
    for fmt in ("png", "svg"):
        with page.expect_download() as info:
            page.click(f"button[data-export='heatmap'][data-format='{fmt}']")
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        data = path.read_bytes()
        assert (data[:8] == b"\x89PNG\r\n\x1a\n") if fmt == "png" else (b"<svg" in data[:2000] and b"heatmap" in data)
    assert page.evaluate("typeof window.Plotly") == "undefined"
    # compiled attention (heatmaps with outlines) and the soft-attention study (line plots)
    page.click("#tab-compile")
    page.fill("#compile-max-len", "5")
    page.click("#compile-start")
    page.wait_for_selector("#compile-attention .overlay-plot[data-drawn='1']", timeout=60000)
    traces = registered(page)
    assert {"heatmap", "scatter"} <= traces
    assert not {"scatter3d", "choropleth", "mesh3d", "scattergl"} & traces     # the partial bundle, not the full one
    page.uncheck("#compile-hard")
    page.click("#compile-study")
    page.wait_for_function("() => document.getElementById('compile-study-plot').dataset.drawn", timeout=60000)
    # imported attention maps over the selectors (the trained overlay's charts)
    page.click("#tab-train")
    n = 6
    mirror = [[1.0 if (q == 0 and k == 0) or (q and k == n - q) else 0.0 for k in range(n)] for q in range(n)]
    maps = tmp_path / "maps.json"
    maps.write_text(json.dumps({"tokens": ["<bos>", *"hello"], "bos": True, "attention": [[mirror], [mirror]]}))
    page.set_input_files("#train-import", str(maps))
    page.wait_for_selector("#train-overlay .overlay-card .overlay-plot[data-drawn='1']", timeout=30000)
    drawn = page.evaluate(DRAWN_TYPES)
    where = {d["id"] for d in drawn}
    assert "compile-study-plot" in where and len(drawn) >= 5, drawn
    used = {t for d in drawn for t in d["types"]}
    assert used == {"heatmap", "scatter"} and used <= traces
    study = page.evaluate("document.getElementById('compile-study-plot')._fullData.map((t) => t.mode)")
    assert study and all("lines" in m for m in study)
    page.screenshot(path=ARTIFACTS / "charts-partial-plotly.png", full_page=True)


def test_the_page_comes_compressed_and_versioned(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    heatmap_z(page)
    page.click("#tab-compile")     # a chart that loads plotly.js, so that its file is checked too
    page.fill("#compile-max-len", "5")
    page.click("#compile-start")
    page.wait_for_selector("#compile-attention .overlay-plot[data-drawn='1']", timeout=60000)
    entries = page.evaluate("""() => performance.getEntriesByType('resource').map((e) => ({ url: e.name,
      encoded: e.encodedBodySize, decoded: e.decodedBodySize }))""")
    files = [e for e in entries if "/api/" not in e["url"] and not e["url"].endswith("favicon.svg")]
    assert any(e["url"].endswith("/vendor/plotly.min.js") for e in files)
    for e in files:
        assert "/v/" in e["url"], e                                  # every file by its versioned URL
        if e["decoded"] >= MIN_COMPRESS:   # (a file smaller than that goes as it is: compressing would not pay)
            assert e["encoded"] < e["decoded"] / (2 if e["decoded"] > 10_000 else 1), e   # and compressed
        else:
            assert e["encoded"] == e["decoded"], e
