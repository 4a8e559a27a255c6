"""Compiler benchmark: every example and RASP versions of Tracr's library programs, at max_len 5, 10, 20.

For each: compile time (median of 3 warm compiles), layers (compiled / RASP analysis), heads per layer,
residual width, parameters, and agreement with the evaluator (exhaustive where the inputs are few,
else a seeded sample per length). Then the side-by-side with Tracr's figures (bench/tracr_figures.json,
measured with the same vocabularies) and the targets: agreement 100%, layers = analysis, residual width
and non-zero parameters <= Tracr's, compile < 0.5 s.

    python bench/compile.py [--sizes 5 10 20] [--only reverse sort] [--exhaustive-limit 20000]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rasplay import engine  # noqa: E402
from rasplay.engine.examples import load_examples  # noqa: E402

TRACR_DIR = ROOT / "bench" / "tracr_programs"
# Tracr's figures, measured by compiling Tracr's own library programs (tracr/compiler/lib.py) with the SAME
# vocabulary as our programs (each program's `# vocab:` line) at max_len 5, 10, 20: layers, d_model,
# parameters (total and non-zero), compile seconds. See the file's "how" entry.
TRACR_FIGURES = ROOT / "bench" / "tracr_figures.json"
TARGET_SECONDS = 0.5


def tracr_figures() -> dict:
    """(program, max_len) -> Tracr's row ({} when the file is absent)."""
    if not TRACR_FIGURES.exists():
        return {}
    data = json.loads(TRACR_FIGURES.read_text())
    return {(r["name"], r["N"]): r for r in data["rows"] if "error" not in r}


def programs(only: list[str]) -> list[dict]:
    out = []
    for ex in load_examples():
        tokens = json.loads(ex.input) if ex.input_format == "json" else list(ex.input)
        vocab = list(dict.fromkeys(tokens))[:4]
        out.append({"name": ex.id, "kind": "example", "source": ex.source, "output": ex.output, "vocab": vocab})
    for path in sorted(TRACR_DIR.glob("*.rasp")):
        text = path.read_text()
        vocab = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("# vocab:"))
        out.append({"name": path.stem, "kind": "tracr", "source": text, "output": None, "vocab": vocab})
    return [p for p in out if not only or p["name"] in only]


def measure(p: dict, n: int, args) -> dict:
    row = {"program": p["name"], "kind": p["kind"], "max_len": n}
    try:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            model = engine.compile(p["source"], p["output"], vocab=p["vocab"], max_len=n)
            times.append(time.perf_counter() - start)
    except engine.RaspError as e:
        line = f" (line {e.span.line})" if e.span is not None else ""
        row["error"] = f"{e.message}{line}"
        return row
    s = model.summary()
    c = model.check(exhaustive_limit=args.exhaustive_limit, per_length=args.per_length, seed=0)
    row.update({"seconds": statistics.median(times), "layers": s["layers"], "analysis_layers": s["analysis_layers"],
                "heads": s["heads_per_layer"], "analysis_heads": s["analysis_heads_per_layer"],
                "width": s["residual_width"], "params": s["params"], "nonzero": s["nonzero_params"],
                "mlp": s["mlp_widths"], "vocab": "".join(map(str, p["vocab"])),
                "agree": c["agree"], "inputs": c["inputs"], "exhaustive": c["exhaustive"],
                "extra_sublayer": s["layers"] > s["analysis_layers"]})
    return row


def table(rows: list[dict]) -> str:
    head = (f"{'program':<20} {'kind':<7} {'N':>3} {'ms':>6} {'layers':>7} {'heads/layer':<13} {'resid':>5} "
            f"{'params':>8} {'non-zero':>8} {'agreement':<26}")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['program']:<20} {r['kind']:<7} {r['max_len']:>3}  does not compile: {r['error']}")
            continue
        heads = ",".join(map(str, r["heads"]))
        layers = f"{r['layers']}/{r['analysis_layers']}"
        how = "exhaustive" if r["exhaustive"] else "sampled"
        agree = f"{100 * r['agree'] / max(r['inputs'], 1):.1f}% of {r['inputs']} {how}"
        lines.append(f"{r['program']:<20} {r['kind']:<7} {r['max_len']:>3} {r['seconds'] * 1000:>6.0f} {layers:>7} "
                     f"{heads:<13} {r['width']:>5} {r['params']:>8} {r['nonzero']:>8} {agree:<26}")
    return "\n".join(lines)


