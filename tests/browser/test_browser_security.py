"""Script injection, in Chromium against a real server: links (hash, embed, short link) whose program, comments or
inputs carry HTML must show it as text and run nothing; using the page normally must not trip its
Content-Security-Policy; plotly offers no link or upload to Plotly's cloud."""
from __future__ import annotations

import re

import pytest

from rasplay.server.links import link_fragment
from support.browser_kit import Watched, cell_centre, heatmap_field, heatmap_z, open_app, runs, set_program, wait_for_run

pytestmark = pytest.mark.browser

PAYLOAD = "<img src=x id=pwned onerror=alert(1)>"

# Every CSP violation in any document of the context is reported here, whether or not Chromium logs it.




@pytest.fixture
def watched(browser):
    w = Watched(browser)
    yield w
    w.close()


def link(server, state: dict, path: str = "/") -> str:
    return f"{server.url}{path}#{link_fragment(state)}"


def settle(page):
    """Wait for the page's requests to end (an injected image's error comes after its request) and two frames
    to be drawn (events queued by what ran, a CSP violation's among them, are dispatched by then)."""
    page.wait_for_load_state("networkidle")
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def opened(watched, url: str):
    page = watched.page()
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=15000)
    heatmap_z(page)
    settle(page)   # anything injected (an image's onerror) would have fired
    return page


def assert_inert(page):
    """The payload was shown, never parsed: no element it would have made exists anywhere."""
    assert page.evaluate("document.getElementById('pwned')") is None
    assert page.locator("#heatmap-note img").count() == 0


STRING_IN_SELECT = f'sel = select(tokens, "{PAYLOAD}", ==);\nr = aggregate(sel, tokens);'
COMMENT_IN_SELECT = f"sel = select(tokens, tokens, ==  # {PAYLOAD}\n);\nr = aggregate(sel, tokens);"
UNNAMED_SELECTOR = f'select(tokens, "{PAYLOAD}", ==);'


@pytest.mark.parametrize("path", ["/", "/embed"])
def test_html_in_a_select_of_a_link_is_shown_as_text(watched, live_server, path):
    page = opened(watched, link(live_server, {"source": STRING_IN_SELECT, "inputs": ["ab"], "selection": "r"}, path))
    assert page.text_content("#heatmap-note code") == f'select(tokens, "{PAYLOAD}", ==)'
    assert "sel" in page.text_content("#heatmap-title")
    assert_inert(page)


def test_html_in_a_comment_inside_a_select_is_shown_as_text(watched, live_server):
    page = opened(watched, link(live_server, {"source": COMMENT_IN_SELECT, "inputs": ["ab"]}))
    # (the label is the selector's source, comment included, cut to its first 60 characters)
    assert page.text_content("#heatmap-note code").startswith("select(tokens, tokens, == # <img src=x id=pwned")
    assert_inert(page)


def test_an_unnamed_selector_statement_with_html_is_shown_as_text(watched, live_server):
    page = opened(watched, link(live_server, {"source": UNNAMED_SELECTOR, "inputs": ["ab"]}))
    assert PAYLOAD in page.text_content("#heatmap-title")
    assert PAYLOAD in page.text_content("#heatmap-note code")
    assert PAYLOAD in page.inner_text("#selector-chips")
    assert_inert(page)


def test_a_short_link_with_html_in_its_program_is_shown_as_text(watched, live_server, api):
    posted = api.post("/api/v1/share", json={"state": {"source": STRING_IN_SELECT, "inputs": ["ab"]}})
    assert posted.status_code == 200, posted.text
    page = opened(watched, live_server.url + posted.json()["url"])
    assert page.text_content("#heatmap-note code") == f'select(tokens, "{PAYLOAD}", ==)'
    assert_inert(page)


def test_a_click_on_a_cell_with_a_hostile_input_token_locks_a_text_caption(watched, live_server):
    state = {"source": "same = select(tokens, tokens, ==);\nr = aggregate(same, tokens);",
             "inputs": [[PAYLOAD, "b", "c"]], "selection": "r"}
    page = opened(watched, link(live_server, state))
    assert heatmap_field(page, "y")[0] == f"q0 {PAYLOAD}"   # the axis label is set as text
    assert page.locator("#heatmap-plot svg text", has_text=PAYLOAD).count() == 2   # the query and the key label
    x, y = cell_centre(page, 0, 0)
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    page.wait_for_function("() => document.getElementById('heatmap-note').textContent.includes('locked:')")
    settle(page)
    note = page.text_content("#heatmap-note")
    assert f"locked: query 0 ({PAYLOAD}, query value {PAYLOAD}) ← key 0 ({PAYLOAD}, key value {PAYLOAD}), selected" \
        in note
    assert_inert(page)
    # a click on the widths column locks nothing new
    page.mouse.click(*heatmap_field(page, "widthCentre(1)"))
    settle(page)
    assert page.text_content("#heatmap-note") == note


