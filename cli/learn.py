"""`rasplay learn check LEARNED.rasp --task TASK.rasp --vocab V`: compare a learned program with the task's
program on every input up to a length (exit 0: it agrees on every input checked, 1: it does not, 2: the
check is refused: a bad program, option or limit). `rasplay learn import PROGRAM.py --weights W.csv
[-o OUT.rasp]`: a TransformerPrograms program as rasplay RASP (exit 2 when it cannot be read).
docs/learned_programs.md, "Checking"."""
from __future__ import annotations

import json
import sys

from .common import parse_vocab, read_program


def add_parser(sub) -> None:
    p = sub.add_parser("learn", help="learned programs: check one against the task's program, import one")
    learn = p.add_subparsers(dest="learn_command", required=True)
    c = learn.add_parser("check", help="compare a learned program with the task's program on every input up to a "
                                       "length (exit 0: agrees on every input checked, 1: does not, 2: refused)")
    c.add_argument("learned", help="the learned program (.rasp), or - for standard input")
    c.add_argument("--task", required=True, metavar="TASK.rasp", help="the task's program")
    c.add_argument("--vocab", required=True, help="input tokens: a string (one token per character) or a JSON list")
    c.add_argument("--output", help="the task's s-op (default: its default output)")
    c.add_argument("--learned-output", help="the learned program's s-op (default: its `# output:`)")
    c.add_argument("--min-length", type=int, default=1, metavar="N", help="the shortest input (default 1)")
    c.add_argument("--max-length", type=int, default=6, metavar="N",
                   help="the longest input within training's lengths (default 6)")
    c.add_argument("--beyond", type=int, default=0, metavar="N",
                   help="also check N lengths past --max-length, marked as beyond (default 0)")
    c.add_argument("--exhaustive", type=int, default=100_000, metavar="N",
                   help="check every input of a length that has at most N (default 100000); else samples")
    c.add_argument("--samples", type=int, default=1000, metavar="N",
                   help="seeded inputs at a length with more than --exhaustive (default 1000)")
    c.add_argument("--seed", type=int, default=0, help="the samples' seed (default 0)")
    c.add_argument("--show", type=int, default=5, metavar="N", help="shortest failing inputs shown (default 5)")
    c.add_argument("--seconds", type=float, default=300.0, metavar="S", help="time limit (default 300)")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.set_defaults(func=run_check)
    i = learn.add_parser("import", help="read a TransformerPrograms program (its decompiled Python, never run, and "
                                        "weights CSV) into rasplay RASP (exit 0: done, 2: not readable)")
    i.add_argument("program", help="the decompiled program (.py)")
    i.add_argument("--weights", required=True, metavar="W.csv", help="its classifier weights")
    i.add_argument("-o", "--output", metavar="OUT.rasp", help="write the RASP program here (default: print it)")
    i.add_argument("--title", default=None, help="the program's title (default: the file's name)")
    i.set_defaults(func=run_import)


def run_check(args) -> int:
    from ..engine.learned.check import CheckLimits, CheckOptions, check_learned
    from ..engine.learned.check_programs import CheckError

    learned, dirs = read_program(args.learned)
    task, task_dirs = read_program(args.task)
    options = CheckOptions(min_length=args.min_length, max_length=args.max_length, beyond=args.beyond,
                           exhaustive=args.exhaustive, samples=args.samples, seed=args.seed, show=args.show)
    try:
        report = check_learned(learned, task, parse_vocab(args.vocab), options, output=args.output,
                               learned_output=args.learned_output, limits=CheckLimits(seconds=args.seconds),
                               load_dirs=dirs + task_dirs)
    except CheckError as e:
        print(f"rasplay: {e.message}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        print_report(report)
    return 0 if report["all_agree"] else 1


def run_import(args) -> int:
    from pathlib import Path

    from ..engine.learned import LearnedProgramError
    from ..interop import import_transformer_program

    texts = []
    for path in (args.program, args.weights):
        try:
            texts.append(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as e:
            print(f"rasplay: cannot read {path}: {e}", file=sys.stderr)
            return 2
    try:
        source = import_transformer_program(*texts, title=args.title or Path(args.program).stem)
    except LearnedProgramError as e:
        print(f"{args.program}: error: {e}", file=sys.stderr)
        return 2
    if args.output:
        Path(args.output).write_text(source, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(source)
    return 0


def _show(values) -> str:
    if values is None:
        return "-"
    return " ".join("T" if v is True else "F" if v is False else str(v) for v in values)


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def print_report(r: dict) -> None:
    t = r["total"]
    around = ", ".join(f"{k.upper()} {r[k]}" for k in ("bos", "eos") if r[k] is not None) or "no BOS"
    verdict = "AGREES on every input checked" if r["all_agree"] else "DISAGREES"
    print(f"{verdict}: learned {r['learned_output']} ({around}) against task {r['task_output']}: "
          f"{t['agree']:,}/{t['inputs']:,} inputs, {t['tokens_agree']:,}/{t['tokens']:,} tokens, {r['seconds']:g} s"
          + ("  (outputs compared as text)" if r["compared_as"] == "text" else ""))
    print("length  mode        inputs agree          tokens agree          task failed  learned failed")
    for row in r["lengths"]:
        mark = "*" if row["beyond"] else " "
        print(f"{row['length']:>5}{mark}  {row['mode']:<10}  {row['agree']:>7,}/{row['inputs']:<7,} "
              f"{_percent(row['agree'], row['inputs']):>6}  {row['tokens_agree']:>8,}/{row['tokens']:<8,} "
              f"{_percent(row['tokens_agree'], row['tokens']):>6}  {row['task_failed']:>11,}  "
              f"{row['learned_failed']:>14,}")
    if any(row["beyond"] for row in r["lengths"]):
        print("  * beyond --max-length")
    if r["failing"]:
        print("shortest failing inputs:")
    for f in r["failing"]:
        print(f"  input:    {_show(f['input'])}")
        print(f"  expected: {_show(f['expected'])}")
        print(f"  got:      {f['error'] or _show(f['got'])}   (differs at {', '.join(map(str, f['differs']))})")
    for s in r["selectors"]:
        where = f" (line {s['line']})" if s["line"] is not None else ""
        if s["equals"]:
            print(f"selector {s['name']}{where} equals the task's {', '.join(s['equals'])}")
        elif s["closest"] is not None:
            c = s["closest"]
            print(f"selector {s['name']}{where} equals none of the task's (closest: {c['name']}, "
                  f"the same on {100 * c['inputs_equal']:.1f}% of inputs)")
