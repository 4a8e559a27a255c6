"""The page takes a program's default output from the evaluation document (no parsing of the program in
the browser): the Compile and Train forms preselect the s-op the `# output:` header names, as
`rasplay compile` and `rasplay train` do."""
from pathlib import Path

import pytest

from rasplay.server.links import link_fragment
from support.browser_kit import Guarded, open_app, set_program

pytestmark = pytest.mark.browser
SHIFT = (Path(__file__).resolve().parents[2] / "examples" / "shift.rasp").read_text()


def test_compile_and_train_forms_preselect_the_default_output(browser, live_server):
    guarded = Guarded(browser)
    try:
        page = guarded.page()
        open_app(page, live_server.url, "/#" + link_fragment({"source": SHIFT, "inputs": ["hello"]}))
        assert page.evaluate("window.rasplay.state.doc.output") == "prev_token"
        page.click("#tab-compile")
        assert page.input_value("#compile-output") == "prev_token"       # not bigram, the last s-op
        page.click("#tab-train")
        assert page.input_value("#train-output") == "prev_token"
        # a header written below the first statement is a comment: the last s-op is the default again
        set_program(page, "a = tokens;\nb = indices;\n# output: a\n")
        assert page.evaluate("window.rasplay.state.doc.output") == "b"
        assert page.input_value("#train-output") == "b"
    finally:
        guarded.close()
