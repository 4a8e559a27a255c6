"""The browser playground, driven as a new user would: Playwright in Debian's Chromium against a real
server on loopback. Every page is guarded: a request to anything but 127.0.0.1 fails the test.
Screenshots of the main views go to test-artifacts/ (look at them)."""
from __future__ import annotations

import json
import re

import pytest
from support.needs import need
from support.browser_kit import (ARTIFACTS, PLOTLY_FILE, Guarded, cell_centre, drawn, heatmap_field, heatmap_z,  # noqa: F401
                                 open_app, runs, set_program, wait_for_run, fresh_page, link_from_toast)

pytestmark = pytest.mark.browser

# ------------------------------------------------------------------ the first visit

def test_the_first_screen_fetches_no_plotly_until_a_plotly_chart_is_opened(guarded, live_server):
    """The Program view (editor, values, diagram, the selector heatmap in its own SVG) needs no plotly.js (the
    app's largest file): a first visit does not fetch it, even once the network is idle after the first heatmap
    and the user has hovered and clicked it. The first chart that needs plotly (the Compile view's compiled
    attention) fetches it, once. (Bytes and timings: bench/page_weight.py.)"""
    page = guarded.page()
    fetched = []
    page.on("request", lambda r: PLOTLY_FILE.match(r.url) and fetched.append(r.url))
    open_app(page, live_server.url)
    heatmap_z(page)
    page.wait_for_load_state("networkidle")
    x, y = cell_centre(page, 0, 4)
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    page.wait_for_function("() => document.getElementById('heatmap-note').textContent.includes('locked:')")
    page.click("#diagram .head-box[data-layer='1']")
    page.wait_for_function("() => document.getElementById('heatmap-title').textContent.includes('full_s')")
    page.wait_for_load_state("networkidle")
    assert fetched == [] and page.evaluate("typeof window.Plotly") == "undefined"
    page.click("#tab-compile")
    page.fill("#compile-max-len", "5")
    page.click("#compile-start")
    page.wait_for_selector("#compile-attention .overlay-plot[data-drawn='1']", timeout=60000)
    assert len(fetched) == 1 and page.evaluate("typeof window.Plotly") == "object"


