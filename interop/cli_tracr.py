"""The CLI's `--tracr FILE.py:NAME` option: load a Tracr program and lower it to RASP source
(runs the file's Python, which is why only the CLI and the Python API offer it)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..engine.lang.errors import RaspError
from .tracr import LIMITS, load_program, page_link, to_rasp

LINK_CHARS = 8000   # longer links are not printed (browsers and servers cut very long URLs)


def _tokens(item: str, input_format: str) -> list:
    if input_format == "json":
        try:
            value = json.loads(item)
        except json.JSONDecodeError:
            return []
        return value if isinstance(value, list) else []
    return list(item)


def _vocab(text: str) -> list:
    """`abc` is three tokens; a JSON list gives the tokens themselves."""
    if text.lstrip().startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise SystemExit(f"rasplay: --vocab is not a valid JSON list ({e.msg})")
        if isinstance(value, list):
            return value
    return list(text)


def _save(low, path: str | None, inputs=None) -> None:
    if path:
        Path(path).write_text(low.source, encoding="utf-8")
        print(f"wrote the lowered RASP program to {path} (open it in the page, or `rasplay eval {path}`)",
              file=sys.stderr)
        link = page_link(low.source, inputs)
        if len(link) <= LINK_CHARS:
            print(f"open it in the page (with `rasplay serve` running): {link}", file=sys.stderr)


def _notes(low) -> None:
    for note in low.notes:
        print(f"note: {note}", file=sys.stderr)


def lower_for_eval(args):
    """(RASP source, output name, limits) for `rasplay eval --tracr`; the vocabulary and max_len
    are the inputs' tokens and longest length."""
    items = [_tokens(i, args.input_format) for i in args.input or []]
    vocab = [t for item in items for t in item] or ["a"]
    if getattr(args, "vocab", None):
        vocab = _vocab(args.vocab) + vocab
    max_len = max([len(i) for i in items] + [getattr(args, "max_len", None) or 1])
    try:
        low = to_rasp(load_program(args.file), vocab, max_len)
    except RaspError as e:
        raise SystemExit(f"{args.file}: error: {e.message}")
    _notes(low)
    _save(low, getattr(args, "save_rasp", None), args.input)
    return low.source, low.output, LIMITS


def lower_for_compile(args, vocab):
    try:
        low = to_rasp(load_program(args.file), vocab, args.max_len)
    except RaspError as e:
        raise SystemExit(f"{args.file}: error: {e.message}")
    _notes(low)
    _save(low, getattr(args, "save_rasp", None))
    return low.source, low.output, LIMITS
