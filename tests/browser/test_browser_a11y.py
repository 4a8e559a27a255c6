"""Accessibility (issue 20, item 8): a real axe-core (npm, pinned in tests/node/package.json, installed by
`make test-deps`) audits every state of the page a class meets, WCAG 2.1 A and AA, and finds no serious or
critical violation: the program, Compile, Train, an exercise with a checked answer, presenter mode, the
embed and the dialogs. The heatmap has a text alternative a screen reader walks, and colour is never the only
signal (selected cells carry a mark, wrong cells a cross). Guarded pages (nothing may leave 127.0.0.1)."""
from __future__ import annotations

import pytest

from support.a11y import audit
from support.browser_kit import open_app, set_program

pytestmark = pytest.mark.browser

REVERSE_WRONG = "opp_index = length - indices;\nflip = select(indices, opp_index, ==);\nreverse = aggregate(flip, tokens, \"_\");\n"


def clean(frame, state: str):
    found = audit(frame)
    assert found == [], f"axe-core, {state}: " + "; ".join(
        f"{v['id']} ({v['impact']}): {v['help']} at {v['nodes'][:3]}" for v in found)


def drawn(page):
    page.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn", timeout=30000)


def test_axe_finds_nothing_serious_in_the_program_compile_train_presenter_and_dialogs(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    drawn(page)
    clean(page, "program")
    good = "opp = length - indices - 1;\nflip = select(indices, opp, ==);\nr = aggregate(flip, tokens);"
    set_program(page, good)
    set_program(page, good[:-len(" tokens);")])
    page.wait_for_function("() => document.body.classList.contains('stale')")
    clean(page, "stale results")
    set_program(page, good)
    page.click("#tab-compile")
    page.click("#compile-start")
    page.wait_for_selector("#compile-summary table", timeout=60000)
    page.wait_for_selector("#compile-attention .overlay-plot[data-drawn]", timeout=30000)
    clean(page, "compile")
    page.click("#tab-train")
    page.wait_for_selector("#train-form")
    clean(page, "train")
    page.click("#tab-program")
    page.click("#present-btn")
    page.wait_for_selector("#present-bar:not([hidden])")
    drawn(page)
    clean(page, "presenter")
    page.click("#present-row .whole-toggle")                    # the whole diagram, one click away (issue 32)
    page.wait_for_selector("#present-row .whole-toggle[data-whole='1']")
    clean(page, "presenter, whole diagram")
    page.click("#present-row .whole-toggle")
    page.keyboard.press("Escape")
    # the dialect line opened, and one head side by side on two inputs (issue 32)
    page.click("#dialect summary")
    page.wait_for_selector("#dialect .dialect-details", state="visible")
    page.click("#add-input")
    page.wait_for_selector("#head-compare figure[data-drawn='1'] + figure[data-drawn='1']")
    clean(page, "dialect details and two inputs side by side")
    for button, dialog in (("#examples-btn", "#gallery"), ("#exercises-btn", "#exercise-gallery"), ("#keys-btn", "#keys")):
        page.click(button)
        page.wait_for_selector(f"{dialog}[open] button")
        clean(page, f"dialog {dialog}")
        page.keyboard.press("Escape")
        page.wait_for_selector(f"{dialog}:not([open])", state="attached")


def test_axe_finds_nothing_serious_in_an_exercise_with_a_checked_answer_and_in_the_embed(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url, "/#x=reverse")
    page.click(".cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(REVERSE_WRONG)
    page.click("#check-btn")
    page.wait_for_function("() => Number(document.body.dataset.checks || 0) > 0", timeout=20000)
    page.wait_for_selector(".values-table td.mismatch")
    clean(page, "exercise with a checked answer")
    # a wrong cell is marked by more than its colour: a cross after its value
    assert page.evaluate("getComputedStyle(document.querySelector('.values-table td.mismatch'), '::after').content") == '"✗"'
    embed = guarded.page()
    open_app(embed, live_server.url, "/embed")
    drawn(embed)
    clean(embed, "embed")


def test_the_heatmap_reads_as_text_and_marks_selected_cells_beyond_colour(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)   # Reverse on "hello", the selector flip
    drawn(page)
    items = page.locator("#heatmap-list li").all_text_contents()
    assert items[0] == "query 0 (h): selects key 4 (o)" and items[4] == "query 4 (o): selects key 0 (h)", items
    assert page.get_attribute("#heatmap-plot", "role") == "application"
    text = page.evaluate("document.getElementById('heatmap-plot').heatmap.text")
    z = page.evaluate("document.getElementById('heatmap-plot').heatmap.z")
    assert all((t == "●") == bool(v) for row_t, row_z in zip(text, z) for t, v in zip(row_t, row_z))
    # keyboard use still works: Escape then Tab leaves the editor
    page.click(".cm-content")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert not page.evaluate("document.activeElement.closest('.cm-editor')")
