"""The `rasplay` command line: `rasplay eval`, `rasplay compile` (and the other subcommands as they land)."""
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


def _parse_vocab(text: str):
    """`abc` is three tokens; a JSON list (`[1, 2, 3]`) gives the tokens themselves."""
    if text.lstrip().startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise SystemExit(f"rasplay: --vocab is not a valid JSON list ({e.msg})")
        if not isinstance(value, list):
            raise SystemExit("rasplay: --vocab must be a string of tokens or a JSON list")
        return value
    return text


def _parse_encodings(items) -> dict:
    out = {}
    for item in items or []:
        name, sep, enc = item.partition("=")
        if not sep:
            raise SystemExit(f"rasplay: --encoding takes NAME=categorical|numerical, not {item!r}")
        out[name.strip()] = enc.strip()
    return out


def _print_error(path: str, e) -> None:
    where = path
    if e.span is not None:
        where = (e.span.source if e.span.source != "<program>" else path) + f":{e.span.line}:{e.span.col}"
    print(f"{where}: error: {e.message}", file=sys.stderr)


def cmd_compile(args) -> int:
    import engine

    source, load_dirs = _read_program(args.file)
    try:
        model = engine.compile(source, args.output, vocab=_parse_vocab(args.vocab), max_len=args.max_len,
                               bos=args.bos, encodings=_parse_encodings(args.encoding), load_dirs=load_dirs)
        doc = {"summary": model.summary()}
        if args.check:
            doc["check"] = model.check(seed=args.seed)
        if args.soft:
            doc["soft"] = model.soft_study(seed=args.seed)
        if args.weights:
            model.export_npz(args.weights)
            doc["weights"] = args.weights
    except engine.RaspError as e:
        _print_error(args.file, e)
        return 1
    except OSError as e:
        print(f"rasplay: cannot write {args.weights}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a bug in rasplay: say so, without a traceback
        print(f"{args.file}: internal error: {type(e).__name__}: {e} (please report this)", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
    else:
        from .text_display import render_compiled
        print(render_compiled(args.file, doc))
    ok = "check" not in doc or doc["check"]["agree"] == doc["check"]["inputs"]
    return 0 if ok else 1


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

    p = sub.add_parser("compile", help="compile a RASP program to transformer weights")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("--vocab", required=True, help="the input tokens: a string (one per character) or a JSON list")
    p.add_argument("--max-len", type=int, required=True, help="the longest input the model must handle")
    p.add_argument("--output", help="the s-op to compile (default: the last one the program defines)")
    p.add_argument("--bos", default="<bos>", help="the BOS token (default <bos>)")
    p.add_argument("--encoding", action="append", metavar="NAME=ENC",
                   help="force an s-op's encoding: categorical or numerical (repeat for several)")
    p.add_argument("--check", action="store_true",
                   help="compare with the evaluator on every input up to --max-len (a seeded sample when too many)")
    p.add_argument("--soft", action="store_true", help="also run the soft-attention study (smallest exact beta)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample for --check and --soft")
    p.add_argument("--json", action="store_true", help="print one JSON object (summary, check, soft)")
    p.add_argument("-o", dest="weights", metavar="MODEL.npz", help="write the weights and config (.npz)")
    p.set_defaults(func=cmd_compile)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
