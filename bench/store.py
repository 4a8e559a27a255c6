"""The store of links and models: SQLite (the default) beside PostgreSQL (a fresh cluster from Debian's
package, started as the tests start it, with fsync on), one process, one thread: new links, links opened again, and
`rasplay store copy` of the SQLite store into PostgreSQL. Prints the time per operation (p50, p99) and
the ratios; nothing is asserted.

    python bench/store.py [--links 2000]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from postgres_server import PostgresServer   # noqa: E402
from rasplay.server.store import open_store  # noqa: E402
from rasplay.server.store_copy import copy_store  # noqa: E402


def timed(fn, items) -> list[float]:
    out = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        out.append(time.perf_counter() - start)
    return out


def show(name: str, times: list[float]) -> float:
    ordered = sorted(times)
    p50, p99 = statistics.median(ordered), ordered[int(0.99 * (len(ordered) - 1))]
    print(f"  {name:<22} p50 {p50 * 1e3:7.3f} ms   p99 {p99 * 1e3:7.3f} ms")
    return p50


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--links", type=int, default=2000)
    args = parser.parse_args()
    states = [{"source": f"# link {i}\nout = reverse(tokens);", "inputs": ["hello", str(i)]} for i in range(args.links)]
    server = PostgresServer(fsync=True)   # durable writes, as SQLite's synchronous=FULL
    try:
        with tempfile.TemporaryDirectory() as tmp:
            medians = {}
            for name, location in (("SQLite", tmp), ("PostgreSQL", server.new_database())):
                store = open_store(location, None, 1 << 30)
                print(f"{name} ({args.links} links, one thread):")
                ids = []
                medians[name, "put"] = show("new link (put_link)", timed(lambda s: ids.append(store.put_link(s)), states))
                medians[name, "get"] = show("open a link (get_link)", timed(store.get_link, ids))
                store.close()
            for op in ("put", "get"):
                print(f"PostgreSQL / SQLite, {op}: {medians['PostgreSQL', op] / medians['SQLite', op]:.2f}")
            target = server.new_database()
            start = time.perf_counter()
            copy_store(tmp, target, out=open("/dev/null", "w"))
            print(f"store copy of {args.links} links SQLite -> PostgreSQL: {time.perf_counter() - start:.2f} s")
    finally:
        server.close()


if __name__ == "__main__":
    main()
