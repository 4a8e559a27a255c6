"""InterpBench's Tracr programs (github.com/FlyingPumba/InterpBench, circuits_benchmark/benchmark/cases/,
programs written by others) run unchanged, beside the real Tracr. The cases are read from a checkout
given with --root (nothing of InterpBench is copied into rasplay); the few InterpBench modules the
case files import besides `tracr` (its benchmark base class, the batch-input type) are replaced by
small stand-ins here, and its own `vocabs`, `common_programs` and `program_evaluation_type` modules are
imported from the checkout.

    python bench/interpbench.py --root path/to/InterpBench > rasplay.jsonl          # rasplay (the alias)
    PYTHONPATH=path/to/tracr python bench/interpbench.py --root path/to/InterpBench --tracr > tracr.jsonl
    python bench/interpbench.py --compare tracr.jsonl rasplay.jsonl                  # the figures
    python bench/interpbench.py --compare tracr.jsonl rasplay.jsonl --before old.jsonl   # and the side by side
    python bench/interpbench.py --table bench/interpbench_figures.json               # ... of the recorded figures

The side-by-side table puts, per case, the residual width, layers, non-zero parameters and compile
seconds of rasplay before (an earlier run, e.g. of the previous commit), rasplay after, and Tracr.

One JSON row per case: loaded (the program builds), values (rasp.evaluate on 30 seeded inputs, lengths
1..max_len, the vocabulary sorted), compiled as InterpBench compiles it (compile_rasp_to_model(program,
vocab, max_seq_len - 1, compiler_bos="BOS", compiler_pad="PAD", causal=case.supports_causal_masking())),
layers, residual width, parameters, non-zero parameters, compile seconds; for rasplay also the compiled
model's check against Tracr's evaluation rules (sampled).
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
import traceback
import types
from pathlib import Path

INPUTS = 30


def stub_modules(root: Path) -> None:
    """Import InterpBench's case files: its package dirs on the path, stand-ins for the heavy modules."""
    bench_dir = root / "circuits_benchmark"

    def package(name, path):
        mod = types.ModuleType(name)
        mod.__path__ = [str(path)]
        sys.modules[name] = mod
        return mod

    package("circuits_benchmark", bench_dir)
    package("circuits_benchmark.benchmark", bench_dir / "benchmark")
    package("circuits_benchmark.benchmark.cases", bench_dir / "benchmark" / "cases")
    package("circuits_benchmark.transformers", bench_dir / "transformers")

    case_mod = types.ModuleType("circuits_benchmark.benchmark.tracr_benchmark_case")

    class TracrBenchmarkCase:   # the parts of InterpBench's base class a case relies on (its documented defaults)
        def get_name(self) -> str:
            return type(self).__name__[len("Case"):]

        def get_max_seq_len(self) -> int:
            return 10

        def get_min_seq_len(self) -> int:
            return 4

        def supports_causal_masking(self) -> bool:
            return True

    case_mod.TracrBenchmarkCase = TracrBenchmarkCase
    sys.modules[case_mod.__name__] = case_mod
    hooked = types.ModuleType("circuits_benchmark.transformers.hooked_tracr_transformer")
    hooked.HookedTracrTransformerBatchInput = list
    sys.modules[hooked.__name__] = hooked


def case_ids(root: Path) -> list[int]:
    return sorted(int(p.stem.split("_")[1]) for p in (root / "circuits_benchmark/benchmark/cases").glob("case_*.py")
                  if p.stem.split("_")[1].isdigit())


def encode(v):
    if isinstance(v, tuple):
        return {"tuple": [encode(x) for x in v]}
    if isinstance(v, list):
        return [encode(x) for x in v]
    if hasattr(v, "item"):
        return v.item()
    if isinstance(v, float) and v != v:
        return "nan"
    return v


def inputs_for(vocab: list, max_len: int, seed: int) -> list:
    rng = random.Random(seed)
    return [[rng.choice(vocab) for _ in range(rng.randint(1, max_len))] for _ in range(INPUTS)]


