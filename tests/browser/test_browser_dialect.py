"""The page shows the dialect check under the layer count as one short line in plain words ("Runs at any
length when compiled: yes"); the smallest fragment, its theorem and why the program is not in the next smaller
fragment (with the line) open on demand; an exercise that asks for no fragment shows no line, one that asks for
a fragment (its `fragment` key) says whether the program is in it."""
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
        # and what the length-generalisation results say of it (engine/dialect/prediction.py), fragment by fragment
        predictions = page.inner_text("#dialect .dialect-lengthgen")
        assert predictions.startswith("Length generalisation: ") and "C-RASP[periodic, local]: " in predictions
        assert "RASP-L: " in predictions
        set_program(page, "ones = count(tokens, \"1\");\nodd = ones % 2 == 1;\n")
        page.wait_for_selector("#dialect[data-fragment='rasp']")
        assert page.inner_text("#dialect summary") == "Runs at any length when compiled: no guarantee from this program (line 2)"
        assert "Not length-free (line 2)" in page.inner_text("#dialect .dialect-details")   # still open after a run
        # outside a fragment the page says what the theorem does not give, never that training will fail
        page.wait_for_function("() => document.querySelector('#dialect .dialect-lengthgen').innerText.includes('No guarantee')")
        predictions = page.inner_text("#dialect .dialect-lengthgen")
        assert "No guarantee from this program" in predictions and "will fail" not in predictions
    finally:
        guarded.close()


def test_an_exercise_shows_no_dialect_line_and_leaving_it_brings_the_line_back(browser, live_server):
    guarded = Guarded(browser)
    try:
        page = guarded.page()
        open_app(page, live_server.url, "/#x=reverse")
        page.wait_for_selector("#exercise-panel:not([hidden])")
        page.wait_for_function("() => Number(document.body.dataset.runs || 0) > 0")
        # reverse asks for no fragment: the line never shows while solving it
        page.wait_for_function("() => { const d = document.getElementById('dialect'); return d && d.hidden; }")
        set_program(page, "reverse = aggregate(select(indices, length - indices - 1, ==), tokens);\n")
        assert page.is_hidden("#dialect")
        page.click("#exercise-leave")
        page.wait_for_selector("#exercise-panel", state="hidden")
        page.wait_for_selector("#dialect:not([hidden]) summary")
        assert page.inner_text("#dialect summary").startswith("Runs at any length when compiled: ")
    finally:
        guarded.close()


MAJORITY_COUNTS = ("prefix = select(indices, indices, <=);\na = aggregate(prefix, indicator(tokens == \"a\"));\n"
                   "b = aggregate(prefix, indicator(tokens == \"b\"));\n")


def test_an_exercise_that_asks_for_a_fragment_shows_the_line_and_others_hide_it(browser, live_server):
    guarded = Guarded(browser)
    try:
        page = guarded.page()
        open_app(page, live_server.url, "/#x=majority_so_far")   # its file says `# fragment: c-rasp`
        page.wait_for_selector("#exercise-panel:not([hidden])")
        page.wait_for_selector("#dialect:not([hidden])[data-asked='true']")
        assert page.inner_text("#dialect summary") == "In C-RASP, as this exercise asks: yes"
        set_program(page, MAJORITY_COUNTS + "leader = \"a\" if a * length > b * length else "
                                            "(\"b\" if b > a else \"=\");\n")
        page.wait_for_selector("#dialect:not([hidden])[data-asked='false']")
        assert page.inner_text("#dialect summary") == "In C-RASP, as this exercise asks: no (line 4)"
        page.click("#dialect summary")
        reason = page.inner_text("#dialect .dialect-details")
        assert reason.startswith("Not C-RASP (line 4): 'a * length'")
        # Check says the same: right on every input, but outside the fragment the exercise asks for
        page.click("#check-btn")
        page.wait_for_selector("#exercise-result .verdict[data-status='outside_fragment']", timeout=60_000)
        verdict = page.inner_text("#exercise-result .verdict")
        assert verdict.startswith("Almost: ") and "asks for a program in C-RASP" in verdict
        # another exercise asks for none: the line hides
        page.evaluate("location.hash = '#x=reverse'")
        page.wait_for_function("() => document.getElementById('exercise-title').textContent === 'Reverse'")
        page.wait_for_function("() => { const d = document.getElementById('dialect'); return d && d.hidden; }")
        set_program(page, "reverse = aggregate(select(indices, length - indices - 1, ==), tokens);\n")
        assert page.is_hidden("#dialect")
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
