"""What the commands share: reading a program, printing diagnostics and errors as `FILE:LINE:COL: ...`,
parsing `--vocab` and `--encoding`, and the `--tracr` options of eval and compile."""
from __future__ import annotations

import json
import sys
from pathlib import Path


def read_program(path: str) -> tuple[str, list[Path]]:
    """The program's text and the folders its `load` statements look in (`-` reads standard input)."""
    if path == "-":
        return sys.stdin.read(), [Path.cwd()]
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8"), [p.resolve().parent]
    except (OSError, UnicodeDecodeError) as e:
        raise SystemExit(f"rasplay: cannot read {path}: {e}")


def print_diagnostics(path: str, diagnostics: list[dict]) -> None:
    for d in diagnostics:
        where = path
        if d.get("source") and d["source"] != "<program>":
            where = d["source"]
        if "line" in d:
            where += f":{d['line']}:{d['col']}"
        print(f"{where}: {d['severity']}: {d['message']}", file=sys.stderr)


def print_error(path: str, e) -> None:
    where = path
    if e.span is not None:
        where = (e.span.source if e.span.source != "<program>" else path) + f":{e.span.line}:{e.span.col}"
    print(f"{where}: error: {e.message}", file=sys.stderr)


def parse_vocab(text: str):
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


def parse_encodings(items) -> dict:
    out = {}
    for item in items or []:
        name, sep, enc = item.partition("=")
        if not sep:
            raise SystemExit(f"rasplay: --encoding takes NAME=categorical|numerical, not {item!r}")
        out[name.strip()] = enc.strip()
    return out


def add_tracr_options(p) -> None:
    p.add_argument("--tracr", action="store_true",
                   help="FILE is a Tracr program, FILE.py:NAME (NAME() returns the s-op) or FILE.py:'make_x(ARGS)'; "
                        "runs its Python")
    p.add_argument("--arg", action="append", metavar="EXPR",
                   help="with --tracr: an argument for NAME (a Python expression; `rasp` in scope); repeatable")
    p.add_argument("--save-rasp", metavar="OUT.rasp", help="with --tracr: write the lowered RASP program")