def run_case(i: int, real: bool, check: bool) -> dict:
    import importlib

    from tracr.compiler import compiling
    from tracr.rasp import rasp

    row = {"case": i}
    try:
        mod = importlib.import_module(f"circuits_benchmark.benchmark.cases.case_{i}")
        case = getattr(mod, f"Case{i}")()
        program = case.get_program()
        vocab = sorted(case.get_vocab(), key=repr)
        max_len = case.get_max_seq_len() - 1
        causal = bool(case.supports_causal_masking())
    except Exception as e:  # noqa: BLE001 - a figure, not a failure
        row.update(loaded=False, error=f"{type(e).__name__}: {e}"[:300])
        return row
    row.update(loaded=True, vocab_size=len(vocab), max_len=max_len, causal=causal, values=[])
    for x in inputs_for(vocab, max_len, i):
        try:
            row["values"].append(encode(rasp.evaluate(program, x)))
        except Exception as e:  # noqa: BLE001
            row["values"].append({"error": type(e).__name__})
    t = time.perf_counter()
    try:
        model = compiling.compile_rasp_to_model(program, vocab=set(vocab), max_seq_len=max_len, compiler_bos="BOS",
                                                compiler_pad="PAD", causal=causal)
    except Exception as e:  # noqa: BLE001
        row.update(compiled=False, compile_error=f"{type(e).__name__}: {e}"[:300],
                   seconds=round(time.perf_counter() - t, 2))
        return row
    row.update(compiled=True, seconds=round(time.perf_counter() - t, 2))
    if real:
        import jax
        import numpy as np
        leaves = jax.tree_util.tree_leaves(model.params)
        row.update(layers=model.model_config.num_layers,
                   d_model=int(model.params["token_embed"]["embeddings"].shape[1]),
                   params=int(sum(np.asarray(a).size for a in leaves)),
                   nonzero=int(sum(np.count_nonzero(np.asarray(a)) for a in leaves)))
    else:
        s = model.summary()
        import numpy as np
        w = model.transformer.weights
        row.update(layers=s["layers"], d_model=s["residual_width"], params=model.transformer.parameters(),
                   nonzero=model.transformer.nonzero_parameters(), notes=len(model.lowered.notes),
                   nonzero_unembed=int(np.count_nonzero(w["unembed.weight"]) + np.count_nonzero(w["unembed.bias"])),
                   erase_units=sum(t["units"] for m in model.mlps for t in m["targets"]
                                   if t.get("method", "").startswith("erasure")))
        if check:
            c = model.check(exhaustive_limit=2000, per_length=20, seed=0)
            row["check"] = {k: c[k] for k in ("inputs", "agree", "evaluator_errors", "unspecified")}
    return row


def compare(tracr_file: str, ours_file: str) -> None:
    theirs = {r["case"]: r for r in map(json.loads, Path(tracr_file).read_text().splitlines()) if r}
    ours = {r["case"]: r for r in map(json.loads, Path(ours_file).read_text().splitlines()) if r}
    cases = sorted(set(theirs) | set(ours))
    def count(rows, key):
        return sum(1 for c in cases if rows.get(c, {}).get(key))
    same = [c for c in cases if theirs.get(c, {}).get("loaded") and ours.get(c, {}).get("loaded")
            and _same(theirs[c]["values"], ours[c]["values"])]
    both = [c for c in cases if theirs.get(c, {}).get("compiled") and ours.get(c, {}).get("compiled")]
    narrower = [c for c in both if ours[c]["d_model"] < theirs[c]["d_model"]]
    deeper = [c for c in both if ours[c]["layers"] > theirs[c]["layers"]]
    fewer_nz = [c for c in both if ours[c]["nonzero"] <= theirs[c]["nonzero"]]
    exact = [c for c in both if ours[c].get("check", {}).get("agree") == ours[c].get("check", {}).get("inputs")]
    print(f"cases: {len(cases)}")
    print(f"loaded: rasplay {count(ours, 'loaded')}, Tracr {count(theirs, 'loaded')}")
    print(f"same values as Tracr's evaluator (30 inputs each): {len(same)}")
    print(f"compiled: rasplay {count(ours, 'compiled')}, Tracr {count(theirs, 'compiled')}")
    print(f"compiled by both: {len(both)}; rasplay's check against Tracr's rules exact: {len(exact)}")
    print(f"rasplay narrower: {len(narrower)}; deeper: {len(deeper)}; non-zeros at or below Tracr's: {len(fewer_nz)}")
    print(f"compile seconds in all: rasplay {sum(ours[c].get('seconds', 0) for c in cases if c in ours):.0f}, "
          f"Tracr {sum(theirs[c].get('seconds', 0) for c in cases if c in theirs):.0f}")
    for c in cases:
        o, t = ours.get(c, {}), theirs.get(c, {})
        flags = []
        if not o.get("loaded"):
            flags.append("not loaded: " + o.get("error", "?"))
        elif c not in same:
            flags.append("values differ")
        if t.get("compiled") and not o.get("compiled"):
            flags.append("not compiled: " + o.get("compile_error", "?")[:120])
        if c in both and o["nonzero"] > t["nonzero"]:
            flags.append(f"non-zeros {o['nonzero']} > Tracr's {t['nonzero']}")
        if c in both and c not in exact:
            flags.append(f"check {o.get('check')}")
        if flags:
            print(f"  case {c}: " + "; ".join(flags))


