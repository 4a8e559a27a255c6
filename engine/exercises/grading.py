"""Check a student's program against an exercise: evaluate it and the hidden reference on the
exercise's inputs (one batched evaluation each, through the vectorised evaluator), compare the
target s-op, find the shortest counterexample and the first s-op that goes wrong on it, and measure
the layers and heads the target needs against the budget."""
from __future__ import annotations

import json
import re
import time
from collections import OrderedDict

import numpy as np

from ..evaluate import evaluate
from ..limits import DEFAULT_LIMITS, Limits
from .format import CHECK_LIMITS, CheckLimits, Exercise, ExerciseError
from .generate import generate_inputs

_CACHE: "OrderedDict[str, tuple[list, list]]" = OrderedDict()   # digest -> (inputs, expected values)
CACHE_SIZE = 64
_IDENT = re.compile(r'#[^\n]*|"[^"\n]*"|\'[^\'\n]*\'|[A-Za-z_][A-Za-z0-9_]*')


class ReferenceTimeout(ExerciseError):
    """The reference ran out of the check's time (a busy machine, or a file whose reference is slow)."""


def _engine_limits(base: Limits, check_limits: CheckLimits, n_inputs: int, deadline: float) -> Limits:
    return base.with_(max_inputs=max(n_inputs, 1), max_input_length=check_limits.max_length,
                      eval_seconds=max(deadline - time.monotonic(), 0.001))


def _timeout(doc: dict) -> dict | None:
    return next((d for d in doc["diagnostics"] if d.get("kind") == "timeout"), None)


def reference_values(exercise: Exercise, check_limits: CheckLimits = CHECK_LIMITS,
                     deadline: float | None = None) -> tuple[list, list]:
    """The checked inputs and the reference's target values on them (cached per file content).
    Raises ExerciseError when the reference fails."""
    cached = _CACHE.get(exercise.digest)
    if cached is not None:
        _CACHE.move_to_end(exercise.digest)
        return cached
    deadline = deadline or time.monotonic() + check_limits.seconds
    inputs = generate_inputs(exercise)
    limits = _engine_limits(DEFAULT_LIMITS, check_limits, len(inputs), deadline)
    doc = evaluate(exercise.reference, inputs, names=[exercise.target], input_format=exercise.input_format,
                   limits=limits)
    if _timeout(doc):
        raise ReferenceTimeout(exercise.path, f"the reference took longer than the check's time limit "
                                              f"({check_limits.seconds:g} s)")
    result = doc["results"].get(exercise.target)
    if result is None or result["kind"] != "sop":
        problems = "; ".join(d["message"] for d in doc["diagnostics"] if d["severity"] == "error")
        raise ExerciseError(exercise.path, f"the reference does not define the s-op '{exercise.target}'"
                                           + (f" ({problems})" if problems else ""))
    for inp, err in zip(inputs, result["errors"]):
        if err is not None:
            raise ExerciseError(exercise.path, f"the reference fails on the input {inp!r}: {err}")
    _CACHE[exercise.digest] = (inputs, result["values"])
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return inputs, result["values"]


def _number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def same_values(expected: list, got: list | None) -> bool:
    """Equal, with numbers compared to 1e-9 (an average may round); a bool never equals a number, and
    values of other types (strings) only equal values of their own type."""
    if got is None or len(expected) != len(got):
        return False
    if all(_number(a) and _number(b) for a, b in zip(expected, got)):
        return bool(np.allclose(np.asarray(expected, dtype=float), np.asarray(got, dtype=float), rtol=1e-9, atol=1e-9))
    # values of several types per position (type mixed), strings, bools: position by position, by type first
    # (numpy would make [1, "a"] the strings ["1", "a"], equal to the program's ["1", "a"])
    return all(bool(np.isclose(a, b, rtol=1e-9, atol=1e-9)) if _number(a) and _number(b)
               else type(a) is type(b) and a == b for a, b in zip(expected, got))


def forbidden_uses(exercise: Exercise, source: str) -> list[dict]:
    """Uses of the names the exercise forbids (outside comments and strings), as diagnostics."""
    if not exercise.forbid:
        return []
    banned = set(exercise.forbid)
    out = []
    line_starts = [0] + [i + 1 for i, c in enumerate(source) if c == "\n"]
    for m in _IDENT.finditer(source):
        if m.group(0) in banned:
            line = np.searchsorted(line_starts, m.start(), side="right")
            col = m.start() - line_starts[line - 1] + 1
            out.append({"severity": "error", "kind": "forbidden", "line": int(line), "col": col,
                        "end_line": int(line), "end_col": col + len(m.group(0)),
                        "message": f"this exercise asks you not to use '{m.group(0)}'"})
    return out


