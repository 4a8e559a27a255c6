"""ONNX export agreement: every shipped example and Tracr program (bench/compile.py's set) and, with --root,
InterpBench's Tracr programs (bench/interpbench.py), compiled, written as ONNX (interop/onnx_graph.py) in
float64 and float32 with average-hard and softmax attention, and run in onnxruntime. Prints, per model and
variant, how many inputs decode exactly as the compiled model does in our numpy runner with the same
attention (hard: the exact model; soft: softmax at the model's attn_scale), the shortest length where a
disagreement starts (if any), and the largest output difference `d` from our runner (float64 there).

    python bench/onnx_export.py                          # shipped programs at max_len 5
    python bench/onnx_export.py --root path/to/InterpBench --no-shipped
    python bench/onnx_export.py --json                   # one JSON row per model

Inputs: every input up to max_len when there are at most --exhaustive-limit of them, else a seeded sample
of --per-length inputs per length (the compiler's own check protocol; the row says which).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from rasplay import engine  # noqa: E402
from rasplay.engine.compiler.agreement import input_ids  # noqa: E402
from rasplay.interop.onnx_graph import export_onnx, load_onnx  # noqa: E402

VARIANTS = [("float64", "hard"), ("float64", "soft"), ("float32", "hard"), ("float32", "soft")]


def agreement(model, exhaustive_limit: int, per_length: int) -> dict:
    """Per variant: inputs, agree, first length with a disagreement, max |logit difference|."""
    ids, exhaustive = input_ids(len(model.vocab), model.max_len, exhaustive_limit, per_length, seed=0)
    bos = model.config["bos_id"]
    row = {"exhaustive": exhaustive, "inputs": sum(len(v) for v in ids.values())}
    for dtype, attention in VARIANTS:
        runner = load_onnx(export_onnx(model, None, dtype=dtype, attention=attention))
        agree, first, worst = 0, None, 0.0
        for n, idx in ids.items():
            full = np.concatenate([np.full((len(idx), 1), bos), idx + 1], axis=1)
            got = runner.forward(full)[:, 1:].astype(np.float64)
            ours = model.forward_outputs(idx, mode=attention)     # our numpy runner, the same attention
            same = [a == b for a, b in zip(model.decode_output(got), model.decode_output(ours))]
            agree += sum(same)
            if not all(same) and first is None:
                first = n
            worst = max(worst, float(np.max(np.abs(got - ours))))
        row[f"{dtype}/{attention}"] = {"agree": agree, "first_bad_length": first, "max_logit_diff": worst}
    return row


def shipped(max_len: int) -> list[tuple[str, object]]:
    from bench_compile_programs import programs   # bench/compile.py's list, imported under another name
    out = []
    for p in programs([]):
        try:
            out.append((p["name"], engine.compile(p["source"], p["output"], vocab=p["vocab"], max_len=max_len)))
        except engine.RaspError as e:
            out.append((p["name"], f"not compiled: {e.message}"))
    return out


def interpbench(root: Path, cases: list[int] | None) -> list[tuple[str, object]]:
    import importlib

    import interpbench as ib
    import rasplay.tracr

    rasplay.tracr.install_alias()
    ib.stub_modules(root)
    from tracr.compiler import compiling
    out = []
    for i in cases or ib.case_ids(root):
        try:
            case = getattr(importlib.import_module(f"circuits_benchmark.benchmark.cases.case_{i}"), f"Case{i}")()
            model = compiling.compile_rasp_to_model(
                case.get_program(), vocab=set(case.get_vocab()), max_seq_len=case.get_max_seq_len() - 1,
                compiler_bos="BOS", compiler_pad="PAD", causal=bool(case.supports_causal_masking()))
            out.append((f"interpbench case {i}", model))
        except Exception as e:  # noqa: BLE001 - a figure, not a failure
            out.append((f"interpbench case {i}", f"not compiled: {type(e).__name__}: {str(e)[:120]}"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-len", type=int, default=5, help="shipped programs' max_len (default 5)")
    parser.add_argument("--root", help="an InterpBench checkout (its Tracr programs too)")
    parser.add_argument("--cases", help="InterpBench case numbers, comma-separated (default: all)")
    parser.add_argument("--no-shipped", action="store_true", help="only InterpBench")
    parser.add_argument("--exhaustive-limit", type=int, default=2000)
    parser.add_argument("--per-length", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_compile_programs", ROOT / "bench" / "compile.py")
    sys.modules["bench_compile_programs"] = module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    models = [] if args.no_shipped else shipped(args.max_len)
    if args.root:
        models += interpbench(Path(args.root), [int(c) for c in args.cases.split(",")] if args.cases else None)
    totals = {v: [0, 0] for v in VARIANTS}
    start = time.perf_counter()
    for name, model in models:
        if isinstance(model, str):
            print(json.dumps({"model": name, "skipped": model}) if args.json else f"{name:<28} {model}")
            continue
        row = {"model": name, "max_len": model.max_len, **agreement(model, args.exhaustive_limit, args.per_length)}
        for v in VARIANTS:
            totals[v][0] += row[f"{v[0]}/{v[1]}"]["agree"]
            totals[v][1] += row["inputs"]
        if args.json:
            print(json.dumps(row), flush=True)
            continue
        cells = []
        for dtype, attention in VARIANTS:
            r = row[f"{dtype}/{attention}"]
            bad = "" if r["first_bad_length"] is None else f" (from n={r['first_bad_length']})"
            cells.append(f"{r['agree']}/{row['inputs']}{bad} d={r['max_logit_diff']:.1e}")
        print(f"{name:<28} N={row['max_len']:<2} {'all' if row['exhaustive'] else 'sample'}  " + "  ".join(cells),
              flush=True)
    print("total (" + ", ".join(f"{d}/{a}: {g}/{n}" for (d, a), (g, n) in totals.items())
          + f") in {time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