def side_by_side(theirs: dict, ours: dict, before: dict) -> None:
    """The per-case table (residual width, layers, non-zero parameters, compile seconds: rasplay before,
    rasplay after, Tracr) and its summary, for the cases all three compiled."""
    cases = sorted(c for c in ours if all(rows.get(c, {}).get("compiled") for rows in (theirs, ours, before)))
    cols = (("d_model", "width"), ("layers", "layers"), ("nonzero", "non-zeros"), ("seconds", "seconds"))
    print("| case | " + " | ".join(f"{n} (before / after / Tracr)" for _, n in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for c in cases:
        print(f"| {c} | " + " | ".join(" / ".join(str(rows[c][k]) for rows in (before, ours, theirs))
                                       for k, _ in cols) + " |")
    print()
    for k, n in cols[:3]:
        med = [statistics.median(rows[c][k] for c in cases) for rows in (before, ours, theirs)]
        print(f"median {n}: before {med[0]:g}, after {med[1]:g}, Tracr {med[2]:g}")
    for label, rows in (("before", before), ("after", ours)):
        at_most = sum(rows[c]["nonzero"] <= theirs[c]["nonzero"] for c in cases)
        wider = [c for c in cases if rows is ours and ours[c]["d_model"] > before[c]["d_model"]]
        deeper = [c for c in cases if rows is ours and ours[c]["layers"] > before[c]["layers"]]
        exact = sum(rows[c].get("check", {}).get("agree") == rows[c].get("check", {}).get("inputs") for c in cases)
        print(f"{label}: non-zeros at or below Tracr's in {at_most}/{len(cases)}, in all "
              f"{sum(rows[c]['nonzero'] for c in cases):,} (Tracr {sum(theirs[c]['nonzero'] for c in cases):,}); "
              f"exact by the check {exact}/{len(cases)}; compile seconds in all "
              f"{sum(rows[c]['seconds'] for c in cases):.1f}" + (f"; wider than before: {wider or 'none'}, "
                                                                f"deeper: {deeper or 'none'}" if rows is ours else ""))
    if all("nonzero_unembed" in ours[c] for c in cases):
        # Tracr's model.params hold no unembedding (a fixed projection applied outside them); ours do
        over = [c for c in cases if ours[c]["nonzero"] - ours[c]["nonzero_unembed"] > theirs[c]["nonzero"]]
        print(f"after, not counting our unembedding as Tracr's parameters do not: non-zeros at or below Tracr's in "
              f"{len(cases) - len(over)}/{len(cases)}; above in cases {over or 'none'}")


def rows_of(path: str) -> dict:
    return {r["case"]: r for r in map(json.loads, Path(path).read_text().splitlines()) if r}


def _same(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and \
            not isinstance(b, bool):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a))
    return a == b and type(a) is type(b)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", help="an InterpBench checkout")
    parser.add_argument("--tracr", action="store_true", help="run the real Tracr (else rasplay's alias)")
    parser.add_argument("--cases", help="comma-separated case numbers (default: all)")
    parser.add_argument("--no-check", action="store_true", help="rasplay: skip the compiled models' checks")
    parser.add_argument("--compare", nargs=2, metavar=("TRACR.jsonl", "RASPLAY.jsonl"))
    parser.add_argument("--before", metavar="RASPLAY_BEFORE.jsonl",
                        help="with --compare: also the side-by-side table against an earlier rasplay run")
    parser.add_argument("--table", metavar="FIGURES.json",
                        help="the side-by-side table from recorded figures (bench/interpbench_figures.json)")
    args = parser.parse_args()
    if args.table:
        figures = json.loads(Path(args.table).read_text())
        side_by_side(*({r["case"]: r for r in figures[k]} for k in ("tracr", "rasplay", "rasplay_before")))
        return
    if args.compare:
        compare(*args.compare)
        if args.before:
            print()
            side_by_side(rows_of(args.compare[0]), rows_of(args.compare[1]), rows_of(args.before))
        return
    root = Path(args.root)
    if not args.tracr:
        import rasplay.tracr
        rasplay.tracr.install_alias()
    stub_modules(root)
    ids = [int(c) for c in args.cases.split(",")] if args.cases else case_ids(root)
    for i in ids:
        try:
            row = run_case(i, args.tracr, not args.no_check)
        except Exception as e:  # noqa: BLE001
            row = {"case": i, "crash": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-600:]}
        print(json.dumps(row), flush=True)
        print(f"case {i}: loaded={row.get('loaded')} compiled={row.get('compiled')} {row.get('seconds')} s",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
