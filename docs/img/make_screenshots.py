"""Regenerate the README's screenshots (docs/img/*.png) from the current page.

    python docs/img/make_screenshots.py            # playground, diagram, provenance, heads, presenter, compiled
    python docs/img/make_screenshots.py --train    # also the trained overlay (needs rasplay[train]; ~1 min)

Starts `rasplay serve` on a free loopback port, drives Debian's Chromium through Playwright (as the tests
do: nothing is fetched from outside 127.0.0.1), waits for each view to be drawn (never a fixed sleep),
and writes the images next to this script. Look at them before committing."""
from __future__ import annotations

import argparse
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
OUTSIDE_LOOPBACK = re.compile(r"^(?!data:|blob:|https?://127\.0\.0\.1[:/]).*")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data_dir: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen([sys.executable, "-m", "rasplay.cli", "serve", "--port", str(port),
                                "--data-dir", str(data_dir), "--train-warm", "0"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("the server did not start")
        try:
            if httpx.get(url + "/api/v1/health", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.terminate()
    raise SystemExit("the server did not answer")


def runs(page) -> int:
    return int(page.evaluate("Number(document.body.dataset.runs || 0)"))


def wait_for_run(page, before: int) -> None:
    page.wait_for_function(f"() => Number(document.body.dataset.runs || 0) > {before}", timeout=30000)
    page.wait_for_selector("#diagram[data-layout='elk']", timeout=30000)


def heatmap_drawn(page) -> None:
    page.wait_for_function("() => document.getElementById('heatmap-plot').dataset.drawn", timeout=30000)


def load_example(page, example: str) -> None:
    before = runs(page)
    page.click("#examples-btn")
    page.click(f"[data-example='{example}']")
    wait_for_run(page, before)
    page.evaluate("document.getElementById('toast').hidden = true")
    heatmap_drawn(page)


def open_page(browser, url: str, width: int = 1280, height: int = 800):
    context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
    context.route(OUTSIDE_LOOPBACK, lambda route: route.abort())
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=30000)
    heatmap_drawn(page)
    return context, page


def shoot(target, name: str) -> None:
    path = HERE / name
    target.screenshot(path=path)
    print(f"wrote {path.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", action="store_true", help="also train Reverse and shoot the overlay")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if not chromium:
        raise SystemExit("Debian's chromium is needed (make test-deps installs it)")
    with tempfile.TemporaryDirectory() as data, sync_playwright() as p:
        process, url = start_server(Path(data))
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            # the playground on the first visit (reverse)
            context, page = open_page(browser, url)
            shoot(page, "playground.png")
            # Dyck-2: the diagram laid out by elkjs (at 1920x1080, where it stands beside the heatmap, whole),
            # then where one value came from
            wide, wide_page = open_page(browser, url, 1920, 1080)
            load_example(wide_page, "dyck2")
            wide_page.locator(".diagram-panel").screenshot(path=HERE / "diagram.png")
            print("wrote docs/img/diagram.png")
            wide.close()
            load_example(page, "dyck2")
            page.click(".values-table tr[data-name='partner_token'] td[data-pos='3']")
            page.wait_for_function("() => document.getElementById('values').dataset.provenance === 'partner_token:3'")
            page.click("#provenance-bar button[data-provenance='back']")
            page.wait_for_function("() => document.getElementById('provenance-bar').dataset.step === '2'")
            page.wait_for_function("() => Number(document.getElementById('heatmap-plot').dataset.provenanceShapes) > 0")
            shoot(page, "provenance.png")
            page.locator("#head-grid-panel").scroll_into_view_if_needed()
            shoot(page.locator("#head-grid-panel"), "all-heads.png")
            context.close()
            # presenter mode on Dyck-2, layer 3
            context, page = open_page(browser, url)
            load_example(page, "dyck2")
            page.click("#present-btn")
            for _ in range(2):
                before = int(page.evaluate("Number(document.getElementById('heatmap-plot').dataset.drawn)"))
                page.keyboard.press("ArrowRight")
                page.wait_for_function(f"() => Number(document.getElementById('heatmap-plot').dataset.drawn) > {before}")
            shoot(page, "presenter.png")
            context.close()
            # the compiled heads over their selectors (reverse), in a window tall enough for both heads and
            # the trained overlay (a taller element is cut by its pane and the sticky header covers its top)
            context, page = open_page(browser, url, 1280, 1600)
            page.click("#tab-compile")
            page.fill("#compile-max-len", "5")
            page.click("#compile-start")
            page.wait_for_selector("#compile-attention .overlay-plot[data-drawn='1']", timeout=60000)
            shoot(page.locator("#compile-attention"), "compiled-heads.png")
            if args.train:
                page.click("#tab-train")
                page.fill("#train-max-len", "5")
                page.click("#train-start")
                page.wait_for_selector(".run-line[data-status='done']", timeout=600000)
                page.wait_for_selector("#train-overlay .overlay-card .overlay-plot[data-drawn='1']", timeout=60000)
                shoot(page.locator("#train-overlay"), "trained-overlay.png")
            context.close()
        finally:
            browser.close()
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
