"""The depth hierarchy (Yang, Cadilhac and Chiang, "Knee-Deep in C-RASP"): for L_k (examples/depth_l{k}.rasp,
per prefix: is the alternating word a b a ... of length k a subsequence so far?), train k layers (the analysis'
count) and k - 1 layers, causal mask and no positional encoding, on lengths 1-20; test at 21-40 and 41-60.
Prints per-sequence accuracy per bin, mean and spread over seeds.

    python bench/depth_hierarchy.py                 # k = 2, 3, 4; 2 seeds of 30 s per model
    python bench/depth_hierarchy.py --ks 3 --seeds 3 --seconds 60

Inputs are block strings (the trainer's `blocks` option: 1..k+1 runs of one token, a+b+a+... or b+a+b+..., as the
paper's data are runs; theirs have exactly k runs and start with a), or uniform over {a, b} with --inputs uniform:
docs/length_generalization.md. Figures depend on the machine's load: say so beside them.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from rasplay.engine.train import train

ROOT = Path(__file__).resolve().parents[1]


def spread(vals: list) -> str:
    vals = [v for v in vals if v is not None]
    sd = statistics.pstdev(vals) if len(vals) > 1 else 0.0
    return f"{statistics.mean(vals):.3f} ± {sd:.3f}" if vals else "-"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ks", nargs="*", type=int, default=[2, 3, 4], choices=[2, 3, 4])
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--train-max", type=int, default=20)
    p.add_argument("--d-model", type=int, default=32)
    p.add_argument("--inputs", choices=["blocks", "uniform"], default="blocks")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    for k in args.ks:
        source = (ROOT / "examples" / f"depth_l{k}.rasp").read_text()
        for layers in (k, k - 1):
            start = time.monotonic()
            runs = [train(source, {"vocab": "ab", "min_len": 1, "max_len": args.train_max,
                                   "test_min_len": args.train_max + 1, "test_max_len": 3 * args.train_max,
                                   "layers": layers, "heads": 1, "positional": "none", "causal": True,
                                   "d_model": args.d_model, "time_budget": args.seconds, "n_train": 5000,
                                   "n_test": 100, "eval_every": 200, "seed": seed, "match_examples": 50,
                                   "blocks": k + 1 if args.inputs == "blocks" else None, "threads": args.threads})
                    for seed in range(args.seeds)]
            bins = runs[0]["lengths"]["bins"]
            cols = [spread([r["lengths"]["bins"][i]["seq_acc"] for r in runs]) for i in range(len(bins))]
            shown = ", ".join(f"{b['lo']}-{b['hi']}: {c}" for b, c in zip(bins, cols))
            print(f"L{k} with {layers} layer{'s' if layers != 1 else ''}{' (the analysis)' if layers == k else ''}: "
                  f"{shown}   (steps {[r['steps'] for r in runs]}, {time.monotonic() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
