"""The rasplay engine: RASP parsing, evaluation, layer/head analysis, compilation to transformer weights.

Pure Python + numpy; imports neither FastAPI nor torch.
"""
from .evaluate import clear_caches, evaluate
from .analysis import analyze_nodes
from .interpret import interpret, Interpretation
from .lang.errors import RaspError, Span
from .lang.parser import parse
from .limits import DEFAULT_LIMITS, Limits
from .compiler import CompiledModel, CompileLimits, compile, compile_spec
from .examples import Example, find_example, load_examples
from .header import default_output, parse_header
from .inputs import input_limit_error
from .compiler.soft import soft_study
from .dialect import check_dialect
from .numpy_transformer import NumpyTransformer, load as load_model, load_npz, save_npz
from .vocabulary import vocabulary


def analyze(source: str, output: str | None = None, limits: Limits | None = None, load_dirs=None) -> dict:
    """The layer and head analysis of a program (all its names, or the s-op `output` and what it needs),
    with its dependency graph and diagnostics."""
    from .lang.errors import diagnostic

    interp = interpret(source, limits or DEFAULT_LIMITS, load_dirs)
    diagnostics = list(interp.diagnostics)
    roots = [d.value for d in interp.definitions]
    if output is not None:
        found = [d.value for d in interp.definitions if d.name == output]
        if not found:
            diagnostics.append(diagnostic(f"the program defines no s-op or selector named '{output}'", None,
                                          "error", "name"))
        roots = found
    result = analyze_nodes(interp, roots)
    layer_of = {n["id"]: n["layer"] for n in result["graph"]["nodes"]}
    result["names"] = {d.name: layer_of[d.value.id] for d in interp.definitions if d.value.id in layer_of}
    result["diagnostics"] = diagnostics
    result["dialect"] = _dialect(interp, output)
    return result


def _dialect(interp, output):
    """The dialect check of `output` (default: the program's default output), or None when there is none."""
    from .dialect import check_dialect
    from .dialect_summary import summarize

    try:
        doc = check_dialect(interp=interp, output=output)
        doc["summary"] = summarize(doc)      # the page's one line in plain words, and its details
        return doc
    except RaspError:
        return None
    except Exception:      # a bug in the check must not cost the page its analysis: no dialect line then
        return None


__all__ = ["evaluate", "clear_caches", "analyze", "interpret", "parse", "Interpretation", "RaspError", "Span",
           "Limits", "DEFAULT_LIMITS", "analyze_nodes", "compile", "compile_spec", "CompiledModel", "CompileLimits",
           "soft_study", "NumpyTransformer", "load_model", "load_npz", "save_npz", "Example", "load_examples",
           "find_example", "default_output", "parse_header", "input_limit_error", "check_dialect", "vocabulary"]
