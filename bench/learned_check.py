"""How long the learned-program check (engine/learned/check.py) takes: every input up to length 6 over five
tokens (19,530 inputs) plus 1,000 seeded samples (fewer once duplicates are removed) at each of two lengths beyond, for three learned programs
written by hand in TransformerPrograms' shape (BOS "<s>" and EOS "</s>" around the input):

  reverse-right   one head, right at every length
  reverse-table   a position table read through select_closest (as their decompiled programs do), right
                  only for inputs of length 5
  reverse-8-heads eight select_closest heads over position tables and a lookup of their outputs: the size
                  of their shipped reverse program

    python bench/learned_check.py [--max-length 6] [--beyond 2] [--repeat 3]

Prints, per program, the best of --repeat wall and CPU times (CPU time: the figure on a shared machine), inputs checked, inputs per second, the agreement and the
shortest failing input (machine: whatever runs it; the figures in docs/learned_programs.md say which).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rasplay.engine.learned.check import CheckOptions, check_learned  # noqa: E402

TASK = "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);\n"
HEADER = "# learned: transformer-programs\n# bos: <s>\n# eos: </s>\n# output: rev\n"
RIGHT = HEADER + "back = select(indices, length - indices - 1, ==);\nrev = aggregate(back, tokens);\n"


def table(mapping: dict[int, int]) -> str:
    """A position table as nested if/else: query position -> the key position it reads (else 0, the BOS)."""
    text = "0"
    for q, k in sorted(mapping.items(), reverse=True):
        text = f"{k} if indices == {q} else ({text})"
    return text


def table_program() -> str:
    mirror = {q: 6 - q for q in range(1, 6)}          # length 5: positions 1..5 between <s> and </s>
    return HEADER + f"target = {table(mirror)};\nmirror = select_closest(indices, target, ==);\n" \
                    "rev = aggregate(mirror, tokens);\n"


def eight_heads() -> str:
    lines = [HEADER.rstrip("\n")]
    for h in range(8):
        mapping = {q: max(1, 6 - q - (h % 2)) for q in range(1, 8)}
        lines.append(f"target_{h} = {table(mapping)};")
        lines.append(f"attn_{h} = aggregate(select_closest(indices, target_{h}, ==), tokens);")
    lines.append('rev = attn_0 if attn_0 != "<s>" else attn_1;')
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-length", type=int, default=6)
    parser.add_argument("--beyond", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    options = CheckOptions(max_length=args.max_length, beyond=args.beyond, exhaustive=20_000, samples=1000,
                           show=1)
    for name, learned in (("reverse-right", RIGHT), ("reverse-table", table_program()),
                          ("reverse-8-heads", eight_heads())):
        times, cpu = [], []
        for _ in range(args.repeat):
            start, start_cpu = time.perf_counter(), time.process_time()
            report = check_learned(learned, TASK, "01234", options)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        best, t = min(times), report["total"]
        failing = report["failing"][0]["input"] if report["failing"] else None
        print(f"{name:16} {best:6.2f} s wall, {min(cpu):5.2f} s CPU  {t['inputs']:>7,} inputs  {t['inputs'] / best:>9,.0f} inputs/s  "
              f"agree {t['agree']:>7,} ({100 * t['input_agreement']:.1f}%)  shortest failing: {failing}")


if __name__ == "__main__":
    main()
