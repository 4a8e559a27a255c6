"""Compiled sizes side by side: each program of Tracr's lib.py written with the Tracr API
(lib_programs.py, lowered by rasplay.tracr) and our RASP version (bench/tracr_programs/).

    python bench/tracr_api/sizes.py [--sizes 5 10]

Prints layers, heads per layer, residual width and parameters of both, and the lowered program's
agreement with the evaluator (exhaustive up to 2,000 inputs, else sampled).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import rasplay  # noqa: E402
import rasplay.tracr as tracr  # noqa: E402
from pairs import PAIRS  # noqa: E402

tracr.install_alias()
import lib_programs  # noqa: E402


def sizes(model) -> str:
    s = model.summary()
    return f"{s['layers']:>2} {','.join(map(str, s['heads_per_layer'])):<7} {s['residual_width']:>5} {s['params']:>8}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 10])
    args = parser.parse_args()
    print(f"{'program':<16} {'N':>3} | {'Tracr API lowered: L heads resid params':<40} | "
          f"{'our RASP: L heads resid params':<32} | agreement (lowered)")
    for name, (file, vocab) in PAIRS.items():
        source = (HERE.parent / "tracr_programs" / file).read_text()
        for n in args.sizes:
            try:
                make = getattr(lib_programs, name)
                program = make(max_seq_len=n) if name in ("sort", "sort_freq") else make()   # keys unique up to n
                ours = tracr.compile(program, vocab, n)
                left = sizes(ours)
                c = ours.check(exhaustive_limit=2000, per_length=50, seed=0)
                agree = f"{c['agree']}/{c['inputs']}"
            except rasplay.RaspError as e:
                left, agree = f"does not compile: {e.message[:30]}", "-"
            try:
                right = sizes(rasplay.compile(source, vocab=vocab, max_len=n))
            except rasplay.RaspError as e:
                right = f"does not compile: {e.message[:20]}"
            print(f"{name:<16} {n:>3} | {left:<40} | {right:<32} | {agree}")


if __name__ == "__main__":
    main()
