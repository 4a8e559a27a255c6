"""A share link made while the Learned tab holds a learned program (issue 34) restores it when opened in a
fresh browser: the learned program's text, the check's settings, the editor showing the learned program with
the way back to the user's, and a check that gives the same verdict. Guarded pages (nothing leaves 127.0.0.1)."""
from __future__ import annotations

import pytest

from support.browser_kit import fresh_page, link_from_toast, open_app, set_program
from support.learned_sources import LEARNED, TASK

pytestmark = pytest.mark.browser


def settings(page) -> list:
    return [page.input_value(f"#{i}") for i in ("learned-vocab", "learned-min-len", "learned-max-len",
                                                  "learned-beyond", "learned-samples", "learned-seed")]


def test_a_share_link_restores_the_learned_program_its_settings_and_the_way_back(browser, guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, TASK)
    page.click("#tab-learned")
    page.wait_for_selector("#learned-form")
    page.fill("#learned-source", LEARNED)
    page.fill("#learned-vocab", "ab")
    page.fill("#learned-max-len", "3")
    page.fill("#learned-beyond", "1")
    page.fill("#learned-seed", "7")
    page.click("#learned-open")                                   # the editor shows the learned program
    page.wait_for_function("() => window.rasplay.state.source.startsWith('# learned: transformer-programs')")
    link = link_from_toast(page, "#share-btn")
    shared = page.evaluate("async (h) => (await import(document.querySelector('script[type=module]').src"
                           ".replace(/main\\.js$/, 'state.js'))).decodeState(h)", link.split("#v1=")[1])
    assert shared["learned"] == {"source": LEARNED, "user_source": TASK,
                                 "check": {"vocab": "ab", "max_length": 3, "beyond": 1, "seed": 7}}

    with fresh_page(browser, link) as fresh:
        fresh.wait_for_function("() => window.rasplay.state.source.startsWith('# learned: transformer-programs')")
        fresh.click("#tab-learned")
        fresh.wait_for_selector("#learned-form")
        assert fresh.input_value("#learned-source") == LEARNED
        assert settings(fresh) == ["ab", "1", "3", "1", "1000", "7"]
        assert fresh.is_visible("#learned-back")
        fresh.click("#learned-check")                             # checked against the user's program
        fresh.wait_for_selector("#learned-verdict", timeout=30000)
        assert fresh.text_content("#learned-verdict").startswith("Disagrees on 2 of 30 inputs")
        fresh.click("#learned-back")
        fresh.wait_for_function(f"() => window.rasplay.state.source === {TASK!r}")


def test_a_link_without_a_learned_program_leaves_the_tab_empty(browser, guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, TASK)
    link = link_from_toast(page, "#share-btn")
    with fresh_page(browser, link) as fresh:
        fresh.click("#tab-learned")
        fresh.wait_for_selector("#learned-form")
        assert fresh.input_value("#learned-source") == ""
        assert fresh.is_hidden("#learned-back")
        assert settings(fresh)[1:] == ["1", "5", "2", "1000", "0"]