def test_the_hover_label_of_a_hostile_token_is_text(watched, live_server):
    state = {"source": "same = select(tokens, tokens, ==);\nr = aggregate(same, tokens);",
             "inputs": [["<b>bold</b>", "<a href='http://example.com'>x</a>"]], "selection": "r"}
    page = opened(watched, link(live_server, state))
    x, y = cell_centre(page, 1, 1)
    page.mouse.move(x, y)
    page.wait_for_selector("#heatmap-plot .heatmap-hover:not([hidden])")
    label = page.text_content("#heatmap-plot .heatmap-hover")
    assert "<a href='http://example.com'>x</a>" in label
    assert page.locator("#heatmap-plot a").count() == 0


# ------------------------------------------------------------------ the page in normal use, under its CSP

def test_normal_use_trips_no_csp_violation(watched, live_server):
    page = watched.page()
    open_app(page, live_server.url)
    set_program(page, "same = select(tokens, tokens, ==);\nn = selector_width(same);\n"
                      "flip = select(indices, length - indices - 1, ==);\nr = aggregate(flip, tokens);")
    page.click(".values-table tr[data-name='n'] th button")
    page.wait_for_function("() => document.getElementById('heatmap-title').textContent.includes('same')")
    heatmap_z(page)
    x, y = cell_centre(page, 0, 0)
    page.mouse.move(x, y)
    page.wait_for_selector("#heatmap-plot .heatmap-hover:not([hidden])")
    with page.expect_download():
        page.click("button[data-export='heatmap'][data-format='png']")
    for fmt in ("svg", "png"):
        with page.expect_download():
            page.click(f"button[data-export='diagram'][data-format='{fmt}']")
    # compile tab: compile, attention heatmaps, beta slider
    page.click("#tab-compile")
    page.fill("#compile-max-len", "5")
    page.click("#compile-start")
    page.wait_for_selector("#compile-attention .overlay-plot[data-drawn='1']", timeout=30000)
    page.uncheck("#compile-hard")
    page.eval_on_selector("#compile-beta", "el => { el.value = '0.5'; el.dispatchEvent(new Event('input')); }")
    page.wait_for_function("() => document.getElementById('compile-agreement').textContent.includes('softmax')")
    # train tab: the form and its views render
    page.click("#tab-train")
    page.wait_for_selector("#train-form-box select, #train-form-box input")
    # the gallery: pick an example, which runs
    page.click("#tab-program")
    page.click("#examples-btn")
    page.wait_for_selector("#gallery[open] #gallery-list button")
    before = runs(page)
    page.click("#gallery-list button[data-example='histogram']")
    wait_for_run(page, before)
    page.wait_for_function("() => document.getElementById('heatmap-title').textContent.includes('same_token')")
    settle(page)


def test_the_main_page_and_embed_have_no_inline_script(watched, live_server):
    for path in ("/", "/embed"):
        page = watched.page()
        page.goto(live_server.url + path)
        page.wait_for_selector("body[data-ready='1']")
        inline = page.evaluate("""() => [...document.scripts].filter((s) => !s.src).length +
          [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name))).length""")
        assert inline == 0


# ------------------------------------------------------------------ plotly: no cloud

CLOUD = re.compile(r"share|cloud|chart studio|edit in|plotly", re.I)


def test_plotly_offers_no_link_or_upload_to_its_cloud(watched, live_server):
    """plotly.js draws the Compile and Train views' charts (the Program view's heatmap is the page's own SVG)."""
    page = watched.page()
    open_app(page, live_server.url)
    page.click("#tab-compile")
    page.fill("#compile-max-len", "5")
    page.click("#compile-start")
    plot_sel = "#compile-attention .overlay-plot[data-drawn='1']"
    page.wait_for_selector(plot_sel, timeout=30000)
    plot = page.locator(plot_sel).first
    plot.hover()
    page.wait_for_selector(f"{plot_sel} .modebar-btn")
    titles = plot.locator(".modebar-btn").evaluate_all("bs => bs.map((b) => b.getAttribute('data-title'))")
    assert "Download plot as a png" in titles or any("png" in (t or "").lower() for t in titles)
    assert [t for t in titles if t and CLOUD.search(t)] == []
    assert plot.locator("a").evaluate_all("as => as.map((a) => a.href)") == []
    assert plot.locator("[data-attr='sendChartToCloud'], .plotlyjsicon").count() == 0
    config = plot.evaluate("(p) => [p._context.showSendToCloud, p._context.plotlyServerURL, p._context.displaylogo]")
    assert config == [False, "", False]