def comparisons(rows: list[dict]) -> str:
    by = {(r["program"], r["kind"], r["max_len"]): r for r in rows if "error" not in r}
    tracr = tracr_figures()
    lines = ["", "Against Tracr (bench/tracr_figures.json: Tracr's library programs compiled with the same "
                 "vocabulary; ours = the RASP versions in bench/tracr_programs):",
             f"  {'program':<14} {'vocab':<5} {'N':>3}  {'layers':>9}  {'d_model':>9}  {'params':>15}  "
             f"{'non-zero':>13}  {'compile s':>13}"]
    for (name, n), t in sorted(tracr.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        r = by.get((name, "tracr", n))
        if r is None:
            continue
        vocab = t.get("vocab", "?")
        if vocab != r["vocab"]:
            vocab += f"!={r['vocab']}"
        def q(v, spec=""):
            return "?" if v is None else format(v, spec)
        lines.append(f"  {name:<14} {vocab:<5} {n:>3}  {r['layers']:>4} / {q(t['layers']):<2}  "
                     f"{r['width']:>4} / {q(t['d_model']):<4} {r['params']:>7} / {q(t['params']):<7} "
                     f"{r['nonzero']:>5} / {q(t['nonzero']):<6} {r['seconds']:>6.3f} / {q(t['seconds'], '.2f'):<6}")
    lines.append("  (ours / Tracr's; ? = not measured; vocab a!=b: Tracr's / ours; see the file's 'how')")
    hist = [r for r in rows if r["program"] == "histogram" and r["kind"] == "tracr" and r["max_len"] >= 10
            and "error" not in r]
    for r in hist:
        lines.append(f"  selector width at max_len {r['max_len']} (Tracr's default decoding fails from 10): "
                     f"{r['agree']}/{r['inputs']} inputs exact")
    ok = [r for r in rows if "error" not in r]
    lines += ["", "Targets:"]
    bad_agree = [f"{r['program']}@{r['max_len']}" for r in ok if r["agree"] != r["inputs"]]
    lines.append(f"  agreement 100%: {len(ok) - len(bad_agree)}/{len(ok)} compiled models"
                 + (f"; not: {', '.join(bad_agree)}" if bad_agree else ""))
    deeper = sorted({r["program"] for r in ok if r["layers"] != r["analysis_layers"]})
    lines.append(f"  layers = analysis: {len(ok) - sum(r['layers'] != r['analysis_layers'] for r in ok)}/{len(ok)}"
                 + (f"; one extra MLP sublayer (stated in the summary): {', '.join(deeper)}" if deeper else ""))
    for what, ours, theirs in (("residual width", "width", "d_model"), ("non-zero parameters", "nonzero", "nonzero"),
                               ("layers", "layers", "layers")):
        worse = [f"{name}@{n}" for (name, n), t in tracr.items()
                 if (name, "tracr", n) in by and t[theirs] is not None and by[(name, "tracr", n)][ours] > t[theirs]]
        lines.append(f"  {what} <= Tracr's: " + ("all" if not worse else "not " + ", ".join(sorted(worse))))
    slow = [f"{r['program']}@{r['max_len']} ({r['seconds']:.2f} s)" for r in ok if r["seconds"] >= TARGET_SECONDS]
    lines.append(f"  compile < {TARGET_SECONDS} s: {len(ok) - len(slow)}/{len(ok)}" + (f"; slower: {', '.join(slow)}"
                                                                                     if slow else ""))
    failed = [f"{r['program']}@{r['max_len']}" for r in rows if "error" in r]
    if failed:
        lines.append(f"  do not compile (reason in the table): {', '.join(failed)}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--exhaustive-limit", type=int, default=20_000,
                        help="check every input when there are at most this many (default 20000)")
    parser.add_argument("--per-length", type=int, default=300, help="else this many random inputs per length")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of the table")
    args = parser.parse_args()
    engine.compile("x = tokens;", vocab="ab", max_len=2)   # warm up: parser tables, library
    rows = [measure(p, n, args) for p in programs(args.only) for n in args.sizes]
    if args.json:
        print(json.dumps(rows))
        return
    print(table(rows))
    print(comparisons(rows))


if __name__ == "__main__":
    main()
