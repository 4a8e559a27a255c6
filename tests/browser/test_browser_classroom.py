"""The page in a classroom (issue 12), driven in Debian's Chromium against a real server on loopback:
work is never lost, the views never blank while typing, presenter mode fits a projector, narrow
windows and a 640x480 embed stay usable, links keep the whole state, long inputs stay readable, the
diagram stays legible, Train reaches 99% with its ablation beside it. Every page is guarded (nothing
may leave 127.0.0.1); screenshots at 1280x800, 1920x1080, 1280x720, 800 and 600 px wide and of a
640x480 embed go to test-artifacts/classroom-*.png (look at them)."""
from __future__ import annotations

import json
import re
import time

import httpx
import pytest

from support.browser_kit import course_page, ARTIFACTS, Guarded, address_writes, open_app, runs, set_program
from support.needs import need

pytestmark = pytest.mark.browser

REVERSE_OPP = "opp = length - indices - 1;\nflip = select(indices, opp, ==);\nreverse = aggregate(flip, tokens);"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server of this module's own: inputs up to 256 tokens, two training jobs side by side with a
    warm spare process, time for training on a shared machine."""
    from support.live_server import LiveServer

    s = LiveServer(tmp_path_factory.mktemp("classroom"), "--workers", "2", "--eval-seconds", "5",
                   "--max-input-length", "256", "--train-jobs", "2", "--train-warm", "2", "--train-queue", "4",
                   "--train-seconds", "400")
    yield s
    s.stop()


def record_timing(name: str, value):
    """A figure for the record (test-artifacts/classroom-timings.json), never a threshold."""
    path = ARTIFACTS / "classroom-timings.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[name] = value
    path.write_text(json.dumps(data, indent=2))


def shot(page, name: str, **kw):
    page.screenshot(path=ARTIFACTS / f"classroom-{name}.png", **kw)


def ready(page, url, path="/"):
    open_app(page, url, path)
    page.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn", timeout=30000)


def set_input(page, text: str, index: int = 0):
    before = runs(page)
    page.locator("#inputs input[type='text']").nth(index).fill(text)
    page.wait_for_function(f"() => Number(document.body.dataset.runs || 0) > {before}", timeout=20000)


def load_example(page, example_id: str):
    before = runs(page)
    address = page.evaluate("location.hash")
    page.click("#examples-btn")
    page.click(f"[data-example='{example_id}']")
    page.wait_for_function(f"() => Number(document.body.dataset.runs || 0) > {before}", timeout=20000)
    # the example's own address is pushed after its run (its toast, with Undo, comes with it)
    page.wait_for_function("(before) => location.hash.startsWith('#v1=') && location.hash !== before", arg=address)


def editor_text(page) -> str:
    return page.evaluate("window.rasplay.state.source")


def value_rows(page) -> list[str]:
    return page.eval_on_selector_all(".values-table tbody tr", "rows => rows.map(r => r.dataset.name)")


def inside_viewport(page, selector: str) -> bool:
    return page.evaluate("""(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight + 1 &&
               r.right <= innerWidth + 1; }""", selector)


# ------------------------------------------------------------------ 1. never blank while typing

def test_a_program_that_does_not_parse_keeps_the_last_results_marked_stale(guarded, server):
    page = guarded.page()
    ready(page, server.url)
    set_program(page, REVERSE_OPP)
    assert value_rows(page) == ["opp", "reverse"]
    assert not page.evaluate("document.body.classList.contains('stale')")
    set_program(page, REVERSE_OPP + "\nbroken = aggregate(flip,")
    assert page.evaluate("document.body.classList.contains('stale')")
    assert page.is_visible("#stale-banner") and "line 4" in page.inner_text("#stale-banner")
    assert value_rows(page) == ["opp", "reverse"], "the last good values stay on screen"
    assert page.is_visible("#heatmap-plot") and page.locator("#diagram .head-box").count() == 2
    assert page.locator("#problems li.error").count() >= 1
    shot(page, "stale-1280x800")
    set_program(page, REVERSE_OPP + "\nagain = aggregate(flip, opp);")
    assert not page.evaluate("document.body.classList.contains('stale')")
    assert page.is_hidden("#stale-banner") and value_rows(page) == ["opp", "reverse", "again"]


# ------------------------------------------------------------------ 2. work is never lost

def test_the_draft_survives_a_reload_and_back_returns_after_loading_an_example(guarded, server):
    page = guarded.page()
    ready(page, server.url)
    mine = REVERSE_OPP + "\n# my own work"
    set_program(page, mine)
    page.wait_for_function("() => localStorage.getItem('rasplay.draft.v1') && "
                           "JSON.parse(localStorage.getItem('rasplay.draft.v1')).source.includes('my own work')")
    # a reload of the bare address (no hash) restores the draft, not the default example
    page.goto(server.url + "/")
    page.wait_for_selector("body[data-ready='1']")
    assert editor_text(page) == mine
    # an example opens in a new history entry; Back returns to my program
    load_example(page, "histogram")
    assert "hist" in editor_text(page) and editor_text(page) != mine
    assert page.is_visible("#toast button[data-action='undo']")
    page.go_back()
    # Back brings my program back (whether or not the page needs a new run for it)
    page.wait_for_function("(mine) => window.rasplay && window.rasplay.state.source === mine", arg=mine,
                           timeout=30000)
    assert editor_text(page) == mine
    assert page.url.startswith(server.url + "/#v1=")
    # and Undo after loading an example puts my program back
    load_example(page, "sort_stable")
    page.click("#toast button[data-action='undo']")
    page.wait_for_function("(mine) => window.rasplay.state.source === mine", arg=mine, timeout=30000)
    assert editor_text(page) == mine
    assert "my own work" in page.inner_text(".cm-content")


# ------------------------------------------------------------------ 3. presenter mode on a projector

@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_presenter_mode_shows_the_stepped_layer_heatmap_and_values_together(browser, server, size):
    g = Guarded(browser)
    try:
        page = g.page()
        page.set_viewport_size({"width": size[0], "height": size[1]})
        ready(page, server.url)
        load_example(page, "dyck2")   # 4 layers
        page.evaluate("document.getElementById('toast').hidden = true")
        page.click("#present-btn")
        for layer in range(1, 5):
            if layer > 1:
                before = int(page.evaluate("Number(document.getElementById('heatmap-plot').dataset.drawn)"))
                page.keyboard.press("ArrowRight")
                page.wait_for_function(f"() => Number(document.getElementById('heatmap-plot').dataset.drawn) > {before}")
            page.wait_for_function(f"() => document.getElementById('layer-label').textContent === 'Layer {layer} of 4'"
                                   " && document.querySelector('.values-table tr.hot th.name')")
            # nothing scrolls the page; the stepped layer's head, the heatmap and the layer's values are on screen
            assert page.evaluate("document.scrollingElement.scrollHeight <= innerHeight + 1")
            assert inside_viewport(page, f"#present-row[data-layer='{layer}'] .present-card.head")
            assert inside_viewport(page, "#heatmap-plot .heatmap-svg")
            assert inside_viewport(page, ".values-table tr.hot th.name")
            # the heatmap grows with the screen: cells of at least 24 px
            assert int(page.evaluate("document.getElementById('heatmap-plot').dataset.cell")) >= 24
            # no card's text runs out of its card (presentrow.js)
            overflow = page.evaluate("""() => [...document.querySelectorAll('#present-row .present-card')].filter(c => {
                const frame = c.getBoundingClientRect();
                return [...c.children].some(t => { const r = t.getBoundingClientRect();
                    return r.right > frame.right + 1 || r.left < frame.left - 1; }); }).length""")
            assert overflow == 0
            if layer in (1, 4):
                shot(page, f"present-{size[0]}x{size[1]}-layer{layer}")
        # the editor shows code, not only the comment header
        assert "=" in page.inner_text(".cm-content").split("\n", 3)[-1]
        # (a line of code in view: stepping a layer scrolls the editor to that layer's definitions)
        assert page.evaluate("""() => { const box = document.querySelector('.editor').getBoundingClientRect();
            return [...document.querySelectorAll('.cm-line')].filter(l => /^\\w+ = /.test(l.textContent)).some(line => {
            const r = line.getBoundingClientRect(); return r.top >= box.top - 1 && r.bottom <= box.bottom + 1; }); }""")
    finally:
        g.close()


# ------------------------------------------------------------------ 4. narrow windows and embeds

@pytest.mark.parametrize("width", [800, 600])
def test_narrow_windows_stay_usable(browser, server, width):
    g = Guarded(browser)
    try:
        page = g.page()
        page.set_viewport_size({"width": width, "height": 900})
        ready(page, server.url)
        # nothing sticks out sideways, every top-bar button is inside the window
        assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
        for button in page.query_selector_all("#topbar button"):
            box = button.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= width
        # one column that the page scrolls: the editor shows at least 8 lines, the values table is not
        # squeezed into a small scroll pane
        assert page.evaluate("document.querySelector('.editor').getBoundingClientRect().height") >= 8 * 19
        assert page.evaluate("getComputedStyle(document.querySelector('.left')).overflowY") == "visible"
        assert page.evaluate("document.scrollingElement.scrollHeight > innerHeight")
        shot(page, f"width-{width}", full_page=True)
    finally:
        g.close()


def test_a_640x480_embed_in_an_iframe_is_usable_and_read_only(guarded, server):
    page = guarded.page()
    ready(page, server.url)
    set_program(page, REVERSE_OPP)
    page.click("#add-input")
    page.wait_for_function("() => document.querySelectorAll('#inputs input[type=text]').length === 2")
    set_input(page, "abcd", 1)
    page.click("#embed-btn")
    page.wait_for_selector("#toast a")
    link = page.get_attribute("#toast a", "href")
    host = guarded.page()
    host.set_viewport_size({"width": 700, "height": 540})
    with course_page(f'<body style="margin:0"><iframe id="f" src="{link}" width="640" height="480" '
                     'style="border:1px solid #888"></iframe></body>') as url:
        host.goto(url)
        _check_embed(host)


def _check_embed(host):
    frame = host.frame_locator("#f")
    frame.locator("body[data-ready='1']").wait_for(timeout=30000)
    inner = next(f for f in host.frames if "/embed" in f.url)
    inner.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn", timeout=30000)
    # the read-only embed cannot remove inputs (nor add them), and the editor shows 8 lines or more
    assert inner.evaluate("[...document.querySelectorAll('.input-row button')].filter(b => b.offsetParent).length") == 0
    assert inner.locator("#inputs input[type='text']").count() == 2
    assert inner.evaluate("document.querySelector('.editor').getBoundingClientRect().height") >= 8 * 19
    assert inner.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
    assert inner.is_visible("#open-in-rasplay")
    inner.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    host.screenshot(path=ARTIFACTS / "classroom-embed-640x480.png")




# ------------------------------------------------------------------ 5. links keep the whole state

def test_a_link_restores_input_tab_head_and_compiled_state(browser, guarded, server):
    page = guarded.page()
    ready(page, server.url)
    set_program(page, REVERSE_OPP)
    page.click("#add-input")
    page.wait_for_function("() => document.querySelectorAll('#inputs input[type=text]').length === 2")
    set_input(page, "abcd", 1)
    page.click("#diagram .head-box[data-layer='1']")   # the selected head: length's full_s
    page.click("#tab-compile")
    writes = address_writes(page)
    page.click("#compile-start")
    page.wait_for_selector("#compile-summary table", timeout=60000)
    page.wait_for_function("() => location.hash.length > 5 && window.rasplay.state.compiled")
    page.wait_for_function(f"() => Number(document.body.dataset.addressWrites || 0) > {writes}")   # the compile's own
    state = page.evaluate("window.rasplay.state")
    assert state["current"] == 1 and state["view"] == "compile"
    selection = state["selection"]   # the library's head (full_s) has no name of the program's: "#<id>"
    assert page.evaluate("document.querySelector('#diagram .head-box.selected').dataset.layer") == "1"
    page.click("#share-btn")
    page.wait_for_selector("#toast a")
    link = page.get_attribute("#toast a", "href")
    short = httpx.post(f"{server.url}/api/v1/share", json={"state": json.loads(json.dumps(
        page.evaluate("(() => { const s = window.rasplay.state; return {source: s.source, inputs: s.inputs, view: s.view, "
                      "selection: s.selection, current: s.current, compiled: s.compiled}; })()")))}).json()["url"]
    for url in (link, server.url + short):
        other = Guarded(browser)
        try:
            fresh = other.page()
            compiles = []
            fresh.on("request", lambda r: compiles.append(r.url) if "/api/v1/compile" in r.url else None)
            fresh.goto(url)
            fresh.wait_for_selector("body[data-ready='1']")
            fresh.wait_for_selector("#toast button[data-action='compile']")
            assert compiles == []   # a link never makes the visitor's browser compile without asking
            fresh.click("#toast button[data-action='compile']")
            fresh.wait_for_selector("#compile-summary table", timeout=60000)
            assert fresh.is_checked("#inputs .input-row:nth-child(2) input[type='radio']")
            assert fresh.get_attribute("#tab-compile", "aria-selected") == "true"
            assert fresh.evaluate("window.rasplay.state.selection") == selection
            assert fresh.evaluate("document.querySelector('#diagram .head-box.selected').dataset.layer") == "1"
            assert fresh.evaluate("window.rasplay.state.doc.inputs[window.rasplay.state.doc.trace.input].join('')") == "abcd"
            if url == link:
                shot(fresh, "link-compiled-1280x800")
        finally:
            other.close()


def test_broken_links_say_so_on_the_page_and_keep_the_address(guarded, server):
    page = guarded.page()
    ready(page, server.url)
    page.click("#share-btn")
    page.wait_for_selector("#toast a")
    link = page.get_attribute("#toast a", "href")
    cut = link[: len(link) - 12]
    for url, words in ((cut, "incomplete or damaged"), (server.url + "/#v1=garbage!!", "damaged"),
                       (server.url + "/#v1=", "empty")):
        other = guarded.page()
        other.goto(url)
        other.wait_for_selector("body[data-ready='1']")
        assert other.is_visible("#notice")
        message = other.inner_text("#notice-text")
        assert words in message and "Failed to fetch" not in message
        # the page's delayed address write has happened (and kept the link)
        other.wait_for_function("() => Number(document.body.dataset.addressWrites || 0) >= 1")
        assert other.url == url, "the broken link stays in the address bar"
        if "garbage" in url:
            shot(other, "broken-link")
        other.close()


def test_a_dead_short_link_shows_a_page_in_a_browser_and_json_to_api_clients(guarded, server):
    page = guarded.page()
    response = page.goto(server.url + "/s/zzzzzzzzzzzz")
    assert response.status == 404 and response.headers["content-type"].startswith("text/html")
    assert "This short link does not exist" in page.inner_text("h1")
    assert page.get_attribute(".dead-link-box a", "href") == "/"
    shot(page, "dead-short-link")
    cut = page.goto(server.url + "/s/abc")   # a cut-off id
    assert cut.status == 404 and "does not exist" in page.inner_text("h1")
    api = httpx.get(server.url + "/s/zzzzzzzzzzzz", headers={"Accept": "application/json"})
    assert api.status_code == 404 and api.json()["error"]["kind"] == "not_found"


# ------------------------------------------------------------------ 6. no stale results for an over-limit input

def test_an_input_over_the_limit_clears_the_values_and_the_heatmap(guarded, server):
    page = guarded.page()
    ready(page, server.url)
    assert page.locator(".values-table").count() == 1
    set_input(page, "a" * 300)
    page.wait_for_function("() => document.getElementById('values').textContent.includes('the limit is 256')")
    assert page.locator(".values-table").count() == 0
    assert page.is_hidden("#heatmap-plot") and "limit" in page.inner_text("#heatmap-note")
    assert page.locator("#heatmap-below .below-row").count() == 0
    set_input(page, "hello")
    page.wait_for_selector(".values-table")
    assert page.is_visible("#heatmap-plot")


# ------------------------------------------------------------------ 7. long inputs

def cell_geometry(page):
    """The heatmap's first column left edge, its cell size, and the left edges of the first row of cells below."""
    return page.evaluate("""() => { const h = document.getElementById('heatmap-plot').heatmap;
        const left = h.svg.getBoundingClientRect().left + h.left;
        const cells = [...document.querySelectorAll('#heatmap-below .below-row:nth-child(2) .below-cell')]
            .map(c => c.getBoundingClientRect().left);
        return {left, size: h.size, cells}; }""")


