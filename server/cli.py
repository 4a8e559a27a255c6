"""The `rasplay` command line: `rasplay eval` (and the other subcommands as they land)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _read_program(path: str) -> tuple[str, list[Path]]:
    if path == "-":
        return sys.stdin.read(), [Path.cwd()]
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8"), [p.resolve().parent]
    except (OSError, UnicodeDecodeError) as e:
        raise SystemExit(f"rasplay: cannot read {path}: {e}")


def _print_diagnostics(path: str, diagnostics: list[dict]) -> None:
    for d in diagnostics:
        where = path
        if d.get("source") and d["source"] != "<program>":
            where = d["source"]
        if "line" in d:
            where += f":{d['line']}:{d['col']}"
        print(f"{where}: {d['severity']}: {d['message']}", file=sys.stderr)


def cmd_eval(args) -> int:
    import engine
    from .text_display import render

    source, load_dirs = _read_program(args.file)
    names = [n for part in args.names for n in part.split(",") if n] if args.names else None
    doc = engine.evaluate(source, args.input or None, names=names, input_format=args.input_format,
                          load_dirs=load_dirs)
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
    else:
        if not args.input and not doc["inputs"]:
            print("(no input: give one with -i, e.g. -i hello)", file=sys.stderr)
        print(render(doc))
    _print_diagnostics(args.file, doc["diagnostics"])
    failed = any(d["severity"] == "error" for d in doc["diagnostics"])
    failed = failed or any(e for r in doc["results"].values() for e in r["errors"])
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rasplay", description="A visual playground for RASP.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("eval", help="evaluate a RASP program on inputs")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("-i", "--input", action="append", help="an input (repeat for several)")
    p.add_argument("--input-format", choices=["str", "json"], default="str",
                   help="str: one token per character (default); json: a JSON list of tokens")
    p.add_argument("--names", action="append", help="only these names (comma-separated)")
    p.add_argument("--json", action="store_true", help="print the evaluation document as JSON")
    p.set_defaults(func=cmd_eval)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
