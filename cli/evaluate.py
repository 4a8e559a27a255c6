"""`rasplay eval FILE -i INPUT ...`: evaluate a program (or a Tracr program, `--tracr`) under a time and a
memory limit and print its values (a text display like the original REPL's, or the evaluation document)."""
from __future__ import annotations

import json
import sys

from .common import add_tracr_options, print_diagnostics, read_program


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="evaluate a RASP program on inputs")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("-i", "--input", action="append", help="an input (repeat for several)")
    p.add_argument("--input-format", choices=["str", "json"], default="str",
                   help="str: one token per character (default); json: a JSON list of tokens")
    p.add_argument("--names", action="append", help="only these names (comma-separated)")
    p.add_argument("--json", action="store_true", help="print the evaluation document as JSON")
    p.add_argument("--eval-seconds", type=float, default=10.0, help="time limit of the evaluation (default 10)")
    p.add_argument("--memory", default="2GiB", help="memory the evaluation may take (default 2GiB; 0: no limit)")
    add_tracr_options(p)
    p.add_argument("--vocab", help="with --tracr: the tokens to lower the program for (default: the inputs' tokens)")
    p.add_argument("--max-len", type=int, help="with --tracr: the longest input to lower for (default: the inputs')")
    p.set_defaults(func=run)


def run(args) -> int:
    from .. import engine
    from ..server.settings import parse_bytes

    from .limits import TimeLimit, enforce_limits
    from .text_display import render

    names = [n for part in args.names for n in part.split(",") if n] if args.names else None
    limits = None
    if args.tracr:   # FILE.py:NAME, a Tracr program (runs its Python): see docs/interop.md
        from .tracr_option import lower_for_eval
        source, _, limits = lower_for_eval(args)
        load_dirs = None
    else:
        source, load_dirs = read_program(args.file)
    limits = (limits or engine.Limits()).with_(eval_seconds=args.eval_seconds * 0.9)
    try:
        memory = parse_bytes(args.memory) if args.memory else None
    except ValueError as e:
        raise SystemExit(f"rasplay: --memory: {e}")
    disarm = enforce_limits(args.file, args.eval_seconds, memory)
    try:
        doc = engine.evaluate(source, args.input or None, names=names, input_format=args.input_format,
                              load_dirs=load_dirs, limits=limits)
    except TimeLimit:
        print(f"{args.file}: error: the evaluation took longer than {args.eval_seconds:g} s (the time limit; "
              "--eval-seconds) and was stopped", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{args.file}: error: the evaluation needed more than {args.memory} of memory (the limit; --memory) "
              "and was stopped", file=sys.stderr)
        return 1
    finally:
        disarm()
    if args.tracr:   # Tracr's values (tuples, None), not the lowered program's codes
        from .tracr_option import decode_document
        doc = decode_document(args, doc)
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
    else:
        if not args.input and not doc["inputs"]:
            print("(no input: give one with -i, e.g. -i hello)", file=sys.stderr)
        print(render(doc))
    print_diagnostics(args.file, doc["diagnostics"])
    failed = any(d["severity"] == "error" for d in doc["diagnostics"])
    failed = failed or any(e for r in doc["results"].values() for e in r["errors"])
    return 1 if failed else 0
