"""The closed form of a length-free position encoding (engine/compiler/length_free/position_form.py): where it
starts repeating and with which period, derived from the dialect's two shapes and checked against the
encoding's own values; no form (None) for anything else or a table past the limit."""
import numpy as np

from rasplay.engine import compile
from rasplay.engine.compiler.length_free.position_form import MAX_TABLE, position_form


def forms(source: str, output: str) -> dict:
    model = compile(source, output, vocab="ab", length_free=True)
    return {name: model.built.periodic_form[name] for name in model.built.periodic}


def test_mod_and_comparisons_with_offsets():
    src = ("s = indices - 3;\nphase = s % 3;\nlate = indices + 2 > 5;\nearly = indices <= 1.5;\n"
           "res = late and phase == 1 and not early;")
    got = sorted(forms(src, "res").values())
    # (t - 3) % 3 repeats from t = 3; t + 2 > 5 is constant from t = 4; t <= 1.5 from t = 2
    assert got == [(2, 1, [0, 0, 1]), (3, 3, [0, 1, 2, 0, 1, 2]), (4, 1, [0, 0, 0, 0, 1])]


def test_the_form_reproduces_the_encoding_far_out():
    src = "phase = (indices + 1) % 4;\nres = phase == 0;"
    model = compile(src, "res", vocab="ab", length_free=True)
    (name, (fn, _)), = model.built.periodic.items()
    start, period, table = model.built.periodic_form[name]
    t = np.arange(0, 5000)
    folded = np.where(t < start, t, start + (t - start) % period)
    assert np.array_equal(np.asarray(table)[folded], fn(t))


def test_no_form_past_the_table_limit_for_other_shapes_or_when_the_check_fails():
    got = forms(f"big = indices % {MAX_TABLE + 1};\nhit = big == 3;", "hit")
    assert list(got.values()) == [f"'big' (indices % {MAX_TABLE + 1})"]   # the export names it when refusing

    class Node:
        op, template = "+", (("arg", 0), ("const", 1))
    assert position_form(Node(), 0, lambda t: t % 2) is None                 # not a shape the dialect admits
    Node.op, Node.template = "%", (("arg", 0), ("const", 3))
    assert position_form(Node(), 0, lambda t: t % 3) == (0, 3, [0, 1, 2])
    assert position_form(Node(), 0, lambda t: np.minimum(t, 2)) is None      # values that do not repeat: refused
