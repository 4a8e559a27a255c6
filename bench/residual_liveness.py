"""Residual liveness: how narrow could the compiled models get by reusing the dimensions of dead values?

For every compiled model (the shipped programs of bench/compile.py and, with --root, InterpBench's Tracr
programs) each residual block's live interval is read off the weights (engine/compiler/liveness.py:
written at sublayer w, last read at sublayer r; `one`, `bos` and the output live to the end), and printed:

    width      the model's residual width
    bound      the largest total width of the blocks live at one sublayer boundary: no reuse of
               dimensions, without more layers, gets below it
    bound_mlp  the same when a block last read by an attention sublayer only frees its dimensions at the
               next MLP (additive sublayers cannot write over a value; attention cannot erase one)
    with reuse the width the compiler reaches (engine/compiler/reuse.py: first-fit, erasure by MLP units)

All figures but the last are of the model without reuse (`model.residual_reuse` keeps them).

    python bench/residual_liveness.py                                  # shipped programs at max_len 5
    python bench/residual_liveness.py --root path/to/InterpBench --no-shipped [--cases 1,2] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from rasplay.engine.compiler.liveness import bounds  # noqa: E402


def models(args) -> list:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_compile_programs", ROOT / "bench" / "compile.py")
    sys.modules["bench_compile_programs"] = module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from onnx_export import interpbench, shipped
    out = [] if args.no_shipped else shipped(args.max_len)
    if args.root:
        out += interpbench(Path(args.root), [int(c) for c in args.cases.split(",")] if args.cases else None)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-len", type=int, default=5, help="shipped programs' max_len (default 5)")
    parser.add_argument("--root", help="an InterpBench checkout (its Tracr programs too)")
    parser.add_argument("--cases", help="InterpBench case numbers, comma-separated (default: all)")
    parser.add_argument("--no-shipped", action="store_true", help="only InterpBench")
    parser.add_argument("--json", action="store_true", help="one JSON row per model")
    args = parser.parse_args()
    rows = []
    for name, model in models(args):
        if isinstance(model, str):
            print(json.dumps({"model": name, "skipped": model}) if args.json else f"{name:<28} {model}")
            continue
        reuse = model.residual_reuse   # the figures of the model before reuse (compile's reuse_residual)
        if reuse is None:
            b = bounds(model.plan.blocks, model.config, model.transformer.weights)
            reuse = {"width_without_reuse": b.pop("width"), **b}
        row = {"model": name, "layers": model.config["n_layers"], "width": reuse["width_without_reuse"],
               "bound": reuse["bound"], "bound_mlp_erasure": reuse["bound_mlp_erasure"],
               "width_reused": model.config["d_model"]}
        rows.append(row)
        print(json.dumps(row) if args.json else
              f"{name:<28} layers {row['layers']:<2} width {row['width']:<4} bound {row['bound']:<4} "
              f"bound_mlp {row['bound_mlp_erasure']:<4} with reuse {row['width_reused']}", flush=True)
    if rows:
        for key in ("width", "bound", "bound_mlp_erasure", "width_reused"):
            print(f"median {key}: {statistics.median(r[key] for r in rows):g}", file=sys.stderr)
        for key in ("bound", "bound_mlp_erasure", "width_reused"):
            ratio = statistics.median(r[key] / r["width"] for r in rows)
            print(f"median {key}/width: {ratio:.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
