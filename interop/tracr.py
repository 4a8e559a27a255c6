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
from . import tracr_rasp as rasp
from .tracr_lower import Lowered, lower

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
    return doc


def evaluate_expr(expr, xs) -> list:
    """Tracr's `rasp.evaluate(expr, xs)`: a list of values (None where Tracr has none), or for a
    selector a list of bool rows. Raises ValueError where rasplay's evaluator reports an error."""
    xs = list(xs)
    if not xs:
        return []
    low = lower(expr, xs, len(xs))
    doc = _evaluate(low.source, [xs], names=[low.output], limits=LIMITS)
    errors = [d for d in doc["diagnostics"] if d["severity"] == "error"]
    if errors:
        raise ValueError(errors[0]["message"])
    result = doc["results"][low.output]
    if result["kind"] == "selector":
        return [[bool(v) for v in row] for row in result["values"][0]] if result["values"][0] is not None else None
    values = result["values"][0]
    if values is None:
        raise ValueError(result["errors"][0])
    return low.decode(low.output, values)


def analyze(program, vocab, max_len: int) -> dict:
    """rasplay's layer and head analysis of a Tracr program (with its dependency graph)."""
    low = lower(program, vocab, max_len)
    result = _analyze(low.source, low.output, limits=LIMITS)
    result["lowered"] = {"source": low.source, "output": low.output, "codes": low.codes, "notes": low.notes}
    return result


def compile(program, vocab, max_len: int, **options):
    """A rasplay CompiledModel of a Tracr program (same arguments as Tracr's compile_rasp_to_model:
    the vocabulary and the longest input). `options` go to rasplay.compile (bos, encodings, limits)."""
    low = lower(program, vocab, max_len)
    model = _compile(low.source, low.output, vocab=low.vocab, max_len=max_len, eval_limits=LIMITS, **options)
    model.lowered = low
    return model


def show(program, inputs, vocab=None, max_len: int | None = None, **options):
    """rasplay.show of a Tracr program (lowered for the inputs' tokens and length unless given)."""
    from .notebook import show as _show

    inputs = list(inputs)
    seen, longest = _inputs_vocab(inputs)
    low = lower(program, vocab if vocab is not None else seen, max_len or max(longest, 1))
    return _show(low.source, inputs, **options)


def page_link(source: str, inputs=None, base: str = "http://127.0.0.1:8000/") -> str:
    """A link that opens `source` in the page (DESIGN section 8: `#v1=` + base64url of the raw-deflated
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

def compile_rasp_to_model(program, vocab, max_seq_len: int, causal: bool = False, compiler_bos: str = "BOS",
                          compiler_pad: str = "PAD", mlp_exactness: int = 100):
    """Tracr's `compiling.compile_rasp_to_model`, answered by rasplay's compiler: a rasplay CompiledModel
    (exact at every length up to max_seq_len; `compiler_pad` and `mlp_exactness` have no role here)."""
    if causal:
        raise RaspError("rasplay.tracr compiles bidirectional models; causal=True is not supported", None, "input")
    del compiler_pad, mlp_exactness
    return compile(program, sorted(vocab, key=repr) if isinstance(vocab, (set, frozenset)) else vocab, max_seq_len,
                   bos=compiler_bos)


def install_alias() -> None:
    """Make `import tracr`, `from tracr.rasp import rasp`, `from tracr.rasp.rasp import ...` and
    `from tracr.compiler import compiling` give rasplay's Tracr API, so Tracr program files run
    unchanged. Does nothing if already installed; refuses if the real Tracr is imported."""
    existing = sys.modules.get("tracr")
    if existing is not None and not getattr(existing, "__rasplay_alias__", False):
        raise RuntimeError("the real tracr package is already imported; rasplay's alias would shadow it")
    top = types.ModuleType("tracr")
    top.__rasplay_alias__ = True
    top.__path__ = []
    sub = types.ModuleType("tracr.rasp")
    sub.__path__ = []
    sub.rasp = rasp
    top.rasp = sub
    compiler = types.ModuleType("tracr.compiler")
    compiler.__path__ = []
    compiling = types.ModuleType("tracr.compiler.compiling")
    compiling.compile_rasp_to_model = compile_rasp_to_model
    compiler.compiling = compiling
    top.compiler = compiler
    sys.modules.update({"tracr": top, "tracr.rasp": sub, "tracr.rasp.rasp": rasp, "tracr.compiler": compiler,
                        "tracr.compiler.compiling": compiling})


def load_program(spec: str, *args, **kwargs):
    """`path/prog.py:make_fn` -> the expression make_fn(*args, **kwargs) returns (or, when the name is
    an expression rather than a function, that expression). Runs the file's Python with the alias on."""
    path, _, attr = spec.rpartition(":")
    if not path or not attr:
        raise RaspError(f"give a Tracr program as FILE.py:NAME (a function returning an s-op), not {spec!r}",
                        None, "input")
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
    if not hasattr(module, attr):
        raise RaspError(f"{path} defines no {attr!r}", None, "name")
    value = getattr(module, attr)
    if callable(value) and not isinstance(value, rasp.RASPExpr):
        value = value(*args, **kwargs)
    if not isinstance(value, rasp.SOp):
        raise RaspError(f"{spec} gives {type(value).__name__}, not a Tracr s-op", None, "type")
    return value
