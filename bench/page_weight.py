"""Page weight on a classroom network: start `rasplay serve` on loopback and measure, in Debian's Chromium,

1. bytes on the wire (Chromium's own count: headers and bodies as sent, compressed or not) of a first visit
   up to the first drawn heatmap, and of a second visit in the same browser profile (its HTTP cache kept);
2. the time from navigation to the first drawn heatmap, on loopback and under Chromium's network emulation
   (default 20 Mbit/s down and up, 40 ms round trip), over several first visits (fresh contexts);
3. a class-sized burst: N simulated first visits at once (the page, every asset a first visit fetches, as
   Chromium asked for them, and one evaluation each), against one server: visit time p50/p99, errors, bytes,
   and the CPU seconds the server (with its worker processes) spent.

Goals (issue 21, this 2-core machine): first visit <= 600 KB, second <= 60 KB, first heatmap <= 0.8 s on
loopback and <= 1.5 s throttled, the burst with 0 errors. Tests assert the behaviour (encodings, cache
headers, charts); the figures live here.

    python bench/page_weight.py [--visits 3] [--burst 300] [--concurrency 100] [--mbit 20] [--rtt 40]
"""
from __future__ import annotations

import argparse
import asyncio
import os
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
DRAWN = "() => { const plot = document.getElementById('heatmap-plot'); return plot && plot.dataset.drawn; }"


LOCAL = ("http://127.0.0.1", "data:", "blob:")
LEFT: list[str] = []   # requests that would leave loopback (the page must make none)


def guard(context) -> None:
    """Record every request that leaves loopback. (Not a Playwright route: routing turns the browser's HTTP
    cache off, and the second visit measures that cache.) The tests fail such requests; here they are counted."""
    context.on("request", lambda r: None if r.url.startswith(LOCAL) else LEFT.append(r.url))


class Wire:
    """Bytes on the wire per request of one page, from Chromium's DevTools protocol (encodedDataLength:
    the response as received, headers included)."""

    def __init__(self, page, throttle: dict | None = None):
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Network.enable")
        if throttle:
            self.cdp.send("Network.emulateNetworkConditions", throttle)
        self.urls: dict[str, str] = {}
        self.bytes: dict[str, int] = {}
        self.cdp.on("Network.requestWillBeSent", lambda e: self.urls.__setitem__(e["requestId"], e["request"]["url"]))
        self.cdp.on("Network.loadingFinished",
                    lambda e: self.bytes.__setitem__(e["requestId"], int(e["encodedDataLength"])))

    def total(self) -> int:
        return sum(self.bytes.values())

    def by_url(self) -> dict[str, int]:
        return {self.urls.get(k, k): v for k, v in self.bytes.items()}


def visit(context, url: str, throttle: dict | None = None) -> tuple[float, Wire]:
    page = context.new_page()
    wire = Wire(page, throttle)
    start = time.monotonic()
    page.goto(url, wait_until="commit", timeout=120000)
    page.wait_for_function(DRAWN, timeout=120000)
    took = time.monotonic() - start
    page.wait_for_load_state("networkidle", timeout=120000)
    page.close()
    return took, wire


def browser_figures(browser, url: str, visits: int, throttle: dict) -> dict:
    out = {}
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    guard(context)
    _, first = visit(context, url)
    _, second = visit(context, url)
    context.close()
    out["first_bytes"], out["second_bytes"] = first.total(), second.total()
    out["first_by_url"] = first.by_url()
    out["second_by_url"] = second.by_url()
    for name, profile in (("loopback", None), ("throttled", throttle)):
        times = []
        for _ in range(visits):
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            guard(context)
            took, _ = visit(context, url, profile)
            times.append(took)
            context.close()
        out[name] = times
    return out


