"""ONNX export of length-free models (interop/onnx_length_free.py): every length-free program of
tests/length_free_programs and every shipped example in the fragment, compiled length-free, written as ONNX
in float64 and float32 and run in onnxruntime. Prints per model and float type how many inputs decode as the
evaluator (the independent reference) says, and as our numpy runner does, by length, and the first length
where one disagrees.

    python bench/onnx_length_free.py                        # lengths 1-8 (every input), 16 ... 4096 (seeded)
    python bench/onnx_length_free.py --lengths 4096,8192 --samples 2 --json
    python bench/onnx_length_free.py --models parity,a_before_b --lengths 2560,3072,3584 --samples 8

Inputs: every input of each length up to 8 (--exhaustive-limit inputs at most per length), then --samples
seeded inputs per longer length (the length-free check's sampler: half uniform, half from a random token
distribution per input, so counts land far from n / V too).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from rasplay import engine  # noqa: E402
from rasplay.engine.compiler.length_free.length_free_model import sample_inputs  # noqa: E402
from rasplay.engine.examples import load_examples  # noqa: E402
from rasplay.interop.onnx_graph import export_onnx, load_onnx  # noqa: E402

LENGTH_FREE = {"parity": "01", "majority": "01", "dyck1": "()", "a_before_b": "abc", "flipflop": "01ri",
               "induction": "abc"}
DEFAULT_LENGTHS = (1, 2, 3, 4, 5, 6, 7, 8, 16, 64, 256, 1024, 2048, 4096)


def models() -> list[tuple[str, object]]:
    out = []
    for name, vocab in LENGTH_FREE.items():
        source = (ROOT / "tests" / "length_free_programs" / f"{name}.rasp").read_text()
        out.append((f"{name} (tests)", engine.compile(source, vocab=vocab, length_free=True)))
    for ex in load_examples():
        if engine.check_dialect(ex.source)["length_free"]:
            vocab = sorted(set(re.search(r"^# input: (.*)$", ex.source, re.M).group(1)))[:4]
            out.append((f"{ex.id} (example)", engine.compile(ex.source, vocab=vocab, length_free=True)))
    return out


def inputs(V: int, n: int, exhaustive_limit: int, samples: int, rng) -> tuple[np.ndarray, bool]:
    if V ** n <= exhaustive_limit:
        codes = np.arange(V ** n, dtype=np.int64)
        return (codes[:, None] // (V ** np.arange(n - 1, -1, -1, dtype=np.int64))[None, :]) % V, True
    return sample_inputs(rng, V, n, samples), False


def agreement(model, runners: dict, lengths, exhaustive_limit: int, samples: int) -> dict:
    rng = np.random.default_rng(0)
    row = {dtype: {"agree_evaluator": 0, "agree_runner": 0, "first_bad_length": None} for dtype in runners}
    row["inputs"], row["exhaustive_lengths"] = 0, []
    for n in lengths:
        idx, exhaustive = inputs(len(model.vocab), n, exhaustive_limit, samples, rng)
        want, ok = model.expected(idx)
        ours = model.output_indices(idx)
        ids = np.concatenate([np.zeros((len(idx), 1), np.int64), idx + 1], axis=1)
        row["inputs"] += int(ok.sum())
        if exhaustive:
            row["exhaustive_lengths"].append(n)
        for dtype, runner in runners.items():
            got = np.concatenate([runner.forward(ids[i:i + 512]) for i in range(0, len(ids), 512)])
            got = got.argmax(-1)[:, 1:]
            right = model.matches(got, want).all(axis=1) & ok
            same = (got == ours).all(axis=1) & ok
            r = row[dtype]
            r["agree_evaluator"] += int(right.sum())
            r["agree_runner"] += int(same.sum())
            if (not right[ok].all() or not same[ok].all()) and r["first_bad_length"] is None:
                r["first_bad_length"] = n
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", help="comma-separated input lengths (default 1-8, 16, 64 ... 4096)")
    parser.add_argument("--samples", type=int, default=4, help="seeded inputs per sampled length (default 4)")
    parser.add_argument("--exhaustive-limit", type=int, default=70000, help="every input when at most this many")
    parser.add_argument("--models", help="comma-separated name prefixes (e.g. parity,a_before_b; default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")] if args.lengths else DEFAULT_LENGTHS
    start = time.perf_counter()
    totals = {"float64": [0, 0], "float32": [0, 0]}
    wanted = args.models.split(",") if args.models else None
    for name, model in models():
        if wanted and not any(name.startswith(w + " ") for w in wanted):
            continue
        runners = {dtype: load_onnx(export_onnx(model, dtype=dtype)) for dtype in totals}
        row = {"model": name, **agreement(model, runners, lengths, args.exhaustive_limit, args.samples)}
        for dtype in totals:
            totals[dtype][0] += row[dtype]["agree_evaluator"]
            totals[dtype][1] += row["inputs"]
        if args.json:
            print(json.dumps(row), flush=True)
            continue
        cells = []
        for dtype in totals:
            r = row[dtype]
            bad = "" if r["first_bad_length"] is None else f" (from n={r['first_bad_length']})"
            cells.append(f"{dtype}: {r['agree_evaluator']}/{row['inputs']} evaluator, "
                         f"{r['agree_runner']}/{row['inputs']} runner{bad}")
        every = ",".join(map(str, row["exhaustive_lengths"]))
        print(f"{name:<22} every input at n={every}  " + "  ".join(cells), flush=True)
    print(f"lengths {','.join(map(str, lengths))}; total (" +
          ", ".join(f"{d}: {g}/{n}" for d, (g, n) in totals.items()) +
          f") in {time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
