"""The smaller items of issue 32 (item 8), in the browser: a pasted Tracr (Python) program is told it looks like
Python and how Tracr programs come in; `x = x + 1;` says x is used before it is defined (line and column); an
over-budget verdict says "over budget" once; the Embed toast says a file:// page cannot frame the embed; a
server that stops answering keeps the last results, says "reconnecting" and recovers when it answers again;
the soft-attention study's chart has no toolbar and no tick label with more than three significant digits.
Guarded pages (nothing leaves 127.0.0.1)."""
from __future__ import annotations

import re

import pytest

from test_browser import ARTIFACTS, open_app, set_program

pytestmark = pytest.mark.browser

TRACR = ("from tracr.rasp import rasp\n"
         "def make_length():\n"
         "  all_true = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)\n"
         "  return rasp.SelectorWidth(all_true)\n")
HIST_OVER = ("same = select(tokens, tokens, ==);\nn = selector_width(same);\n"
             "hist = aggregate(select(indices, indices, ==), n);\n")


def problems(page) -> list[str]:
    return page.locator("#problems li").all_inner_texts()


def test_tracr_python_and_a_name_used_before_its_definition_are_said_plainly(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, TRACR)
    first = problems(page)[0]
    assert first.startswith("1:1 error: this looks like Python (a Tracr program?), not RASP.")
    assert "--tracr" in first and "docs/interop.md" in first
    set_program(page, "x = x + 1;")
    assert problems(page)[0].startswith("1:5 error: 'x' is used before it is defined")


def test_over_budget_is_said_once_and_the_embed_toast_names_file_pages(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url, "/#x=histogram")
    page.wait_for_selector("#exercise-panel:not([hidden])")
    set_program(page, HIST_OVER)
    page.click("#check-btn")
    page.wait_for_function("() => Number(document.body.dataset.checks || 0) > 0", timeout=20000)
    verdict = page.text_content("#exercise-result .verdict")
    assert verdict.count("over budget") == 1, verdict
    assert verdict.startswith("Almost: right on all")
    page.click("#embed-btn")
    page.wait_for_selector("#toast a")
    assert "a page opened from a file (file://) cannot frame it" in page.text_content("#toast")


def test_a_server_that_stops_answering_keeps_the_results_and_reconnects(guarded, live_server):
    # a page of the guarded context, without its console check: the refused requests are logged as errors
    page = guarded.context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    open_app(page, live_server.url)
    set_program(page, "y = indices + 10;")
    assert page.locator(".values-table tr[data-name='y'] td").all_inner_texts()[:2] == ["10", "11"]
    page.route(re.compile(r".*/api/v1/evaluate$"), lambda route: route.abort("connectionrefused"))
    page.click(".cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text("y = indices + 20;")
    page.wait_for_function("() => document.body.dataset.connection === 'lost'", timeout=10000)
    assert "reconnecting" in page.text_content("#stale-banner")
    assert "showing the last results" in page.text_content("#stale-banner")
    assert page.locator(".values-table tr[data-name='y'] td").all_inner_texts()[:2] == ["10", "11"]
    assert page.evaluate("document.body.classList.contains('stale')")
    page.screenshot(path=str(ARTIFACTS / "reconnecting.png"))
    page.unroute(re.compile(r".*/api/v1/evaluate$"))
    page.wait_for_function("() => document.body.dataset.connection === 'ok'", timeout=15000)
    page.wait_for_selector("#stale-banner", state="hidden")
    assert page.locator(".values-table tr[data-name='y'] td").all_inner_texts()[:2] == ["20", "21"]
    page.close()
    assert errors == []


def test_the_study_chart_has_no_toolbar_and_plain_ticks(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    page.click("#tab-compile")
    page.fill("#compile-max-len", "5")
    page.click("#compile-start")
    page.wait_for_selector("#compile-attention .overlay-plot[data-drawn='1']", timeout=180000)
    page.click("#compile-study")
    page.wait_for_function("() => document.getElementById('compile-study-plot').dataset.drawn", timeout=180000)
    plot = page.locator("#compile-study-plot")
    plot.hover()
    assert plot.locator(".modebar").count() == 0
    ticks = plot.locator(".xtick text, .ytick text, .y2tick text").all_text_contents()
    assert ticks and "100%" in ticks
    numbers = [t for t in ticks if re.search(r"\d", t)]
    long = [t for t in numbers if re.search(r"\d\.\d{3,}|\d{4,}\.", t.replace("\u2212", "-"))]
    assert long == [], ticks
    plot.screenshot(path=str(ARTIFACTS / "compile-study-ticks.png"))
