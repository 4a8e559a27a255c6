"""The registry of work kinds the server's worker pools run (see server/process_pool.py): each kind is a
function `payload -> result` run inside a worker process, where results are JSON-able objects or
bytes. Evaluation kinds (quick, many) and heavy kinds (compiler work, long) run in separate pools."""
from __future__ import annotations

import io
from collections import OrderedDict
from typing import Callable

import orjson

from .process_pool import WorkTimeout

KINDS: dict[str, Callable[[dict], object]] = {}
HEAVY = {"compile", "model_run", "model_soft", "model_npz", "model_onnx", "learned_check", "learned_import"}   # run in the heavy pool

_MODELS: "OrderedDict[str, object]" = OrderedDict()   # this worker's compiled models, by id
MODELS_KEPT = 16


def kind(name: str):
    def register(fn):
        KINDS[name] = fn
        return fn
    return register


def warm() -> None:
    from .. import engine

    engine.evaluate("x = length;", ["ab"])  # import once and fill the parser and library caches


def release() -> None:
    """Drop this worker's caches (the pool asks when the worker holds too much memory)."""
    from .. import engine

    _MODELS.clear()
    engine.clear_caches()


def _engine_limits(payload: dict) -> dict:
    from .. import engine

    if "limits" in payload:
        payload = {**payload, "limits": engine.Limits(**payload["limits"])}
    return payload


def raise_if_timed_out(doc) -> None:
    """A document whose diagnostics say the engine stopped at its own time limit is the work's time-out
    (WorkTimeout: a 422 `timeout`, never a cached document)."""
    diagnostics = doc.get("diagnostics", ()) if isinstance(doc, dict) else ()
    timeout = next((d for d in diagnostics if d.get("kind") == "timeout"), None)
    if timeout is not None:
        raise WorkTimeout(timeout["message"])


@kind("evaluate")
def evaluate(payload: dict) -> bytes:
    from .. import engine

    doc = engine.evaluate(**_engine_limits(payload))
    raise_if_timed_out(doc)
    return orjson.dumps(doc)


@kind("analyze")
def analyze(payload: dict) -> bytes:
    from .. import engine

    doc = engine.analyze(**_engine_limits(payload))
    raise_if_timed_out(doc)
    return orjson.dumps(doc)


@kind("overlay")
def overlay(payload: dict) -> dict:
    from ..engine.train import TrainError, overlay_imported

    try:
        return {"ok": True, "overlay": overlay_imported(payload["source"], payload["maps"], payload.get("output"))}
    except TrainError as e:
        return {"ok": False, "message": str(e)}


@kind("train_check")
def train_check(payload: dict) -> dict:
    from ..engine.train import TrainError

    from .training_run import check
    try:
        return {"ok": True, **check(payload)}
    except TrainError as e:
        return {"ok": False, "message": str(e)}


@kind("exercise_check")
def exercise_check(payload: dict) -> dict:
    from ..engine.exercises import CheckLimits, check_text

    payload = _engine_limits(payload)
    result = check_text(payload["text"], payload["id"], payload["source"], payload["limits"],
                        CheckLimits(seconds=payload["seconds"]))
    raise_if_timed_out(result)
    return result


# ---------------------------------------------------------------- compiler work (the heavy pool)

def _compiled(model_id: str, spec: dict):
    from .. import engine

    model = _MODELS.pop(model_id, None) or engine.compile_spec(spec)
    _MODELS[model_id] = model
    while len(_MODELS) > MODELS_KEPT:
        _MODELS.popitem(last=False)
    return model


def _compiler_work(action: Callable[[object, dict], object]) -> Callable[[dict], object]:
    """A kind running `action(model, payload)`; a RaspError (a program the compiler cannot take, a bad
    input) is the user's, returned as {"ok": False, "error"}."""
    def work(payload: dict):
        from ..engine import RaspError

        try:
            return action(_compiled(payload["id"], payload["spec"]), payload)
        except RaspError as e:
            error = {"message": e.message, "kind": e.kind}
            if e.span is not None and e.span.source == "<program>":
                error.update(line=e.span.line, col=e.span.col)
            return {"ok": False, "error": error}
    return work


def _npz(model, payload: dict) -> bytes:
    buffer = io.BytesIO()
    model.export_npz(buffer, beta=payload.get("beta"))
    return buffer.getvalue()


KINDS["compile"] = _compiler_work(lambda model, p: {"ok": True, "summary": model.summary()})
KINDS["model_run"] = _compiler_work(lambda model, p: {"ok": True, "run": model.run(p["inputs"], mode=p["mode"],
                                                                                     beta=p.get("beta"))})
KINDS["model_soft"] = _compiler_work(lambda model, p: {"ok": True, "study": model.soft_study(**p.get("options", {}))})
KINDS["model_npz"] = _compiler_work(_npz)


def _onnx(model, payload: dict) -> bytes | dict:
    from ..interop.onnx_graph import OnnxExportError, export_onnx

    try:
        return export_onnx(model, None, dtype=payload.get("dtype", "float64"),
                           attention=payload.get("attention", "hard"))
    except OnnxExportError as e:     # the model or option the export refuses, with the reason
        return {"ok": False, "error": {"message": str(e), "kind": "validation"}}


KINDS["model_onnx"] = _compiler_work(_onnx)


@kind("provenance")
def provenance(payload: dict) -> bytes:
    from ..engine.provenance import provenance as trace

    return orjson.dumps(trace(**_engine_limits(payload)))


# ---------------------------------------------------------------- learned programs (the heavy pool)

@kind("learned_check")
def learned_check(payload: dict) -> dict:
    """A learned program checked against the task's program (engine/learned/check.py); a refusal is the
    user's, returned as {"ok": False, "error"}."""
    from ..engine.learned.check import CheckLimits, CheckOptions, check_learned
    from ..engine.learned.check_programs import CheckError

    payload = _engine_limits(payload)
    try:
        report = check_learned(payload["learned"], payload["task"], payload["vocab"],
                               CheckOptions(**payload["options"]), output=payload.get("output"),
                               learned_output=payload.get("learned_output"),
                               limits=CheckLimits(**payload["check_limits"]), engine_limits=payload["limits"])
    except CheckError as e:
        return {"ok": False, "error": e.to_json()}
    return {"ok": True, "report": report}


@kind("learned_import")
def learned_import(payload: dict) -> dict:
    """A TransformerPrograms program (its Python text, never run, and weights CSV) as rasplay RASP; a
    program outside the format is the user's, returned as {"ok": False, "error"} with its line and column."""
    import re

    from ..engine.learned import LearnedProgramError
    from ..interop import import_transformer_program

    try:
        return {"ok": True, "source": import_transformer_program(payload["program"], payload["weights"],
                                                                 title=payload.get("title", ""))}
    except LearnedProgramError as e:
        error = {"kind": "input", "message": f"the program cannot be imported: {e}"}
        where = re.match(r"line (\d+), column (\d+)", str(e))
        if where:
            error.update(line=int(where.group(1)), col=int(where.group(2)))
        return {"ok": False, "error": error}
