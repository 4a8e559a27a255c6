"""The public share-link format (`#v1=` + base64url without padding of raw deflate of UTF-8 JSON) is the
same on both sides: Python reads links the browser's encoder made (a committed fixture, written by
tests/fixtures/make_share_links.py in Chromium), and the browser reads links Python makes."""
import base64
import json
import re
import zlib
from pathlib import Path

import pytest

from rasplay.server.links import decode_state, encode_state, link_fragment
from support.browser_kit import Guarded, open_app

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "share_links_v1.json").read_text(encoding="utf-8"))
CASES = FIXTURE["cases"]


def test_the_fixture_was_made_by_the_browser():
    assert "state.js encodeState" in FIXTURE["made_by"] and len(CASES) >= 5


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_python_reads_links_the_browser_made(case):
    assert decode_state(case["fragment"]) == case["state"]


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_python_writes_the_public_format(case):
    fragment = encode_state(case["state"])
    assert re.fullmatch(r"[A-Za-z0-9_-]+", fragment)                  # base64url, no padding
    packed = base64.urlsafe_b64decode(fragment + "=" * (-len(fragment) % 4))
    assert json.loads(zlib.decompress(packed, -15).decode("utf-8")) == case["state"]   # raw deflate of UTF-8 JSON
    assert link_fragment(case["state"]) == "v1=" + fragment


@pytest.mark.browser
def test_the_browser_reads_links_python_made(browser, live_server):
    guarded = Guarded(browser)
    try:
        page = guarded.page()
        open_app(page, live_server.url)
        states = [c["state"] for c in CASES]
        decoded = page.evaluate("""async ([python, browser]) => {
            const { decodeState } = await import("/js/state.js");
            const out = { python: [], browser: [] };
            for (const f of python) out.python.push(await decodeState(f));
            for (const f of browser) out.browser.push(await decodeState(f));
            return out;
        }""", [[encode_state(s) for s in states], [c["fragment"] for c in CASES]])
        assert decoded["python"] == states
        assert decoded["browser"] == states
    finally:
        guarded.close()
