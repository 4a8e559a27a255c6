"""The CLI's `--tracr FILE.py:NAME` option (NAME a function, an s-op, or a call `make_x(3)`; `--arg` values
for a function's arguments): load a Tracr program and lower it to RASP source (runs the file's Python,
which is why only the CLI and the Python API offer it). Values print as Tracr's values (tuples, None),
and `compile --check` compares with Tracr's evaluation rules."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..engine.lang.errors import RaspError
from ..interop import tracr_rasp as rasp
from ..interop.tracr import LIMITS, load_program, page_link, to_rasp

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


def _program(args):
    """The Tracr s-op of `--tracr FILE.py:NAME` with its `--arg` values (Python expressions, evaluated
    with `rasp` in scope: `--arg 3`, `--arg 'rasp.tokens == "x"'`)."""
    values = []
    for text in getattr(args, "arg", None) or []:
        try:
            values.append(eval(text, {"rasp": rasp}))   # noqa: S307 - the CLI user's own argument
        except Exception as e:  # noqa: BLE001
            raise SystemExit(f"rasplay: --arg {text!r}: {type(e).__name__}: {e}")
    try:
        return load_program(args.file, *values)
    except RaspError as e:
        raise SystemExit(f"{args.file}: error: {e.message}")


def decode_document(args, doc: dict) -> dict:
    """The evaluation document with values as Tracr's values: coded s-ops (tuples, None among numbers) and
    the string standing for None decoded (the lowered program's own values are under doc["lowered"])."""
    low = getattr(args, "_tracr_lowered", None)
    if low is None:
        return doc
    plain = (lambda v: _jsonable(v)) if getattr(args, "json", False) else (lambda v: v)
    for name, result in doc["results"].items():
        if result.get("kind") == "sop" and (name in low.codes or name in low.nones):
            values = [low.decode(name, v) for v in result["values"]]
            kinds = {type(x).__name__ for row in values if row for x in row if x is not None}
            result["type"] = kinds.pop() if len(kinds) == 1 else "mixed"
            result["values"] = [plain(v) for v in values]
    doc["lowered"] = {"source": low.source, "output": low.output, "notes": low.notes,
                      "codes": {k: [_jsonable(v) for v in vs] for k, vs in low.codes.items()}}
    return doc


def _jsonable(v):
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    return v


def tracr_model(args, model):
    """A CompiledModel of `--tracr` with Tracr's surface and the check against Tracr's evaluation rules."""
    from ..interop.tracr_model import as_tracr_model

    return as_tracr_model(model, args._tracr_program, args._tracr_lowered)


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
    program = _program(args)
    try:
        low = to_rasp(program, vocab, max_len)
    except RaspError as e:
        raise SystemExit(f"{args.file}: error: {e.message}")
    args._tracr_program, args._tracr_lowered = program, low
    _notes(low)
    _save(low, getattr(args, "save_rasp", None), args.input)
    return low.source, low.output, LIMITS


def lower_for_compile(args, vocab):
    program = _program(args)
    try:
        low = to_rasp(program, vocab, args.max_len)
    except RaspError as e:
        raise SystemExit(f"{args.file}: error: {e.message}")
    args._tracr_program, args._tracr_lowered = program, low
    _notes(low)
    _save(low, getattr(args, "save_rasp", None))
    return low.source, low.output, LIMITS
