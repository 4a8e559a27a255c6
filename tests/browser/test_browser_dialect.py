"""The page shows the dialect check under the layer count as one short line in plain words ("Runs at any
length when compiled: yes"); the smallest fragment, its theorem and why the program is not in the next smaller
fragment (with the line) open on demand; an exercise that asks for no fragment shows no line."""
from pathlib import Path

import pytest

from rasplay.server.links import link_fragment
from support.browser_kit import Guarded, open_app, set_program

pytestmark = pytest.mark.browser
DYCK = (Path(__file__).resolve().parents[1] / "length_free_programs" / "dyck1.rasp").read_text()


def test_dialect_line_follows_the_program(browser, live_server):
    guarded = Guarded(browser)
    try:
        page = guarded.page()
        open_app(page, live_server.url, "/#" + link_fragment({"source": DYCK, "inputs": ["(()"]}))
        page.wait_for_selector("#dialect[data-fragment='c-rasp']")
        # one short line in plain words; the theorem and the reason stay closed until asked for
        assert page.inner_text("#dialect summary") == "Runs at any length when compiled: yes"
        assert page.get_attribute("#dialect", "open") is None and page.is_hidden("#dialect .dialect-details")
        line = page.locator("#dialect").bounding_box()
        assert line["height"] < 24, line
        page.click("#dialect summary")
        page.wait_for_selector("#dialect .dialect-details", state="visible")
        details = page.inner_text("#dialect .dialect-details")
        assert details.startswith("C-RASP, causal: ") and "Counting like transformers" in details
        assert "Not B-RASP (line 6)" in details
        set_program(page, "ones = count(tokens, \"1\");\nodd = ones % 2 == 1;\n")
        page.wait_for_selector("#dialect[data-fragment='rasp']")
        assert page.inner_text("#dialect summary") == "Runs at any length when compiled: no guarantee from this program (line 2)"
        assert "Not length-free (line 2)" in page.inner_text("#dialect .dialect-details")   # still open after a run
    finally:
        guarded.close()


def test_an_exercise_shows_no_dialect_line_and_leaving_it_brings_the_line_back(browser, live_server):
    guarded = Guarded(browser)
    try:
        page = guarded.page()
        open_app(page, live_server.url, "/#x=reverse")
        page.wait_for_selector("#exercise-panel:not([hidden])")
        page.wait_for_function("() => Number(document.body.dataset.runs || 0) > 0")
        # no exercise asks for a fragment: the line never shows while solving one
        page.wait_for_function("() => { const d = document.getElementById('dialect'); return d && d.hidden; }")
        set_program(page, "reverse = aggregate(select(indices, length - indices - 1, ==), tokens);\n")
        assert page.is_hidden("#dialect")
        page.click("#exercise-leave")
        page.wait_for_selector("#exercise-panel", state="hidden")
        page.wait_for_selector("#dialect:not([hidden]) summary")
        assert page.inner_text("#dialect summary").startswith("Runs at any length when compiled: ")
    finally:
        guarded.close()


AB = (Path(__file__).resolve().parents[1] / "length_free_programs" / "a_before_b.rasp").read_text()


def test_compile_for_every_length_plots_agreement_by_length(browser, live_server):
    guarded = Guarded(browser)
    try:
        page = guarded.page()
        open_app(page, live_server.url, "/#" + link_fragment({"source": AB, "inputs": ["cab"]}))
        page.click("#tab-compile")
        page.fill("#compile-vocab", "abc")
        page.click("#lf-compile")
        page.wait_for_selector("#lf-status[data-state='done']", timeout=120_000)
        assert page.get_attribute("#lf-plot", "data-drawn") == "1"
        assert page.text_content("#lf-status").startswith("B-RASP, causal: 2 layers")
        assert "temperature scaling" in page.text_content("#lf-note")
        set_program(page, "ones = count(tokens, \"1\");\nodd = ones % 2 == 1;\n")
        page.click("#tab-compile")
        page.fill("#compile-vocab", "01")
        page.click("#lf-compile")
        page.wait_for_selector("#lf-status[data-state='refused']")
        status = page.text_content("#lf-status")
        assert status.startswith("line 2: ") and "MOD" in status and page.is_hidden("#lf-plot")
    finally:
        guarded.close()
