"""Evaluating Tracr programs: `rasp.evaluate` time per call, rasplay's alias against the real Tracr.

    python bench/tracr_eval_speed.py                 # rasplay (the alias): prints figures and ratios against
                                                     # the real Tracr's recorded figures (bench/tracr_eval_figures.json)
    PYTHONPATH=path/to/tracr python bench/tracr_eval_speed.py --record > bench/tracr_eval_figures.json
                                                     # in a separate virtualenv with the real Tracr (JAX not needed)

Each figure is the median of 3 calls on an input of the given length (tokens cycling through the vocabulary).
"""
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECORD = "--record" in sys.argv
if not RECORD:
    import rasplay.tracr
    rasplay.tracr.install_alias()
from tracr.compiler import lib  # noqa: E402
from tracr.rasp import rasp  # noqa: E402

PROGRAMS = {
    "reverse": (lambda n: lib.make_reverse(rasp.tokens), "abc"),
    "hist": (lambda n: lib.make_hist(), "abc"),
    "sort_unique": (lambda n: lib.make_sort_unique(rasp.tokens, rasp.tokens), None),
    "frac_prevs": (lambda n: lib.make_frac_prevs(rasp.tokens == "a"), "abc"),
    "pair_balance": (lambda n: lib.make_pair_balance(rasp.tokens, "(", ")"), "(()"),
    "sort_freq": (lambda n: lib.make_sort_freq(n), "abc"),
    "shuffle_dyck2": (lambda n: lib.make_shuffle_dyck2(), "({)}"),
}
LENGTHS = [10, 100, 300] if RECORD else [10, 100, 300, 600, 2000]


def seconds(make, vocab, n) -> float:
    xs = list(range(n)) if vocab is None else [vocab[i % len(vocab)] for i in range(n)]
    program = make(n)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        rasp.evaluate(program, xs)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    rows = [{"program": name, "n": n, "seconds": round(seconds(make, vocab, n), 7)}
            for name, (make, vocab) in PROGRAMS.items() for n in LENGTHS]
    if RECORD:
        print(json.dumps({"how": "bench/tracr_eval_speed.py --record under the real Tracr (github.com/deepmind/tracr, "
                                 "its DefaultRASPEvaluator), median of 3 calls, 2 shared cores", "rows": rows}, indent=1))
        return
    theirs = {}
    path = HERE / "tracr_eval_figures.json"
    if path.exists():
        theirs = {(r["program"], r["n"]): r["seconds"] for r in json.loads(path.read_text())["rows"]}
    print(f"{'program':<14} {'n':>5} {'rasplay ms':>11} {'Tracr ms':>10} {'Tracr / rasplay':>16}")
    for r in rows:
        t = theirs.get((r["program"], r["n"]))
        ratio = f"{t / r['seconds']:.1f}x" if t and r["seconds"] else "-"
        theirs_ms = f"{t * 1000:.3f}" if t is not None else "-"
        print(f"{r['program']:<14} {r['n']:>5} {r['seconds'] * 1000:>11.3f} {theirs_ms:>10} {ratio:>16}")


if __name__ == "__main__":
    main()
