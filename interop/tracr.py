"""Tracr programs in rasplay: load a Tracr program file, lower it to RASP, evaluate, analyse, compile.

    from rasplay.tracr import rasp     # or, after rasplay.tracr.install_alias(): from tracr.rasp import rasp
    prog = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ), rasp.tokens)
    rasplay.tracr.evaluate(prog, ["abc"])          # rasplay's evaluation document (values of every s-op)
    rasplay.tracr.compile(prog, vocab="abc", max_len=5)   # a rasplay CompiledModel
    rasplay.tracr.to_rasp(prog, "abc", 5).source   # the RASP program (save it; the page opens it)

Loading a program file runs its Python: this is for the CLI and the Python API only, never the server.
"""
from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

from ..engine import analyze as _analyze
from ..engine import compile as _compile
from ..engine import evaluate as _evaluate
from ..engine.lang.errors import RaspError
from ..engine.limits import DEFAULT_LIMITS
from . import tracr_eval
from . import tracr_rasp as rasp
from .tracr_lower import Lowered, lower
from .tracr_model import as_tracr_model

# Lowered tables can be long: the Python API and CLI allow more program text than the server does.
LIMITS = DEFAULT_LIMITS.with_(max_source_chars=5_000_000, max_collection=1_000_000)


def to_rasp(program, vocab, max_len: int) -> Lowered:
    """The RASP source of a Tracr program for inputs over `vocab` up to `max_len` (see interop/tracr_lower.py)."""
    return lower(program, vocab, max_len)


def _inputs_vocab(inputs) -> tuple[list, int]:
    tokens = [t for x in inputs for t in (list(x) if isinstance(x, str) else x)]
    return tokens, max((len(x) for x in inputs), default=1)


def evaluate(program, inputs, vocab=None, max_len: int | None = None, limits=None) -> dict:
    """rasplay's evaluation document of a Tracr program on `inputs` (strings or lists of tokens).
    vocab and max_len default to the inputs' tokens and longest length. The document gains
    "lowered": the RASP source, the output's name, codes and notes."""
    inputs = list(inputs)
    seen, longest = _inputs_vocab(inputs)
    low = lower(program, vocab if vocab is not None else seen, max_len or max(longest, 1))
    doc = _evaluate(low.source, inputs, limits=limits or LIMITS)
    doc["lowered"] = {"source": low.source, "output": low.output, "codes": low.codes, "notes": low.notes}
    doc["tracr"] = _reference(program, inputs, low, doc)
    return doc


def _reference(program, inputs, low, doc) -> dict:
    """Tracr's own values of the output on each input (interop/tracr_eval.py), and the inputs where the
    lowered program's decoded values differ from them (positions where Tracr has no value aside): a
    departure is reported as a warning diagnostic, never left silent."""
    values, errors, differ = [], [], []
    result = doc["results"].get(low.output, {})
    for i, x in enumerate(inputs):
        try:
            want = tracr_eval.evaluate(program, list(x))
        except Exception as e:  # noqa: BLE001 - Tracr's evaluator raises where the program fails
            values.append(None)
            errors.append(f"{type(e).__name__}: {e}")
            continue
        values.append(want)
        errors.append(None)
        got = (result.get("values") or [None] * len(inputs))[i]
        if got is None or result.get("kind") != "sop":
            continue
        got = low.decode(low.output, got)
        if any(w is not None and not _equal(g, w) for g, w in zip(got, want)):
            differ.append(i)
    if differ:
        doc["diagnostics"].append({"severity": "warning", "line": None, "col": None,
                                   "message": f"the lowered program's values differ from Tracr's evaluator on input(s) "
                                              f"{', '.join(str(i + 1) for i in differ[:10])}: see doc['tracr']"})
    return {"output": low.output, "values": values, "errors": errors, "differ": differ}


def _equal(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(b)))
    return a == b


def evaluate_expr(expr, xs) -> list:
    """Tracr's `rasp.evaluate(expr, xs)`, by Tracr's rules (interop/tracr_eval.py)."""
    return tracr_eval.evaluate(expr, xs)


def analyze(program, vocab, max_len: int) -> dict:
    """rasplay's layer and head analysis of a Tracr program (with its dependency graph)."""
    low = lower(program, vocab, max_len)
    result = _analyze(low.source, low.output, limits=LIMITS)
    result["lowered"] = {"source": low.source, "output": low.output, "codes": low.codes, "notes": low.notes}
    return result