def test_long_inputs_fit_the_panel_zoom_to_the_selected_cells_and_line_up(guarded, server):
    page = guarded.page()
    ready(page, server.url)
    set_program(page, REVERSE_OPP)
    # spaces get a visible symbol
    set_input(page, "a b")
    page.wait_for_function("() => document.getElementById('heatmap-plot').heatmap.x.join('|') === 'k0 a|k1 ␣|k2 b'")
    assert "␣" in page.inner_text(".values-table thead")
    for n in (32, 256):
        text = ("the quick brown fox jumps over a lazy dog " * 7)[:n]
        set_input(page, text)
        page.wait_for_function(f"() => document.getElementById('heatmap-plot').heatmap.x.length === {n}")
        # fitted: the whole matrix inside its panel, no horizontal scrolling needed (once it is laid out)
        page.wait_for_function("""() => { const s = document.getElementById('heatmap-scroll');
            const p = document.querySelector('#heatmap-plot .heatmap-svg').getBoundingClientRect();
            return p.width <= s.clientWidth + 1; }""", timeout=10000)
        g = cell_geometry(page)
        assert len(g["cells"]) == n
        # the rows below line up with the columns
        assert all(abs(c - (g["left"] + i * g["size"])) <= 1.5 for i, c in enumerate(g["cells"]))
        shot(page, f"long-{n}-fit")
    # zoomed: readable cells, and the box scrolled so that the selected cells are in view
    page.click("#heatmap-zoom")
    page.wait_for_function("() => document.getElementById('heatmap-plot').dataset.mode === 'zoom' && "
                           "Number(document.getElementById('heatmap-plot').dataset.cell) >= 18")
    visible = page.wait_for_function("""() => { const h = document.getElementById('heatmap-plot').heatmap;
        const z = h.z; const s = document.getElementById('heatmap-scroll').getBoundingClientRect();
        const r = h.svg.getBoundingClientRect(); const size = h.size; let seen = 0;
        z.forEach((row, q) => row.forEach((v, k) => { if (!v) return;
            const x = r.left + h.left + k * size, y = r.top + h.top + q * size;
            if (x >= s.left && x + size <= s.right && y >= s.top && y + size <= s.bottom) seen++; }));
        return seen; }""", timeout=10000).json_value()   # waits until the box has scrolled to a selected cell
    assert visible >= 1, "the zoomed view shows no selected cell"
    # the box scrolled away from the heatmap's own axis labels: pinned copies name the rows and columns in view,
    # each lined up with its row or column
    pins = page.evaluate("""() => { const h = document.getElementById('heatmap-plot').heatmap;
        const z = h.z; const s = document.getElementById('heatmap-scroll').getBoundingClientRect();
        const r = h.svg.getBoundingClientRect(); const size = h.size; const out = [];
        z.forEach((row, q) => row.forEach((v, k) => { if (!v) return;
            const x = r.left + h.left + k * size, y = r.top + h.top + q * size;
            if (x < s.left + 80 || x + size > s.right || y < s.top + 40 || y + size > s.bottom) return;
            const ql = document.querySelector(`.pinned-queries [data-q="${q}"]`).getBoundingClientRect();
            const kl = document.querySelector(`.pinned-keys [data-k="${k}"]`).getBoundingClientRect();
            out.push({ q, k, row: Math.abs((ql.top + ql.bottom) / 2 - (y + size / 2)),
                       col: Math.abs((kl.left + kl.right) / 2 - (x + size / 2)),
                       qtext: document.querySelector(`.pinned-queries [data-q="${q}"]`).textContent,
                       ktext: document.querySelector(`.pinned-keys [data-k="${k}"]`).textContent,
                       qin: ql.left >= s.left - 1 && ql.right <= s.left + 80,
                       kin: kl.top >= s.top - 1 && kl.bottom <= s.top + 40 }); }));
        return out; }""")
    assert pins, "no selected cell away from the pinned labels"
    assert page.is_visible(".pinned-queries") and page.is_visible(".pinned-keys")
    text = ("the quick brown fox jumps over a lazy dog " * 7)[:256]
    for p in pins:
        shown = lambda i: "␣" if text[i] == " " else text[i]  # noqa: E731
        assert p["row"] <= 1.5 and p["col"] <= 1.5 and p["qin"] and p["kin"], p
        assert p["qtext"] == f"q{p['q']} {shown(p['q'])}" and p["ktext"] == f"{p['k']}{shown(p['k'])}", p
    g = cell_geometry(page)
    assert all(abs(c - (g["left"] + i * g["size"])) <= 1.5 for i, c in enumerate(g["cells"]))
    shot(page, "long-256-zoom")


