"""Browser timings: start `rasplay serve` on loopback and open the playground in Debian's Chromium.

Prints, over several first visits (fresh browser contexts, empty cache), the time until the page is
ready (editor, values and diagram usable: body[data-ready]) and until the first heatmap is drawn
(the page's own SVG: no plotly.js on the first screen); then, on a 32-token input, the time from Ctrl+Enter
to the redrawn heatmap (median and max of several presses), measured with the page's own clock. Targets on
2 cores: page ready under 1 s, Ctrl+Enter to heatmap under 200 ms. The tests assert the behaviour (the first
screen fetches no plotly.js, every Ctrl+Enter redraws); the figures live here.

    python bench/page.py [--visits 3] [--presses 8]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from live_server import LiveServer  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
DRAWN = "document.getElementById('heatmap-plot').dataset.drawn"


def guard(context) -> None:
    """Fail every request that leaves loopback (the page must work offline)."""
    context.route(lambda url: not url.startswith(("http://127.0.0.1", "data:", "blob:")), lambda r: r.abort())


def first_visits(browser, url: str, visits: int) -> list[tuple[float, float]]:
    out = []
    for _ in range(visits):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        guard(context)
        page = context.new_page()
        start = time.monotonic()
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']", timeout=30000)
        ready = time.monotonic() - start
        page.wait_for_function(f"() => {DRAWN}", timeout=30000)
        out.append((ready, time.monotonic() - start))
        context.close()
    return out


def ctrl_enter_to_heatmap(browser, url: str, presses: int) -> list[float]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    guard(context)
    page = context.new_page()
    page.goto(url)
    page.wait_for_function(f"() => {DRAWN}", timeout=30000)
    runs = "Number(document.body.dataset.runs || 0)"
    before = page.evaluate(runs)
    page.fill(".input-row input[type='text']", "abcdefghijklmnopqrstuvwxyzabcdef")  # 32 tokens
    page.wait_for_function(f"() => {runs} > {before}")
    samples = []
    for _ in range(presses):
        drawn = page.evaluate(f"Number({DRAWN})")
        page.click(".cm-content")
        start = page.evaluate("performance.now()")
        page.keyboard.press("Control+Enter")
        page.wait_for_function(f"() => Number({DRAWN}) > {drawn}")
        samples.append(page.evaluate("performance.now()") - start)
    context.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--visits", type=int, default=3)
    parser.add_argument("--presses", type=int, default=8)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if not chromium:
        raise SystemExit("bench/page.py needs Debian's chromium (make test-deps installs it)")
    with tempfile.TemporaryDirectory() as data:
        server = LiveServer(Path(data))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                visits = first_visits(browser, server.url, args.visits)
                samples = ctrl_enter_to_heatmap(browser, server.url, args.presses)
                browser.close()
        finally:
            server.stop()
    ready = [r for r, _ in visits]
    heatmap = [h for _, h in visits]
    print(f"first visits ({args.visits}): page ready {', '.join(f'{r:.3f}' for r in ready)} s "
          f"(best {min(ready):.3f} s, {min(ready) / 1.0:.2f} x the 1 s target); first heatmap "
          f"{', '.join(f'{h:.3f}' for h in heatmap)} s")
    median = statistics.median(samples)
    print(f"Ctrl+Enter to heatmap, 32 tokens ({args.presses} presses): median {median:.1f} ms, max {max(samples):.1f} ms "
          f"({median / 200:.2f} x the 200 ms target)")


if __name__ == "__main__":
    main()
