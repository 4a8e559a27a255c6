"""Huang et al.'s length-generalization split, scaled down for a 2-core CPU: the six tasks of the gallery's
"length generalization" section (examples/length_*.rasp), trained on lengths 1-20 and tested held out by
length at 21-40 and 41-60, over several seeds; prints per-sequence accuracy per bin (mean and spread)
and, where the program has one, the length-free compiled model on the same inputs.

    python bench/length_generalization.py                    # all six, 3 seeds
    python bench/length_generalization.py --tasks sort parity --seeds 2 --seconds 30

The paper trains decoders on lengths up to 50 and tests at 51-100 and 101-150; the departures from its
protocol are listed in docs/length_generalization.md. Figures depend on the machine's load: say so.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from rasplay.engine.train import train

ROOT = Path(__file__).resolve().parents[1]
TASKS = {   # task -> (example, vocabulary)
    "sort": ("length_sort", "abcdefgh"),
    "unique_copy": ("length_unique_copy", "abcdefgh"),
    "majority": ("length_majority", "abcd"),
    "parity": ("length_parity", "01"),
    "repeat_copy": ("length_repeat_copy", "abcd"),
    "addition": ("length_addition", list(range(19))),
}
PAPER = {"sort": (0.9996, 0.9937), "unique_copy": (0.9986, 0.9874), "majority": (0.9962, 0.9781),
         "parity": (0.83, 0.62), "repeat_copy": (0.26, 0.00), "addition": (0.27, 0.00)}


def options(args, vocab, seed: int) -> dict:
    return {"vocab": vocab, "min_len": 1, "max_len": args.train_max, "test_min_len": args.train_max + 1,
            "test_max_len": 3 * args.train_max, "positional": args.positional, "causal": False,
            "time_budget": args.seconds, "n_train": args.n_train, "n_test": args.n_test, "d_model": args.d_model,
            "heads": args.heads, "batch_size": 64, "lr": 1e-3, "eval_every": 200, "seed": seed,
            "match_examples": 50, "threads": args.threads}


def spread(values: list) -> str:
    vals = [v for v in values if v is not None]
    if not vals:
        return "-"
    sd = statistics.pstdev(vals) if len(vals) > 1 else 0.0
    return f"{statistics.mean(vals):.3f} ± {sd:.3f}"


def run_task(name: str, args) -> dict:
    example, vocab = TASKS[name]
    source = (ROOT / "examples" / f"{example}.rasp").read_text()
    start = time.monotonic()
    per_seed = []
    for seed in range(args.seeds):
        r = train(source, options(args, vocab, seed))
        L = r["lengths"]
        per_seed.append({"seed": seed, "steps": r["steps"], "bins": [b["seq_acc"] for b in L["bins"]],
                         "acc": [b["acc"] for b in L["bins"]], "unseen": L["unseen_values"],
                         "length_free": [b["seq_acc"] for b in L["compiled"]["length_free"].get("bins", [])],
                         "length_free_reason": L["compiled"]["length_free"]["reason"]})
    bins = [f"{b['lo']}-{b['hi']}" for b in L["bins"]]
    return {"task": name, "bins": bins, "seeds": per_seed, "seconds": round(time.monotonic() - start, 1),
            "layers": r["model"]["n_layers"], "heads": r["model"]["n_heads"], "params": r["params"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", nargs="*", default=list(TASKS), choices=list(TASKS))
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=45.0, help="training time per seed")
    p.add_argument("--train-max", type=int, default=20, help="train on 1..N, test on N+1..2N and 2N+1..3N")
    p.add_argument("--positional", default="random_offset", choices=["learned", "random_offset", "none"])
    p.add_argument("--n-train", type=int, default=5000)
    p.add_argument("--n-test", type=int, default=100, help="held-out inputs per bin")
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args()
    rows = []
    for name in args.tasks:
        doc = run_task(name, args)
        rows.append(doc)
        cols = list(zip(*[s["bins"] for s in doc["seeds"]]))
        lf = list(zip(*[s["length_free"] for s in doc["seeds"]])) if doc["seeds"][0]["length_free"] else None
        paper = PAPER[name]
        print(f"{name:<12} {doc['layers']} layers x {doc['heads']} heads, {doc['params']:,} params, "
              f"{args.seeds} seeds, {doc['seconds']} s", flush=True)
        for b, col in zip(doc["bins"], cols):
            extra = f"   length-free compiled {spread(list(lf[doc['bins'].index(b)]))}" if lf else ""
            print(f"    {b:>6}: per sequence {spread(list(col))}{extra}", flush=True)
        print(f"    paper (51-100 / 101-150): {paper[0]} / {paper[1]}; steps per seed: "
              f"{[s['steps'] for s in doc['seeds']]}", flush=True)
        if not lf:
            print(f"    no length-free compiled model: {doc['seeds'][0]['length_free_reason']}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"options": vars(args), "tasks": rows}, indent=1))


if __name__ == "__main__":
    main()
