"""The page in a class (issue 20), driven in Debian's Chromium against a real server on loopback: opening
an exercise never loses the student's program, the Compile and Train forms follow the program, clicks bring
the heatmap into view, staleness never moves the editor, presenter mode is readable from the back of a room,
a 640x480 embed shows the program and its heatmap, and the Train tab says when this server cannot train.
Every page is guarded (nothing may leave 127.0.0.1); screenshots go to test-artifacts/class-*.png (look at
them). The accessibility audit (axe-core) is in test_browser_a11y.py."""
from __future__ import annotations

import httpx
import pytest

from support.browser_kit import ARTIFACTS, Guarded, address_writes, open_app, runs, set_program

pytestmark = pytest.mark.browser

MINE = "# my own work\nopp = length - indices - 1;\nflip = select(indices, opp, ==);\nmine = aggregate(flip, tokens);"


def shot(page, name: str, **kw):
    page.screenshot(path=ARTIFACTS / f"class-{name}.png", **kw)


def ready(page, url, path="/"):
    open_app(page, url, path)
    page.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn", timeout=30000)


def source(page) -> str:
    return page.evaluate("window.rasplay.state.source")


def wait_source(page, predicate_js: str):
    page.wait_for_function(f"() => window.rasplay && (s => {predicate_js})(window.rasplay.state.source)", timeout=30000)


def load_example(page, example_id: str):
    before = runs(page)
    page.click("#examples-btn")
    page.click(f"[data-example='{example_id}']")
    page.wait_for_function(f"() => Number(document.body.dataset.runs || 0) > {before}", timeout=20000)
    page.wait_for_function("() => location.hash.startsWith('#v1=')")


def open_exercise(page, exercise_id: str):
    page.click("#exercises-btn")
    page.click(f"[data-exercise='{exercise_id}']")
    page.wait_for_function(f"() => location.hash === '#x={exercise_id}'", timeout=20000)
    page.wait_for_selector("#exercise-panel:not([hidden])")
    # its own toast (with its Undo) is up: an earlier toast's Undo would put back something else
    page.wait_for_function("""() => { const t = document.getElementById('toast');
        return !t.hidden && t.textContent.includes(window.rasplay.state.exercise.title); }""", timeout=20000)


def set_input(page, text: str, index: int = 0):
    before = runs(page)
    page.locator("#inputs input[type='text']").nth(index).fill(text)
    page.wait_for_function(f"() => Number(document.body.dataset.runs || 0) > {before}", timeout=20000)


def free_draft(page) -> str:
    return page.evaluate("JSON.parse(localStorage.getItem('rasplay.draft.v1') || '{}').source || ''")


# ------------------------------------------------------------------ 1. an exercise keeps the student's program

def test_opening_an_exercise_keeps_the_program_back_undo_and_leave_return_to_it(guarded, live_server):
    page = guarded.page()
    ready(page, live_server.url)
    set_program(page, MINE)
    page.wait_for_function("() => (JSON.parse(localStorage.getItem('rasplay.draft.v1') || '{}').source || '')"
                           ".includes('my own work')")
    open_exercise(page, "histogram")
    assert source(page) != MINE
    assert page.is_visible("#toast button[data-action='undo']")
    # the exercise's own work goes to the exercise's draft, never over the free editor's
    writes = address_writes(page)
    set_program(page, "# exercise attempt\nhist = selector_width(select(tokens, tokens, ==));")
    page.wait_for_function("() => JSON.parse(localStorage.getItem('rasplay.exercises.v1')).drafts.histogram"
                           ".includes('exercise attempt')")
    # the edit's delayed address write (which saves the free editor's draft) has happened
    page.wait_for_function(f"() => Number(document.body.dataset.addressWrites || 0) > {writes}")
    assert free_draft(page) == MINE
    # Back returns to my program, the exercise panel closed
    page.go_back()
    wait_source(page, f"s === {MINE!r}")
    page.wait_for_selector("#exercise-panel", state="hidden")
    assert page.url.startswith(live_server.url + "/#v1=")
    # Forward returns to the exercise, with its own draft
    page.go_forward()
    wait_source(page, "s.includes('exercise attempt')")
    assert page.is_visible("#exercise-panel")
    # Leave returns to my program (not the exercise's)
    page.click("#exercise-leave")
    wait_source(page, f"s === {MINE!r}")
    assert page.is_hidden("#exercise-panel") and "my own work" in page.inner_text(".cm-content")
    # and Undo after opening an exercise puts my program back
    open_exercise(page, "reverse")
    page.click("#toast button[data-action='undo']")
    wait_source(page, f"s === {MINE!r}")
    page.wait_for_selector("#exercise-panel", state="hidden")
    assert free_draft(page) == MINE
    # a reload of the bare address still restores my program
    page.goto(live_server.url + "/")
    page.wait_for_selector("body[data-ready='1']")
    assert source(page) == MINE