def compile(program, vocab, max_len: int, **options):
    """A rasplay CompiledModel of a Tracr program (same arguments as Tracr's compile_rasp_to_model:
    the vocabulary and the longest input), with Tracr's model surface (`apply`, `input_encoder`,
    `output_encoder`; interop/tracr_model.py) and a `check()` against Tracr's evaluation rules.
    `options` go to rasplay.compile (bos, encodings, limits, causal)."""
    causal_mask = copy_categorical = False
    for _ in range(3):
        low = lower(program, vocab, max_len, causal_mask=causal_mask, copy_categorical=copy_categorical)
        try:
            model = _compile(low.source, low.output, vocab=low.vocab, max_len=max_len, eval_limits=LIMITS, **options)
            break
        except RaspError as e:
            if options.get("causal") and "causal mode" in e.message and not causal_mask:
                causal_mask = True      # a selector looks ahead: mask attention to key <= query, as Tracr's
                continue                # causal models do (its causal_eval)
            if "too many possible values" in e.message and not copy_categorical:
                copy_categorical = True  # an Aggregate of numbers the compiler took for a mean: Tracr copies
                continue
            raise
    if causal_mask:
        low.notes.append("causal: selectors that may look ahead are masked to keys at or before the query, as in "
                         "Tracr's causal models (its causal_eval)")
    if copy_categorical:
        low.notes.append("categorical Aggregates of numbers copy one value (held as codes), as Tracr compiles them; "
                         "where several keys are selected Tracr's evaluator averages, and check() reports it")
    return as_tracr_model(model, program, low)


def show(program, inputs, vocab=None, max_len: int | None = None, **options):
    """rasplay.show of a Tracr program (lowered for the inputs' tokens and length unless given)."""
    from .notebook import show as _show

    inputs = list(inputs)
    seen, longest = _inputs_vocab(inputs)
    low = lower(program, vocab if vocab is not None else seen, max_len or max(longest, 1))
    return _show(low.source, inputs, **options)


def page_link(source: str, inputs=None, base: str = "http://127.0.0.1:8000/") -> str:
    """A link that opens `source` in the page (docs/api.md, "Links": `#v1=` + base64url of the raw-deflated
    JSON state)."""
    import base64
    import json
    import zlib

    state = {"source": source}
    if inputs:
        state["inputs"] = [x if isinstance(x, str) else json.dumps(x) for x in inputs]
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = deflate.compress(json.dumps(state, ensure_ascii=False).encode("utf-8")) + deflate.flush()
    return f"{base}#v1=" + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


# ------------------------------------------------------------------ loading program files

COMPILER_BOS = "compiler_bos"
COMPILER_PAD = "compiler_pad"


def compile_rasp_to_model(program, vocab, max_seq_len: int, causal: bool = False,
                          compiler_bos: str = COMPILER_BOS, compiler_pad: str = COMPILER_PAD,
                          mlp_exactness: int = 100):
    """Tracr's `compiling.compile_rasp_to_model`, answered by rasplay's compiler: a rasplay CompiledModel
    with Tracr's model surface (`apply`, encoders), exact at every length up to max_seq_len. causal=True
    compiles a future-masked model (refused, naming the selector, if a selector looks ahead).
    mlp_exactness has no role (rasplay's MLPs are exact tables)."""
    del mlp_exactness
    if compiler_bos in vocab:
        raise ValueError(f"Compiler BOS token must not be present in the vocab. Found '{compiler_bos}' in {vocab}")
    if compiler_pad in vocab:
        raise ValueError(f"Compiler PAD token must not be present in the vocab. Found '{compiler_pad}' in {vocab}")
    return compile(program, sorted(vocab, key=repr) if isinstance(vocab, (set, frozenset)) else vocab, max_seq_len,
                   bos=compiler_bos, causal=bool(causal))


def _module(name: str, **attrs) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    return mod


