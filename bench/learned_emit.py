"""Learned programs out: train program mode (engine/train/program_*.py) on six tasks, time it, and check
each emitted RASP program against the task's program on every input up to the training length and two
lengths beyond it (exhaustive; seeded samples of 200,000 where a length has more inputs).

Tasks are rasplay's examples (examples/*.rasp): reverse, histogram, double histogram, sort (the stable
sort), most-frequent and Dyck-1. The paper (Friedman et al. 2023) trains RASP tasks on vocabularies of 8
and lengths up to 8 (Dyck-1 up to 16); this bench uses the smaller vocabularies and lengths listed in
TASKS so that each task trains within its time budget on a 2-core machine; say so beside the figures.
The load average is printed with them: the machine may be shared.

    python bench/learned_emit.py [--budget SEC] [--seed N] [--tasks reverse,histogram] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# name: (example file, vocabulary, min_len, max_len, options of program mode)
TASKS = {
    "reverse": ("reverse", "abc", 1, 5, {"layers": 2, "heads": 2, "num_heads": 1, "mlps": 1, "eos": True}),
    "histogram": ("histogram", "abcd", 1, 6, {"layers": 1, "heads": 1, "num_heads": 1, "mlps": 0}),
    "double_histogram": ("double_histogram", "abcd", 1, 6, {"layers": 2, "heads": 1, "num_heads": 1, "mlps": 1}),
    "sort": ("sort_stable", "abcd", 1, 5, {"layers": 2, "heads": 2, "num_heads": 1, "mlps": 1, "eos": True}),
    "most_frequent": ("most_frequent", "abc", 1, 5, {"layers": 3, "heads": 2, "num_heads": 1, "mlps": 1}),
    "dyck1": ("dyck1", "()", 1, 8, {"layers": 2, "heads": 1, "num_heads": 1, "mlps": 1}),
}


def run_task(name: str, budget: float, seed: int, beyond: int) -> dict:
    from rasplay.engine.train import train
    from rasplay.engine.train.program_agree import agreement

    example, vocab, lo, hi, options = TASKS[name]
    source = (ROOT / "examples" / f"{example}.rasp").read_text()
    t0 = time.monotonic()
    result = train(source, {"vocab": vocab, "min_len": lo, "max_len": hi, "mode": "program", "seed": seed,
                            "time_budget": budget, "n_train": 20_000, "n_test": 1_000, "batch_size": 128,
                            "eval_every": 100, **options})
    seconds = time.monotonic() - t0
    lp = result["learned_program"]
    t1 = time.monotonic()
    rows = agreement(source, lp["source"], list(vocab), range(1, hi + beyond + 1), eos=lp["eos"])
    return {"task": name, "example": f"examples/{example}.rasp", "vocab": vocab, "lengths": [lo, hi],
            "options": options, "seed": seed, "steps": result["steps"], "stopped": result["stopped"],
            "train_seconds": result["timings"]["train"], "total_seconds": round(seconds, 1),
            "held_out": result["final"]["test"], "emitted_layers": lp["layers"], "emitted_heads": lp["heads"],
            "check_seconds": round(time.monotonic() - t1, 1), "agreement": rows, "source": lp["source"]}


def show(r: dict) -> None:
    lo, hi = r["lengths"]
    print(f"{r['task']}: vocab {r['vocab']}, lengths {lo}-{hi}, {r['steps']} steps, trained in "
          f"{r['train_seconds']:.0f} s ({r['total_seconds']:.0f} s with data, decoding and analysis); emitted "
          f"program: {r['emitted_layers']} layer(s), heads {r['emitted_heads']}; held-out per input "
          f"{100 * r['held_out']['test_seq_acc']:.1f}%", flush=True)
    for a in r["agreement"]:
        where = "training" if a["length"] <= hi else "beyond"
        fail = f"; first failing input {''.join(a['first_failure'])}" if a["first_failure"] else ""
        print(f"   length {a['length']:>2} ({where}, {a['inputs']} inputs{'' if a['exhaustive'] else ' sampled'}): "
              f"{100 * a['input_agreement']:.1f}% of inputs, {100 * a['position_agreement']:.1f}% of positions{fail}",
              flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=150.0, help="training seconds per task (default 150)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--beyond", type=int, default=2, help="lengths checked past the training length (default 2)")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--json", help="write the figures (and the emitted programs) to this file")
    args = ap.parse_args()
    names = [t for t in args.tasks.split(",") if t]
    unknown = [t for t in names if t not in TASKS]
    if unknown:
        print(f"unknown task(s) {', '.join(unknown)}; choose from {', '.join(TASKS)}", file=sys.stderr)
        return 2
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; budget {args.budget:.0f} s "
          f"per task, seed {args.seed}", flush=True)
    out = []
    for name in names:
        out.append(run_task(name, args.budget, args.seed, args.beyond))
        show(out[-1])
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
