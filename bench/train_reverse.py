"""Does the layer count a RASP program predicts suffice, and does one layer fewer fail?

Trains, on this CPU, within the same time budget each (a step budget calibrated to fit it, so the
learning rate decays to its end; the time budget still caps the run): reverse with the predicted 2 layers and
with 1 layer of a similar parameter count; histogram with its 1 layer; stable sort with 2 layers and
with 1. Vocabulary: 8 letters, lengths 1..16, seed 0. Prints each curve (held-out per-sequence
accuracy against time and steps), the time to reach 99%, the final figures and the ratios.
The paper ("Thinking Like Transformers", lengths up to 100): reverse 2 layers 99.6%, 1 layer 39.6%.

    python bench/train_reverse.py [--budget SEC] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rasplay.engine.train import train  # noqa: E402
from rasplay.engine.train.data import load_task  # noqa: E402
from rasplay.engine.train.torch_transformer import ModelConfig, TrainableTransformer  # noqa: E402

VOCAB = "abcdefgh"
COMMON = {"vocab": VOCAB, "min_len": 1, "max_len": 16, "seed": 0, "batch_size": 64, "lr": 1e-3, "bos": True}
D_MODEL = 64


def params(layers: int, d_model: int, classes: int = 8) -> int:
    c = ModelConfig(vocab=list(VOCAB) + ["<bos>"], max_len=17, d_model=d_model, n_layers=layers, n_heads=1,
                    output={"kind": "categorical", "classes": list(range(classes))})
    return TrainableTransformer(c).n_params()


def matched_width(layers: int, target: int) -> int:
    """The width whose `layers`-layer model has the parameter count closest to `target`."""
    return min(range(8, 257, 2), key=lambda d: abs(params(layers, d) - target))


def time_to(curve: list[dict], level: float):
    hit = next((p for p in curve if p["test_seq_acc"] >= level), None)
    return (hit["elapsed"], hit["step"]) if hit else (None, None)


def calibrated_steps(source: str, options: dict, budget: float) -> int:
    """A step budget that fits the time budget on this machine now: a short run measures the step
    rate; 85% of budget x rate leaves slack for a shared machine (the time budget still caps the run)."""
    probe = train(source, {**options, "steps": 150, "eval_every": 150, "n_train": 2000, "n_test": 100,
                           "match_examples": 10})
    return max(200, int(0.85 * budget * probe["steps"] / probe["timings"]["train"]))


def run(name: str, file: str, output: str, layers: int, d_model: int, budget: float) -> dict:
    source = (ROOT / "examples" / file).read_text()
    options = {**COMMON, "output": output, "layers": layers, "d_model": d_model}
    steps = calibrated_steps(source, options, budget)
    t = time.monotonic()
    r = train(source, {**options, "time_budget": budget, "steps": steps})
    f = r["final"]
    secs, step = time_to(r["curve"], 0.99)
    print(f"\n== {name}: {layers} layer{'s' * (layers != 1)}, d_model {d_model}, {r['params']:,} parameters, "
          f"{r['steps']} steps in {r['elapsed']:.0f} s (wall {time.monotonic() - t:.0f} s)")
    marks = [p for p in r["curve"] if p["step"] % max(1, (r["steps"] // 12) // 50 * 50 or 50) == 0] or r["curve"]
    for p in marks + ([r["curve"][-1]] if marks[-1] is not r["curve"][-1] else []):
        print(f"   step {p['step']:>6}  {p['elapsed']:6.1f} s  loss {p['loss']:.4f}  "
              f"held-out {100 * p['test_acc']:5.1f}% per position  {100 * p['test_seq_acc']:5.1f}% per sequence")
    reached = f"{secs:.1f} s (step {step})" if secs is not None else "not reached"
    print(f"   final: {100 * f['test_acc']:.1f}% per position, {100 * f['test_seq_acc']:.1f}% per sequence; "
          f"99% per sequence: {reached}")
    for m in r["matches"]:
        print(f"   selector {m['name']} (layer {m['layer']}): paired head score "
              f"{m['score'] if m['score'] is not None else '-'} "
              f"({m.get('score_without_bos') if m.get('score_without_bos') is not None else '-'} without BOS); "
              f"best {m['best']}")
    return {"name": name, "layers": layers, "d_model": d_model, "params": r["params"], "steps": r["steps"],
            "elapsed": r["elapsed"], "final": f, "time_to_99": secs, "step_to_99": step,
            "curve": [{k: p[k] for k in ("step", "elapsed", "loss", "test_acc", "test_seq_acc")} for p in r["curve"]],
            "matches": [{k: m.get(k) for k in ("name", "layer", "head", "score", "score_without_bos", "best")}
                        for m in r["matches"]]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=120.0, help="seconds of training per model (default 120)")
    ap.add_argument("--json", help="also write every curve to this file")
    args = ap.parse_args()
    budget = args.budget
    print(f"vocab {VOCAB}, lengths 1..16, BOS, batch 64, AdamW lr 1e-3 (cosine to 1e-4 over a step budget "
          f"calibrated to the time), seed 0, budget {budget:g} s per model, "
          f"1 torch thread (the 2-core machine may be shared: timings are noisy)")
    for file, out in (("reverse.rasp", "reverse"), ("histogram.rasp", "hist"), ("sort_stable.rasp", "sorted")):
        t = load_task((ROOT / "examples" / file).read_text(), out)
        print(f"analysis of {file} ({out}): {t.layers} layers, heads per layer {t.heads_per_layer}")

    target = params(2, D_MODEL)
    d1 = matched_width(1, target)
    results = [
        run("reverse (predicted)", "reverse.rasp", "reverse", 2, D_MODEL, budget),
        run("reverse (one layer fewer)", "reverse.rasp", "reverse", 1, d1, budget),
        run("histogram (predicted)", "histogram.rasp", "hist", 1, D_MODEL, budget / 2),
        run("sort (predicted)", "sort_stable.rasp", "sorted", 2, D_MODEL, budget),
        run("sort (one layer fewer)", "sort_stable.rasp", "sorted", 1, d1, budget),
    ]
    r2, r1, h, s2, s1 = results
    print("\n== summary (held-out per-sequence accuracy at the end of the budget)")
    for r in results:
        t99 = f"{r['time_to_99']:.0f} s" if r["time_to_99"] is not None else "never"
        print(f"   {r['name']:<27} {r['params']:>7,} params  {100 * r['final']['test_seq_acc']:5.1f}%  "
              f"(per position {100 * r['final']['test_acc']:5.1f}%)  99% after {t99}")
    ratio = lambda a, b: a["final"]["test_seq_acc"] / max(b["final"]["test_seq_acc"], 1e-9)
    print(f"   reverse 2 vs 1 layer: {ratio(r2, r1):.2f}x per-sequence accuracy "
          f"(paper, length <= 100: 99.6% vs 39.6% = 2.51x)")
    print(f"   sort 2 vs 1 layer:    {ratio(s2, s1):.2f}x per-sequence accuracy")
    ok = r2["time_to_99"] is not None and r2["time_to_99"] < 180
    print(f"   target (reverse, 2 layers, >= 99% per sequence in under 3 minutes): {'met' if ok else 'NOT met'}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
