"""Fairness bench (issue 18): one address floods the evaluation workers with heavy evaluations over N
connections while another user (another loopback address) evaluates the reverse example back to back;
prints that user's p50/p99/max latency and statuses for each N, and what the flood got.

    python bench/fairness.py [--root DIR] [--floods 0,4,8,16] [--requests 60] [--workers 4] [--serve FLAGS]

With --root, runs another source tree laid out as a `rasplay` package (an older version, to compare).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from resources import REVERSE, start_server  # noqa: E402

# ~0.3 s of the engine's Python on one core (a comprehension the interpreter runs element by element)
HEAVY = "x = [[(i * j) % 7 for j in range(300)] for i in range(300)];\ny = indices;\n# {}"


def client(url: str, address: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=120, transport=httpx.HTTPTransport(local_address=address))


def measure(url: str, connections: int, requests: int) -> tuple[list[float], Counter, Counter]:
    stop, flood_statuses = threading.Event(), Counter()

    def flood(k: int) -> None:
        with client(url, "127.0.0.2") as c:
            i = 0
            while not stop.is_set():
                try:
                    flood_statuses[c.post("/api/v1/evaluate", json={"source": HEAVY.format(f"{k}-{i}-{time.time()}"),
                                                                    "inputs": ["ab"]}).status_code] += 1
                except httpx.HTTPError as e:
                    flood_statuses[type(e).__name__] += 1
                i += 1

    threads = [threading.Thread(target=flood, args=(k,), daemon=True) for k in range(connections)]
    for t in threads:
        t.start()
    time.sleep(2.0 if connections else 0)   # let the flood fill the workers and its queue
    latencies, statuses = [], Counter()
    with client(url, "127.0.0.3") as victim:
        for i in range(requests):
            start = time.perf_counter()
            r = victim.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": [f"abc{i}-{time.time()}"]})
            latencies.append(time.perf_counter() - start)
            statuses[r.status_code] += 1
    stop.set()
    for t in threads:
        t.join(120)
    return latencies, statuses, flood_statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, help="another source tree (a directory holding `rasplay/`)")
    parser.add_argument("--floods", default="0,4,8,16", help="flood connections to try (comma-separated)")
    parser.add_argument("--requests", type=int, default=60, help="the other user's evaluations per level")
    parser.add_argument("--workers", type=int, default=4, help="evaluation workers (default 4: 2 per core on 2 cores)")
    parser.add_argument("--serve", default="", help="more `rasplay serve` flags, e.g. '--client-workers 2'")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start_server(Path(tmp), args.root, ["--workers", str(args.workers), "--train-warm", "0",
                                                           *args.serve.split()])
        try:
            print(f"{args.workers} evaluation workers; the other user's evaluation of the reverse example, "
                  f"{args.requests} times back to back, beside N connections from one address")
            print(f"{'N':>3} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}  other user's statuses   flood's statuses")
            for n in (int(x) for x in args.floods.split(",")):
                latencies, statuses, flood = measure(url, n, args.requests)
                ms = sorted(1000 * x for x in latencies)
                p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
                print(f"{n:>3} {statistics.median(ms):8.1f} {p99:8.1f} {ms[-1]:8.1f}  {dict(statuses)!s:22} "
                      f"{dict(flood)}")
        finally:
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    main()