def fragment_problem(exercise: Exercise, source: str, limits: Limits) -> dict | None:
    """When the exercise asks for a fragment (`fragment`) and the program's target is not in it: a
    diagnostic with the dialect check's reason and its line; else None (a program the dialect check
    cannot read has its errors reported by the evaluation)."""
    if exercise.fragment is None:
        return None
    from ..dialect import check_dialect
    from ..lang.errors import RaspError
    try:
        doc = check_dialect(source, exercise.target, limits=limits)
    except RaspError:
        return None
    entry = next(f for f in doc["fragments"] if f["id"] == exercise.fragment)
    if entry["member"]:
        return None
    out = {"severity": "warning", "kind": "fragment",
           "message": f"this exercise asks for a program in {entry['name']}, and it is not: {entry['reason']}"}
    if entry.get("line"):
        out.update({k: entry[k] for k in ("line", "col", "end_line", "end_col") if k in entry})
    return out


def _at(diagnostic: dict) -> str:
    """'line L, col C: ' for a diagnostic with a place, else ''."""
    return f"line {diagnostic['line']}, col {diagnostic['col']}: " if diagnostic.get("line") else ""


def budget_use(exercise: Exercise, analysis: dict) -> dict:
    heads = analysis["heads_per_layer"]
    used = {"layers": analysis["layers"], "heads_per_layer": max(heads, default=0), "heads": sum(heads)}
    limits = {"layers": exercise.budget.max_layers, "heads_per_layer": exercise.budget.max_heads_per_layer,
              "heads": exercise.budget.max_heads}
    items = {k: {"used": used[k], "max": limits[k], "ok": limits[k] is None or used[k] <= limits[k]} for k in used}
    return {**items, "within": all(v["ok"] for v in items.values())}


def _ancestors(graph: dict, start: int) -> list[int]:
    """start and everything it depends on, nearest first."""
    inputs: dict[int, list[int]] = {}
    for e in graph["edges"]:
        inputs.setdefault(e["target"], []).append(e["source"])
    order, seen, frontier = [], {start}, [start]
    while frontier:
        order += frontier
        nxt = []
        for n in frontier:
            for c in inputs.get(n, []):
                if c not in seen:
                    seen.add(c)
                    nxt.append(c)
        frontier = nxt
    return order


def _selector_to_show(graph: dict, node_id: int) -> tuple[str | None, str | None]:
    """The selector of the attention nearest to node_id (itself or what it depends on): its name in the
    program, or #id when it has none, and the name to show (e.g. a library selector's)."""
    nodes = {n["id"]: n for n in graph["nodes"]}
    selector_of = {e["target"]: e["source"] for e in graph["edges"] if e["role"] == "selector"}
    for nid in _ancestors(graph, node_id):
        if nodes[nid]["kind"] in ("aggregate", "selector_width") and nid in selector_of:
            sel = nodes[selector_of[nid]]
            return (sel["names"][0] if sel["names"] else f"#{sel['id']}"), sel["name"]
    return None, None


def _culprit(exercise: Exercise, source: str, inp, limits: Limits) -> dict:
    """On one input: the first s-op (by layer, among those the target needs and the reference also
    names) whose value differs from the reference's, and the selector to look at."""
    fmt = exercise.input_format
    mine = evaluate(source, [inp], input_format=fmt, limits=limits)
    ref = evaluate(exercise.reference, [inp], input_format=fmt, limits=limits)
    graph = mine["analysis"]["graph"]
    by_name = {name: n["id"] for n in graph["nodes"] for name in n["names"]}
    target_id = by_name.get(exercise.target)
    needed = set(_ancestors(graph, target_id)) if target_id is not None else set()
    candidates = [(r["layer"], i, name) for i, (name, r) in enumerate(mine["results"].items())
                  if r["kind"] == "sop" and by_name.get(name) in needed]
    for _, _, name in sorted(candidates):
        theirs = ref["results"].get(name)
        if name != exercise.target and (theirs is None or theirs["kind"] != "sop"):
            continue
        r = mine["results"][name]
        expected = theirs["values"][0] if theirs else None
        if name == exercise.target or not same_values(expected, r["values"][0]):
            selector, shown = _selector_to_show(graph, by_name[name])
            return {"name": name, "layer": r["layer"], "expected": expected, "got": r["values"][0],
                    "error": r["errors"][0], "selector": selector, "selector_name": shown}
    return {"name": exercise.target, "layer": 0, "expected": None, "got": None, "error": None, "selector": None,
            "selector_name": None}


