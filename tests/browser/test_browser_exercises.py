"""Exercises in the browser, as a student meets them: a course page's link (`/#x=reverse`), a wrong
attempt whose counterexample lands in the values table and the heatmap, a right one within budget,
the gallery with progress kept locally, and the embed. Playwright in Debian's Chromium, guarded
(no request may leave 127.0.0.1)."""
from __future__ import annotations

import json

import pytest

from support.browser_kit import ARTIFACTS, heatmap_z, open_app, runs, set_program, wait_for_run  # noqa: F401

pytestmark = pytest.mark.browser

REVERSE_WRONG = "opp_index = length - indices;\nflip = select(indices, opp_index, ==);\nreverse = aggregate(flip, tokens, \"_\");\n"
REVERSE_RIGHT = "opp_index = length - indices - 1;\nflip = select(indices, opp_index, ==);\nreverse = aggregate(flip, tokens);\n"
HIST_OVER = ("same = select(tokens, tokens, ==);\nn = selector_width(same);\n"
             "hist = aggregate(select(indices, indices, ==), n);\n")
HIST_RIGHT = "same_token = select(tokens, tokens, ==);\nhist = selector_width(same_token);\n"


def checks(page) -> int:
    return int(page.evaluate("document.body.dataset.checks || 0"))


def check_with_keys(page):
    """Ctrl+Shift+Enter in the editor, then wait for the verdict."""
    before = checks(page)
    page.click(".cm-content")
    page.keyboard.press("Control+Shift+Enter")
    page.wait_for_function(f"() => Number(document.body.dataset.checks || 0) > {before}", polling=100, timeout=20000)
    return page.get_attribute("#exercise-result .verdict", "data-status")


def check_with_button(page):
    before = checks(page)
    page.click("#check-btn")
    page.wait_for_function(f"() => Number(document.body.dataset.checks || 0) > {before}", polling=100, timeout=20000)
    return page.get_attribute("#exercise-result .verdict", "data-status")


def budget_figures(page) -> dict:
    return {row.get_attribute("data-budget"): row.locator(".figures").inner_text()
            for row in page.locator("#exercise-budget .budget-row").all()}


def test_a_student_solves_two_exercises(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url, "/#x=reverse")
    assert page.is_visible("#exercise-panel")
    assert page.inner_text("#exercise-title") == "Reverse"
    assert "tokens in reverse order" in page.inner_text("#exercise-task")
    assert page.evaluate("window.rasplay.state.source").startswith("# query i should select")
    assert "secret" not in page.content() and "opp_index = length - indices - 1" not in page.content()

    # a wrong attempt: its counterexample, in the verdict, the values table and the heatmap
    set_program(page, REVERSE_WRONG)
    assert check_with_keys(page) == "wrong"
    assert page.locator("table.counterexample td").all_inner_texts() == ["a", "a", "_"]
    assert "first s-op that differs from the reference: opp_index (layer 1)" in page.inner_text("#exercise-result")
    page.wait_for_function("() => document.querySelector('.values-table tr.expected-row')", polling=100, timeout=10000)
    assert page.locator(".values-table thead th").all_inner_texts()[1:-1] == ["a"]   # the counterexample's tokens
    assert page.locator(".values-table tr[data-expected='reverse'] td").all_inner_texts()[:1] == ["a"]
    assert page.locator(".values-table tr[data-name='reverse'] td.mismatch").all_inner_texts() == ["_"]
    assert page.locator(".values-table tr[data-name='opp_index'] td.mismatch").all_inner_texts() == ["1"]
    assert page.locator(".values-table tr[data-expected='opp_index'] td").all_inner_texts()[:1] == ["0"]
    # the first wrong s-op is opp_index; the attention it depends on is length's, which selects everything
    assert heatmap_z(page) == [[1]]
    assert "the heatmap shows the selector full_s." in page.inner_text("#exercise-result")
    page.screenshot(path=ARTIFACTS / "exercise-counterexample.png", full_page=True)

    # the right program, within budget
    set_program(page, REVERSE_RIGHT)
    assert check_with_button(page) == "pass"
    assert page.inner_text("#exercise-progress") == "✓ solved"
    assert budget_figures(page) == {"layers": "2 / 2", "heads_per_layer": "1 / 1", "heads": "2 / 2"}
    assert page.locator(".values-table tr.expected-row").count() == 0
    assert page.evaluate("location.hash") == "#x=reverse"

    # the second exercise, from the gallery: over budget first, then right
    page.click("#exercises-btn")
    page.wait_for_selector("#exercise-gallery-list button[data-exercise='histogram']")
    assert "✓" in page.inner_text("#exercise-gallery-list button[data-exercise='reverse']")
    before = runs(page)
    page.click("#exercise-gallery-list button[data-exercise='histogram']")
    wait_for_run(page, before)
    assert page.inner_text("#exercise-title") == "Histogram"
    set_program(page, HIST_OVER)
    assert check_with_keys(page) == "over_budget"
    assert budget_figures(page)["layers"] == "2 / 1 over budget"
    set_program(page, HIST_RIGHT)
    assert check_with_keys(page) == "pass"
    assert budget_figures(page) == {"layers": "1 / 1", "heads": "1 / 1"}
    page.screenshot(path=ARTIFACTS / "exercise-solved.png", full_page=True)

    # progress and drafts are kept locally
    stored = json.loads(page.evaluate("localStorage.getItem('rasplay.exercises.v1')"))
    assert stored["solved"] == {"reverse": True, "histogram": True}
    assert stored["drafts"]["reverse"] == REVERSE_RIGHT
    open_app(page, live_server.url, "/#x=reverse")
    page.wait_for_function("() => document.getElementById('exercise-title').textContent === 'Reverse'")
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.evaluate("window.rasplay.state.source") == REVERSE_RIGHT
    assert page.inner_text("#exercise-progress") == "✓ solved"


