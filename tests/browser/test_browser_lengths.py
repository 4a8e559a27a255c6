"""The Train tab's Longer inputs view: train on short inputs, test on longer ones held out by length, see the
chart of accuracy by length, the bins as a table, and where the model breaks on a long input."""
from __future__ import annotations

import pytest
from support.needs import need

from support.browser_kit import ARTIFACTS, open_app

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


def test_ablate_on_the_depth_hierarchy_puts_k_and_k_minus_1_layers_on_one_chart(guarded, live_server):
    """L2 (examples/depth_l2.rasp): Ablate with test lengths trains the analysis' 2 layers and 1 layer beside it;
    the Longer inputs chart and its table carry both runs, labelled by their layer counts."""
    need("torch")
    page = guarded.page()
    open_app(page, live_server.url)
    page.click("#examples-btn")
    page.wait_for_selector("#gallery-list button[data-example='depth_l2']")
    page.click("#gallery-list button[data-example='depth_l2']")
    page.wait_for_function("() => document.querySelector('.cm-content').textContent.includes('in_L2')")
    page.wait_for_function("() => document.getElementById('diagram-totals').textContent.includes('2 layers')")
    page.click("#tab-train")
    page.wait_for_function("() => document.getElementById('train-output').value === 'in_L2'")
    page.fill("#train-steps", "30")
    page.fill("#train-max-len", "4")
    page.fill("#train-test-min", "5")
    page.fill("#train-test-max", "8")
    page.select_option("#train-positional", "none")
    page.click("#train-ablate")
    page.wait_for_function("() => document.querySelectorAll(\".run-line[data-status='done']\").length === 2",
                           timeout=480000)
    page.wait_for_function("() => document.getElementById('lengths-plot').dataset.drawn", timeout=30000)
    names = page.evaluate("document.getElementById('lengths-plot').data.map(t => t.name)")
    assert any(n.startswith("2 layers (predicted): trained, per sequence") for n in names), names
    assert any(n.startswith("1 layer: trained, per sequence") for n in names), names
    labels = {t.split("\t")[0] for t in page.locator("#lengths-summary tr[data-bin='5-8']").all_inner_texts()}
    assert labels == {"2 layers (predicted)", "1 layer"}, labels