# ------------------------------------------------------------------ 8. the diagram on real programs

def edges_crossing_boxes(page) -> list:
    """Edges whose straight segments pass through a box other than their own ends."""
    return page.evaluate("""() => {
        const svg = document.querySelector('#diagram svg');
        const boxes = [...svg.querySelectorAll('rect.frame')].map(r => ({x: +r.getAttribute('x'), y: +r.getAttribute('y'),
            w: +r.getAttribute('width'), h: +r.getAttribute('height')}));
        const bad = [];
        for (const p of svg.querySelectorAll('path.edge')) {
            const cmds = p.getAttribute('d').match(/[MVHL][^MVHL]*/g); let x = 0, y = 0; const pts = [];
            for (const c of cmds) { const v = c.slice(1).split(/[ ,]+/).filter(Boolean).map(Number);
                if (c[0] === 'M' || c[0] === 'L') { x = v[0]; y = v[1]; } else if (c[0] === 'V') y = v[0]; else x = v[0];
                pts.push([x, y]); }
            for (let i = 1; i < pts.length; i++) { const [a, b] = [pts[i - 1], pts[i]];
                for (const bx of boxes) { const m = 2;
                    const x0 = Math.min(a[0], b[0]), x1 = Math.max(a[0], b[0]), y0 = Math.min(a[1], b[1]), y1 = Math.max(a[1], b[1]);
                    if (x1 > bx.x + m && x0 < bx.x + bx.w - m && y1 > bx.y + m && y0 < bx.y + bx.h - m)
                        bad.push(p.dataset.from + '>' + p.dataset.to); } } }
        return bad; }""")


