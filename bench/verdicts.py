"""Figures for proven exercise verdicts (docs/exercises.md, "Proven verdicts"): for each exercise whose
reference is in causal B-RASP or causal C-RASP, generated mutants of the reference (comparisons,
constants, thresholds, selector comparisons, arithmetic, output strings; pairs of them past the single
ones), each given a proven verdict within the time limit, and every verdict checked against the
evaluator: "proved" and "not proved up to N" by exhaustive evaluation of both programs on every input up
to a length, "different" by replaying the counterexample and by exhaustive evaluation below its length
(it must be the shortest). Then the Dyck-1 threshold programs of issue 37 with a longer time limit.

    python bench/verdicts.py [--mutants 250] [--seconds 10] [--exercises dyck1,previous] [--jobs 1]

Prints, per exercise: mutants, inside the fragments, proved / different / not proved, the share decided
within the limit, the median and the slowest time, and any verdict the evaluator contradicts (none may).
"""
from __future__ import annotations

import argparse
import itertools
import random
import re
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from rasplay.engine.evaluate import evaluate
from rasplay.engine.exercises import load_catalog
from rasplay.engine.exercises.grading import same_values
from rasplay.engine.limits import DEFAULT_LIMITS
from rasplay.engine.verify.verdict import ProofLimits, prove

PROVEN = ["previous", "doubled", "majority_so_far", "seen_ab", "dyck1", "induction"]
CMP = ["==", "!=", "<", ">", "<=", ">="]
THRESHOLDS = ["0", "1", "-1", "2", "3", "-2", "0.5", "0.25", "0.125", "0.0625", "0.03125", "0.015625"]
EXHAUSTIVE_INPUTS = 20_000        # inputs of the exhaustive check (every input up to the longest length that fits)
THRESHOLD_PROGRAMS = {"0.03125": 32, "0.015625": 64}


def _sites(reference: str, alphabet: tuple = ()) -> list[tuple[int, int, list[str]]]:
    """(start, end, replacements) of every place a mutation may change."""
    code = re.sub(r"#[^\n]*", lambda m: " " * len(m.group(0)), reference)
    out = []
    for m in re.finditer(r"==|!=|<=|>=|<|>", code):
        out.append((m.start(), m.end(), [c for c in CMP if c != m.group(0)]))
    for m in re.finditer(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])", code):
        out.append((m.start(), m.end(), [t for t in THRESHOLDS if t != m.group(0)]))
    for m in re.finditer(r'"[^"\n]*"', code):
        strings = sorted((set(re.findall(r'"[^"\n]*"', code)) | {f'"{t}"' for t in alphabet if isinstance(t, str)})
                         - {m.group(0)})
        if strings:
            out.append((m.start(), m.end(), strings[:3]))
    for m in re.finditer(r"(?<=\s)[-+](?=\s)", code):
        out.append((m.start(), m.end(), ["+" if m.group(0) == "-" else "-"]))
    for m in re.finditer(r"\bindices\b(?!\s*[-+])", code):
        out.append((m.start(), m.end(), ["indices - 1", "indices + 1"]))
    return out


