"""The Train tab's Longer inputs view: train on short inputs, test on longer ones held out by length, see the
chart of accuracy by length, the bins as a table, and where the model breaks on a long input."""
from __future__ import annotations

import pytest
from conftest import need

from test_browser import ARTIFACTS, open_app

pytestmark = [pytest.mark.browser, pytest.mark.train]


def test_longer_inputs_view_shows_accuracy_by_length_and_where_it_breaks(guarded, live_server):
    need("torch")
    page = guarded.page()
    open_app(page, live_server.url)
    page.click("#tab-train")
    assert page.input_value("#train-output") == "reverse"
    assert "Give test lengths" in page.inner_text("#train-lengths")
    page.fill("#train-steps", "40")
    page.fill("#train-max-len", "4")
    page.fill("#train-test-min", "5")
    page.fill("#train-test-max", "8")
    page.select_option("#train-positional", "random_offset")
    page.click("#train-start")
    page.wait_for_selector(".run-line[data-status='done']", timeout=480000)   # a busy 2-core machine
    page.wait_for_selector("#lengths-summary tr[data-bin='5-8']", timeout=30000)
    page.wait_for_function("() => document.getElementById('lengths-plot').dataset.drawn", timeout=30000)
    assert page.locator("#lengths-summary tr").count() == 3            # a header and two bins
    row = page.locator("#lengths-summary tr[data-bin='5-8']").inner_text()
    assert "held out by length" in row and "none" in row                # reverse has no length-free model
    summary = page.inner_text("#lengths-summary")
    assert "learned positions trained at random offsets, bidirectional" in summary
    assert "No length-free compiled model" in summary
    names = page.evaluate("document.getElementById('lengths-plot').data.map(t => t.name)")
    assert any("trained, per sequence" in n for n in names)
    lengths = page.evaluate("document.getElementById('lengths-plot').data[0].x")
    assert lengths == [1, 2, 3, 4, 5, 6, 7, 8]
    # where it breaks: one cell per position of the longest input, each selector at both lengths
    assert page.locator("#where-it-breaks .where-correct .cell").count() == 8
    cards = page.locator("#where-it-breaks .overlay-card h3").all_text_contents()
    assert any(c.startswith("example input, length 5") for c in cards) and any(c.startswith("held out, length 8") for c in cards)
    page.locator("#train-lengths").screenshot(path=ARTIFACTS / "train-lengths.png")
