"""How long requests wait for a frozen PostgreSQL (every process of it stopped with SIGSTOP: a host that
vanished without a word looks the same) before the store answers StoreUnavailable (a 503): N threads of
one replica each open a link at once. With `retry_seconds=0` each call waits its turn for the one
connection and then its own timeout; with the default, a call that timed out makes the others fail at
once. Prints the wait of the first, median and last call; nothing is asserted.

    python bench/store_faults.py [--threads 16]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from postgres_server import PostgresServer  # noqa: E402
from rasplay.server.store import StoreUnavailable  # noqa: E402
from rasplay.server.course.store_postgres import PostgresStore  # noqa: E402


def waits(url: str, threads: int, retry_seconds: float, server: PostgresServer) -> list[float]:
    store = PostgresStore(url, retry_seconds=retry_seconds)
    link = store.put_link({"source": "x = indices;"})
    out: list[float] = []

    def call():
        start = time.perf_counter()
        try:
            store.get_link(link)
        except StoreUnavailable:
            pass
        out.append(time.perf_counter() - start)
    server.freeze()
    try:
        workers = [threading.Thread(target=call) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        server.freeze(False)
    store.close()
    return sorted(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=16)
    args = parser.parse_args()
    server = PostgresServer()
    try:
        url = server.new_database()
        print(f"a frozen PostgreSQL, {args.threads} calls at once (connect 5 s, statement 10 s + 2 s watchdog):")
        for name, retry in (("each call waits its turn", 0.0), ("fail at once after a timeout", 2.0)):
            w = waits(url, args.threads, retry, server)
            print(f"  {name:<30} first {w[0]:5.1f} s   median {statistics.median(w):5.1f} s   last {w[-1]:5.1f} s")
    finally:
        server.close()


if __name__ == "__main__":
    main()