def test_the_diagram_routes_edges_around_boxes_names_heads_apart_and_fits(guarded, server):
    page = guarded.page()
    ready(page, server.url)
    for example in ("sort_stable", "first_last", "dyck2", "reverse"):
        load_example(page, example)
        assert page.locator("#diagram path.edge").count() > 0
        assert edges_crossing_boxes(page) == [], example
        texts = page.eval_on_selector_all("#diagram .head-box", "gs => gs.map(g => [...g.querySelectorAll('text')]"
                                          ".map(t => t.textContent).join(' | '))")
        assert len(set(texts)) == len(texts), f"{example}: heads that look the same: {texts}"
        # the whole diagram (with the MLP column) inside its panel
        assert page.evaluate("""() => { const d = document.getElementById('diagram');
            const r = d.querySelector('svg').getBoundingClientRect(), b = d.getBoundingClientRect();
            return r.right <= b.right + 1 && d.scrollWidth <= d.clientWidth + 1; }"""), example
        if example in ("sort_stable", "first_last"):
            shot(page, f"diagram-{example}-1280x800")
    # the library's full_s is explained in plain words
    page.click("#diagram .head-box[data-layer='1']")
    page.wait_for_function("() => document.getElementById('heatmap-note').textContent.includes('every query selects every key')")
    assert "constant" in page.inner_text("#heatmap-note")


