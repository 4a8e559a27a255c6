"""The editor highlights the words the engine serves (GET /api/v1/language), not a list of the page's
own: a library name defined only in library.rasp is coloured as a library name, a built-in as a built-in,
and an exported figure is named after the `# title:` header the engine read."""
from __future__ import annotations

import pytest

from support.browser_kit import open_app, set_program

pytestmark = pytest.mark.browser

LIBRARY_COLOUR = "rgb(0, 114, 178)"     # editor.js: tags.special(variableName), the stream mode's "variable-2"
BUILTIN_COLOUR = "rgb(138, 63, 252)"    # tags.standard(variableName), "builtin"


def colour_of(page, word: str) -> str | None:
    """The colour CodeMirror gives the first token whose text is exactly `word`."""
    return page.evaluate("""(word) => {
      const content = document.querySelector('.cm-content');
      const walker = document.createTreeWalker(content, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const text = n.textContent, at = text.search(new RegExp('\\\\b' + word + '\\\\b'));
        if (at >= 0 && n.parentElement.textContent === word) return getComputedStyle(n.parentElement).color;
      }
      return null;
    }""", word)


def test_editor_highlights_the_engines_library_names(guarded, live_server):
    page = guarded.page()
    served = []
    page.on("response", lambda r: served.append(r.url) if r.url.endswith("/api/v1/language") else None)
    open_app(page, live_server.url)
    set_program(page, "n = select_next_identical(tokens);\nw = aggregate(select(indices, indices, ==), tokens);\n"
                      "plain = n;\n")
    page.wait_for_function("() => [...document.querySelectorAll('.cm-content span')]"
                           ".some((s) => s.textContent === 'select_next_identical')")
    assert served, "the editor asked the server for the vocabulary"
    assert colour_of(page, "select_next_identical") == LIBRARY_COLOUR
    assert colour_of(page, "aggregate") == BUILTIN_COLOUR
    assert colour_of(page, "plain") is None    # an ordinary name: no token style of its own


def test_exported_figures_are_named_after_the_title_the_engine_read(guarded, live_server):
    page = guarded.page()
    open_app(page, live_server.url)
    set_program(page, "# title: My flip\nf = select(indices, indices, ==);\nr = aggregate(f, tokens);\n")
    assert page.evaluate("window.rasplay.state.doc.title") == "My flip"
    page.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn", timeout=15000)
    with page.expect_download() as info:
        page.click("button[data-export='heatmap'][data-format='svg']")
    assert info.value.suggested_filename == "rasplay-My_flip-f.svg"