# ------------------------------------------------------------------ 2. the forms follow the program

def test_compile_and_train_forms_follow_the_program_and_its_inputs(guarded, live_server):
    page = guarded.page()
    ready(page, live_server.url)
    page.click("#tab-compile")
    assert page.input_value("#compile-vocab") == "ehlo" and page.input_value("#compile-max-len") == "5"
    page.click("#compile-start")
    page.wait_for_selector("#compile-summary table", timeout=60000)
    assert page.is_hidden("#compile-coverage")
    load_example(page, "sort_stable")          # input banana
    page.click("#tab-compile")
    assert page.input_value("#compile-vocab") == "abn" and page.input_value("#compile-max-len") == "6"
    assert page.input_value("#compile-output") == "sorted"
    page.click("#tab-train")
    assert page.input_value("#train-vocab") == "abn"
    load_example(page, "dyck1")
    page.click("#tab-train")
    assert page.input_value("#train-vocab") == "()"
    # an edit for this program stays while the program changes; a new input moves the other fields
    page.click("#tab-compile")
    page.fill("#compile-vocab", "()x")
    set_input(page, "(((")
    assert page.input_value("#compile-vocab") == "()x"
    set_input(page, "(())()()")
    assert page.input_value("#compile-max-len") == "8"
    # a model compiled for another input says so on the page
    page.fill("#compile-vocab", "()")
    page.fill("#compile-max-len", "4")
    page.click("#compile-start")
    page.wait_for_selector("#compile-summary table", timeout=60000)
    page.wait_for_selector("#compile-coverage:not([hidden])")
    assert "max_len of 4" in page.inner_text("#compile-coverage")
    set_input(page, "(a)")
    page.wait_for_function("() => document.getElementById('compile-coverage').textContent.includes('lacks a')")
    shot(page, "compile-coverage-1280x800")
    set_input(page, "(())")
    page.wait_for_selector("#compile-coverage", state="hidden")
    # another program forgets the edits
    load_example(page, "reverse")
    page.click("#tab-compile")
    assert page.input_value("#compile-vocab") == "ehlo" and page.input_value("#compile-max-len") == "5"


# ------------------------------------------------------------------ 3. clicks bring the heatmap into view

def heatmap_top_in_view(page) -> bool:
    """The heatmap's title and the first 200 px of its plot on screen."""
    return page.evaluate("""() => { const t = document.getElementById('heatmap-title').getBoundingClientRect();
        const p = document.getElementById('heatmap-plot').getBoundingClientRect();
        return t.top >= 0 && p.top + Math.min(200, p.height) <= innerHeight; }""")


@pytest.mark.parametrize("exercise", [False, True])
def test_clicking_a_head_or_a_name_brings_its_heatmap_into_view(browser, live_server, exercise):
    g = Guarded(browser)
    try:
        page = g.page()
        page.set_viewport_size({"width": 1366, "height": 768})
        if exercise:   # the exercise panel above the views, the student's 4-layer attempt in the editor
            open_app(page, live_server.url, "/#x=dyck2")
            set_program(page, httpx.get(f"{live_server.url}/api/v1/examples/dyck2").json()["source"])
            page.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn", timeout=30000)
        else:
            ready(page, live_server.url)
            load_example(page, "dyck2")   # 4 layers
        page.evaluate("document.getElementById('toast').hidden = true")
        page.evaluate("document.querySelector('.right').scrollTop = 0; window.scrollTo(0, 0)")
        # (issue 32, item 5: a loaded example's heatmap is on screen; under an exercise's panel it is not)
        assert heatmap_top_in_view(page) is not exercise
        before = int(page.evaluate("Number(document.getElementById('heatmap-plot').dataset.drawn)"))
        page.locator("#diagram .head-box").last.click()
        page.wait_for_function(f"() => Number(document.getElementById('heatmap-plot').dataset.drawn) > {before}")
        assert heatmap_top_in_view(page)
        shot(page, f"click-head-1366x768{'-exercise' if exercise else ''}")
        page.evaluate("document.querySelector('.right').scrollTop = 0; document.querySelector('.left').scrollTop = 0")
        before = int(page.evaluate("Number(document.getElementById('heatmap-plot').dataset.drawn)"))
        page.locator(".values-table th.name button").first.click()
        page.wait_for_function(f"() => Number(document.getElementById('heatmap-plot').dataset.drawn) > {before}")
        assert heatmap_top_in_view(page)
    finally:
        g.close()


