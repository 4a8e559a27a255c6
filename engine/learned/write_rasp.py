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


def _dict(pairs: list[tuple], indent: str) -> str:
    """A dict literal, eight entries a line."""
    items = [f"{literal(k)}: {literal(v)}" for k, v in pairs]
    lines = [", ".join(items[i:i + 8]) for i in range(0, len(items), 8)]
    return "{" + (",\n" + indent + " ").join(lines) + "}"


def _total(program: LearnedProgram, var: str, mapping: dict, default) -> list[tuple]:
    """`mapping` over every value of the categorical variable `var` (`default` where it has none)."""
    values = list(program.variable(var).values)
    return [(v, mapping.get(v, default)) for v in values] + [(k, o) for k, o in mapping.items() if k not in values]


def head_text(program: LearnedProgram, h: Head) -> str:
    kind = "select_closest" if h.closest else "select"
    doc = (f"# {h.name}: an attention head ({kind}{', causal' if h.causal else ''}); query {h.query}, "
           f"key {h.key}, value {h.value}.\n"
           f"#   For each query value, the key value it looks for ({literal(no_match_value(program, h.key))}: "
           f"none{'; no match selects position 0, the beginning token' if h.closest else ''}):\n")
    target = f"{h.name}_target"
    miss = no_match_value(program, h.key)
    lead = f"{target} = "
    if program.variable(h.query).values:
        text = doc + lead + _dict(_total(program, h.query, h.predicate, miss), " " * len(lead)) + f"[{h.query}];\n"
    else:
        cases = [(literal(k), f"{h.query} in {_list(qs)}") for k, qs in _grouped(h.predicate).items()]
        text = doc + lead + _chain(cases, literal(miss), " " * len(lead)) + ";\n"
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


def _grid_text(program: LearnedProgram, t: Table) -> str:
    """A table over two categorical variables as a grid: one row per value of the first, one column per
    value of the second, looked up by the values' row and column numbers."""
    a, b = t.inputs
    rows_of, cols_of = list(program.variable(a).values), list(program.variable(b).values)
    for (x, y) in t.rows:
        rows_of += [x] if x not in rows_of else []
        cols_of += [y] if y not in cols_of else []
    width = max(len(literal(v)) for v in [*cols_of, *t.rows.values(), t.default])
    head = "  ".join(literal(c).rjust(width) for c in cols_of)
    lines = [f"# {t.name}: a table (an MLP) over ({a}, {b}): a row per value of {a}, a column per value of {b}.",
             f"{t.name}_row = {_dict([(v, i) for i, v in enumerate(rows_of)], ' ' * (len(t.name) + 6))}[{a}];",
             f"{t.name}_column = {_dict([(v, i) for i, v in enumerate(cols_of)], ' ' * (len(t.name) + 9))}[{b}];",
             f"{t.name}_table = [",
             f"  # {head}"]
    for x in rows_of:
        cells = ", ".join(literal(t.rows.get((x, y), t.default)).rjust(width) for y in cols_of)
        lines.append(f"    {cells},   # {literal(x)}")
    lines[-1] = lines[-1].replace(",   #", "    #", 1) if len(rows_of) else lines[-1]
    lines.append("];")
    lines.append(f"{t.name} = {t.name}_table[{t.name}_row * {len(cols_of)} + {t.name}_column];")
    return "\n".join(lines) + "\n"


def table_text(program: LearnedProgram, t: Table) -> str:
    categorical = all(program.variable(v).values for v in t.inputs)
    if categorical and len(t.inputs) == 2:
        return _grid_text(program, t)
    over = t.inputs[0] if len(t.inputs) == 1 else "(" + ", ".join(t.inputs) + ")"
    lead = f"{t.name} = "
    if categorical:
        doc = f"# {t.name}: a table (an MLP) over {over}.\n"
        pairs = _total(program, t.inputs[0], {k[0]: v for k, v in t.rows.items()}, t.default)
        return doc + lead + _dict(pairs, " " * len(lead)) + f"[{t.inputs[0]}];\n"
    doc = f"# {t.name}: a table (an MLP) over {over}; one line per output value; anything else gives {literal(t.default)}.\n"
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
        parts.append(head_text(program, step) if isinstance(step, Head) else table_text(program, step))
    parts.append(classifier_text(program))
    return "\n".join(parts)


__all__ = ["write_rasp", "literal", "no_match_value"]
