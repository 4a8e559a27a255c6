"""Pass 4, choose encodings (engine/compiler/encodings.py), alone: categorical (one-hot) or numerical
(one dimension) for each aggregate and for the output, and the overrides it accepts or refuses. (Its
size decisions, joint values against parts of an 'or', are in test_compiler_plan_decisions.py.)"""
from __future__ import annotations

import pytest

from rasplay.engine import RaspError

from support.compiler_stages import node, planned

MEAN = "m = aggregate(select(indices, indices, <=), indices);\n"
COPY = "c = aggregate(select(indices, length - indices - 1, ==), indices);\n"


def encoding(source, name, output=None, **kw):
    """The kind of the block that holds `name`'s values."""
    program, graph, vs, plan = planned(source, output or name, **kw)
    target = node(program, name).id
    kinds = {b.kind for b in plan.blocks if target in b.provides and b.kind in ("categorical", "numerical")}
    assert len(kinds) == 1, kinds
    return kinds.pop()


def test_a_mean_over_several_positions_is_numerical():
    assert encoding(MEAN + "o = m + 1;", "m", "o") == "numerical"


def test_a_copied_number_used_in_arithmetic_is_numerical():
    assert encoding(COPY + "o = c + 1;", "c", "o") == "numerical"


def test_a_copied_number_that_a_select_reads_is_categorical():
    source = COPY + "o = aggregate(select(c, indices, ==), tokens);"
    assert encoding(source, "c", "o") == "categorical"


def test_copied_strings_are_categorical():
    source = "s = aggregate(select(indices, length - indices - 1, ==), tokens);\no = s == \"a\";"
    assert encoding(source, "s", "o") == "categorical"


def test_the_output_a_copy_of_few_ints_is_categorical_a_mean_numerical():
    assert planned(COPY, "c")[3].output.encoding == "categorical"
    assert planned(MEAN, "m")[3].output.encoding == "numerical"
    assert planned("w = selector_width(select(tokens, tokens, ==));", "w")[3].output.encoding == "categorical"


def test_an_override_is_followed_where_it_can_hold_the_values():
    assert encoding(COPY + "o = c + 1;", "c", "o", encodings={"c": "categorical"}) == "categorical"
    assert planned(COPY, "c", encodings={"c": "numerical"})[3].output.encoding == "numerical"


@pytest.mark.parametrize("source, output, encodings, says", [
    (MEAN, "m", {"m": "categorical"}, "only a numerical encoding can hold a mean"),
    ("s = aggregate(select(indices, length - indices - 1, ==), tokens);", "s", {"s": "numerical"},
     "which a numerical encoding cannot hold"),
])
def test_an_override_that_cannot_hold_the_values_is_refused_at_its_line(source, output, encodings, says):
    with pytest.raises(RaspError) as info:
        planned(source, output, encodings=encodings)
    assert says in info.value.message and info.value.span.line == 1