# ------------------------------------------------------------------ 9. Train: 99% with the ablation beside it

@pytest.mark.train
def test_train_reverse_to_99_percent_with_the_failing_ablation_alongside(guarded, server):
    torch = need("torch")  # noqa: F841
    page = guarded.page()
    ready(page, server.url)
    page.click("#tab-train")
    page.wait_for_selector("#train-form")
    assert page.input_value("#train-max-len") == "16"
    # the warm spare process is ready before the click (it starts with the server)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and httpx.get(f"{server.url}/api/v1/health").json()["training"]["warm"] < 2:
        time.sleep(0.5)
    assert httpx.get(f"{server.url}/api/v1/health").json()["training"]["warm"] == 2
    # the page's defaults aim at 45 s of training; a test on a shared machine allows more (the time to
    # 99% is recorded, and measured by bench/train_click.py, not asserted)
    page.fill("#train-time", "300")
    clicked = time.monotonic()
    page.click("#train-ablate")
    page.wait_for_selector(".run-line[data-run='1']")
    # both run at once, and while they start the page says what they are doing
    page.wait_for_function("() => document.querySelectorAll('.run-line[data-status=\"queued\"]').length === 0 && "
                           "document.querySelectorAll('.run-line').length === 2", timeout=20000)
    seen_starting = page.inner_text("#train-status")
    assert "queued" not in seen_starting
    page.wait_for_function("() => [...document.querySelectorAll('.run-line')].every(l => l.dataset.status !== 'queued')")
    # the predicted model reaches 99% held-out per sequence; the 1-layer one fails
    page.wait_for_function("() => document.querySelector('.run-line[data-run=\"0\"]').dataset.status === 'done'",
                           timeout=420000)
    first_done = time.monotonic() - clicked
    page.wait_for_function("() => document.querySelector('.run-line[data-run=\"1\"]').dataset.status === 'done'",
                           timeout=420000)
    status = page.inner_text("#train-status")
    first, second = status.split("\n")[:2]
    per_seq = lambda line: float(re.search(r"([\d.]+)% per sequence", line).group(1))  # noqa: E731
    assert "reached the target" in first and per_seq(first) >= 99.0, first
    assert per_seq(second) < 90.0, f"the 1-layer ablation should fail: {second}"
    record_timing("train_click_to_99_reverse_seconds", round(first_done, 1))
    shot(page, "train-ablation-1280x800", full_page=True)