def test_page_shows_reverse(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    assert page.get_attribute("body", "data-editor") == "codemirror"
    rows = page.locator(".values-table tbody tr")
    assert rows.count() == 2
    assert page.locator(".values-table tr[data-name='reverse'] td").all_inner_texts()[:5] == list("olleh")
    assert page.locator(".values-table thead th").all_inner_texts()[1:6] == list("hello")
    z = heatmap_z(page)
    assert z == [[1 if k == 4 - q else 0 for k in range(5)] for q in range(5)]   # flip: the anti-diagonal
    page.screenshot(path=ARTIFACTS / "main-reverse.png", full_page=True)


def test_layer_by_head_diagram_for_reverse_and_sort(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    assert page.locator("#diagram .layer-row").count() == 3          # input + 2 layers
    assert page.locator("#diagram .head-box[data-layer='1']").count() == 1
    assert page.locator("#diagram .head-box[data-layer='2']").count() == 1
    assert "2 layers · heads per layer: 1, 1" in page.inner_text("#diagram-totals")
    set_program(page, "sorted = sort(tokens, tokens);")
    assert "2 layers" in page.inner_text("#diagram-totals")
    assert page.locator("#diagram .head-box[data-layer='1']").count() == 1
    assert page.locator("#diagram .head-box[data-layer='2']").count() == 1
    assert page.locator(".values-table tr[data-name='sorted'] td").all_inner_texts()[:5] == list("ehllo")
    page.screenshot(path=ARTIFACTS / "diagram-sort.png", full_page=True)


def test_click_a_head_opens_its_heatmap(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    heatmap_z(page)
    before = drawn(page)
    page.click("#diagram .head-box[data-layer='1']")
    page.wait_for_function(f"() => Number(document.getElementById('heatmap-plot').dataset.drawn) > {before}")
    assert "full_s" in page.text_content("#heatmap-title")
    assert heatmap_z(page) == [[1] * 5] * 5
    assert page.locator("#diagram .head-box.selected").get_attribute("data-layer") == "1"
    # keyboard: focus a head and press Enter
    page.focus("#diagram .head-box[data-layer='2']")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('heatmap-title').textContent.includes('flip')")
    # the chips above the heatmap list every selector and head
    chips = page.locator("#selector-chips button")
    assert [c.split("L")[0] for c in chips.all_inner_texts()] == ["flip", "full_s"]
    before = drawn(page)
    chips.nth(1).click()
    page.wait_for_function(f"() => Number(document.getElementById('heatmap-plot').dataset.drawn) > {before}")
    assert "full_s" in page.text_content("#heatmap-title")
    assert page.get_attribute("#selector-chips button[aria-pressed='true']", "data-selector") == \
        page.get_attribute("#diagram .head-box[data-layer='1']", "data-selector")


def test_pick_an_example_from_the_gallery(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    before = runs(page)
    page.click("#examples-btn")
    page.wait_for_selector("#gallery-list li")
    assert page.locator("#gallery-list li").count() >= 20
    page.screenshot(path=ARTIFACTS / "gallery.png")
    page.click("#gallery-list button[data-example='histogram']")
    wait_for_run(page, before)
    assert "selector_width(same_token)" in page.inner_text(".cm-content")
    assert page.locator(".values-table tr[data-name='hist'] td").all_inner_texts()[:5] == ["1", "1", "2", "2", "1"]
    assert "1 layer · heads per layer: 1" in page.inner_text("#diagram-totals")


def test_edit_the_input_and_run_with_ctrl_enter(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    before = runs(page)
    page.fill(".input-row input[type='text']", "abcd")
    wait_for_run(page, before)
    page.wait_for_function("() => document.querySelector(\".values-table tr[data-name='reverse']\").textContent.includes('dcba')")
    # several inputs at once, one shown at a time
    before = runs(page)
    page.click("#add-input")
    wait_for_run(page, before)
    before = runs(page)
    page.locator(".input-row input[type='text']").nth(1).fill("[3, 1, 2]")
    wait_for_run(page, before)
    page.wait_for_function("() => document.querySelector(\".values-table tr[data-name='reverse']\").textContent.includes('213')")
    set_program(page, "opp = length - indices - 1;\nflip = select(indices, opp, ==);\nrev = aggregate(flip, tokens);\nw = selector_width(flip);")
    assert page.locator(".values-table tr[data-name='w'] td").all_inner_texts()[:3] == ["1", "1", "1"]


def test_heatmap_hover_names_both_sides_and_the_widths(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    hover = heatmap_field(page, "hover(0, 4)")
    assert hover == "query 0 (h, query value 4) ← key 4 (o, key value 4)\nselected"
    assert heatmap_field(page, "widths") == [1] * 5
    assert heatmap_field(page, "x") == ["k0 h", "k1 e", "k2 l", "k3 l", "k4 o"]
    assert heatmap_field(page, "y") == ["q0 h", "q1 e", "q2 l", "q3 l", "q4 o"]
    below = page.inner_text("#heatmap-below")
    assert "result: reverse (per query)" in below and "aggregated: tokens (per key)" in below


def test_syntax_error_shows_a_squiggle_on_its_line(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, "a = indices;\nb = a + ;\nc = a * 2;")
    page.wait_for_selector(".cm-lintRange-error")
    lines = page.locator(".cm-line")
    assert lines.nth(1).locator(".cm-lintRange-error").count() == 1
    assert lines.nth(0).locator(".cm-lintRange-error").count() == 0
    assert "2:9 error: unexpected ';'" in page.inner_text("#problems")
    # the rest of the program still runs
    assert page.locator(".values-table tr[data-name='c'] td").all_inner_texts()[:5] == ["0", "2", "4", "6", "8"]
    page.hover(".cm-lintRange-error")
    page.wait_for_selector(".cm-tooltip-lint", timeout=5000)
    assert "unexpected ';'" in page.inner_text(".cm-tooltip-lint")
    page.screenshot(path=ARTIFACTS / "syntax-error.png", full_page=True)


def test_ctrl_enter_redraws_the_heatmap_at_32_tokens(guarded, live_server):
    """Every Ctrl+Enter runs the program again and redraws the 32 x 32 heatmap (bench/page.py times it)."""
    page = guarded.page()
    open_app(page, live_server.url)
    heatmap_z(page)
    before = runs(page)
    page.fill(".input-row input[type='text']", "abcdefghijklmnopqrstuvwxyzabcdef")  # 32 tokens
    wait_for_run(page, before)
    for _ in range(3):
        before_runs, before_drawn = runs(page), drawn(page)
        page.click(".cm-content")
        page.keyboard.press("Control+Enter")
        page.wait_for_function(f"() => Number(document.getElementById('heatmap-plot').dataset.drawn) > {before_drawn}")
        assert runs(page) > before_runs
    z = heatmap_z(page)
    assert len(z) == 32 and all(len(row) == 32 for row in z)
    page.screenshot(path=ARTIFACTS / "heatmap-n32.png", full_page=True)


# ------------------------------------------------------------------ sharing

def test_share_link_restores_the_same_state_in_a_fresh_context(browser, guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, "x = indices * 3;\nsame = select(tokens, tokens, ==);\nh = selector_width(same);")
    before = runs(page)
    page.fill(".input-row input[type='text']", "banana")
    wait_for_run(page, before)
    page.click(".values-table tr[data-name='h'] th button")
    link = link_from_toast(page, "#share-btn")
    assert re.match(r"^http://127\.0\.0\.1:\d+/#v1=[A-Za-z0-9_-]+$", link)
    with fresh_page(browser, link) as fresh:
        assert "h = selector_width(same);" in fresh.inner_text(".cm-content")
        assert fresh.input_value(".input-row input[type='text']") == "banana"
        assert fresh.locator(".values-table tr[data-name='h'] td").all_inner_texts()[:6] == ["1", "3", "2", "3", "2", "3"]
        heatmap_z(fresh)
        assert "same" in fresh.text_content("#heatmap-title")


def test_short_link_round_trip(browser, guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, "y = indices + 100;")
    link = link_from_toast(page, "#shortlink-btn")
    assert re.match(r"^http://127\.0\.0\.1:\d+/s/[a-z2-7]{12}$", link)
    with fresh_page(browser, link) as fresh:
        assert "y = indices + 100;" in fresh.inner_text(".cm-content")
        assert fresh.locator(".values-table tr[data-name='y'] td").all_inner_texts()[:2] == ["100", "101"]


def test_embed_mode_is_read_only_with_a_way_back(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    link = link_from_toast(page, "#embed-btn")
    assert "/embed#v1=" in link
    embed = guarded.page()
    embed.goto(link)
    embed.wait_for_selector("body[data-ready='1']")
    assert embed.locator("#topbar").is_hidden()
    assert embed.get_attribute(".cm-content", "contenteditable") == "false"
    text = embed.inner_text(".cm-content")
    embed.click(".cm-content")
    embed.keyboard.type("zzz")
    assert embed.inner_text(".cm-content") == text
    back = embed.get_attribute("#open-in-rasplay", "href")
    assert re.match(r"^http://127\.0\.0\.1:\d+/#v1=", back)
    assert embed.locator(".values-table tr[data-name='reverse']").count() == 1
    embed.screenshot(path=ARTIFACTS / "embed.png", full_page=True)


# ------------------------------------------------------------------ teaching

def test_presenter_mode_steps_through_layers(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    page.click("#present-btn")
    assert page.is_visible("#present-bar")
    assert page.inner_text("#layer-label") == "Layer 1 of 2"
    assert "hot" in page.get_attribute("#diagram .layer-row[data-layer='1']", "class")
    heatmap_z(page)
    assert "full_s" in page.text_content("#heatmap-title")
    page.screenshot(path=ARTIFACTS / "presenter-layer1.png", full_page=True)
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#layer-label") == "Layer 2 of 2"
    assert "hot" in page.get_attribute("#diagram .layer-row[data-layer='2']", "class")
    assert "dim" in page.get_attribute("#diagram .layer-row[data-layer='1']", "class")
    assert "flip" in page.text_content("#heatmap-title")
    assert "hot" in page.get_attribute(".values-table tr[data-name='reverse']", "class")
    font = page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
    assert font >= 19
    page.screenshot(path=ARTIFACTS / "presenter-layer2.png", full_page=True)
    page.keyboard.press("ArrowLeft")
    assert page.inner_text("#layer-label") == "Layer 1 of 2"
    page.keyboard.press("Escape")
    assert page.is_hidden("#present-bar")


def test_png_and_svg_export_download_files(guarded, live_server, tmp_path):
    page = guarded.page()
    open_app(page, live_server.url)
    heatmap_z(page)
    for target in ("heatmap", "diagram"):
        for fmt in ("png", "svg"):
            with page.expect_download() as info:
                page.click(f"button[data-export='{target}'][data-format='{fmt}']")
            path = tmp_path / info.value.suggested_filename
            info.value.save_as(path)
            data = path.read_bytes()
            assert path.suffix == f".{fmt}" and len(data) > 500
            if fmt == "png":
                assert data[:8] == b"\x89PNG\r\n\x1a\n"
            else:
                assert b"<svg" in data[:2000]


def test_a_textarea_still_works_without_the_codemirror_bundle(browser, live_server):
    g = Guarded(browser)
    g.context.route("**/vendor/codemirror.bundle.js", lambda route: route.abort())
    try:
        page = g.page()
        open_app(page, live_server.url)
        assert page.get_attribute("body", "data-editor") == "textarea"
        before = runs(page)
        page.fill("textarea.fallback", "z = indices * 10;")
        page.keyboard.press("Control+Enter")
        wait_for_run(page, before)
        assert page.locator(".values-table tr[data-name='z'] td").all_inner_texts()[:2] == ["0", "10"]
    finally:
        g.errors = [e for e in g.errors if "codemirror" not in e.lower() and "Failed to load" not in e
                    and "Failed to fetch dynamically imported module" not in e]
        g.close()


def test_bad_link_falls_back_to_an_example_with_a_message(guarded, live_server):
    page = guarded.page()
    page.goto(live_server.url + "/#v1=notavalidlink")
    page.wait_for_selector("body[data-ready='1']")
    message = page.inner_text("#notice-text")   # on the page, until closed (issue 12)
    assert "incomplete or damaged" in message and "Showing an example instead" in message
    assert page.locator(".values-table tr[data-name='reverse']").count() == 1


def test_layout_fits_1280x720_and_a_projector(browser, live_server):
    for width, height, name in ((1280, 720, "layout-1280x720.png"), (1920, 1080, "layout-1920x1080.png")):
        g = Guarded(browser, viewport=(width, height))
        try:
            page = g.page()
            open_app(page, live_server.url)
            overflow = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
            assert not overflow
            assert page.is_visible("#diagram svg") and page.is_visible(".values-table")
            page.screenshot(path=ARTIFACTS / name)
        finally:
            g.close()


# ------------------------------------------------------------------ training

@pytest.mark.train
def test_train_tab_shows_progress_and_the_overlay(guarded, live_server):
    need("torch")
    page = guarded.page()
    open_app(page, live_server.url)
    page.click("#tab-train")
    assert page.input_value("#train-output") == "reverse"
    assert page.get_attribute("#train-layers", "placeholder") == "2 (analysis)"
    page.fill("#train-steps", "200")
    page.fill("#train-max-len", "5")
    page.click("#train-start")
    page.wait_for_selector(".run-line", timeout=20000)
    page.wait_for_function("() => document.getElementById('train-curves').dataset.drawn", timeout=60000)
    page.wait_for_selector(".run-line[data-status='done']", timeout=90000)
    page.wait_for_selector("#train-overlay .overlay-card .overlay-plot[data-drawn='1']", timeout=30000)
    cards = page.locator("#train-overlay .overlay-card h3").all_text_contents()
    assert any(c.startswith("full_s — layer 1") for c in cards) and any(c.startswith("flip — layer 2") for c in cards)
    assert all("match" in c for c in cards)
    fill = page.evaluate("document.querySelector(\"#train-overlay .overlay-card[data-selector] .overlay-plot\").data[0].z")
    assert all(abs(sum(row) - 1) < 0.01 for row in fill)          # attention rows sum to 1
    page.click(".toggle button[data-mode='selector']")
    page.wait_for_function("() => document.querySelector('#train-overlay .overlay-card .overlay-plot').data[0].z.flat()"
                           ".every(v => v === 0 || v === 1)")
    assert page.get_attribute(".toggle button[data-mode='selector']", "aria-checked") == "true"
    page.screenshot(path=ARTIFACTS / "train.png", full_page=True)
    page.locator("#train-overlay").screenshot(path=ARTIFACTS / "train-overlay.png")
    # the view is part of the shared state
    assert page.evaluate("window.rasplay.state.view") == "train"


# ------------------------------------------------------------------ compiling

def test_compile_tab_summary_heads_residual_beta_and_weights(guarded, live_server, tmp_path):
    page = guarded.page()
    open_app(page, live_server.url)
    page.click("#tab-compile")
    assert page.input_value("#compile-output") == "reverse"
    page.fill("#compile-max-len", "5")
    page.click("#compile-start")
    page.wait_for_selector("#compile-attention .overlay-plot[data-drawn='1']", timeout=30000)
    summary = page.inner_text("#compile-summary")
    assert "2 (RASP analysis: 2)" in summary and "1, 1 (analysis: 1, 1)" in summary
    cards = page.locator("#compile-attention .overlay-card h3").all_text_contents()
    assert cards[0].startswith("layer 1, head 0: full_s") and cards[1].startswith("layer 2, head 0: flip")
    # the compiled flip head next to the selector: BOS row/column first, selector cells outlined
    data = page.evaluate("(() => { const p = document.querySelectorAll('#compile-attention .overlay-plot')[1];"
                         " return {z: p.data[0].z, x: p.data[0].x, shapes: p.layout.shapes.length}; })()")
    # one numbering with the Program view: the BOS column is named BOS, the first token is position 0
    assert data["x"][:2] == ["k BOS", "k0 h"] and len(data["z"]) == 6 and data["shapes"] == 5
    assert [row.index(max(row)) for row in data["z"][1:]] == [5, 4, 3, 2, 1]
    ticks = page.locator("#compile-attention .overlay-plot").nth(1).locator(".xtick text").all_text_contents()
    assert ticks[:2] == ["k BOS", "k0 h"]
    assert "before position 0 is the BOS token" in page.inner_text("#compile-attention")
    residual = page.inner_text("#compile-residual")
    assert "layer 2 attention" in residual and "o l l e h" in residual
    # residual reuse: `reverse` takes the width's dimension after layer 1's MLP erases it
    rows = {r[0]: r for r in page.eval_on_selector_all(
        "#compile-layout tr", "trs => trs.map(tr => [...tr.children].map(td => td.textContent))")}
    width_dim = rows["length [1/(w+1)]"][1]
    assert width_dim in rows["reverse"][1].split(", ") and len(rows["reverse"][1].split(", ")) > 1
    assert rows["length [1/(w+1)]"][3] == "layer 1 attention, erased by layer 1 MLP"
    assert "1/1 agree" in page.inner_text("#compile-agreement")
    # soft attention at a small beta disagrees; the study finds the smallest exact beta
    page.uncheck("#compile-hard")
    page.eval_on_selector("#compile-beta", "el => { el.value = '-1'; el.dispatchEvent(new Event('input')); }")
    page.wait_for_function("() => document.getElementById('compile-agreement').textContent.includes('β = 0.1:')")
    assert "0/1 agree" in page.inner_text("#compile-agreement")
    page.click("#compile-study")
    page.wait_for_function("() => document.getElementById('compile-study-plot').dataset.drawn", timeout=60000)
    assert "Exact with softmax from β ≈" in page.inner_text("#compile-study-note")
    page.screenshot(path=ARTIFACTS / "compile.png", full_page=True)
    page.locator("#compile-attention").screenshot(path=ARTIFACTS / "compile-heads.png")
    page.locator("#compile-study-plot").screenshot(path=ARTIFACTS / "compile-study.png")
    with page.expect_download() as info:
        page.click("#weights-download")
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    assert path.suffix == ".npz" and path.read_bytes()[:2] == b"PK"
    page.click("#compile-finetune")
    assert page.get_attribute("#tab-train", "aria-selected") == "true"
    assert "Starting from the compiled model" in page.inner_text("#train-init")
    assert page.input_value("#train-max-len") == "5"


def test_compile_error_is_shown_at_its_line(guarded, live_server):
    """A program that evaluates cleanly on the shown input (one token) but that the compiler refuses (a
    mean of strings on every longer input): the message is shown, and a squiggle appears on line 2."""
    page = guarded.page()
    open_app(page, live_server.url)
    before = runs(page)
    page.fill(".input-row input[type='text']", "a")
    wait_for_run(page, before)
    set_program(page, "a = indices;\nb = aggregate(select(1, 1, ==), tokens);")
    assert page.locator(".cm-lintRange-error").count() == 0          # the evaluation itself has no error
    page.click("#tab-compile")
    page.fill("#compile-vocab", "ab")
    page.fill("#compile-max-len", "3")
    page.select_option("#compile-output", "b")
    page.click("#compile-start")
    page.wait_for_selector("#compile-summary .note.error")
    message = page.inner_text("#compile-summary .note.error")
    assert "averages str values" in message and "compiled" not in page.inner_text("#status")
    page.wait_for_selector(".cm-lintRange-error")
    lines = page.locator(".cm-line")
    assert lines.nth(1).locator(".cm-lintRange-error").count() == 1
    assert lines.nth(0).locator(".cm-lintRange-error").count() == 0


def test_the_guard_catches_requests_outside_loopback(browser, live_server):
    g = Guarded(browser)
    page = g.page()
    open_app(page, live_server.url)
    # (a fetch would be refused by the page's CSP before the guard saw it; a navigation is not)
    with page.expect_event("requestfailed", lambda r: r.url == "http://example.com/x"):   # aborted by the guard
        page.evaluate("location.href = 'http://example.com/x'")
    assert g.outside == ["http://example.com/x"]
    g.outside.clear()
    g.errors.clear()   # the aborted fetch logs a network error
    g.close()


def test_imported_attention_maps_and_the_compiled_toggle(guarded, live_server, tmp_path):
    page = guarded.page()
    open_app(page, live_server.url)
    page.click("#tab-compile")
    page.fill("#compile-max-len", "5")
    page.click("#compile-start")
    page.wait_for_selector("#compile-attention .overlay-plot[data-drawn='1']", timeout=30000)
    page.click("#tab-train")
    n = 6   # BOS + "hello"
    uniform = [[1 / (n - 1) if k else 0.0 for k in range(n)] if q else [1.0] + [0.0] * (n - 1) for q in range(n)]
    mirror = [[1.0 if (q == 0 and k == 0) or (q and k == n - q) else 0.0 for k in range(n)] for q in range(n)]
    maps = tmp_path / "maps.json"
    maps.write_text(json.dumps({"tokens": ["<bos>", *"hello"], "bos": True, "attention": [[uniform], [mirror]]}))
    page.set_input_files("#train-import", str(maps))
    page.wait_for_selector("#train-overlay .overlay-card .overlay-plot[data-drawn='1']", timeout=20000)
    titles = page.locator("#train-overlay .overlay-card h3").all_text_contents()
    assert titles == ["full_s — layer 1, imported head 0: match 1.000", "flip — layer 2, imported head 0: match 1.000"]
    assert "Imported from maps.json" in page.inner_text("#train-overlay")
    page.click(".toggle button[data-mode='compiled']")
    page.wait_for_function("() => document.querySelectorAll('#train-overlay .overlay-plot')[1].data[0].colorbar.title.text"
                           " === 'compiled attention'")
    z = page.evaluate("document.querySelectorAll('#train-overlay .overlay-plot')[1].data[0].z")
    assert [row.index(max(row)) for row in z[1:]] == [5, 4, 3, 2, 1]
    bad = tmp_path / "bad.json"
    bad.write_text('{"tokens": ["a"], "attention": [[0.5]]}')
    page.set_input_files("#train-import", str(bad))
    page.wait_for_selector("#toast:not([hidden])")
    assert "4 dimensions" in page.inner_text("#toast")
