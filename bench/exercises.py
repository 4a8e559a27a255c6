"""Exercise checks: time per shipped exercise (cold: the reference evaluated too; warm: its values
cached, as in a server worker after the first check), and the batched evaluation of all checked
inputs against evaluating them one by one.

    python bench/exercises.py
"""
from __future__ import annotations

import time

from rasplay.engine import DEFAULT_LIMITS, evaluate
from rasplay.engine.exercises import check, generate_inputs, load_catalog
from rasplay.engine.exercises.grading import _CACHE


def best(fn, repeat=3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    catalog, _ = load_catalog()
    evaluate("x = length;", ["ab"])
    print(f"{'exercise':18} {'inputs':>6} {'cold ms':>8} {'warm ms':>8} {'one by one ms':>14} {'ratio':>6}")
    total_warm = total_single = 0.0
    for ex in catalog.ordered():
        def cold():
            _CACHE.clear()
            assert check(ex, ex.reference)["passed"]
        cold_s = best(cold, 2)
        warm_s = best(lambda: check(ex, ex.reference))
        inputs = generate_inputs(ex)
        single = best(lambda: [evaluate(ex.reference, [i], names=[ex.target], input_format=ex.input_format)
                               for i in inputs], 1)
        batched = best(lambda: evaluate(ex.reference, inputs, names=[ex.target], input_format=ex.input_format,
                                        limits=DEFAULT_LIMITS.with_(max_inputs=len(inputs), max_input_length=64)))
        total_warm += warm_s
        total_single += single
        print(f"{ex.id:18} {len(inputs):6d} {1000 * cold_s:8.1f} {1000 * warm_s:8.1f} {1000 * single:14.1f} "
              f"{single / batched:6.1f}x")
    print(f"all {len(catalog.exercises)} warm checks: {1000 * total_warm:.0f} ms; the same inputs one by one "
          f"(reference only): {1000 * total_single:.0f} ms")


if __name__ == "__main__":
    main()
