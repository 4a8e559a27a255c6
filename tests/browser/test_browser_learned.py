"""The Learned view (issue 34): a learned program pasted beside the user's program, checked against it over a
real server (agreement by length, the shortest failing inputs, its selectors marked against the user's), a
failing input shown in the values table in one click (wrapped in the learned program's BOS/EOS once the
editor shows the learned program), opened in the editor and back; axe finds nothing serious in the view.
Guarded pages (nothing may leave 127.0.0.1)."""
from __future__ import annotations

import pytest

from support.a11y import audit
from support.browser_kit import open_app, set_program
from support.learned_sources import LEARNED, TASK

pytestmark = pytest.mark.browser


def values_row(page, name):
    return page.eval_on_selector_all(f".values-table tr[data-name='{name}'] td:not(.layer)",
                                     "cells => cells.map(c => c.textContent)")


def header_tokens(page):
    return page.eval_on_selector_all(".values-table thead th:not(.name):not(.layer)", "ths => ths.map(t => t.textContent)")


def check(page):
    page.click("#tab-learned")
    page.wait_for_selector("#learned-form")
    page.fill("#learned-source", LEARNED)
    page.fill("#learned-vocab", "ab")
    page.fill("#learned-max-len", "3")
    page.fill("#learned-beyond", "1")
    page.click("#learned-check")
    page.wait_for_selector("#learned-verdict", timeout=30000)


def test_a_learned_program_checked_its_failing_input_shown_and_opened_in_the_editor(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, TASK)
    check(page)
    assert page.text_content("#learned-verdict").startswith("Disagrees on 2 of 30 inputs")
    rows = page.eval_on_selector_all("#learned-lengths-table tbody tr", "rs => rs.map(r => [r.dataset.length, "
                                     "r.querySelector('.agree').textContent])")
    assert rows == [["1", "0 · 0.0%"], ["2", "4 · 100.0%"], ["3", "8 · 100.0%"], ["4", "16 · 100.0%"]]
    assert page.text_content("#learned-failing-list li:first-child .failing-input") == "a"
    marks = page.eval_on_selector_all("#learned-selectors-list li", "ls => ls.map(l => [l.dataset.selector, l.className])")
    assert ["back", "equal"] in marks and ["second", "different"] in marks
    assert "= flip" in page.text_content("#learned-selectors-list li[data-selector='back']")

    page.click("#learned-failing-list button[data-failing='0']")     # the user's program on the failing input
    page.wait_for_selector("#view-program:not([hidden])")
    page.wait_for_function("() => window.rasplay.state.inputs[window.rasplay.state.current] === 'a'")
    page.wait_for_function("() => [...document.querySelectorAll('.values-table thead th')].some(t => t.textContent === 'a')")
    assert header_tokens(page) == ["a"] and values_row(page, "reverse") == ["a"]

    page.click("#tab-learned")
    page.click("#learned-open")                                       # the learned program in the editor
    page.wait_for_function("() => window.rasplay.state.source.startsWith('# learned: transformer-programs')")
    page.wait_for_selector(".values-table tr[data-name='rev']")
    page.click("#tab-learned")
    page.click("#learned-failing-list button[data-failing='0']")     # now wrapped in its BOS and EOS
    page.wait_for_function("() => window.rasplay.state.inputs[window.rasplay.state.current] === '[\"<s>\",\"a\",\"</s>\"]'")
    page.wait_for_function("() => document.querySelectorAll('.values-table thead th').length === 5")
    assert header_tokens(page) == ["<s>", "a", "</s>"]
    assert values_row(page, "rev")[1] == "</s>"                       # what it got at the input's position

    page.click("#tab-learned")
    page.click("#learned-back")
    page.wait_for_function(f"() => window.rasplay.state.source === {TASK!r}")
    assert page.is_hidden("#learned-back")


def test_a_transformer_programs_program_imported_from_files_and_checked(guarded, live_server):
    from support import tp_reverse

    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, TASK)
    page.click("#tab-learned")
    page.wait_for_selector("#learned-form")
    page.click(".learned-import summary")
    page.set_input_files("#learned-tp-program", files=[{"name": "reverse.py", "mimeType": "text/plain",
                                                       "buffer": tp_reverse.program().encode()}])
    page.set_input_files("#learned-tp-weights", files=[{"name": "reverse_weights.csv", "mimeType": "text/csv",
                                                       "buffer": tp_reverse.weights().encode()}])
    page.click("#learned-import")
    page.wait_for_function("() => document.getElementById('learned-source').value.includes('select_closest')")
    assert page.text_content("#learned-origin") == "From TransformerPrograms: reverse.py."
    page.fill("#learned-vocab", "ab")
    page.fill("#learned-max-len", "3")
    page.fill("#learned-beyond", "0")
    page.click("#learned-check")
    page.wait_for_selector("#learned-verdict", timeout=30000)
    assert page.text_content("#learned-verdict").startswith("Disagrees on 4 of 14 inputs")
    assert page.text_content("#learned-failing-list li:first-child .failing-input") == "b"
    assert "head of attn_0_0_outputs" in page.text_content("#learned-selectors-list")


def test_a_refused_check_says_why_and_axe_finds_nothing_serious_in_the_view(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, TASK)
    page.click("#tab-learned")
    page.wait_for_selector("#learned-form")
    page.fill("#learned-source", "rev = = 1;\n")
    page.click("#learned-check")
    page.wait_for_function("() => document.getElementById('learned-status').textContent.startsWith('Check refused')")
    assert "the learned program has an error (line 1" in page.text_content("#learned-status")
    check(page)
    found = audit(page, "#view-learned")
    assert found == [], "axe-core, the Learned view: " + "; ".join(f"{v['id']}: {v['help']} at {v['nodes'][:3]}"
                                                                  for v in found)


def test_a_program_mode_training_from_the_train_tab_lands_in_the_learned_view(guarded, live_server):
    """Train tab, mode "a program": the job's emitted program arrives in the Learned view (said where it came
    from), is valid learned RASP, and is checked against the user's program from there."""
    from support.needs import need

    need("torch")
    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, TASK)
    page.click("#tab-train")
    page.select_option("#train-mode", "program")
    page.fill("#train-vocab", "ab")
    page.fill("#train-max-len", "3")
    page.fill("#train-steps", "20")
    page.click("#train-start")
    page.wait_for_selector(".run-line[data-status='done']", timeout=480000)
    page.wait_for_function("() => document.getElementById('learned-source') && "
                           "document.getElementById('learned-source').value.includes('# learned: rasplay')",
                           timeout=30000)
    source = page.input_value("#learned-source")
    assert "# bos: " in source and "# output: " in source
    assert "program mode" in page.text_content("#learned-origin")
    page.click("#tab-learned")
    page.fill("#learned-vocab", "ab")
    page.fill("#learned-max-len", "3")
    page.fill("#learned-beyond", "1")
    page.click("#learned-check")
    page.wait_for_selector("#learned-verdict", timeout=60000)
    verdict = page.text_content("#learned-verdict")
    assert verdict.startswith("Agrees") or verdict.startswith("Disagrees"), verdict
    assert page.locator("#learned-lengths-table tbody tr").count() == 4     # lengths 1-3 and one beyond
