"""The browser app's own source (web/, not web/vendor/) never turns text into markup or code: no innerHTML and
its relatives, no eval, no inline scripts or event handlers in the HTML. Program, input, value and error text
reaches the DOM only as text; the CSP would block the rest, this keeps it out of the code."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parents[2] / "web"
OWN_JS = sorted(p for p in (WEB / "js").rglob("*.js"))
OWN_HTML = sorted(WEB.glob("*.html"))

FORBIDDEN_JS = {
    "innerHTML": r"\binnerHTML\b",
    "outerHTML": r"\bouterHTML\b",
    "insertAdjacentHTML": r"\binsertAdjacentHTML\b",
    "document.write": r"\bdocument\.write(ln)?\s*\(",
    "createContextualFragment": r"\bcreateContextualFragment\b",
    "DOMParser": r"\bDOMParser\b",
    "srcdoc": r"\bsrcdoc\b",
    "eval": r"(?<![.\w])eval\s*\(",
    "new Function": r"\bnew\s+Function\s*\(",
    "string timer": r"\bset(Timeout|Interval)\s*\(\s*[\"'`]",
    "inline handler attribute": r"setAttribute\(\s*[\"'`]on",
    "javascript: URL": r"javascript:",
}


def test_there_is_web_source_to_check():
    names = {p.name for p in OWN_JS}
    assert {"heatmap.js", "main.js", "values.js", "apidocs.js"} <= names
    assert {"index.html", "apidocs.html"} <= {p.name for p in OWN_HTML}


@pytest.mark.parametrize("what", sorted(FORBIDDEN_JS))
def test_no_script_turns_text_into_markup_or_code(what):
    pattern = re.compile(FORBIDDEN_JS[what])
    hits = [f"{p.relative_to(WEB)}:{n}: {line.strip()}" for p in OWN_JS
            for n, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert hits == [], f"{what} in web/js: {hits}"


@pytest.mark.parametrize("page", [p.name for p in OWN_HTML])
def test_pages_have_no_inline_script_or_handler_and_load_nothing_remote(page):
    html = (WEB / page).read_text()
    assert re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html, re.I) is None, "inline <script>"
    assert re.search(r"<[^>]+\son[a-z]+\s*=", html, re.I) is None, "inline event handler"
    assert re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html, re.I) is None, "a resource from elsewhere"


def test_the_checks_catch_what_they_look_for():
    caught = {what for what, rx in FORBIDDEN_JS.items() for sample in [
        "note.innerHTML = x;", "a.outerHTML = x", "el.insertAdjacentHTML('beforeend', x)", "document.write(x)",
        "range.createContextualFragment(x)", "new DOMParser()", "frame.srcdoc = x", "eval(x)", "new Function(x)",
        "setTimeout('go()', 1)", "b.setAttribute('onclick', x)", "a.href = 'javascript:go()'"]
        if re.search(rx, sample)}
    assert caught == set(FORBIDDEN_JS)
    assert not re.search(FORBIDDEN_JS["eval"], "globalThis.evaluate(x); api.eval(x); evaluate(x)")