def _apply(reference: str, changes: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(changes, reverse=True):
        reference = reference[:start] + new + reference[end:]
    return reference


def mutants(reference: str, count: int, alphabet: tuple = (), seed: int = 0) -> list[str]:
    """`count` distinct mutants: every single mutation first, then random pairs, triples and quadruples (seeded)."""
    sites = sorted(_sites(reference, alphabet))
    singles = [[(s, e, r)] for s, e, rs in sites for r in rs]
    out = dict.fromkeys(_apply(reference, c) for c in singles)
    rng = random.Random(seed)
    tries = 0
    while len(out) < count + 1 and tries < 200 * count and len(sites) > 1:
        tries += 1
        picked = sorted(rng.sample(range(len(sites)), min(rng.choice((2, 3, 4)), len(sites))))
        if any(sites[a][1] > sites[b][0] for a, b in zip(picked, picked[1:])):
            continue
        out[_apply(reference, [(sites[i][0], sites[i][1], rng.choice(sites[i][2])) for i in picked])] = None
    out.pop(reference, None)
    return list(out)[:count]


def every_input(exercise, up_to: int) -> list:
    k = len(exercise.alphabet)
    longest = max(n for n in range(1, up_to + 1) if sum(k ** m for m in range(1, n + 1)) <= EXHAUSTIVE_INPUTS)
    tokens = [list(p) for n in range(1, longest + 1) for p in itertools.product(exercise.alphabet, repeat=n)]
    return ["".join(t) for t in tokens] if exercise.input_format == "str" else tokens


def target_values(exercise, source: str, inputs: list):
    limits = DEFAULT_LIMITS.with_(max_inputs=max(len(inputs), 1), eval_seconds=120.0)
    doc = evaluate(source, inputs, names=[exercise.target], input_format=exercise.input_format, limits=limits)
    r = doc["results"].get(exercise.target)
    if r is None or r["kind"] != "sop" or len(r["values"]) != len(inputs):
        return None
    return [None if e else v for v, e in zip(r["values"], r["errors"])]


def judge(exercise, source: str, seconds: float, bound: int) -> dict:
    """One mutant: its verdict (timed) and whether the evaluator confirms it."""
    sample = every_input(exercise, exercise.max_length)[:300]
    expected, got = target_values(exercise, exercise.reference, sample), target_values(exercise, source, sample)
    if got is None or expected is None:
        return {"verdict": "not a program", "seconds": 0.0, "ok": True}
    started = time.monotonic()
    v = prove(exercise, source, sample, expected, got, started + seconds, limits=ProofLimits(bound=bound))
    elapsed = time.monotonic() - started
    outcome = v["outcome"] if v["method"] == "proof" else "sampled"
    ok, why = True, ""
    if outcome in ("proved", "not_proved", "different"):
        up_to = {"proved": bound, "not_proved": v["length"] or 0, "different": (v["length"] or 1) - 1}[outcome]
        if up_to >= 1:
            inputs = every_input(exercise, up_to)
            a, b = target_values(exercise, exercise.reference, inputs), target_values(exercise, source, inputs)
            if a is None or b is None:
                return {"verdict": outcome, "seconds": elapsed, "ok": False, "source": source, "internal": None,
                        "why": "the exhaustive evaluation failed", "input": v["input"], "length": v["length"]}
            bad = next((x for x, p, q in zip(inputs, a, b) if q is None or not same_values(p, q)), None)
            if bad is not None:
                ok, why = False, f"the evaluator finds a difference on {bad!r}"
    if outcome == "different":
        a, b = target_values(exercise, exercise.reference, [v["input"]]), target_values(exercise, source, [v["input"]])
        if b[0] is not None and same_values(a[0], b[0]):
            ok, why = False, f"the counterexample {v['input']!r} is not one"
    return {"verdict": outcome, "seconds": elapsed, "ok": ok, "why": why, "source": source,
            "internal": v.get("internal_error"), "input": v["input"], "length": v["length"]}


def _job(args):
    exercise_id, source, seconds, bound = args
    catalog, _ = load_catalog()
    return exercise_id, judge(catalog.get(exercise_id), source, seconds, bound)


def report(exercise_id: str, rows: list[dict], seconds: float) -> None:
    inside = [r for r in rows if r["verdict"] in ("proved", "different", "not_proved")]
    decided = [r for r in inside if r["verdict"] in ("proved", "different")]
    times = sorted(r["seconds"] for r in inside) or [0.0]
    count = {k: sum(r["verdict"] == k for r in rows) for k in ("proved", "different", "not_proved", "sampled",
                                                                "not a program")}
    share = 100 * len(decided) / len(inside) if inside else 0.0
    print(f"{exercise_id:16} {len(rows):4} {len(inside):6} {count['proved']:6} {count['different']:9} "
          f"{count['not_proved']:10} {share:8.1f}% {statistics.median(times):8.2f} s {times[-1]:7.2f} s "
          f"{sum(not r['ok'] for r in rows):5}")
    for r in rows:
        if not r["ok"] or r.get("internal"):
            print(f"  CONTRADICTED ({r['why'] or r['internal']}):\n{r['source']}")


def threshold_programs(seconds: float) -> None:
    catalog, _ = load_catalog()
    ex = catalog.get("dyck1")
    print(f"\nThe Dyck-1 threshold programs (issue 37), time limit {seconds:g} s:")
    for threshold, expected in THRESHOLD_PROGRAMS.items():
        src = ex.reference.replace("indicator(balance < 0)) > 0", f"indicator(balance < 0)) > {threshold}")
        r = judge(ex, src, seconds, 64)
        print(f"  '> {threshold}': {r['verdict']} in {r['seconds']:.1f} s (length {r['length']}; issue 37 names "
              f"{expected}), the evaluator confirms it: {r['ok']}")
        print(f"    {r['input']}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mutants", type=int, default=250)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--bound", type=int, default=64, help="longest inputs the search and bounded check read")
    p.add_argument("--exercises", default=",".join(PROVEN))
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--threshold-seconds", type=float, default=120.0)
    args = p.parse_args(argv)
    catalog, _ = load_catalog()
    work = [(eid, src, args.seconds, args.bound) for eid in args.exercises.split(",")
            for src in mutants(catalog.get(eid).reference, args.mutants, catalog.get(eid).alphabet)]
    rows: dict[str, list] = {}
    print(f"{'exercise':16} {'muts':>4} {'inside':>6} {'proved':>6} {'different':>9} {'not proved':>10} "
          f"{'decided':>9} {'median':>10} {'slowest':>9} {'wrong':>5}", flush=True)
    with ProcessPoolExecutor(args.jobs) as pool:
        for eid, row in pool.map(_job, work, chunksize=2):    # in order: an exercise's line once it is done
            rows.setdefault(eid, []).append(row)
            if len(rows[eid]) == sum(w[0] == eid for w in work):
                report(eid, rows[eid], args.seconds)
                sys.stdout.flush()
    if args.threshold_seconds > 0:
        threshold_programs(args.threshold_seconds)
    return 0 if all(r["ok"] for rs in rows.values() for r in rs) else 1


if __name__ == "__main__":
    sys.exit(main())