def check(exercise: Exercise, source: str, limits: Limits | None = None,
          check_limits: CheckLimits = CHECK_LIMITS, prove: bool = True) -> dict:
    """The check result (docs/exercises.md): status pass | wrong | outside_fragment | over_budget | error,
    a message, the inputs checked and right, the shortest counterexample, the budget use and diagnostics.
    `limits` are the engine limits for the student's program (size, nodes); the check's own limits
    set the number and length of inputs and the time; `prove`: try a proven verdict (engine/verify) where
    both programs are in its fragments. Never raises for a problem in the program."""
    started = time.monotonic()
    deadline = started + check_limits.seconds
    base = limits or DEFAULT_LIMITS
    result = {"exercise": exercise.id, "target": exercise.target, "passed": False, "status": "error",
              "message": "", "inputs_checked": 0, "inputs_right": 0, "counterexample": None,
              "budget": None, "diagnostics": [], "verdict": None, "elapsed_ms": 0.0}

    def done(status: str, message: str) -> dict:
        result.update(status=status, passed=status == "pass", message=message,
                      elapsed_ms=round(1000 * (time.monotonic() - started), 1))
        return result

    banned = forbidden_uses(exercise, source)
    if banned:
        result["diagnostics"] = banned
        d = banned[0]
        return done("error", f"line {d['line']}, col {d['col']}: {d['message']}")
    try:
        inputs, expected = reference_values(exercise, check_limits, deadline)
    except ReferenceTimeout as e:
        result["diagnostics"] = [{"severity": "error", "kind": "timeout", "message": e.message}]
        return done("error", e.message)
    result["inputs_checked"] = len(inputs)
    limits = _engine_limits(base, check_limits, len(inputs), deadline)
    doc = evaluate(source, inputs, names=[exercise.target], input_format=exercise.input_format, limits=limits)
    result["diagnostics"] = doc["diagnostics"]
    timeout = _timeout(doc)
    if timeout:
        timeout["message"] = f"the check took longer than {check_limits.seconds:g} s (its time limit) and was stopped"
        return done("error", timeout["message"])
    mine = doc["results"].get(exercise.target)
    if mine is None:
        missing = f"the program defines no s-op or selector named '{exercise.target}'"
        first = next((d for d in doc["diagnostics"] if d["severity"] == "error" and d["message"] != missing
                      and d.get("kind") in ("syntax", "name", "load", "limit", "type")), None)
        where = f"line {first['line']}, col {first['col']}: " if first and first.get("line") else ""
        reason = f" ({where}{first['message']})" if first else ""
        if not first and re.search(rf"(^|[;\s]){re.escape(exercise.target)}\s*=[^=]", source):
            reason = " (it is assigned a value that is not an s-op, e.g. a constant: make it depend on tokens or indices)"
        return done("error", f"the program does not define the s-op '{exercise.target}'{reason}")
    if mine["kind"] != "sop":
        return done("error", f"'{exercise.target}' must be an s-op, but the program makes it a selector")
    result["budget"] = budget_use(exercise, doc["analysis"])

    wrong = [i for i, (e, g) in enumerate(zip(expected, mine["values"])) if not same_values(e, g)]
    result["inputs_right"] = len(inputs) - len(wrong)
    result["verdict"] = _verdict(exercise, source, (inputs, expected, mine["values"]), bool(wrong), prove,
                                 deadline - 0.25 * check_limits.seconds, limits)
    if result["verdict"]["outcome"] == "different" and not wrong:
        return _proof_counterexample(exercise, source, result, limits, deadline, done)
    if wrong:
        i = min(wrong, key=lambda j: (len(inputs[j]), j))
        inp = inputs[i]
        culprit = _culprit(exercise, source, inp, limits.with_(max_inputs=1, eval_seconds=max(
            deadline - time.monotonic(), 0.5)))
        result["counterexample"] = {"input": inp, "expected": expected[i], "got": mine["values"][i],
                                    "error": mine["errors"][i], "sop": culprit}
        shown = repr(inp) if isinstance(inp, str) else json.dumps(inp)
        got = mine["errors"][i] or mine["values"][i]
        return done("wrong", f"wrong on {len(wrong)} of {len(inputs)} inputs; e.g. {shown}: "
                             f"expected {expected[i]}, got {got}")
    outside = fragment_problem(exercise, source, base)
    if outside is not None:
        result["diagnostics"] = result["diagnostics"] + [outside]
        return done("outside_fragment", f"{_right(result['verdict'], len(inputs))}, but {_at(outside)}{outside['message']}")
    if not result["budget"]["within"]:
        over = [f"{v['used']} {k.replace('_', ' ')} (budget {v['max']})"
                for k, v in result["budget"].items() if k != "within" and not v["ok"]]
        return done("over_budget", f"{_right(result['verdict'], len(inputs))}, but over budget: {', '.join(over)}")
    b = result["budget"]
    layers, heads = b["layers"]["used"], b["heads"]["used"]
    return done("pass", f"{_right(result['verdict'], len(inputs))}, within budget ({layers} "
                        f"layer{'s' * (layers != 1)}, {heads} head{'s' * (heads != 1)})")


