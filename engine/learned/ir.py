"""The intermediate form of a *learned program* (docs/learned_programs.md): what a constrained
transformer of Friedman et al.'s "Learning Transformer Programs" computes, as data.

Both ways in go through it: the translator of TransformerPrograms' decompiled Python
(interop/transformer_programs.py) and the trainer's "program" mode build a `LearnedProgram`, and
`write_rasp.write_rasp` turns it into rasplay RASP text that the evaluator runs.

A learned program reads the task's input with a beginning token prepended (`bos`, their "<s>") and,
for some tasks, an end token appended (`eos`, "</s>"). Its variables are the input variables
(`tokens`, `positions`, the constant `ones`), one per head and one per table (MLP), each categorical
(a finite vocabulary) or numerical (a number). Every step writes one new variable:

* `Head`: attention. For each query position the predicate says which key value it looks for
  (`predicate[query value] == key value`; a query value missing from the map matches nothing).
  `closest=True` keeps only the closest matching key (select_closest, position 0 where none matches)
  and reads its value; otherwise every matching key is selected and the values are summed
  (`aggregate="sum"`, aggregate_sum) or averaged (`aggregate="mean"`, RASP's aggregate, 0 where none).
  `causal=True` restricts the keys to positions at or before the query.
* `Table`: an MLP as a lookup table over one or two variables: `rows` maps an input tuple to the
  output value; every other input gives `default`.
* `Classifier`: the output. Each class's score is the sum over features of a weight: a categorical
  feature's weight is looked up by its value (`categorical[feature][value][class]`), a numerical
  feature's weight is multiplied by its value (`numerical[feature][class]`). The prediction is the
  class with the largest score, ties going to the first class (numpy's argmax).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

CATEGORICAL = "categorical"
NUMERICAL = "numerical"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class LearnedProgramError(ValueError):
    """A learned program that is not well formed (names the part and why)."""


@dataclass(frozen=True)
class Variable:
    """A variable: `kind` categorical (with its `values`, ints or strings) or numerical (`values` empty)."""
    name: str
    kind: str
    values: tuple = ()
    doc: str = ""


@dataclass(frozen=True)
class Head:
    """An attention head writing variable `name` (see the module's docstring)."""
    name: str
    query: str
    key: str
    value: str
    predicate: dict
    closest: bool
    aggregate: str = "mean"     # "mean" or "sum" (ignored when closest: the one selected value)
    causal: bool = False


@dataclass(frozen=True)
class Table:
    """An MLP as a table over `inputs` (one or two variable names): `rows` maps a tuple of input values
    to the output; any other input gives `default`."""
    name: str
    inputs: tuple
    rows: dict
    default: object


@dataclass(frozen=True)
class Classifier:
    """The final linear classifier. `features` is the order in which the scores are added."""
    classes: tuple
    features: tuple
    categorical: dict = field(default_factory=dict)   # feature -> {value: (weight per class)}
    numerical: dict = field(default_factory=dict)     # feature -> (weight per class)
    notes: tuple = ()                                  # what the reader should know (e.g. rows left out)


@dataclass
class LearnedProgram:
    """A learned program: variables, steps in order (Heads and Tables), the classifier."""
    variables: dict          # name -> Variable, inputs first
    steps: list
    classifier: Classifier
    bos: str = "<s>"
    eos: str | None = None
    origin: str = "rasplay"  # "transformer-programs" or "rasplay" (the header's `learned:` field)
    output: str = "prediction"
    title: str = ""
    description: str = ""

    def variable(self, name: str) -> Variable:
        if name not in self.variables:
            raise LearnedProgramError(f"no variable named {name!r}")
        return self.variables[name]

    def validate(self) -> "LearnedProgram":
        """Check names, that every step reads variables defined before it, kinds and widths; returns self."""
        defined = set()
        for v in self.variables.values():
            _check_name(v.name)
            if v.kind not in (CATEGORICAL, NUMERICAL):
                raise LearnedProgramError(f"variable {v.name!r}: kind must be categorical or numerical")
        inputs = {"tokens", "positions", "ones"} & set(self.variables)
        defined |= inputs
        for step in self.steps:
            self._check_step(step, defined)
            defined.add(step.name)
        _check_name(self.output)
        if self.output in self.variables:
            raise LearnedProgramError(f"the output name {self.output!r} is also a variable")
        c = self.classifier
        if not c.classes:
            raise LearnedProgramError("the classifier has no classes")
        for f in c.features:
            if f not in defined:
                raise LearnedProgramError(f"the classifier reads {f!r}, which no step defines")
            weights = c.numerical.get(f) if f in c.numerical else None
            rows = [weights] if weights is not None else list(c.categorical.get(f, {}).values())
            if f not in c.numerical and f not in c.categorical:
                raise LearnedProgramError(f"the classifier lists {f!r} but gives it no weights")
            if any(len(r) != len(c.classes) for r in rows):
                raise LearnedProgramError(f"the classifier's weights for {f!r} do not have one per class")
        return self

    def _check_step(self, step, defined: set) -> None:
        if step.name not in self.variables:
            raise LearnedProgramError(f"step {step.name!r} writes a variable that is not declared")
        if step.name in defined:
            raise LearnedProgramError(f"variable {step.name!r} is written twice")
        reads = (step.query, step.key, step.value) if isinstance(step, Head) else tuple(step.inputs)
        for r in reads:
            if r not in defined:
                raise LearnedProgramError(f"step {step.name!r} reads {r!r} before it is defined")
        if isinstance(step, Head):
            if self.variable(step.query).kind != CATEGORICAL or self.variable(step.key).kind != CATEGORICAL:
                raise LearnedProgramError(f"head {step.name!r}: its query and key must be categorical")
            if step.aggregate not in ("mean", "sum"):
                raise LearnedProgramError(f"head {step.name!r}: aggregate must be 'mean' or 'sum'")
        elif isinstance(step, Table):
            if len(step.inputs) not in (1, 2):
                raise LearnedProgramError(f"table {step.name!r} reads {len(step.inputs)} variables; 1 or 2")
            if any(len(k) != len(step.inputs) for k in step.rows):
                raise LearnedProgramError(f"table {step.name!r}: a row's key does not have one value per input")
        else:
            raise LearnedProgramError(f"a step must be a Head or a Table, not {type(step).__name__}")


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not NAME.match(name):
        raise LearnedProgramError(f"{name!r} is not a RASP name")
