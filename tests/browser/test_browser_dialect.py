"""The page shows the dialect check beside the layer count: the smallest fragment, its theorem, and why
the program is not in the next smaller fragment (with the line)."""
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
        text = page.text_content("#dialect")
        assert text.startswith("C-RASP, causal") and "Counting like transformers" in text
        assert "Not B-RASP (line 6)" in text
        set_program(page, "ones = count(tokens, \"1\");\nodd = ones % 2 == 1;\n")
        page.wait_for_selector("#dialect[data-fragment='rasp']")
        assert "Not length-free (line 2)" in page.text_content("#dialect")
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