# ------------------------------------------------------------------ 4. staleness does not move the editor

def test_a_stale_program_never_moves_the_editor(guarded, live_server):
    page = guarded.page()
    ready(page, live_server.url)
    good = "opp = length - indices - 1;\nflip = select(indices, opp, ==);\nr = aggregate(flip, tokens);"
    set_program(page, good)
    top = page.evaluate("document.querySelector('.cm-editor').getBoundingClientRect().top")
    set_program(page, good[:-len(" tokens);")])   # a pause mid-statement
    page.wait_for_function("() => document.body.classList.contains('stale')")
    assert page.is_visible("#stale-banner") and "Stale" in page.inner_text("#stale-banner")
    assert page.evaluate("document.querySelector('.cm-editor').getBoundingClientRect().top") == top
    shot(page, "stale-1280x800")


# ------------------------------------------------------------------ 7. a server without PyTorch

BLOCK_TORCH = '''"""Test helper: this interpreter (and every process it spawns) has no PyTorch."""
import sys


class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NoTorch())
'''


@pytest.fixture(scope="module")
def server_without_torch(tmp_path_factory):
    """`rasplay serve` (with its default two warm training processes) where PyTorch cannot be imported."""
    import os

    from support.live_server import LiveServer

    blocker = tmp_path_factory.mktemp("no-torch")
    (blocker / "sitecustomize.py").write_text(BLOCK_TORCH)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(blocker)
    try:
        s = LiveServer(tmp_path_factory.mktemp("no-torch-data"), "--train-warm", "2")
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    yield s
    s.stop()


def test_without_pytorch_the_server_starts_cleanly_and_the_train_tab_says_so(guarded, server_without_torch):
    server = server_without_torch
    health = httpx.get(f"{server.url}/api/v1/health").json()["training"]
    assert health["available"] is False and health["warm"] + health["warm_starting"] == 0
    page = guarded.page()
    ready(page, server.url)
    page.click("#tab-train")
    page.wait_for_selector("body[data-training='unavailable']")
    assert page.is_visible("#train-unavailable")
    assert "PyTorch" in page.inner_text("#train-unavailable") and "rasplay[train]" in page.inner_text("#train-unavailable")
    assert page.is_disabled("#train-start") and page.is_disabled("#train-ablate")
    shot(page, "train-without-torch-1280x800")
    answer = httpx.post(f"{server.url}/api/v1/train", json={"source": "x = tokens;", "vocab": "ab"})
    assert answer.status_code == 501 and "rasplay[train]" in answer.json()["error"]["message"]
    log = server.log_path.read_text()
    assert "Traceback" not in log and "Error" not in log, log[-2000:]


def test_with_pytorch_the_train_tab_offers_training(guarded, live_server):
    page = guarded.page()
    ready(page, live_server.url)
    page.click("#tab-train")
    page.wait_for_selector("#train-form")
    page.wait_for_selector("body[data-training='available']")
    assert page.is_hidden("#train-unavailable") and page.is_enabled("#train-start")


# ------------------------------------------------------------------ 5. presenter mode from the back of a room

