"""Evaluating a program in a test: the values of a name, its errors, the error diagnostics."""
from rasplay import engine


def values(source: str, inputs, name: str, **kw):
    """The values of `name` on each input (asserting it evaluated without errors)."""
    doc = engine.evaluate(source, inputs, **kw)
    res = doc["results"][name]
    assert res["errors"] == [None] * len(res["errors"]), res["errors"]
    return res["values"]


def value(source: str, inp, name: str, **kw):
    return values(source, [inp], name, **kw)[0]


def errors(source: str, inputs, name: str, **kw):
    return engine.evaluate(source, inputs, **kw)["results"][name]["errors"]


def diagnostics(source: str, inputs=("ab",), **kw):
    return [d for d in engine.evaluate(source, list(inputs), **kw)["diagnostics"] if d["severity"] == "error"]
