"""The layer x head diagram: what its geometry checks find and how long a run with its layout takes.

    python bench/diagram.py                 # starts a server from this checkout
    python bench/diagram.py --url URL       # measures a running server (e.g. an older version, for a before/after)

For Dyck-2, Sort, Most-frequent and a synthetic 6-layer program (tests/fixtures), at 1366x768 and 1920x1080:
the problems tests/fixtures/diagram_geometry.js reports (edge segments crossing boxes, edges from different
sources sharing a stretch, edges arriving at one point, labels shortened or outside their box, overflow),
counted by kind; the drawing's width against the panel's; and the median wall time of a run (evaluate +
render + layout) over a few runs, next to the evaluate request alone. Prints figures; asserts nothing."""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "img"))
from make_screenshots import CHROMIUM_ARGS, OUTSIDE_LOOPBACK, start_server  # noqa: E402

GEOMETRY = (ROOT / "tests" / "fixtures" / "diagram_geometry.js").read_text()
PROGRAMS = {name: (ROOT / "examples" / f"{name}.rasp").read_text() for name in ("dyck2", "sort_unique", "most_frequent")}
PROGRAMS["synthetic-6-layers"] = (ROOT / "tests" / "fixtures" / "synthetic_6_layers.rasp").read_text()
KINDS = (("crosses box", r"crosses box"), ("shared stretch", r"share a"), ("same arrival", r"arrive at"),
         ("label shortened", r"label shortened"), ("label outside box", r"label outside"),
         ("overflow", r"overflows|scrolls sideways"), ("row order", r"band|bands"), ("boxes overlap", r"boxes overlap"))


def kinds(problems: list[str]) -> Counter:
    counts = Counter()
    for p in problems:
        kind = next((k for k, pattern in KINDS if re.search(pattern, p)), "other")
        counts[kind] += 1
    return counts


def input_of(source: str) -> str:
    m = re.search(r"^# input: (.*)$", source, re.M)
    return m.group(1) if m else "hello"


def measure(browser, url: str, width: int, height: int, repeats: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": height})
    context.route(OUTSIDE_LOOPBACK, lambda route: route.abort())
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=30000)
    for name, source in PROGRAMS.items():
        page.locator("#inputs input[type='text']").first.fill(input_of(source))
        runs = []
        api = []
        for r in range(repeats):
            # a new program text each time (a trailing comment) so that nothing is cached
            text = f"{source}\n# run {r}\n"
            page.click(".cm-content")
            page.keyboard.press("Control+a")
            page.keyboard.insert_text(text)
            runs.append(page.evaluate("""async () => { const t = performance.now(); await window.rasplay.runNow();
                return performance.now() - t; }"""))
            api.append(page.evaluate("window.rasplay.timings[window.rasplay.timings.length - 1]"))
        page.wait_for_function("() => document.querySelector('#diagram svg')")
        problems = page.evaluate(GEOMETRY)
        sizes = page.evaluate("""() => { const d = document.getElementById('diagram'), s = d.querySelector('svg');
            return [Math.round(s.getBoundingClientRect().width), d.clientWidth]; }""")
        counts = kinds(problems)
        found = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"
        print(f"{name:20s} {width}x{height}  drawing {sizes[0]:4d}px in a {sizes[1]:4d}px panel  "
              f"run {statistics.median(runs):6.0f} ms (evaluate {statistics.median(api):5.0f} ms)  problems: {found}")
    context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="a running rasplay server (default: start one from this checkout)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as data, sync_playwright() as p:
        process, url = (None, args.url) if args.url else start_server(Path(data))
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        try:
            for width, height in ((1366, 768), (1920, 1080)):
                measure(browser, url, width, height, args.repeats)
        finally:
            browser.close()
            if process is not None:
                process.terminate()
                process.wait(timeout=30)


if __name__ == "__main__":
    main()