def _verdict(exercise: Exercise, source: str, sample: tuple, wrong: bool, prove: bool, deadline: float,
             limits: Limits) -> dict:
    """The proven verdict (engine/verify) once the sampled check passed; else why there is none."""
    from ..verify.verdict import proven_verdict, sampled
    if wrong:
        return {**sampled("a sampled input already tells the programs apart"), "outcome": "different"}
    if not prove:
        return sampled("no proof was asked for")
    return proven_verdict(exercise, source, *sample, deadline, limits)


def _right(verdict: dict, n_inputs: int) -> str:
    """The passing verdict in words: proved, or right on the sampled inputs (and identical up to N)."""
    if verdict["outcome"] == "proved":
        scope = ("at every length" if verdict["scope"] == "every_length"
                 else f"on every input up to length {verdict['length']}")
        return f"proved right {scope} ({verdict['fragment']}; {verdict['how']})"
    if verdict["outcome"] == "not_proved":
        return (f"right on all {n_inputs} sampled inputs; not proved: identical on every input up to length "
                f"{verdict['length']} ({verdict['reason']})")
    return f"right on all {n_inputs} sampled inputs"


def _proof_counterexample(exercise: Exercise, source: str, result: dict, limits: Limits, deadline: float,
                          done) -> dict:
    """A counterexample the proof found, replayed through the evaluator before it is shown; a replay
    that does not confirm it is an internal error, never a verdict."""
    verdict = result["verdict"]
    inp = verdict["input"]
    one = limits.with_(max_inputs=1, max_input_length=max(len(inp), limits.max_input_length),
                       eval_seconds=max(deadline - time.monotonic(), 0.5))
    fmt = exercise.input_format
    ref = evaluate(exercise.reference, [inp], names=[exercise.target], input_format=fmt, limits=one)
    mine = evaluate(source, [inp], names=[exercise.target], input_format=fmt, limits=one)
    r, m = ref["results"].get(exercise.target), mine["results"].get(exercise.target)
    if r is None or m is None or r["errors"][0] is not None or (
            m["errors"][0] is None and same_values(r["values"][0], m["values"][0])):
        why = "the evaluator does not confirm the proof's counterexample"
        result["verdict"] = {**verdict, "outcome": "sampled", "method": "sampled", "internal_error": why,
                             "reason": f"internal error: {why} {inp!r}; the sampled verdict stands"}
        outside = fragment_problem(exercise, source, limits)
        status = "outside_fragment" if outside else "pass" if result["budget"]["within"] else "over_budget"
        return done(status, f"right on all {result['inputs_checked']} sampled inputs (internal error: {why} "
                            f"{inp!r})" + (f", but {_at(outside)}{outside['message']}" if outside else ""))
    expected, got, error = r["values"][0], m["values"][0], m["errors"][0]
    culprit = _culprit(exercise, source, inp, one)
    result["counterexample"] = {"input": inp, "expected": expected, "got": got, "error": error, "sop": culprit}
    shown = repr(inp) if isinstance(inp, str) else json.dumps(inp)
    longer = (f", longer than the exercise's lengths {exercise.min_length}-{exercise.max_length}"
              if len(inp) > exercise.max_length else "")
    return done("wrong", f"right on all {result['inputs_checked']} sampled inputs, but wrong on an input of length "
                         f"{len(inp)}{longer} ({verdict['fragment']}; {verdict['how']}): {shown}: expected "
                         f"{expected}, got {error or got}")


_PARSED: "OrderedDict[tuple, Exercise]" = OrderedDict()


def check_text(text: str, exercise_id: str, source: str, limits: Limits | None = None,
               check_limits: CheckLimits = CHECK_LIMITS) -> dict:
    """check() on an exercise given as its file's text (how server workers receive it), the parsed
    exercise kept per text."""
    from .format import parse_exercise

    key = (exercise_id, text)
    exercise = _PARSED.get(key)
    if exercise is None:
        exercise = _PARSED[key] = parse_exercise(text, exercise_id, f"{exercise_id}.exercise", check_limits)
        while len(_PARSED) > CACHE_SIZE:
            _PARSED.popitem(last=False)
    return check(exercise, source, limits, check_limits)
