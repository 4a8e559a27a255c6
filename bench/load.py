"""Load test: start `rasplay serve` on loopback and drive it with concurrent clients.

Each client keeps one HTTP/1.1 connection and sends POST /api/v1/evaluate back to back: 3 of 4
requests evaluate the reverse example on a fresh random input of length 10, the 4th a random
example from the gallery on its default input. The client is a minimal asyncio HTTP client, so that
the load generator spends little of the machine's two cores. Prints throughput, latency
percentiles and the error count (target on 2 cores: 0 errors, p99 under 100 ms).

    python bench/load.py [--clients 100] [--seconds 20] [--workers N]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from live_server import LiveServer  # noqa: E402
from rasplay.engine.examples import load_examples  # noqa: E402


def request_bytes(body: dict) -> bytes:
    payload = json.dumps(body).encode()
    head = (f"POST /api/v1/evaluate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n").encode()
    return head + payload


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = next(int(line.split(":", 1)[1]) for line in lines[1:] if line.lower().startswith("content-length:"))
    return status, await reader.readexactly(length)


async def client(port: int, stop_at: float, rng: random.Random, bodies: list, latencies: list, errors: list):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    reverse = next(b for b in bodies if b["id"] == "reverse")
    try:
        while time.monotonic() < stop_at:
            if rng.random() < 0.75:
                body = {"source": reverse["source"], "inputs": ["".join(rng.choice("abcdefgh") for _ in range(10))]}
            else:
                ex = rng.choice(bodies)
                body = {"source": ex["source"], "inputs": [ex["input"]], "input_format": ex["input_format"]}
            start = time.perf_counter()
            writer.write(request_bytes(body))
            status, payload = await read_response(reader)
            latencies.append(time.perf_counter() - start)
            if status != 200 or b'"severity":"error"' in payload:
                errors.append((status, payload[:200]))
    finally:
        writer.close()


async def drive(port: int, clients: int, seconds: float, bodies: list):
    latencies: list[float] = []
    errors: list = []
    stop_at = time.monotonic() + seconds
    started = time.monotonic()
    await asyncio.gather(*(client(port, stop_at, random.Random(i), bodies, latencies, errors) for i in range(clients)))
    return latencies, errors, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--workers", type=int, default=None, help="evaluation workers (default: the server's)")
    args = parser.parse_args()
    bodies = [{"id": e.id, "source": e.source, "input": e.input, "input_format": e.input_format}
              for e in load_examples()]
    extra = ["--workers", str(args.workers)] if args.workers else []
    with tempfile.TemporaryDirectory() as data:
        server = LiveServer(Path(data), *extra)
        try:
            asyncio.run(drive(server.port, 4, 2, bodies))  # warm up every worker's caches
            latencies, errors, elapsed = asyncio.run(drive(server.port, args.clients, args.seconds, bodies))
        finally:
            server.stop()
    latencies.sort()
    n = len(latencies)
    p = lambda q: latencies[min(n - 1, int(q * n))] * 1000  # noqa: E731
    print(f"clients {args.clients}, {elapsed:.1f} s, {n} requests, {n / elapsed:.0f} req/s")
    print(f"latency ms: p50 {p(0.50):.1f}  p90 {p(0.90):.1f}  p99 {p(0.99):.1f}  max {latencies[-1] * 1000:.1f}"
          f"  mean {statistics.mean(latencies) * 1000:.1f}")
    print(f"errors: {len(errors)}" + (f"  first: {errors[0]}" if errors else ""))
    print(f"target p99 < 100 ms: {'met' if p(0.99) < 100 else 'missed'} ({p(0.99) / 100:.2f}x of the target)")


if __name__ == "__main__":
    main()
