"""The page's layout and diagram in front of a class (issue 32): the diagram's words name what the student
wrote, empty MLP boxes are gone and the inputs' far edges are said in the box instead of drawn down the side;
a loaded example's heatmap shows without scrolling and grows with its panel; presenter mode shows the stepped
layer's boxes, large, inside the panel with the heatmap beside them; two inputs side by side. In Debian's
Chromium, every page guarded to 127.0.0.1; screenshots go to test-artifacts/ (look at them)."""
from __future__ import annotations

import re

import pytest

from rasplay.engine.examples import load_examples
from test_browser import ARTIFACTS, open_app, runs, wait_for_run

pytestmark = pytest.mark.browser

EXAMPLES = [e.id for e in load_examples()]


def load_example(page, example_id: str):
    before = runs(page)
    page.click("#examples-btn")
    page.click(f"[data-example='{example_id}']")
    wait_for_run(page, before)
    page.wait_for_selector("#diagram[data-layout='elk']", timeout=20000)
    page.evaluate("document.getElementById('toast').hidden = true")


# ------------------------------------------------------------------ 7. the diagram's words

WORDS = """() => {
  const boxes = [...document.querySelectorAll('#diagram g[data-unit]')].map(g => ({unit: g.dataset.unit,
    lines: [...g.querySelectorAll('text')].map(t => t.textContent.trim())}));
  const edges = [...document.querySelectorAll('#diagram path.edge')].map(p => [p.dataset.from, p.dataset.to]);
  return {boxes, edges}; }"""


def test_the_diagram_names_what_the_student_wrote_on_every_example(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    for example in EXAMPLES:
        load_example(page, example)
        drawn = page.evaluate(WORDS)
        doc = page.evaluate("window.rasplay.state.doc.analysis")
        texts = [line for box in drawn["boxes"] for line in box["lines"]]
        assert not [t for t in texts if "unnamed" in t or re.search(r"\bhead \d", t) or re.match(r"L\d+ head", t)
                    or t in ("—", "-")], (example, texts)
        # an MLP box only where the layer has elementwise ops
        mlps = {box["unit"] for box in drawn["boxes"] if box["unit"].startswith("mlp:")}
        assert mlps == {f"mlp:{layer}" for layer, ops in enumerate(doc["mlps"]) if ops}, example
        # no edge from the inputs to a box two rows or more below them; the box says it reads them
        rows = {box["unit"]: int(page.get_attribute(f"#diagram g[data-unit='{box['unit']}']", "data-layer"))
                for box in drawn["boxes"]}
        far = [e for e in drawn["edges"] if e[0].startswith("in:") and rows[e[1]] >= 2]
        assert far == [], (example, far)
    # Dyck-2: its parts are named after what is built on them, and the tokens it reads late are said
    load_example(page, "dyck2")
    boxes = {b["unit"]: b["lines"] for b in page.evaluate(WORDS)["boxes"]}
    assert boxes["h:1:0"] == ["prefix", "→ part of depth"]
    assert boxes["mlp:0"] == ["MLP on the input alone", "is_open, is_close", "parts of depth"]
    assert boxes["h:2:1"][0] == "selector of opens_at_my_depth"
    assert "reads tokens" in boxes["h:3:0"] and "reads tokens" in boxes["mlp:3"]
    page.locator(".diagram-panel").screenshot(path=ARTIFACTS / "diagram-words-dyck2.png")