def test_the_selector_that_went_wrong_is_shown(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url, "/#x=reverse")
    set_program(page, "flip = select(indices, length - indices, ==);\nreverse = aggregate(flip, tokens, \"_\");\n")
    assert check_with_keys(page) == "wrong"
    page.wait_for_function("() => document.getElementById('heatmap-title').textContent === 'Selector: flip'", polling=100, timeout=10000)
    assert page.get_attribute(".chips button[aria-pressed='true']", "data-selector") is not None
    assert heatmap_z(page) == [[0]]     # on "a", query 0 looks for key 1: nothing, hence the default "_"


def test_embed_mode_shows_the_exercise_read_only(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url, "/embed#x=histogram")
    assert page.is_visible("#exercise-panel") and page.inner_text("#exercise-title") == "Histogram"
    assert not page.is_visible("#check-btn") and not page.is_visible("#exercise-leave")
    assert page.get_attribute("#open-in-rasplay", "href").endswith("/#x=histogram")
    assert page.evaluate("window.rasplay.state.source").startswith("# selector_width(sel) counts")


def test_an_unknown_exercise_link_falls_back_to_the_playground(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url, "/#x=nonesuch")
    assert page.is_hidden("#exercise-panel")
    assert "No exercise 'nonesuch'" in page.inner_text("#toast")
    assert page.locator(".values-table tr[data-name='reverse']").count() == 1


def test_leaving_an_exercise_and_following_exercise_links(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url, "/#x=sort")
    assert page.inner_text("#exercise-title") == "Sort"
    assert page.evaluate("location.hash") == "#x=sort"
    page.click("#embed-btn")                           # in an exercise, Embed gives the exercise's embed link
    page.wait_for_selector("#toast:not([hidden]) a")
    assert page.inner_text("#toast a") == f"{live_server.url}/embed#x=sort"
    before = runs(page)
    page.evaluate("location.hash = '#x=dyck1'")        # a course page's link, followed in the same tab
    wait_for_run(page, before)
    assert page.inner_text("#exercise-title") == "Dyck-1: balanced parentheses"
    assert page.locator("#exercise-budget .budget-row").count() == 1   # dyck1 has only a layer budget
    page.click("#exercise-leave")
    page.wait_for_function("() => document.getElementById('exercise-panel').hidden", polling=100, timeout=10000)
    page.wait_for_function("() => location.hash.startsWith('#v1=')", polling=100, timeout=10000)   # an ordinary shareable state again


LEADER_PAST_LENGTHS = ("prefix = select(indices, indices, <=);\na_share = aggregate(prefix, indicator(tokens == \"a\"));\n"
                       "b_share = aggregate(prefix, indicator(tokens == \"b\"));\n"
                       "leader = \"a\" if a_share > b_share + 0.0625 else (\"b\" if b_share > a_share else \"=\");\n")


def test_proven_verdicts_on_the_page(guarded, live_server):
    """A proof in one sentence; a counterexample past the exercise's lengths (1-12) lands in the values table."""
    page = guarded.page()
    open_app(page, live_server.url, "/#x=previous")
    set_program(page, 'prev = shift(tokens, 1, "_");\n')
    assert check_with_button(page) == "pass"
    assert page.get_attribute("#exercise-result .proof", "data-outcome") == "proved"
    assert page.inner_text("#exercise-result .proof") == ("Proved: your program equals the reference on every input "
                                                          "of every length (causal B-RASP).")
    open_app(page, live_server.url, "/#x=majority_so_far")
    page.wait_for_function("() => document.getElementById('exercise-title').textContent === 'Running majority'")
    set_program(page, LEADER_PAST_LENGTHS)
    assert check_with_button(page) == "wrong"
    assert page.inner_text("#exercise-result .proof") == ("Proved different: your program and the reference differ "
                                                          "on the input of length 17 shown below.")
    shown = page.locator("table.counterexample td").all_inner_texts()[0]
    assert len(shown) == 17
    page.wait_for_function("() => document.querySelector('.values-table tr.expected-row')", polling=100, timeout=10000)
    assert page.locator(".values-table thead th").all_inner_texts()[1:-1] == list(shown)
    assert page.locator(".values-table tr[data-name='leader'] td.mismatch").all_inner_texts() == ["="]
