"""TransformerPrograms' shipped RASP-task programs through the learned-program check (engine/learned/check.py):
each translated (rasplay.interop.import_transformer_program) and checked against the rasplay example that
computes its task, on every input from length 1 (Dyck: 15) up to the longest training length of the task
(bench/learned_tasks.py; --max-length lowers it) and --beyond lengths past it, over the task's vocabulary;
1,000 seeded samples at each length with over 20,000 inputs (--exhaustive changes that count).

Their programs are not part of rasplay. Get them with

    git clone https://github.com/princeton-nlp/TransformerPrograms

and run

    python bench/learned_check_tp.py --repo TransformerPrograms [--max-length N] [--beyond 2]

Prints per program: the check's wall and CPU seconds, the inputs checked, the agreement per input and per
token, the agreement at lengths 1 and 2, the shortest failing input (expected and got), and how many of its
heads equal one of the example's selectors on the inputs checked. most_freq has no rasplay example: it is
left out here (bench/learned_import.py checks it against an independent statement of the task).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from learned_tasks import TASKS  # noqa: E402
from rasplay.engine.learned.check import CheckLimits, CheckOptions, check_learned  # noqa: E402
from rasplay.interop import import_transformer_program  # noqa: E402


def check_one(repo: Path, variant: str, name: str, max_length: int | None, beyond: int,
              exhaustive: int = 20_000) -> str:
    task = TASKS[name]
    folder = repo / "programs" / variant / name
    learned = import_transformer_program((folder / f"{name}.py").read_text(),
                                         (folder / f"{name}_weights.csv").read_text(), title=name)
    example = (ROOT / "examples" / task.example).read_text()
    options = CheckOptions(min_length=task.lengths[0] if task.lengths[0] > 6 else 1,
                           max_length=max(task.lengths[0], min(task.lengths[1], max_length or 99)), beyond=beyond,
                           exhaustive=exhaustive, samples=1000, show=1)
    start, start_cpu = time.perf_counter(), time.process_time()
    r = check_learned(learned, example, list(task.vocab), options, limits=CheckLimits(max_length=32))
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    t = r["total"]
    short = {row["length"]: row for row in r["lengths"] if row["length"] <= 2}
    at = " ".join(f"n={n}: {row['agree']}/{row['inputs']}" for n, row in short.items())
    past = [row for row in r["lengths"] if row["beyond"]]
    beyond_text = f"beyond: {sum(x['agree'] for x in past)}/{sum(x['inputs'] for x in past)}" if past else ""
    f = r["failing"][0] if r["failing"] else None
    failing = f"{''.join(map(str, f['input']))} expected {f['expected']} got {f['got'] or f['error'][:60]}" if f else "none"
    equal = sum(1 for s in r["selectors"] if s["equals"])
    return (f"{variant}/{name:12} {wall:6.2f} s wall {cpu:6.2f} s CPU  {t['inputs']:>7,} inputs  "
            f"inputs {100 * t['input_agreement']:5.1f}%  tokens {100 * t['token_agreement']:5.1f}%  {at} {beyond_text}  "
            f"heads equal to a selector: {equal}/{len(r['selectors'])}  shortest failing: {failing}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", type=Path, required=True, help="a checkout of princeton-nlp/TransformerPrograms")
    p.add_argument("--max-length", type=int, default=None, help="default: the task's longest training length")
    p.add_argument("--beyond", type=int, default=2)
    p.add_argument("--exhaustive", type=int, default=20_000,
                   help="enumerate a length's every input up to this many (else 1,000 samples)")
    p.add_argument("--variants", nargs="*", default=["rasp", "rasp_categorical_only"])
    args = p.parse_args()
    for variant in args.variants:
        for name, task in TASKS.items():
            if task.example is None or not (args.repo / "programs" / variant / name).is_dir():
                continue
            print(check_one(args.repo, variant, name, args.max_length, args.beyond, args.exhaustive), flush=True)


if __name__ == "__main__":
    main()
