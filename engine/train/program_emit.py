"""A decoded program model (program_decode.py) as a learned program (engine/learned/ir.py) and its RASP
text (engine/learned/write_rasp.py).

Exactness: the model's bias is added to every row of the tokens feature (each position holds exactly one
token, so every score gets it once); a table lists the rows that differ from its default: the most
frequent output for a table over two variables, and for a count's table the output of the largest
count the model had a row for (the model reads larger counts there too). Values the model never had
(positions past the training length, for instance) fall to a table's default, and a predicate has no
entry for them, so they match nothing.
"""
from __future__ import annotations

from collections import Counter

from ..learned import CATEGORICAL, NUMERICAL, Classifier, Head, LearnedProgram, Table, Variable, write_rasp
from .program_decode import Decoded, Var

RENAME = {"indices": "positions"}


def _name(name: str) -> str:
    return RENAME.get(name, name)


def _py(v):
    """A plain Python value (numpy scalars out)."""
    return v.item() if hasattr(v, "item") else v


def _steps(d: Decoded) -> tuple[list, dict]:
    labels = {v.name: dict(zip(v.values, v.labels)) for v in d.vars}
    by_name = {v.name: v for v in d.vars}
    steps, variables = [], {}
    for v in d.vars:
        if v.kind in ("tokens", "indices"):
            variables[_name(v.name)] = Variable(_name(v.name), CATEGORICAL, tuple(_py(x) for x in v.labels))
            continue
        sp = v.spec
        if v.kind in ("head", "count"):
            q, k = labels[sp["query"]], labels[sp["key"]]
            pred = {_py(q[a]): _py(k[sp["pred"][a]]) for a in by_name[sp["query"]].values if sp["pred"][a] in k}
            closest = v.kind == "head"
            steps.append(Head(v.name, _name(sp["query"]), _name(sp["key"]), _name(sp["value"]) if closest else "ones",
                              pred, closest=closest, aggregate="sum"))
            kind, values = (CATEGORICAL, tuple(_py(x) for x in v.labels)) if closest else (NUMERICAL, ())
            doc = (f"layer {v.layer}: a closest-match head" if closest
                   else f"layer {v.layer}: a counting head (the number of matching positions)")
            variables[v.name] = Variable(v.name, kind, values, doc)
        elif v.kind == "mlp":
            a, b = labels[sp["a"]], labels[sp["b"]]
            cells = {(_py(a[x]), _py(b[y])): out for (x, y), out in sp["cells"].items()}
            default = Counter(cells.values()).most_common(1)[0][0]
            steps.append(Table(v.name, (_name(sp["a"]), _name(sp["b"])),
                               {key: out for key, out in cells.items() if out != default}, default))
            variables[v.name] = Variable(v.name, CATEGORICAL, tuple(v.labels), f"layer {v.layer}: an MLP")
        else:   # count_mlp
            rows = sp["rows"]
            default = rows[-1]
            steps.append(Table(v.name, (sp["count"],),
                               {(c,): out for c, out in enumerate(rows) if out != default}, default))
            variables[v.name] = Variable(v.name, CATEGORICAL, tuple(v.labels), f"layer {v.layer}: an MLP over a count")
    if any(isinstance(s, Head) and not s.closest for s in steps):
        variables = {**{k: v for k, v in variables.items() if k in ("tokens", "positions")},
                     "ones": Variable("ones", NUMERICAL, (), "1 at every position"),
                     **{k: v for k, v in variables.items() if k not in ("tokens", "positions")}}
    return steps, variables


def _classifier(d: Decoded, variables: dict) -> Classifier:
    weights = {_name(f): dict(rows) for f, rows in d.classifier.items()}
    tokens = weights.get("tokens") or {label: [0.0] * len(d.classes) for label in variables["tokens"].values}
    weights["tokens"] = {label: [w + b for w, b in zip(row, d.bias)] for label, row in tokens.items()}
    features = tuple(n for n in variables if n in weights)
    categorical = {f: {_py(label): tuple(float(x) for x in row) for label, row in weights[f].items()}
                   for f in features}
    return Classifier(tuple(_py(c) for c in d.classes), features, categorical,
                      notes=("The model's bias is part of the tokens' weights.",))


def to_ir(d: Decoded, output: str = "prediction", title: str = "", description: str = "") -> LearnedProgram:
    """The learned program of a decoded model (validated)."""
    steps, variables = _steps(d)
    program = LearnedProgram(variables, steps, _classifier(d, variables), bos=d.bos, eos=d.eos, origin="rasplay",
                             output=output, title=title, description=description)
    return program.validate()


def output_name(task_output: str, names) -> str:
    name = f"learned_{task_output}"
    while name in names:
        name = "_" + name
    return name


def emit_source(d: Decoded, task_output: str, cfg) -> str:
    """The RASP text of the learned program for the task's output s-op `task_output`."""
    names = {_name(v.name) for v in d.vars} | {"tokens", "positions", "ones", "indices", "length"}
    title = f"{task_output}, learned"
    description = (f"A program learned by rasplay's program mode from the task's output {task_output} "
                   f"(vocabulary {''.join(map(str, cfg.vocab))}, lengths {cfg.min_len}-{cfg.max_len}, "
                   f"seed {cfg.seed}, {cfg.steps or 'time-budgeted'} steps). Check it on every input before "
                   f"trusting it.")
    return write_rasp(to_ir(d, output_name(task_output, names), title, description))


__all__ = ["to_ir", "emit_source", "Var"]