# ------------------------------------------------------------------ 10. smaller things

def test_beta_heading_study_wording_and_the_fine_tune_note(guarded, server):
    page = guarded.page()
    ready(page, server.url)
    page.click("#tab-compile")
    heading = page.inner_text("#view-compile .panel:nth-child(4) h2")
    assert heading.endswith("β"), heading
    page.click("#compile-start")
    page.wait_for_selector("#compile-summary table", timeout=60000)
    page.click("#compile-study")
    page.wait_for_function("() => document.getElementById('compile-study-note').textContent.startsWith('Exact')", timeout=120000)
    note = page.inner_text("#compile-study-note")
    assert not re.search(r"all \d+ inputs.*\(a sample\)", note), note
    page.click("#compile-finetune")
    assert page.is_visible("#train-lr")
    assert "learning rate field" in page.inner_text("#train-init")


def test_exported_heatmaps_have_a_title_and_a_descriptive_name(guarded, server, tmp_path):
    page = guarded.page()
    ready(page, server.url)
    for fmt in ("svg", "png"):
        with page.expect_download() as info:
            page.click(f"button[data-export='heatmap'][data-format='{fmt}']")
        name = info.value.suggested_filename
        assert name == f"rasplay-Reverse-flip.{fmt}", name
        path = tmp_path / name
        info.value.save_as(path)
        if fmt == "svg":
            svg = path.read_text()
            assert "Reverse — selector flip on “hello”" in svg