def install_alias() -> None:
    """Make `import tracr` and its modules that programs import give rasplay's Tracr API, so Tracr program
    files run unchanged: `tracr.rasp.rasp`, `tracr.rasp.causal_eval`, `tracr.compiler.compiling`
    (compile_rasp_to_model, COMPILER_BOS, COMPILER_PAD), `tracr.compiler.lib` (lib.py's programs),
    `tracr.compiler.validating`. Does nothing if already installed; refuses if the real Tracr is imported."""
    existing = sys.modules.get("tracr")
    if existing is not None and not getattr(existing, "__rasplay_alias__", False):
        raise RuntimeError("the real tracr package is already imported; rasplay's alias would shadow it")
    if existing is not None:
        return
    from . import tracr_lib, tracr_validating

    causal_eval = _module("tracr.rasp.causal_eval", evaluate=lambda expr, xs: tracr_eval.evaluate(expr, xs, causal=True),
                          CausalEvaluator=_CausalEvaluator)
    sub = _module("tracr.rasp", __path__=[], rasp=rasp, causal_eval=causal_eval)
    compiling = _module("tracr.compiler.compiling", compile_rasp_to_model=compile_rasp_to_model,
                        COMPILER_BOS=COMPILER_BOS, COMPILER_PAD=COMPILER_PAD)
    compiler = _module("tracr.compiler", __path__=[], compiling=compiling, lib=tracr_lib,
                       validating=tracr_validating)
    top = _module("tracr", __path__=[], __rasplay_alias__=True, rasp=sub, compiler=compiler)
    sys.modules.update({"tracr": top, "tracr.rasp": sub, "tracr.rasp.rasp": rasp, "tracr.rasp.causal_eval": causal_eval,
                        "tracr.compiler": compiler, "tracr.compiler.compiling": compiling,
                        "tracr.compiler.lib": tracr_lib, "tracr.compiler.validating": tracr_validating})


class _CausalEvaluator(rasp.DefaultRASPEvaluator):
    """Tracr's causal_eval.CausalEvaluator: every selector masked to keys at or before the query."""

    def evaluate(self, expr, xs):
        return tracr_eval.evaluate(expr, xs, causal=True)


def _split_spec(spec: str) -> tuple[str, str]:
    """`path/prog.py:NAME` or `path/prog.py:make_x(args)` (the expression may hold colons)."""
    at = spec.find(".py:")
    if at >= 0:
        return spec[:at + 3], spec[at + 4:]
    path, _, attr = spec.rpartition(":")
    return path, attr


def load_program(spec: str, *args, **kwargs):
    """`path/prog.py:make_fn` -> the expression make_fn(*args, **kwargs) returns (or, when the name is
    an s-op rather than a function, that s-op). The part after the colon may also be a Python call
    evaluated in the file's namespace: `prog.py:make_frac_prevs(rasp.tokens == "x")`. Runs the file's
    Python with the alias on."""
    import inspect

    path, attr = _split_spec(spec)
    if not path or not attr:
        raise RaspError(f"give a Tracr program as FILE.py:NAME (a function returning an s-op, or a call such as "
                        f"FILE.py:'make_x(3)'), not {spec!r}", None, "input")
    file = Path(path)
    if not file.is_file():
        raise RaspError(f"no such file: {path}", None, "input")
    install_alias()
    module_name = f"rasplay_tracr_program_{abs(hash(str(file.resolve())))}"
    loader_spec = importlib.util.spec_from_file_location(module_name, file)
    module = importlib.util.module_from_spec(loader_spec)
    sys.path.insert(0, str(file.resolve().parent))
    try:
        loader_spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    if attr.isidentifier():
        if not hasattr(module, attr):
            raise RaspError(f"{path} defines no {attr!r}", None, "name")
        value = getattr(module, attr)
        if callable(value) and not isinstance(value, rasp.RASPExpr):
            try:
                bound = inspect.signature(value).bind(*args, **kwargs)
            except TypeError as e:
                try:
                    shown = f"{attr}{inspect.signature(value)}"
                except (TypeError, ValueError):
                    shown = attr
                raise RaspError(f"{path}: {shown} needs arguments ({e}): give them as "
                                f"{path}:'{attr}(...)' or with --arg", None, "input") from None
            value = value(*bound.args, **bound.kwargs)
    else:
        namespace = dict(module.__dict__)
        namespace.setdefault("rasp", rasp)
        try:
            value = eval(attr, namespace)   # noqa: S307 - the user's own program file, CLI and Python API only
        except Exception as e:  # noqa: BLE001 - report the user's expression error clearly
            raise RaspError(f"{path}: {attr} failed: {type(e).__name__}: {e}", None, "input") from None
    if not isinstance(value, rasp.SOp):
        raise RaspError(f"{spec} gives {type(value).__name__}, not a Tracr s-op", None, "type")
    return value
