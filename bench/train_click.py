"""Click to 99%: what the Train tab's "Ablate" button does, timed over HTTP against a real server.

Starts `rasplay serve` (two training jobs at once, two warm spare processes with PyTorch loaded), waits
for the spares, then sends what the page sends for Reverse (vocab of "hello", lengths 1..16, the page's
defaults: d_model 32, batch 32, lr 5e-3, stop at 99% held-out per sequence, 45 s time budget) for the
predicted 2-layer model and, at the same moment, the 1-layer ablation. Prints, from the "click" (the
POST): when each job sent its first event, when the 2-layer model first reached >= 99% held-out per
sequence, and the 1-layer model's accuracy then and at its end. The 2-core machine may be shared:
the load average is printed with the figures; run it again on a quiet machine before trusting them.

    python bench/train_click.py [--budget SEC] [--repeat N]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from live_server import LiveServer  # noqa: E402

SOURCE = (ROOT / "examples" / "reverse.rasp").read_text()
REQUEST = {"source": SOURCE, "output": "reverse", "vocab": "ehlo", "min_len": 1, "max_len": 16, "d_model": 32,
           "batch_size": 32, "lr": 0.005, "steps": 3000, "stop_at": 0.99, "example": "hello"}


def follow(url: str, job_id: str, t0: float, out: dict) -> None:
    """Read the job's server-sent events, noting when things happen (seconds after t0)."""
    with httpx.stream("GET", f"{url}/api/v1/train/{job_id}/events", timeout=None) as r:
        event = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
                now = time.monotonic() - t0
                out.setdefault("first_event", now)
                if event == "done":
                    out["done"] = now
                    return
                if data.get("point") == "phase":
                    out.setdefault("phases", []).append((round(now, 1), data["phase"]))
                if data.get("point") == "eval":
                    out.setdefault("training", now - data["elapsed"])
                    out["last"] = (now, data["step"], data["test_seq_acc"])
                    out.setdefault("curve", []).append((round(now, 1), data["step"], data["test_seq_acc"]))
                    if data["test_seq_acc"] >= 0.99:
                        out.setdefault("t99", (now, data["step"]))


def once(server: LiveServer, budget: float) -> dict:
    runs = {"2 layers": {}, "1 layer": {}}
    t0 = time.monotonic()
    jobs = {name: httpx.post(f"{server.url}/api/v1/train", json={**REQUEST, "time_budget": budget,
                                                                   **({"layers": 1} if name == "1 layer" else {})},
                             timeout=60).json() for name in runs}
    threads = [threading.Thread(target=follow, args=(server.url, jobs[n]["id"], t0, runs[n])) for n in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name, job in jobs.items():
        runs[name]["warm"] = httpx.get(f"{server.url}/api/v1/train/{job['id']}").json().get("warm")
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=45.0, help="training seconds per job (the page's default 45)")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as data:
        server = LiveServer(Path(data), "--workers", "2", "--train-jobs", "2", "--train-warm", "2",
                            "--train-seconds", "600")
        try:
            for i in range(args.repeat):
                deadline = time.monotonic() + 300
                while time.monotonic() < deadline:   # both spares have loaded PyTorch (again, after a run)
                    if httpx.get(f"{server.url}/api/v1/health").json()["training"]["warm"] >= 2:
                        break
                    time.sleep(0.5)
                load = os.getloadavg()[0]
                runs = once(server, args.budget)
                two, one = runs["2 layers"], runs["1 layer"]
                print(f"\n== run {i + 1} (load average {load:.1f} on {os.cpu_count()} cores at the start)")
                for name, r in runs.items():
                    print(f"   {name}: warm process {r.get('warm')}, first event {r.get('first_event', float('nan')):.1f} s, "
                          f"training from {r.get('training', float('nan')):.1f} s, phases {r.get('phases')}")
                if "t99" in two:
                    t99, step = two["t99"]
                    at = [c for c in one.get("curve", []) if c[0] <= t99]
                    print(f"   click to >= 99% held-out per sequence (2 layers): {t99:.1f} s (step {step})")
                    print(f"   1 layer at that moment: {100 * at[-1][2] if at else float('nan'):.1f}% per sequence")
                else:
                    print(f"   2 layers: 99% NOT reached within {args.budget:g} s of training; last {two.get('last')}")
                last = one.get("last")
                if last:
                    print(f"   1 layer at its end ({last[0]:.1f} s, step {last[1]}): {100 * last[2]:.1f}% per sequence")
                ok = "t99" in two and two["t99"][0] <= 30
                print(f"   target (>= 99% within 30 s of the click): {'met' if ok else 'NOT met'}")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
