"""The page on a phone (390x844): after loading it, an example and an exercise, what a user needs is inside the
window's width, not cut and not overlapping: the top bar's buttons (Run), the editor, the values table (its
last column reached by scrolling the table, not the page), the diagram (zoomed in, it scrolls in its panel
instead of widening the page), the heatmap, and the exercise's task and Check button (above the editor in one
column), which checks."""
from __future__ import annotations

import pytest

from support.a11y import audit
from support.browser_kit import ARTIFACTS, Guarded, open_app, runs, set_program, wait_for_run

pytestmark = pytest.mark.browser
W, H = 390, 844
REVERSE_RIGHT = "opp = length - indices - 1;\nreverse = aggregate(select(indices, opp, ==), tokens);\n"

# the page's box of each thing (page coordinates: the page scrolls vertically on a phone)
BOXES = """(sels) => Object.fromEntries(sels.map((s) => {
  const e = document.querySelector(s);
  if (!e || e.hidden || !e.getClientRects().length) return [s, null];
  const r = e.getBoundingClientRect();
  return [s, {left: r.left, right: r.right, top: r.top + scrollY, bottom: r.bottom + scrollY,
              cut: e.scrollWidth > e.clientWidth + 1 && !/(auto|scroll)/.test(getComputedStyle(e).overflowX)}];
}))"""


def assert_laid_out(page, selectors: list[str]) -> None:
    """Each thing is shown, inside the window's width, not cut (its content wider than it without a scroll bar),
    and no two overlap; the page itself never scrolls sideways."""
    assert page.evaluate("document.scrollingElement.scrollWidth") <= W
    boxes = page.evaluate(BOXES, selectors)
    for sel, box in boxes.items():
        assert box is not None, f"{sel} is not shown"
        assert box["left"] >= 0 and box["right"] <= W + 0.5, (sel, box)
        assert not box["cut"], f"{sel} is cut: its content is wider than it and it does not scroll"
    items = list(boxes.items())
    for i, (a, p) in enumerate(items):
        for b, q in items[i + 1:]:
            apart = (p["right"] <= q["left"] + 0.5 or q["right"] <= p["left"] + 0.5 or
                     p["bottom"] <= q["top"] + 0.5 or q["bottom"] <= p["top"] + 0.5)
            assert apart, f"{a} {p} overlaps {b} {q}"


def topbar_buttons(page) -> list[str]:
    return [f"#{i}" for i in page.eval_on_selector_all("#topbar button", "bs => bs.map((b) => b.id)")]


PANELS = [".editor", ".inputs-panel", "#values", ".diagram-panel", ".heatmap-panel"]


def test_a_phone_shows_the_page_an_example_and_an_exercise_whole(browser, live_server):
    guarded = Guarded(browser, viewport=(W, H), is_mobile=True, has_touch=True)
    try:
        page = guarded.page()
        open_app(page, live_server.url)
        page.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn")
        assert_laid_out(page, topbar_buttons(page) + PANELS)
        # the first visit's offer of the tour fits too (shown again if its 10 s ran out while the page loaded)
        page.wait_for_function("() => document.getElementById('toast').textContent.includes('tour')")
        page.evaluate("document.getElementById('toast').hidden = false")
        assert_laid_out(page, ["#toast"])

        # an example: Dyck-2, four layers, a seven-token input
        before = runs(page)
        page.click("#examples-btn")
        page.click("[data-example='dyck2']")
        wait_for_run(page, before)
        page.wait_for_selector("#diagram[data-layout='elk']", timeout=30_000)
        assert_laid_out(page, topbar_buttons(page) + PANELS)
        # Run is reachable and runs
        before = runs(page)
        page.click("#run-btn")
        wait_for_run(page, before)
        # the values table's last column is reached by scrolling the table, never the page
        values = page.locator("#values")
        values.evaluate("(e) => { e.scrollLeft = e.scrollWidth; }")
        last = page.locator("#values tr").first.locator("th, td").last
        box, panel = last.bounding_box(), values.bounding_box()
        assert last.inner_text().strip() == "layer"
        assert panel["x"] - 0.5 <= box["x"] and box["x"] + box["width"] <= panel["x"] + panel["width"] + 0.5, (box, panel)
        # zoomed in, the diagram scrolls in its panel; the page does not widen
        for _ in range(4):
            page.click(".diagram-zoom button[data-zoom='in']")
        page.wait_for_function("() => Number(document.getElementById('diagram').dataset.zoom) > 2")
        diagram = page.locator("#diagram")
        assert diagram.evaluate("(e) => e.scrollWidth > e.clientWidth && /(auto|scroll)/.test(getComputedStyle(e).overflowX)")
        assert diagram.evaluate("(e) => { e.scrollLeft = 200; return e.scrollLeft; }") > 0
        assert_laid_out(page, topbar_buttons(page) + PANELS)
        page.screenshot(path=ARTIFACTS / "phone-390-dyck2.png", full_page=True)

        # an exercise: its task, budget and Check are shown whole, and Check checks
        page.evaluate("location.hash = '#x=reverse'")
        page.wait_for_function("() => document.getElementById('exercise-title').textContent === 'Reverse'")
        assert_laid_out(page, topbar_buttons(page) + PANELS + ["#exercise-task", "#exercise-budget", "#check-btn"])
        # in one column the task and Check come first, above the editor (read the task, then write)
        tops = page.evaluate("""() => ['#exercise-panel', '.editor-panel', '.inputs-panel', '.values-panel', '.diagram-panel']
            .map((s) => document.querySelector(s).getBoundingClientRect().top)""")
        assert tops == sorted(tops), tops
        set_program(page, REVERSE_RIGHT)
        page.click("#check-btn")
        page.wait_for_selector("#exercise-result .verdict[data-status='pass']", timeout=60_000)
        assert_laid_out(page, PANELS + ["#exercise-task", "#check-btn", "#exercise-result"])
        # the one-column exercise layout keeps the page's landmarks and names: axe finds nothing serious
        assert audit(page) == []
        page.screenshot(path=ARTIFACTS / "phone-390-exercise.png", full_page=True)
    finally:
        guarded.close()
