"""The guided tour (issue 32 item 9): a first visit is offered it; it walks six parts of the page (editing, the
values, a selector's heatmap, the layers x heads diagram, where a value came from, the exercises), each outlined
with the card beside it, not over it; keys work (Enter, arrows, Tab stays in the card, Esc skips); finishing or
skipping is remembered, Help reopens it, and axe-core finds nothing serious with it open. Guarded pages: the
tour asks nothing of any server outside 127.0.0.1 (it is all on the page)."""
from __future__ import annotations

import pytest

from a11y import audit
from test_browser import ARTIFACTS, fresh_page, open_app

pytestmark = pytest.mark.browser

TARGETS = ["editor", "values", "heatmap-scroll", "diagram", "values", "exercises-btn"]


def step(page) -> int:
    return int(page.get_attribute("#tour", "data-step"))


def card_beside_target(page) -> bool:
    return page.evaluate("""() => {
      const a = document.getElementById('tour').getBoundingClientRect();
      const b = document.querySelector('.tour-target').getBoundingClientRect();
      const inside = a.top >= 0 && a.left >= 0 && a.bottom <= innerHeight && a.right <= innerWidth;
      const overlap = Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
                      Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
      return inside && overlap < 0.25 * b.width * b.height;   // the card may touch a tall part, never hide it
    }""")


def test_a_first_visit_is_offered_the_tour_which_walks_the_page_by_keyboard(guarded, live_server):
    page = guarded.page()
    page.set_viewport_size({"width": 1366, "height": 768})
    open_app(page, live_server.url)
    page.click("#toast button[data-action='take the tour']")
    page.wait_for_selector("#tour:not([hidden])")
    assert page.evaluate("document.activeElement.id") == "tour-next"
    seen = []
    for i, target in enumerate(TARGETS, 1):
        assert step(page) == i
        assert page.get_attribute(".tour-target", "id") == target
        assert page.text_content("#tour-step") == f"{i} of 6"
        seen.append(page.text_content("#tour-title"))
        assert card_beside_target(page), f"step {i}: the card hides {target}"
        if i == 3:
            page.screenshot(path=str(ARTIFACTS / "tour-heatmap.png"))
            assert audit(page) == []
        if i < len(TARGETS):
            page.keyboard.press("Enter")   # the focused Next button
            page.wait_for_function(f"() => document.getElementById('tour').dataset.step === '{i + 1}'")
    assert seen == ["Edit, and it runs", "The values", "A selector's heatmap", "Layers × heads",
                    "Where did this value come from?", "Exercises"]
    assert page.text_content("#tour-next") == "Done"
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("() => document.getElementById('tour').dataset.step === '5'")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.getElementById('tour').dataset.step === '6'")
    for _ in range(4):   # Tab goes round the card's buttons, never out of it
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.closest('#tour') !== null")
    page.keyboard.press("Escape")
    page.wait_for_selector("#tour", state="hidden")
    assert page.query_selector(".tour-target") is None
    assert page.evaluate("localStorage.getItem('rasplay.tour.v1')") == "done"


def test_the_tour_is_remembered_reopened_from_help_and_not_offered_to_a_link(browser, guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    page.click("#toast button[data-action='take the tour']")
    page.click("#tour-skip")
    page.wait_for_selector("#tour", state="hidden")
    open_app(page, live_server.url)   # again: not offered a second time
    assert page.query_selector("#toast button[data-action='take the tour']") is None
    page.click("#keys-btn")
    page.click("#tour-btn")
    page.wait_for_selector("#tour:not([hidden])")
    assert step(page) == 1 and page.is_hidden("#keys")
    for _ in range(5):
        page.click("#tour-next")
    assert step(page) == 6
    page.click("#tour-next")   # Done
    page.wait_for_selector("#tour", state="hidden")
    # a new visitor whose first page is a link (an exercise) is not offered the tour over what the link shows
    with fresh_page(browser, live_server.url + "/#x=sort") as other:
        other.wait_for_selector("#exercise-panel:not([hidden])")
        assert other.query_selector("#toast button[data-action='take the tour']") is None
        assert other.evaluate("localStorage.getItem('rasplay.tour.v1')") is None
