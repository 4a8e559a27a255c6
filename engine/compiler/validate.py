"""Pass 1, validate: interpret the program, pick the output s-op, check the vocabulary and sizes."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..elementwise import array_from_values
from ..interpret import Interpretation, interpret
from ..header import default_output
from ..lang.errors import RaspError
from ..limits import DEFAULT_LIMITS, Limits
from ..mixed_types import refuse_extensions, refuse_mixed
from ..program import SOp

ENCODINGS = ("categorical", "numerical")


@dataclass(frozen=True)
class CompileLimits:
    """Sizes the compiler refuses to exceed (each refusal is a compile error naming the s-op)."""
    max_len: int = 64                  # longest input the model is compiled for
    max_vocab: int = 256               # input tokens
    max_categories: int = 1024         # values of one categorical (one-hot) block
    max_means: int = 200_000           # possible means of a numerical aggregate that is read by an MLP
    max_domain: int = 2_000_000        # input combinations one MLP table (or value set) enumerates
    max_hidden: int = 32_768           # hidden units of one MLP
    max_selector_atoms: int = 12       # select(...) atoms combined by and/or/not in one selector


DEFAULT_COMPILE_LIMITS = CompileLimits()


@dataclass
class Program:
    source: str
    interp: Interpretation
    output: SOp
    output_name: str
    vocab: list                        # input tokens, in the given order (token id = index + 1)
    vocab_array: np.ndarray            # the same, typed as the evaluator types them
    max_len: int
    bos: str
    encodings: dict = field(default_factory=dict)   # s-op name -> "categorical" | "numerical"
    limits: CompileLimits = DEFAULT_COMPILE_LIMITS

    def name(self, node) -> str:
        return self.interp.display_name(node)

    def span_of(self, node):
        """Where the program asks for `node` (for built-in s-ops such as tokens: the line naming it)."""
        if node.origin is not None:
            return node.origin
        return next((d.span for d in self.interp.definitions if d.value is node), None)


def normalize_vocab(vocab) -> list:
    """A string is one token per character; a list gives the tokens themselves."""
    if isinstance(vocab, str):
        return list(vocab)
    if isinstance(vocab, (list, tuple)):
        return list(vocab)
    raise RaspError(f"the vocabulary must be a string or a list of tokens, not {type(vocab).__name__}",
                    None, "input")


def validate_program(source: str, output: str | None, vocab, max_len: int, bos: str, encodings: dict | None,
             limits: CompileLimits, eval_limits: Limits | None = None, load_dirs=None) -> Program:
    interp = interpret(source, eval_limits or DEFAULT_LIMITS, load_dirs)
    errors = [d for d in interp.diagnostics if d["severity"] == "error"]
    if errors:
        raise _from_diagnostic(errors[0])

    tokens = normalize_vocab(vocab)
    if not tokens:
        raise RaspError("the vocabulary is empty; give at least one token", None, "input")
    if len(tokens) > limits.max_vocab:
        raise RaspError(f"the vocabulary has {len(tokens)} tokens; the compiler's limit is {limits.max_vocab}",
                        None, "limit")
    if len(set(map(repr, tokens))) != len(tokens):
        raise RaspError("the vocabulary lists a token twice", None, "input")
    for t in tokens:
        if not isinstance(t, (bool, int, float, str)):
            raise RaspError(f"the token {t!r} is not a number, bool or string", None, "input")
    try:
        vocab_array = array_from_values(tokens, "the vocabulary's tokens")
    except RaspError as e:
        raise RaspError(e.message, None, "input") from None
    if not isinstance(bos, str) or not bos:
        raise RaspError("the BOS token must be a non-empty string", None, "input")
    if bos in [t for t in tokens if isinstance(t, str)]:
        raise RaspError(f"the BOS token {bos!r} is also in the vocabulary; choose another", None, "input")
    if isinstance(max_len, bool) or not isinstance(max_len, int) or not 1 <= max_len <= limits.max_len:
        raise RaspError(f"max_len must be an int from 1 to {limits.max_len}, not {max_len!r}", None, "input")

    sops = [d for d in interp.definitions if isinstance(d.value, SOp)]
    if output is None:
        output = default_output(interp)
        if output is None:
            raise RaspError("the program defines no s-op to compile", None, "name")
    found = [d for d in interp.definitions if d.name == output]
    if not found:
        names = ", ".join(d.name for d in sops[:12]) or "none"
        raise RaspError(f"the program defines no s-op named '{output}' (its s-ops: {names})", None, "name")
    chosen = found[-1]   # a name defined twice means its last definition, as in the evaluation document
    if not isinstance(chosen.value, SOp):
        raise RaspError(f"'{output}' is a selector; compile an s-op (an aggregate or selector_width of it)",
                        chosen.span, "type")

    refuse_extensions(interp, interp.graph.ancestors([chosen.value]), "the compiler")
    refuse_mixed(interp, interp.graph.ancestors([chosen.value]), "a compiled model")
    overrides = dict(encodings or {})
    known = {d.name for d in interp.definitions}
    for name, enc in overrides.items():
        if enc not in ENCODINGS:
            raise RaspError(f"unknown encoding {enc!r} for '{name}'; use 'categorical' or 'numerical'", None, "input")
        if name not in known:
            raise RaspError(f"an encoding is given for '{name}', which the program does not define", None, "name")
    return Program(source, interp, chosen.value, chosen.name, tokens, vocab_array, max_len, bos, overrides, limits)


def _from_diagnostic(d: dict) -> RaspError:
    from ..lang.errors import Span

    span = None
    if "line" in d:
        span = Span(d["line"], d["col"], d.get("end_line", d["line"]), d.get("end_col", d["col"] + 1),
                    d.get("source", "<program>"))
    return RaspError(d["message"], span, d.get("kind", "value"))