def wait_for_best_compression(url: str, timeout: float = 120) -> float:
    """Seconds until the server serves the vendored bundles at brotli's best setting (it compresses every file
    quickly at first use, then at the best settings in the background; a class arrives after that)."""
    import brotli
    import httpx

    best = {p.name: len(brotli.compress(p.read_bytes(), quality=11)) for p in (ROOT / "web" / "vendor").glob("*.js")}
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if all(int(httpx.head(f"{url}/vendor/{name}", headers={"accept-encoding": "br"}).headers.get("content-length", 0))
               <= size for name, size in best.items()):
            return time.monotonic() - start
        time.sleep(0.2)
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its descendants (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    stats: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        stats[int(entry)] = (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / tick
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += stats.get(p, 0.0)
        todo.extend(children.get(p, []))
    return total


async def burst(url: str, paths: list[str], visits: int, concurrency: int, source: str) -> dict:
    import httpx

    headers = {"accept-encoding": "gzip, deflate, br", "user-agent": "rasplay-bench"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    times, errors, retried, wire = [], [], [], 0
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120, headers=headers) as client:
        async def one(i: int):
            nonlocal wire
            start = time.monotonic()
            try:
                for path in paths:
                    for attempt in (1, 2):
                        try:
                            async with client.stream("GET", path) as r:   # bodies as sent: not decoded here
                                async for chunk in r.aiter_raw():
                                    wire += len(chunk)
                            break
                        except httpx.RemoteProtocolError:
                            # a keep-alive connection the server closed as it was reused: a browser sends
                            # such a GET again on a new connection, and so does this client (counted)
                            if attempt == 2:
                                raise
                            retried.append(path)
                    if r.status_code != 200:
                        errors.append(f"{path}: {r.status_code}")
                r = await client.post("/api/v1/evaluate", json={"source": source, "inputs": [f"hello{i % 50}"]})
                wire += r.num_bytes_downloaded
                if r.status_code != 200:
                    errors.append(f"evaluate: {r.status_code} {r.text[:200]}")
            except httpx.HTTPError as e:
                errors.append(f"{type(e).__name__}: {e}")
            times.append(time.monotonic() - start)

        start = time.monotonic()
        await asyncio.gather(*(one(i) for i in range(visits)))
        wall = time.monotonic() - start
    times.sort()
    return {"p50": statistics.median(times), "p99": times[min(len(times) - 1, int(0.99 * len(times)))],
            "errors": errors, "retried": retried, "wall": wall, "wire": wire}


class Running:
    """A server started elsewhere (--url), left running."""

    def __init__(self, url: str, pid: int | None):
        self.url = url.rstrip("/")
        self.process = type("Process", (), {"pid": pid or 0})()

    def stop(self) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--visits", type=int, default=3)
    parser.add_argument("--burst", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--mbit", type=float, default=20.0)
    parser.add_argument("--rtt", type=float, default=40.0)
    parser.add_argument("--url", help="measure a server already running there (e.g. another version of rasplay, "
                                      "for a before/after figure under the same machine load) instead of starting one")
    parser.add_argument("--server-pid", type=int, help="with --url: the server's process id, for its CPU seconds")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if not chromium:
        raise SystemExit("bench/page_weight.py needs Debian's chromium (make test-deps installs it)")
    rate = args.mbit * 1e6 / 8
    throttle = {"offline": False, "latency": args.rtt, "downloadThroughput": rate, "uploadThroughput": rate}
    source = (ROOT / "examples" / "reverse.rasp").read_text()
    with tempfile.TemporaryDirectory() as data:
        # the simulated class is one process on one address, where a class has an address per student: the
        # server's limit of connections per address (64 by default) is raised above the burst's connections
        # (a server given with --url: start it with --client-connections at least --concurrency)
        server = Running(args.url, args.server_pid) if args.url else \
            LiveServer(Path(data), "--client-connections", str(max(64, 2 * args.concurrency)))
        try:
            warm = wait_for_best_compression(server.url, timeout=20 if args.url else 120)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                fig = browser_figures(browser, server.url, args.visits, throttle)
                browser.close()
            # the burst fetches what a first visit fetched (same URLs), with no browser running beside it
            paths = [u[len(server.url):] for u in fig["first_by_url"]
                     if u.startswith(server.url) and "/api/" not in u]
            before, client_before = cpu_seconds(server.process.pid), time.process_time()
            b = asyncio.run(burst(server.url, paths, args.burst, args.concurrency, source))
            cpu = cpu_seconds(server.process.pid) - before
            client_cpu = time.process_time() - client_before
        finally:
            server.stop()
    print(f"best compression of every file ready {warm:.1f} s after the server answered")
    kb = lambda n: f"{n / 1000:,.0f} KB"  # noqa: E731
    print(f"first visit: {kb(fig['first_bytes'])} on the wire ({fig['first_bytes'] / 600e3:.2f} x the 600 KB goal); "
          f"second visit: {kb(fig['second_bytes'])} ({fig['second_bytes'] / 60e3:.2f} x the 60 KB goal)")
    for u, n in sorted(fig["first_by_url"].items(), key=lambda kv: -kv[1])[:8]:
        print(f"    {n / 1000:8,.1f} KB  {u.replace(server.url, '')}")
    for name, goal in (("loopback", 0.8), ("throttled", 1.5)):
        t = fig[name]
        print(f"first heatmap, {name}{f' ({args.mbit:g} Mbit/s, {args.rtt:g} ms RTT)' if name == 'throttled' else ''}: "
              f"{', '.join(f'{x:.3f}' for x in t)} s (median {statistics.median(t):.3f} s, "
              f"{statistics.median(t) / goal:.2f} x the {goal} s goal)")
    print(f"burst: {args.burst} first visits ({len(paths)} files + 1 evaluation each, {args.concurrency} connections): "
          f"p50 {b['p50']:.2f} s, p99 {b['p99']:.2f} s, all done in {b['wall']:.1f} s, {len(b['errors'])} errors "
          f"({len(b['retried'])} GETs sent again on a new connection), "
          f"{b['wire'] / 1e6:,.1f} MB on the wire, server CPU {cpu:.1f} s ({cpu / b['wall']:.2f} cores; "
          f"the simulated class, one Python process, {client_cpu:.1f} s); load average {os.getloadavg()[0]:.1f}")
    print(f"requests that left loopback: {len(LEFT)} {LEFT[:3]}")
    for e in b["errors"][:5]:
        print("    error:", e)


if __name__ == "__main__":
    main()
