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


def cmd_serve(args) -> int:
    import uvicorn

    from .app import create_app
    from .settings import Settings, default_data_dir
    from .workers import default_workers

    settings = Settings(
        data_dir=Path(args.data_dir) if args.data_dir else default_data_dir(),
        workers=args.workers or default_workers(),
        eval_seconds=args.eval_seconds, max_input_length=args.max_input_length, max_inputs=args.max_inputs,
        max_source_chars=args.max_source_chars, max_body_bytes=args.max_body_bytes,
        cors_origins=tuple(args.cors_origin or ()),
    )
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"rasplay is serving at http://{shown_host}:{args.port}/  (API docs: /docs; data: {settings.data_dir})",
          flush=True)
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level=args.log_level, access_log=False,
                timeout_graceful_shutdown=3)
    return 0


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

    p = sub.add_parser("serve", help="run the playground and its REST API")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--data-dir", help="where share links are stored (default ~/.local/share/rasplay)")
    p.add_argument("--workers", type=int, help="evaluation worker processes (default: 2 per core, 2 to 8)")
    p.add_argument("--cors-origin", action="append", help="allow this origin to call the API (repeatable)")
    p.add_argument("--eval-seconds", type=float, default=5.0, help="time limit of one evaluation (default 5)")
    p.add_argument("--max-input-length", type=int, default=256, help="tokens per input (default 256)")
    p.add_argument("--max-inputs", type=int, default=16, help="inputs per request (default 16)")
    p.add_argument("--max-source-chars", type=int, default=50_000, help="program size (default 50000)")
    p.add_argument("--max-body-bytes", type=int, default=1 << 20, help="request body size (default 1 MiB)")
    p.add_argument("--log-level", default="warning")
    p.set_defaults(func=cmd_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
