"""The page's view registry (web/js/views.js) and links that carry an exercise (issue 31 item 5, issue 32
item 3): the tabs are made from the registered views and move with the arrow keys, a link's view opens,
a view without a panel is refused; a Share or Short link made inside `/#x=sort` opens, in a fresh browser,
the exercise (task, budget bars, Check) with the attempt's code. Guarded pages (nothing leaves 127.0.0.1)."""
from __future__ import annotations

import re

import pytest

from support.browser_kit import ARTIFACTS, fresh_page, link_from_toast, open_app, runs, set_program, wait_for_run

pytestmark = pytest.mark.browser

ATTEMPT = "# my attempt\nsorted = aggregate(select(indices, indices, ==), tokens);\n"


def test_the_tabs_come_from_the_registry_and_keys_and_links_move_between_them(browser, guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    tabs = page.eval_on_selector_all("nav.tabs [role='tab']", "ts => ts.map(t => [t.id, t.textContent, "
                                     "t.getAttribute('aria-controls'), t.getAttribute('aria-selected')])")
    assert tabs == [["tab-program", "Program", "view-program", "true"], ["tab-compile", "Compile", "view-compile", "false"],
                    ["tab-train", "Train", "view-train", "false"], ["tab-learned", "Learned", "view-learned", "false"]]
    assert page.get_attribute("#view-compile", "aria-labelledby") == "tab-compile"
    page.focus("#tab-program")
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("#view-compile:not([hidden])")
    assert page.is_hidden("#view-program")
    assert page.evaluate("document.activeElement.id") == "tab-compile"
    page.wait_for_selector("#compile-form-box input")   # the view's show() rendered its form
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("#train-form")
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("#learned-form")
    page.keyboard.press("ArrowRight")   # round to the first
    page.wait_for_selector("#view-program:not([hidden])")
    page.click("#tab-train")
    link = link_from_toast(page, "#share-btn")
    with fresh_page(browser, link) as fresh:
        fresh.wait_for_selector("#view-train:not([hidden])")
        assert fresh.get_attribute("#tab-train", "aria-selected") == "true"


def test_the_registry_refuses_a_view_without_a_panel_or_registered_twice(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    # the module the page itself loaded (its URL carries the assets' version)
    said = page.evaluate("""async () => {
      const base = document.querySelector("script[type=module]").src.replace(/main\\.js$/, "");
      const m = await import(base + "views.js");
      const tryIt = (views) => { try { m.registerViews(views); return "registered"; } catch (e) { return e.message; } };
      return [tryIt([{ id: "nowhere", label: "Nowhere" }]), tryIt([{ id: "program", label: "Again" }]),
              tryIt([{ label: "No id" }]), m.viewIds()];
    }""")
    assert said == ["the view 'nowhere' has no panel #view-nowhere in index.html",
                    "the view 'program' is registered twice", "a view needs an id and a label",
                    ["program", "compile", "train", "learned"]]


def _attempt_at_sort(page, live_server):
    open_app(page, live_server.url, "/#x=sort")
    page.wait_for_selector("#exercise-panel:not([hidden])")
    set_program(page, ATTEMPT)
    before = runs(page)
    page.fill(".input-row input[type='text']", "cab")
    wait_for_run(page, before)


def _shows_the_exercise_with_the_attempt(fresh):
    fresh.wait_for_selector("#exercise-panel:not([hidden])")
    assert fresh.text_content("#exercise-title") == "Sort"
    assert "alphabetical order" in fresh.text_content("#exercise-task")
    assert fresh.is_visible("#check-btn")
    fresh.wait_for_selector("#exercise-budget .budget-row[data-budget='layers'] meter")
    assert "sorted = aggregate(select(indices, indices, ==), tokens);" in fresh.inner_text(".cm-content")
    assert fresh.input_value(".input-row input[type='text']") == "cab"
    fresh.wait_for_function("() => location.hash === '#x=sort'")   # the address names the exercise, as a course link
    fresh.click("#check-btn")
    fresh.wait_for_function("() => Number(document.body.dataset.checks || 0) > 0", timeout=20000)
    assert fresh.get_attribute("#exercise-result .verdict", "data-status") == "wrong"


def test_a_share_link_made_in_an_exercise_opens_the_exercise_with_the_attempt(browser, guarded, live_server):
    page = guarded.page()
    _attempt_at_sort(page, live_server)
    link = link_from_toast(page, "#share-btn")
    assert re.match(r"^http://127\.0\.0\.1:\d+/#v1=[A-Za-z0-9_-]+$", link)
    assert page.evaluate("async (h) => (await import(document.querySelector('script[type=module]').src"
                         ".replace(/main\\.js$/, 'state.js'))).decodeState(h)", link.split("#v1=")[1])["exercise"] == "sort"
    with fresh_page(browser, link) as fresh:
        _shows_the_exercise_with_the_attempt(fresh)
        fresh.screenshot(path=str(ARTIFACTS / "shared-exercise.png"))


def test_a_short_link_made_in_an_exercise_opens_the_exercise_with_the_attempt(browser, guarded, live_server):
    page = guarded.page()
    _attempt_at_sort(page, live_server)
    link = link_from_toast(page, "#shortlink-btn")
    assert re.match(r"^http://127\.0\.0\.1:\d+/s/[a-z2-7]{12}$", link)
    with fresh_page(browser, link) as fresh:
        _shows_the_exercise_with_the_attempt(fresh)


def test_a_shared_attempt_replaces_the_visitors_draft_with_a_way_back(guarded, live_server):
    page = guarded.page()
    _attempt_at_sort(page, live_server)
    link = link_from_toast(page, "#share-btn")
    set_program(page, "sorted = tokens;  # my own draft\n")
    page.goto(live_server.url + "/")   # leave; the draft of the exercise stays in this browser
    page.wait_for_selector("body[data-ready='1']")
    page.goto(link)
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_selector("#toast button[data-action='my draft']")
    assert "replaces your own draft" in page.text_content("#toast")
    assert "select(indices, indices, ==)" in page.inner_text(".cm-content")
    before = runs(page)
    page.click("#toast button[data-action='my draft']")
    wait_for_run(page, before)
    assert "my own draft" in page.inner_text(".cm-content")


def test_a_link_to_an_exercise_this_server_lacks_shows_the_attempt_and_says_so(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    link = page.evaluate("async () => (await import(document.querySelector('script[type=module]').src"
                         ".replace(/main\\.js$/, 'state.js'))).linkFor({source: 'y = indices + 7;', inputs: ['ab'], "
                         "exercise: 'no_such_exercise'})")
    other = guarded.page()
    open_app(other, "", link)
    assert "no_such_exercise" in other.text_content("#notice-text")
    assert other.is_hidden("#exercise-panel")
    other.wait_for_selector(".values-table tr[data-name='y']")
