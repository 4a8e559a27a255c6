"""A `LearnedProgram` (ir.py) as rasplay RASP text: named variables, one statement per head, tables
laid out one row per output value, the classifier as one score per class and an argmax.

The text uses two rasplay extensions (docs/language.md): `select_closest` and `aggregate_sum`. Its
header says what it is (`# learned:`), which tokens it expects around the task's input (`# bos:`,
`# eos:`) and its output (`# output:`); engine/header.py reads those fields.
"""
from __future__ import annotations

import math

from .ir import Head, LearnedProgram, LearnedProgramError, Table


def literal(value) -> str:
    """A RASP literal for an int, float, bool or string value."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise LearnedProgramError(f"the weight {value!r} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        if "\n" in value or ('"' in value and "'" in value):
            raise LearnedProgramError(f"the value {value!r} cannot be written as a RASP string")
        return f"'{value}'" if '"' in value else f'"{value}"'
    raise LearnedProgramError(f"the value {value!r} is not an int, float, bool or string")


def _list(values) -> str:
    return "[" + ", ".join(literal(v) for v in values) + "]"


def no_match_value(program: LearnedProgram, key: str):
    """A value of the key's type that the key never holds: the target of a query that matches nothing."""
    values = program.variable(key).values
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return min(min(values), 0) - 1
    text = "<none>"
    while text in values:
        text = "<" + text + ">"
    return text


def _chain(cases: list[tuple[str, str]], default: str, indent: str) -> str:
    """`(v1 if c1 else (v2 if c2 else default))`, one case per line."""
    if not cases:
        return default
    lines = [f"{'(' * (i + 1) if i == 0 else indent + '('}{value} if {cond} else"
             for i, (value, cond) in enumerate(cases)]
    return "\n".join(lines) + f"\n{indent} {default}" + ")" * len(cases)


def _grouped(mapping: dict) -> dict:
    """{output: [inputs]} in first-seen order."""
    out: dict = {}
    for k, v in mapping.items():
        out.setdefault(v, []).append(k)
    return out


def head_text(program: LearnedProgram, h: Head) -> str:
    kind = "select_closest" if h.closest else "select"
    doc = (f"# {h.name}: an attention head ({kind}{', causal' if h.causal else ''}); query {h.query}, "
           f"key {h.key}, value {h.value}.\n"
           f"#   For each query value, the key value it looks for"
           f"{' (none matching: position 0, the beginning token)' if h.closest else ''}:\n")
    target = f"{h.name}_target"
    miss = literal(no_match_value(program, h.key))
    cases = [(literal(k), f"{h.query} in {_list(qs)}") for k, qs in _grouped(h.predicate).items()]
    lead = f"{target} = "
    text = doc + lead + _chain(cases, miss, " " * len(lead)) + ";\n"
    sel = f"select({h.key}, {target}, ==)"
    if h.causal:
        sel = f"{sel} and select(indices, indices, <=)"
    if h.closest:
        sel = f"select_closest({sel})"
        value = f"aggregate({sel}, {h.value})"
    elif h.aggregate == "sum":
        value = f"aggregate_sum({sel}, {h.value})"
    else:
        value = f"aggregate({sel}, {h.value}, 0)"
    return text + f"{h.name} = {value};\n"


def _row_condition(t: Table, keys: list[tuple]) -> str:
    if len(t.inputs) == 1:
        return f"{t.inputs[0]} in {_list(k[0] for k in keys)}"
    a, b = t.inputs
    groups: dict = {}
    for first, second in keys:
        groups.setdefault(first, []).append(second)
    parts = [f"({a} == {literal(first)} and ({b} in {_list(seconds)}))" for first, seconds in groups.items()]
    return parts[0] if len(parts) == 1 else "(" + "\n        or ".join(parts) + ")"


def table_text(t: Table) -> str:
    over = t.inputs[0] if len(t.inputs) == 1 else "(" + ", ".join(t.inputs) + ")"
    doc = f"# {t.name}: a table (an MLP) over {over}; one line per output value; anything else gives {literal(t.default)}.\n"
    lead = f"{t.name} = "
    cases = [(literal(out), _row_condition(t, keys)) for out, keys in _grouped(t.rows).items()]
    return doc + lead + _chain(cases, literal(t.default), " " * len(lead)) + ";\n"


def classifier_text(program: LearnedProgram) -> str:
    c = program.classifier
    out = ["# The classifier: each class's score adds one weight per feature (a categorical feature's",
           "# weight is looked up by its value, a numerical feature's is multiplied by its value).",
           *[f"# {note}" for note in c.notes]]
    for i, cls in enumerate(c.classes):
        terms = []
        for f in c.features:
            if f in c.numerical:
                terms.append(f"{literal(float(c.numerical[f][i]))} * {f}")
            else:
                table = ", ".join(f"{literal(v)}: {literal(float(w[i]))}" for v, w in c.categorical[f].items())
                terms.append(f"{{{table}}}[{f}]")
        lead = f"score_{i} = "
        body = ("\n" + " " * (len(lead) - 2) + "+ ").join(terms) if terms else "0.0 * indices"
        out.append(f"# class {literal(cls)}")
        out.append(f"{lead}{body};")
    out.append("# The prediction: the class with the largest score (a tie goes to the first class).")
    first = literal(c.classes[0])
    if len(c.classes) == 1:
        out.append(f"{program.output} = {first} if indices >= 0 else {first};")
        return "\n".join(out) + "\n"
    out.append("best_0 = score_0;")
    prev = first
    for i in range(1, len(c.classes)):
        name = program.output if i == len(c.classes) - 1 else f"{program.output}_{i}"
        win = f"score_{i} > best_{i - 1}"
        out.append(f"{name} = {literal(c.classes[i])} if {win} else {prev};")
        if i < len(c.classes) - 1:
            out.append(f"best_{i} = score_{i} if {win} else best_{i - 1};")
        prev = name
    return "\n".join(out) + "\n"


def header_text(program: LearnedProgram) -> str:
    lines = []
    if program.title:
        lines.append(f"# title: {program.title}")
    if program.description:
        lines.append(f"# description: {' '.join(program.description.split())}")
    lines.append(f"# learned: {program.origin}")
    lines.append(f"# bos: {program.bos}")
    if program.eos is not None:
        lines.append(f"# eos: {program.eos}")
    lines.append(f"# output: {program.output}")
    return "\n".join(lines) + "\n"


def write_rasp(program: LearnedProgram) -> str:
    """The program as RASP text (validated first; LearnedProgramError says what is wrong)."""
    program.validate()
    tokens = program.variables.get("tokens")
    if tokens is not None and not all(isinstance(v, str) for v in tokens.values):
        raise LearnedProgramError("the tokens' values must be strings (the input holds the beginning token "
                                  f"{program.bos!r} beside them)")
    parts = [header_text(program),
             "# The input: the task's tokens (strings) with the beginning token first"
             + (" and the end token last." if program.eos is not None else "."),
             "positions = indices;", "ones = 1;", ""]
    for step in program.steps:
        if program.variables[step.name].doc:
            parts.append(f"# {program.variables[step.name].doc}")
        parts.append(head_text(program, step) if isinstance(step, Head) else table_text(step))
    parts.append(classifier_text(program))
    return "\n".join(parts)


__all__ = ["write_rasp", "literal", "no_match_value"]
