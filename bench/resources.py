"""Resource bench: memory held by workers after a burst of memory-heavy requests, and the latency of
plain evaluations while heavy compiler work runs. Starts `rasplay serve` on loopback (from this tree,
or with --root from another source tree laid out as a `rasplay` package, to compare with an older
version) and prints figures.

    python bench/resources.py [--root DIR] [--workers 2] [--seconds 20] [--skip-memory] [--skip-fairness]

Memory: 4 requests, each building ~250 MB of strings that stay bound to a name (so an interpretation
cache would keep them), then one request building ~800 MB; prints each status and every worker's
resident memory afterwards.
Fairness: 4 clients (each from its own loopback address) each ask for the soft-attention study of a
maximal compiled model (max_len 24, vocabulary 32) while one client evaluates the reverse example
back to back; prints the evaluations' p50/p99/max latency and the statuses of both.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from live_server import free_port  # noqa: E402

REVERSE = "opp = length - indices - 1;\nflip = select(indices, opp, ==);\nreverse = aggregate(flip, tokens);"
PAGE = os.sysconf("SC_PAGE_SIZE")


def start_server(data: Path, root: Path | None, extra: list[str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = dict(os.environ)
    if root is not None:
        env["PYTHONPATH"] = str(root)
    cmd = [sys.executable, "-m", "rasplay.cli", "serve", "--port", str(port), "--data-dir", str(data), *extra]
    process = subprocess.Popen(cmd, env=env, stdout=open(data / "server.log", "w"), stderr=subprocess.STDOUT,
                               start_new_session=True, cwd=data)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/api/v1/health", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError((data / "server.log").read_text())


def children_rss(pid: int) -> dict[int, int]:
    """Resident bytes of every process below `pid` (the server's workers)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    below, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - below
        below |= frontier
    out = {}
    for p in below:
        try:
            out[p] = int(open(f"/proc/{p}/statm").read().split()[1]) * PAGE
        except OSError:
            pass
    return out


def memory_burst(url: str, pid: int) -> None:
    mib = lambda b: f"{b / 2**20:.0f} MiB"  # noqa: E731
    print("worker RSS at start:", ", ".join(mib(v) for v in sorted(children_rss(pid).values())))
    with httpx.Client(base_url=url, timeout=120) as c:
        for k in range(4):
            source = f'big{k} = ["x" * 100000 for i in range(2500)];\ny = indices;'
            start = time.monotonic()
            r = c.post("/api/v1/evaluate", json={"source": source, "inputs": ["ab"]})
            print(f"  request {k + 1} (~250 MB kept by a name): {r.status_code} in {time.monotonic() - start:.1f} s")
        time.sleep(1.0)
        print("worker RSS after 4 requests:", ", ".join(mib(v) for v in sorted(children_rss(pid).values())))
        start = time.monotonic()
        r = c.post("/api/v1/evaluate", json={"source": 'huge = ["x" * 100000 for i in range(8000)];\ny = indices;',
                                             "inputs": ["ab"]})
        kind = r.json().get("error", {}).get("kind", "") if r.status_code != 200 else ""
        print(f"  one request building ~800 MB: {r.status_code} {kind} in {time.monotonic() - start:.1f} s")
        time.sleep(1.0)
        print("worker RSS after it:", ", ".join(mib(v) for v in sorted(children_rss(pid).values())))


def fairness(url: str, seconds: float) -> None:
    vocab = "abcdefghijklmnopqrstuvwxyz012345"
    with httpx.Client(base_url=url, timeout=120) as c:
        r = c.post("/api/v1/compile", json={"source": REVERSE, "output": "reverse", "vocab": vocab, "max_len": 24})
        r.raise_for_status()
        model = r.json()["id"]
        c.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": ["abc"]})   # warm
    heavy_status: list = []
    stop = threading.Event()

    def heavy(address: str):
        transport = httpx.HTTPTransport(local_address=address)
        with httpx.Client(base_url=url, timeout=300, transport=transport) as c:
            while not stop.is_set():
                r = c.post(f"/api/v1/models/{model}/soft",
                           json={"betas": [2.0 ** i for i in range(64)], "per_length": 2000,
                                 "exhaustive_limit": 50000})
                heavy_status.append(r.status_code)
                if r.status_code == 429:
                    time.sleep(float(r.headers.get("retry-after", "1")))

    threads = [threading.Thread(target=heavy, args=(f"127.0.0.{k + 2}",)) for k in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    latencies, statuses = [], []
    end = time.monotonic() + seconds
    with httpx.Client(base_url=url, timeout=120) as c:
        i = 0
        while time.monotonic() < end:
            start = time.perf_counter()
            r = c.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": [f"abc{i % 97}"]})
            latencies.append(time.perf_counter() - start)
            statuses.append(r.status_code)
            i += 1
            time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join(300)
    latencies.sort()
    n = len(latencies)
    p = lambda q: latencies[min(n - 1, int(q * n))] * 1000  # noqa: E731
    count = lambda xs: {s: xs.count(s) for s in sorted(set(xs))}  # noqa: E731
    print(f"evaluations while 4 clients run soft studies: {n} in {seconds:g} s; latency ms p50 {p(0.5):.0f}  "
          f"p99 {p(0.99):.0f}  max {latencies[-1] * 1000:.0f}  mean {statistics.mean(latencies) * 1000:.0f}; "
          f"statuses {count(statuses)}")
    print(f"soft studies: statuses {count(heavy_status)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, help="run the server from this source tree (holding rasplay/)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-fairness", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        process, url = start_server(Path(data), args.root, ["--workers", str(args.workers)] +
                                    ([] if args.root else ["--worker-memory", "512MiB"]))
        try:
            print(f"server from {args.root or ROOT}, {args.workers} evaluation workers"
                  + ("" if args.root else ", --worker-memory 512MiB"))
            if not args.skip_memory:
                memory_burst(url, process.pid)
            if not args.skip_fairness:
                fairness(url, args.seconds)
        finally:
            os.killpg(process.pid, 15)
            process.wait(20)


if __name__ == "__main__":
    main()