SMALLEST_TEXTS = """() => { const out = []; const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) { const t = walker.currentNode; const e = t.parentElement;
    if (!t.textContent.trim() || t.textContent.trim() === '●' || !e || !e.checkVisibility()) continue;
    if (e.closest('#diagram')) continue;   // the diagram scales with its panel (diagram.js)
    const r = e.getBoundingClientRect(); if (!r.width || r.bottom < 0 || r.top > innerHeight) continue;
    let size = parseFloat(getComputedStyle(e).fontSize);
    if (e.closest('svg')) { const m = e.getScreenCTM(); if (m) size *= Math.hypot(m.a, m.b); }
    out.push([Math.round(size * 10) / 10, (e.id || e.tagName) + ': ' + t.textContent.trim().slice(0, 24)]); }
  return out.sort((a, b) => a[0] - b[0]).slice(0, 5); }"""


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_presenter_text_is_large_the_heatmap_fills_its_panel_and_the_editor_follows_the_layer(browser, live_server, size):
    g = Guarded(browser)
    try:
        page = g.page()
        page.set_viewport_size({"width": size[0], "height": size[1]})
        ready(page, live_server.url)
        load_example(page, "dyck2")
        page.evaluate("document.getElementById('toast').hidden = true")
        page.click("#present-btn")
        for layer in (1, 2, 3):
            if layer > 1:
                before = int(page.evaluate("Number(document.getElementById('heatmap-plot').dataset.drawn)"))
                page.keyboard.press("ArrowRight")
                page.wait_for_function(f"() => Number(document.getElementById('heatmap-plot').dataset.drawn) > {before}")
            page.wait_for_function(f"() => document.getElementById('layer-label').textContent === 'Layer {layer} of 4'")
            # every text readable from the back of a room: 24 px at 1920 wide, scaled with the window
            smallest = page.evaluate(SMALLEST_TEXTS)
            assert smallest[0][0] >= 24 * size[0] / 1920 - 0.5, smallest
            # the heatmap fills its panel (in height or in width)
            fill = page.evaluate("""() => { const s = document.getElementById('heatmap-scroll');
                const p = document.querySelector('#heatmap-plot .heatmap-svg').getBoundingClientRect();
                return Math.max(p.height / s.clientHeight, p.width / s.clientWidth); }""")
            assert fill >= 0.85, fill
            # the editor shows the stepped layer's definitions, marked
            marked = page.evaluate("""() => [...document.querySelectorAll('.cm-marked-line')].map(l => {
                const r = l.getBoundingClientRect(), box = document.querySelector('.cm-scroller').getBoundingClientRect();
                return {text: l.textContent, inside: r.top >= box.top - 1 && r.top < box.bottom}; })""")
            assert marked and marked[0]["inside"], marked
            names = {3: "partner", 2: "same_depth_opens", 1: "prefix"}
            assert any(m["text"].startswith(names[layer]) for m in marked), (layer, marked)
        shot(page, f"present-{size[0]}x{size[1]}-layer3")
        page.keyboard.press("Escape")
        assert page.locator(".cm-marked-line").count() == 0
    finally:
        g.close()


# ------------------------------------------------------------------ 6. embeds in a 640x480 iframe

IN_VIEW = """(sel) => { const e = document.querySelector(sel); if (!e) return false; const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.top < innerHeight - 40 && r.right <= innerWidth + 1; }"""


def embed_frame(host, link):
    host.set_viewport_size({"width": 700, "height": 540})
    host.goto(link)
    inner = next(f for f in host.frames if "/embed" in f.url)
    inner.wait_for_selector("body[data-ready='1']", timeout=30000)
    return inner


