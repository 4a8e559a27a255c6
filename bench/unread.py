"""Unread answers bench (issue 18): N connections each ask for a large evaluation (6 selectors on 16
inputs of 256 tokens: ~12.6 MB of JSON) and read none of it; prints the server's main-process resident
memory before and after, and what the server holds for them.

    python bench/unread.py [--root DIR] [--connections 16]

With --root, runs another source tree laid out as a `rasplay` package (an older version, to compare).
"""
from __future__ import annotations

import argparse
import json
import socket
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from resources import start_server  # noqa: E402

PROGRAM = "\n".join(f"s{i} = select(indices, indices + {i}, <);" for i in range(6))
INPUTS = ["a" * 256] * 16
MiB = 1 << 20


def resident(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * 4096


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, help="another source tree (a directory holding `rasplay/`)")
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    n = args.connections
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start_server(Path(tmp), args.root, [
            "--workers", "2", "--max-input-length", "256", "--max-inputs", "16", "--train-warm", "0",
            "--queue-seconds", "600", "--eval-seconds", "30",
            *([] if args.root else ["--max-response-bytes", "16MiB", "--send-seconds", "600",
                                    "--client-pending-bytes", "1GiB", "--client-connections", "1000"])])
        sockets = []
        try:
            with httpx.Client(base_url=url, timeout=120) as c:
                size = len(c.post("/api/v1/evaluate", json={"source": PROGRAM, "inputs": INPUTS}).content)
                before = resident(process.pid)
                looked_up = c.get("/api/v1/health").json()["cache"]["misses"]
                for k in range(n):
                    body = json.dumps({"source": PROGRAM + f"\n# {k}", "inputs": INPUTS}).encode()
                    s = socket.socket()
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                    s.connect(("127.0.0.1", int(url.rsplit(":", 1)[1])))
                    s.sendall(b"POST /api/v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                              b"Content-Length: %d\r\n\r\n" % len(body) + body)
                    sockets.append(s)
                while c.get("/api/v1/health").json()["cache"]["misses"] < looked_up + n:   # all have arrived
                    time.sleep(0.1)
                # one more request from the same address: it waits behind those 16 (in either version's
                # queue), so when it is answered they have been too, or nearly
                c.post("/api/v1/evaluate", json={"source": "y = indices;", "inputs": ["ab"]})
                time.sleep(3)   # the last answers leave the workers (a bench may wait; tests do not)
                health = c.get("/api/v1/health").json()
                after = resident(process.pid)
            print(f"{n} connections, each asking for a {size / 1e6:.1f} MB answer and reading none of it "
                  f"({n * size / 1e6:.0f} MB in all)")
            print(f"main process resident: {before / MiB:.0f} MiB before, {after / MiB:.0f} MiB after "
                  f"(+{(after - before) / MiB:.0f} MiB)")
            if "responses" in health:
                print(f"answers being sent: {health['responses']}")
        finally:
            for s in sockets:
                s.close()
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    main()
