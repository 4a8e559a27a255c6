"""The language reference in the page (issue 32 item 4): Help > Language reference lists every entry the
server gives (GET /api/v1/language/reference), a search narrows it, an entry's example opens in the editor
and runs, and the pointer resting on a library name in the editor shows its entry; axe-core finds nothing
serious in the dialog. Guarded pages (nothing leaves 127.0.0.1): the reference is the server's own."""
from __future__ import annotations

import pytest

from a11y import audit
from test_browser import ARTIFACTS, open_app, runs, set_program, wait_for_run

from rasplay.engine.reference import reference

pytestmark = pytest.mark.browser


def test_the_reference_lists_every_entry_searches_and_opens_an_example(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    page.click("#keys-btn")
    page.click("#reference-btn")
    page.wait_for_selector("#reference[open] #reference-list li")
    names = page.eval_on_selector_all("#reference-list li", "ls => ls.map(l => l.dataset.entry)")
    assert names == [e["name"] for e in reference()]
    assert page.evaluate("document.activeElement.id") == "reference-search"
    found = audit(page)
    assert found == [], f"axe-core, the reference: {found}"
    page.keyboard.type("mean")
    page.wait_for_function("() => document.querySelectorAll('#reference-list li').length < 10")
    shown = page.eval_on_selector_all("#reference-list li", "ls => ls.map(l => l.dataset.entry)")
    assert "average" in shown and "aggregate" in shown and "shift" not in shown
    page.fill("#reference-search", "shift")
    page.wait_for_function("() => [...document.querySelectorAll('#reference-list li')].map(l => l.dataset.entry)"
                           ".join() === 'shift'")
    entry = page.locator("#reference-list li[data-entry='shift']")
    assert entry.locator(".ref-signature").text_content() == "shift(sop, n, filler)"
    assert "positions earlier" in entry.locator(".ref-meaning").text_content()
    page.screenshot(path=str(ARTIFACTS / "reference.png"))
    before = runs(page)
    entry.locator("button[data-open-example='shift']").click()
    wait_for_run(page, before)
    assert page.is_hidden("#reference")
    assert 'previous = shift(tokens, 1, "_");' in page.inner_text(".cm-content")
    assert page.input_value(".input-row input[type='text']") == "hello"
    assert page.locator(".values-table tr[data-name='previous'] td").all_inner_texts()[:5] == ["_", "h", "e", "l", "l"]


def test_the_pointer_on_a_name_in_the_editor_shows_its_entry(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, 'firsts = mark_first_instance(tokens, "l");\n')
    box = page.evaluate("""() => {
      const line = [...document.querySelectorAll('.cm-line')].find(l => l.textContent.includes('mark_first_instance'));
      const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const i = n.textContent.indexOf('mark_first_instance');
        if (i < 0) continue;
        const r = document.createRange(); r.setStart(n, i + 3); r.setEnd(n, i + 8);
        const b = r.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2];
      }
    }""")
    page.mouse.move(box[0], box[1])
    tip = page.wait_for_selector(".cm-tooltip .ref-tooltip[data-entry='mark_first_instance']", timeout=5000)
    assert "True where sop holds val for the first time." in tip.text_content()
    assert "mark_first_instance(sop, val)" in tip.text_content()
    page.screenshot(path=str(ARTIFACTS / "reference-tooltip.png"))
    # a name the reference does not hold (the program's own) gets no tooltip; a library name does
    said = page.evaluate("""async () => {
      const m = await import(document.querySelector("script[type=module]").src.replace(/main\\.js$/, "reference.js"));
      return [await m.tooltipFor("firsts"), (await m.tooltipFor("sort")).dataset.entry];
    }""")
    assert said == [None, "sort"]
