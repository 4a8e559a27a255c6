"""`rasplay check FILE --exercise ID`: check a program against an exercise (exit 0: pass, 1: not yet,
2: a bad exercise) and print the shortest counterexample, the first wrong s-op and the budget."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .common import print_diagnostics, read_program


def add_parser(sub) -> None:
    p = sub.add_parser("check", help="check a program against an exercise (exit 0: pass, 1: not yet, 2: bad exercise)")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("--exercise", required=True, metavar="ID",
                   help="the exercise: an id (rasplay's own, or in --exercises folders) or a .exercise file")
    p.add_argument("--exercises", action="append", metavar="DIR", help="a folder of .exercise files (repeatable)")
    p.add_argument("--json", action="store_true", help="print the check result as JSON")
    p.add_argument("--seconds", type=float, default=None, metavar="S",
                   help="the check's time limit, proof included (default 10; a longer one lets a proof or its "
                        "search go further)")
    p.set_defaults(func=run)


def find_exercise(spec: str, folders: list[str]):
    """An exercise by id (shipped, or in --exercises folders) or by the path of its file."""
    from ..engine.exercises import ExerciseError, load_catalog, read_exercise
    from ..engine.exercises.catalog import SUFFIX

    if spec.endswith(SUFFIX) or "/" in spec:
        return read_exercise(Path(spec))
    catalog, problems = load_catalog([Path(d) for d in folders], self_check_extra=False)
    for p in problems:
        print(f"rasplay: {p}", file=sys.stderr)
    exercise = catalog.get(spec)
    if exercise is None:
        known = ", ".join(e.id for e in catalog.ordered())
        raise ExerciseError(spec, f"no such exercise (known: {known})")
    return exercise


def print_check(path: str, r: dict) -> None:
    mark = {"pass": "PASS", "wrong": "WRONG", "outside_fragment": "OUTSIDE FRAGMENT", "over_budget": "OVER BUDGET",
            "error": "ERROR"}[r["status"]]
    print(f"{mark}  {r['exercise']}: {r['message']}")
    v = r.get("verdict")
    if v and v["internal_error"]:
        print(f"  internal error (please report it): {v['internal_error']}")
    elif v and v["outcome"] == "sampled" and v["reason"]:
        print(f"  sampled, not proved: {v['reason']}")
    c = r["counterexample"]
    if c is not None:
        show = lambda v: " ".join("T" if x is True else "F" if x is False else str(x) for x in v) if v else "-"
        print(f"  input:    {c['input'] if isinstance(c['input'], str) else json.dumps(c['input'])}")
        print(f"  expected: {show(c['expected'])}   ({r['target']})")
        print(f"  got:      {c['error'] or show(c['got'])}")
        s = c["sop"]
        if s["name"] != r["target"]:
            print(f"  first wrong s-op: {s['name']} (layer {s['layer']}): expected {show(s['expected'])}, "
                  f"got {s['error'] or show(s['got'])}")
        if s["selector"]:
            print(f"  look at the selector: {s['selector_name'] or s['selector']}")
    b = r["budget"]
    if b is not None:
        parts = [f"{k.replace('_', ' ')} {v['used']}" + (f"/{v['max']}" if v["max"] is not None else "")
                 + ("" if v["ok"] else " (over)") for k, v in b.items() if k != "within"]
        print(f"  budget: {', '.join(parts)}")
    print_diagnostics(path, [d for d in r["diagnostics"] if d["severity"] == "error"])


def run(args) -> int:
    from dataclasses import replace

    from ..engine.exercises import CHECK_LIMITS, ExerciseError, check

    source, _ = read_program(args.file)
    try:
        exercise = find_exercise(args.exercise, args.exercises or [])
        limits = CHECK_LIMITS if args.seconds is None else replace(CHECK_LIMITS, seconds=max(args.seconds, 0.1))
        result = check(exercise, source, check_limits=limits)
    except ExerciseError as e:
        print(f"rasplay: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print_check(args.file, result)
    return 0 if result["passed"] else 1

