"""Program inputs: a string (one token per character) or a list of tokens (numbers, bools or strings),
checked and turned into typed token arrays."""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from .elementwise import array_from_values
from .lang.errors import RaspError
from .limits import Limits

INPUT_FORMATS = ("str", "json")


@dataclass
class Input:
    tokens: list            # the tokens as the document shows them
    array: np.ndarray | None  # typed tokens (None when the input is invalid)
    error: RaspError | None = None


def _finite(text: str) -> float:
    value = float(text)
    if not np.isfinite(value):
        raise _BadNumber(text)
    return value


def _int64(text: str) -> int:
    if len(text.lstrip("-")) > 19 or not -(1 << 63) <= int(text) < (1 << 63):
        raise _BadNumber(text)
    return int(text)


class _BadNumber(ValueError):
    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


def _load_json(text: str, label: str):
    """A JSON input; every problem (syntax, nesting, numbers out of range) is a RaspError naming it."""
    try:
        return json.loads(text, parse_float=_finite, parse_int=_int64, parse_constant=_finite)
    except json.JSONDecodeError as e:
        raise RaspError(f"{label} is not valid JSON ({e.msg} at character {e.pos + 1})", None, "input") from None
    except _BadNumber as e:
        shown = e.text if len(e.text) <= 40 else f"{e.text[:20]}… ({len(e.text)} characters)"
        raise RaspError(f"{label}: the number {shown} is out of range (tokens are finite numbers, integers "
                        "within 64 bits)", None, "input") from None
    except RecursionError:
        raise RaspError(f"{label} nests too deeply (a token list holds numbers, bools or strings)", None,
                        "input") from None


def parse_input(item, input_format: str | None, limits: Limits, index: int = 0) -> Input:
    """One input as given by a user: a str, or a list (or with input_format 'json', a JSON text)."""
    label = f"input {index + 1}"
    try:
        if input_format not in (None, *INPUT_FORMATS):
            raise RaspError(f"unknown input format {input_format!r}; use 'str' or 'json'", None, "input")
        if input_format == "json" and isinstance(item, str):
            item = _load_json(item, label)
            if not isinstance(item, list):
                raise RaspError(f"{label} must be a JSON list of tokens", None, "input")
        elif input_format == "str" and not isinstance(item, str):
            raise RaspError(f"{label} must be a string with input format 'str'", None, "input")
        if isinstance(item, str):
            tokens = list(item)
        elif isinstance(item, list):
            tokens = item
        else:
            raise RaspError(f"{label} must be a string or a list of tokens, not {type(item).__name__}", None, "input")
        if not tokens:
            raise RaspError(f"{label} is empty; an input needs at least one token", None, "input")
        too_long = length_error(len(tokens), limits, index)
        if too_long is not None:
            raise too_long
        for t in tokens:
            if not isinstance(t, (bool, int, float, str)) or (isinstance(t, float) and not np.isfinite(t)):
                raise RaspError(f"{label}: the token {json.dumps(t)[:40]} is not a number, bool or string",
                                None, "input")
        try:
            array = array_from_values(tokens, f"the tokens of {label}", mixed=True)
            if array.dtype.kind == "O" and any(isinstance(t, str) for t in tokens):
                names = " and ".join(sorted({type(t).__name__ for t in tokens}))
                raise RaspError(f"the tokens of {label} mix {names} (the original RASP refuses a sequence holding "
                                "strings beside other types)", None, "input")
        except RaspError as e:
            raise RaspError(e.message, None, "input") from None
        return Input(tokens, array)
    except RaspError as e:
        shown = item if isinstance(item, list) else (list(item) if isinstance(item, str) else [])
        return Input(shown[: limits.max_input_length], None, e)


def parse_inputs(items, input_format: str | None, limits: Limits) -> tuple[list[Input], RaspError | None]:
    """All inputs; an error (too many inputs) that applies to the whole request is returned apart."""
    items = list(items or [])
    too_many = count_error(len(items), limits)
    if too_many is not None:
        return [], too_many
    return [parse_input(item, input_format, limits, i) for i, item in enumerate(items)], None


# ------------------------------------------------------------------ the input limits, checked in one place

def count_error(count: int, limits: Limits) -> RaspError | None:
    """The error for `count` inputs in one request, if that is over the limit."""
    if count > limits.max_inputs:
        return RaspError(f"{count} inputs; the limit is {limits.max_inputs} per request", None, "limit")
    return None


def length_error(tokens: int, limits: Limits, index: int = 0) -> RaspError | None:
    """The error for input number `index` (0-based) having `tokens` tokens, if that is over the limit."""
    if tokens > limits.max_input_length:
        return RaspError(f"input {index + 1} has {tokens} tokens; the limit is {limits.max_input_length}",
                         None, "limit")
    return None


def token_count(item, input_format: str | None = None) -> int | None:
    """The number of tokens of an input as given (None when it is not valid: parse_input says why)."""
    if isinstance(item, list):
        return len(item)
    if isinstance(item, str) and input_format == "json":
        try:
            parsed = json.loads(item)
        except (ValueError, RecursionError):
            return None
        return len(parsed) if isinstance(parsed, list) else None
    return len(item) if isinstance(item, str) else None


def input_limit_error(items, input_format: str | None, limits: Limits) -> RaspError | None:
    """The first way a request's inputs are over the input limits (inputs per request, tokens per
    input), or None. Servers check this before doing any work; evaluate() applies the same limits."""
    items = list(items)
    error = count_error(len(items), limits)
    for i, item in enumerate(items):
        if error is not None:
            break
        n = token_count(item, input_format)
        error = length_error(n, limits, i) if n is not None else None
    return error