def test_a_640x480_embed_shows_the_code_values_and_heatmap_and_an_exercise_is_solved_in_place(guarded, live_server):
    from support.browser_kit import course_page

    page = guarded.page()
    ready(page, live_server.url)
    load_example(page, "sort_stable")   # a long comment header
    page.click("#embed-btn")
    page.wait_for_selector("#toast a")
    link = page.get_attribute("#toast a", "href")
    host = guarded.page()
    with course_page(f'<body style="margin:0"><iframe id="f" src="{link}" width="640" height="480" '
                     'style="border:0"></iframe></body>') as url:
        inner = embed_frame(host, url)
        inner.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn", timeout=30000)
        # on the first screen: the code (the header comments scrolled past), the values and the heatmap
        first = inner.evaluate("""() => { const box = document.querySelector('.cm-scroller').getBoundingClientRect();
            const l = [...document.querySelectorAll('.cm-line')].find(l => { const r = l.getBoundingClientRect();
                return r.top >= box.top - 1 && r.bottom <= box.bottom + 1; }); return l ? l.textContent : ''; }""")
        assert not first.startswith("#"), first
        for sel in (".values-table tbody tr", "#heatmap-plot .heatmap-svg", "#open-in-rasplay"):
            assert inner.evaluate(IN_VIEW, sel), sel
        assert inner.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
        host.screenshot(path=ARTIFACTS / "class-embed-640x480.png")
    # an exercise embed that the teacher's link asks to be solved in place: its task, an editable editor, Check
    solve = f"{live_server.url}/embed?solve=1#x=reverse"
    with course_page(f'<body style="margin:0"><iframe id="f" src="{solve}" width="640" height="480" '
                     'style="border:0"></iframe></body>') as url:
        inner = embed_frame(host, url)
        for sel in ("#exercise-task", "#check-btn", ".cm-content"):
            assert inner.evaluate(IN_VIEW, sel), sel
        assert inner.get_attribute(".cm-content", "contenteditable") == "true"
        inner.click(".cm-content")
        inner.press(".cm-content", "Control+a")
        inner.locator(".cm-content").press_sequentially("flip = select(indices, length - indices - 1, ==);\n"
                                                        "reverse = aggregate(flip, tokens);")
        inner.click("#check-btn")
        inner.wait_for_function("() => Number(document.body.dataset.checks || 0) > 0", timeout=30000)
        assert inner.get_attribute("#exercise-result .verdict", "data-status") == "pass"
        inner.wait_for_function("() => { const c = document.querySelector('.values-table tr[data-name=reverse] td.layer');"
                                " return c && c.textContent === 'L2'; }", timeout=30000)
        host.screenshot(path=ARTIFACTS / "class-embed-exercise-640x480.png")
    # without ?solve the exercise embed stays read-only
    with course_page(f'<body style="margin:0"><iframe id="f" src="{live_server.url}/embed#x=reverse" width="640" '
                     'height="480" style="border:0"></iframe></body>') as url:
        inner = embed_frame(host, url)
        assert inner.is_hidden("#check-btn") and inner.get_attribute(".cm-content", "contenteditable") == "false"


# ------------------------------------------------------------------ 5b. zoom in the normal view

def test_zooming_the_page_keeps_the_two_column_layout(browser, live_server):
    """Ctrl + at 150% on a 1920x1080 screen is a 1280x720 page drawn at 1.5 device pixels per pixel."""
    g = Guarded(browser, device_scale_factor=1.5)
    try:
        page = g.page()
        page.set_viewport_size({"width": 1280, "height": 720})
        ready(page, live_server.url)
        columns = page.evaluate("getComputedStyle(document.querySelector('.layout')).gridTemplateColumns.split(' ').length")
        assert columns == 2
        assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
        assert page.evaluate("parseFloat(getComputedStyle(document.querySelector('.values-table')).fontSize) * devicePixelRatio") >= 19
        shot(page, "zoom150-1920x1080")
    finally:
        g.close()


# ------------------------------------------------------------------ 9. smaller things

def test_small_things_empty_strings_toast_help_and_one_numbering(guarded, live_server):
    page = guarded.page()
    page.set_viewport_size({"width": 1366, "height": 768})
    ready(page, live_server.url)
    # an empty string is a visible mark, not a blank cell
    set_program(page, 'e = aggregate(select(indices, indices - 1, ==), tokens, "");')
    cells = page.locator(".values-table tr[data-name='e'] td:not(.layer)").all_text_contents()
    assert cells[0] == '""' and all(c.strip() for c in cells), cells
    # the "loaded example" message never covers the heatmap, and goes at the next click elsewhere
    load_example(page, "sort_stable")
    assert page.is_visible("#toast")
    overlap = page.evaluate("""() => { const a = document.getElementById('toast').getBoundingClientRect();
        const b = document.getElementById('heatmap-scroll').getBoundingClientRect();
        return !(a.right <= b.left || a.left >= b.right || a.bottom <= b.top || a.top >= b.bottom); }""")
    assert not overlap
    page.click("#values")
    assert page.is_hidden("#toast")
    # help: the paper, the API docs, the language reference
    page.click("#keys-btn")
    links = page.eval_on_selector_all("#help-links a", "as => as.map(a => a.getAttribute('href'))")
    assert links[0] == "/docs" and "arxiv.org/abs/2106.06981" in page.inner_text("#help-links")
    assert "docs/language.md" in page.inner_text("#help-links")
    page.keyboard.press("Escape")