def test_heatmap_cells_are_reachable_by_keyboard(guarded, server):
    page = guarded.page()
    ready(page, server.url)
    page.focus("#heatmap-plot")
    page.wait_for_function("() => document.getElementById('heatmap-cell').textContent.length > 0")
    start = page.inner_text("#heatmap-cell")
    assert start.startswith("query 0 (h") and "selected" in start
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowLeft")
    text = page.inner_text("#heatmap-cell")
    assert text.startswith("query 1 (e, query value 3) ← key 3 (l, key value 3), selected"), text
    assert text.endswith("(query 1 selects 1 key)"), text
    page.keyboard.press("Enter")
    assert page.inner_text("#heatmap-cell").startswith("locked: query 1")
    assert page.evaluate("document.activeElement.id") == "heatmap-plot"


def test_error_rows_keep_the_values_table_in_shape(guarded, server):
    page = guarded.page()
    ready(page, server.url)
    set_program(page, "n = indices + 1;\nbad = 10 / (indices - 2);\nwide = select(tokens, tokens, ==);\n"
                      "mean = aggregate(wide, tokens);")
    set_input(page, "abcdefghijkl")
    page.wait_for_selector(".values-table tr.row-error")
    shape = page.evaluate("""() => { const t = document.querySelector('.values-table');
        const cols = r => [...r.cells].reduce((s, c) => s + c.colSpan, 0);
        return {cols: [...t.rows].map(cols), table: t.getBoundingClientRect().width,
                box: document.getElementById('values').clientWidth}; }""")
    assert len(set(shape["cols"])) == 1, shape
    assert shape["table"] <= shape["box"] + 1, shape
