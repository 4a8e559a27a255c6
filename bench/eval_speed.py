"""Evaluation speed and memory: reverse, histogram and stable sort at n = 16 .. 4096.

Prints the median wall time of engine.evaluate (parse + interpret + evaluate, one input) and the
peak memory numpy and Python allocate during one evaluation (tracemalloc), with the targets of
issue 2: stable sort at n=256 under 5 ms; at n=4096 under 2 s and 1 GiB. "full" builds the whole
evaluation document (every selector as nested lists, which dominates at large n); "output" asks
for the program's output s-op only (names=[output]).

    python bench/eval_speed.py [--repeat 7]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rasplay import engine  # noqa: E402
from rasplay.engine.examples import find_example  # noqa: E402

PROGRAMS = {"reverse": "reverse", "histogram": "histogram", "stable sort": "sort_stable"}
SIZES = [16, 64, 256, 1024, 4096]


def measure(source: str, word: str, repeat: int, names=None) -> tuple[float, float]:
    engine.evaluate(source, [word], names=names)  # warm up (parser tables, library)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        doc = engine.evaluate(source, [word], names=names)
        times.append(time.perf_counter() - start)
    assert not [d for d in doc["diagnostics"] if d["severity"] == "error"], doc["diagnostics"]
    tracemalloc.start()
    engine.evaluate(source, [word], names=names)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return statistics.median(times), peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(0)
    print(f"{'program':<12} {'n':>5} {'full ms':>9} {'full MiB':>9} {'output ms':>10} {'output MiB':>11}")
    figures = {}
    for label, example_id in PROGRAMS.items():
        example = find_example(example_id)
        for n in SIZES:
            word = "".join(rng.choice("abcdefgh") for _ in range(n))
            repeat = args.repeat if n < 4096 else max(3, args.repeat // 2)
            full = measure(example.source, word, repeat)
            out = measure(example.source, word, repeat, names=[example.output])
            figures[(label, n)] = full
            print(f"{label:<12} {n:>5} {full[0] * 1000:>9.2f} {full[1] / 2**20:>9.1f} "
                  f"{out[0] * 1000:>10.2f} {out[1] / 2**20:>11.1f}")
    s256, _ = figures[("stable sort", 256)]
    s4k, m4k = figures[("stable sort", 4096)]
    print("\n(targets checked on the full document)")
    print()
    print(f"stable sort n=256:  {s256 * 1000:.2f} ms  (target 5 ms: {5e-3 / s256:.1f}x under)")
    print(f"stable sort n=4096: {s4k:.3f} s  (target 2 s: {2 / s4k:.1f}x under), "
          f"{m4k / 2**20:.0f} MiB (target 1024 MiB: {2**30 / m4k:.1f}x under)")


if __name__ == "__main__":
    main()
