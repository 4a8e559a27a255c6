"""Length-free models at long lengths: agreement with the evaluator, seconds per input, the soft-attention
story (fixed inverse temperature vs the paper's temperature scaling), and where float precision ends.

    python bench/every_length.py [--quick]

Prints figures (no thresholds): docs/every_length.md quotes them."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from rasplay.engine import compile
from rasplay.engine.compiler.length_free import length_study

PROGRAMS = Path(__file__).resolve().parent.parent / "tests" / "length_free_programs"
CASES = {"parity": "01", "majority": "01", "dyck1": "()", "a_before_b": "abc", "flipflop": "01ri",
         "induction": "abc"}


def agreement_table(lengths, samples):
    print("program       " + "".join(f"{n:>12}" for n in lengths) + "   s/input at the longest")
    for name, vocab in CASES.items():
        model = compile((PROGRAMS / f"{name}.rasp").read_text(), vocab=vocab, length_free=True)
        cells, secs = [], 0.0
        for n in lengths:
            start = time.perf_counter()
            doc = model.check(lengths=(n,), per_length={n: samples}, seed=7)
            secs = (time.perf_counter() - start) / samples
            p = doc["per_length"][0]
            cells.append(f"{p['agree']}/{p['inputs']}")
        print(f"{name:<14}" + "".join(f"{c:>12}" for c in cells) + f"   {secs:.2f}")


def soft_table(lengths, samples):
    print("\nsoft attention: share of inputs right at every position (fixed beta = 20 | scaled | hard)")
    for name, vocab in CASES.items():
        model = compile((PROGRAMS / f"{name}.rasp").read_text(), vocab=vocab, length_free=True)
        s = length_study(model, lengths=lengths, fixed_beta=20.0, samples=samples, seed=3)
        row = "  ".join(f"n={n}: {f:.2f}|{c:.2f}|{h:.2f}" for n, f, c, h in
                        zip(s["lengths"], s["fixed"], s["scaled"], s["hard"]))
        print(f"{name:<14}{row}")


def precision():
    """The rightmost head separates neighbouring matches by 1/(2 p (p + 1)) on scores near 1: the first
    length at which two neighbours' scores round to the same float."""
    print("\nrightmost head: first length whose neighbouring scores 1 - 1/(2(p+1)) tie after rounding")
    for dtype in (np.float16, np.float32, np.float64):
        n = 2
        while n < 1 << 27:
            p = np.arange(1, n + 1, dtype=np.float64)
            s = (1.0 - 0.5 / (p + 1.0)).astype(dtype)
            if np.any(np.diff(s) <= 0):
                print(f"  {np.dtype(dtype).name}: n = {n} (the scores no longer grow with p)")
                break
            n *= 2
        else:
            print(f"  {np.dtype(dtype).name}: none up to {n}")
    print("lookup head (parity): first length at which the score of t = C - 1 or C + 1 reaches that of t = C "
          "(C = n - 1, scores 2 t C/D - t^2/D computed as the head does)")
    for dtype in (np.float16, np.float32, np.float64):
        n, found = 4, None
        while n <= 1 << 40:
            D = n + 1
            for C in (n - 1, n // 2):
                q = np.array([C / D, 1.0 / D], dtype=dtype)
                t = np.array([C - 1, C, C + 1], dtype=dtype)
                s = (2 * t * q[0] - t * t * q[1]).astype(dtype)
                if not (s[1] > s[0] and s[1] > s[2]):
                    found = n
            if found:
                break
            n *= 2
        print(f"  {np.dtype(dtype).name}: " + (f"n = {found}" if found else f"none up to {n // 2}"))

if __name__ == "__main__":
    quick = "--quick" in sys.argv
    lengths = (16, 64, 256, 1024) if quick else (16, 64, 256, 1024, 4096)
    agreement_table(lengths, 4 if quick else 8)
    soft_table((8, 64, 256) if quick else (8, 64, 256, 1024), 8)
    precision()
