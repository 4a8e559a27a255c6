"""Unit tests of the Tracr lowering (interop/tracr_lower.py), one per class of cosmic-ray survivors
(docs/testing.md): each lowers a small program, evaluates the RASP it gives with rasplay's engine, and
compares the decoded values with Tracr's evaluation rules (interop/tracr_eval.py, which never reads the
lowered program) or with values computed by hand from a rule docs/interop.md states. Where the lowering
promises a form (a predicate that is a comparison becomes that comparison, a Map of many numbers with few
steps becomes `a if x < t else b`, the table limit of 200,000 entries), the form is checked too."""
from __future__ import annotations

import itertools

import pytest

import rasplay
import rasplay.tracr as tracr
from rasplay.engine.lang.errors import RaspError
from rasplay.interop import tracr_eval
from rasplay.interop.tracr_lower import _means, lower
from rasplay.tracr import rasp

ERROR = object()   # Tracr's evaluator raised on this input


def all_inputs(vocab, max_len, min_len=1):
    return [list(x) for n in range(min_len, max_len + 1) for x in itertools.product(vocab, repeat=n)]


def run(low, inputs) -> list:
    """The lowered program's decoded output on each input, ERROR where the evaluation failed."""
    out = []
    for start in range(0, len(inputs), 200):   # the evaluator takes at most 256 inputs at once
        doc = rasplay.evaluate(low.source, inputs[start:start + 200], names=[low.output], limits=tracr.LIMITS)
        result = doc["results"][low.output]
        assert result["kind"] == "sop", result
        out += [ERROR if err is not None else low.decode(low.output, v)
                for v, err in zip(result["values"], result["errors"])]
    return out


def reference(program, x):
    try:
        return tracr_eval.evaluate(program, list(x))
    except Exception:  # noqa: BLE001 - Tracr raises where the program fails
        return ERROR


def same(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) | isinstance(b, bool):
        return a == b or abs(a - b) <= 1e-9 * max(1.0, abs(b))
    return type(a) is type(b) and a == b


def assert_as_tracr(program, vocab, max_len, inputs=None, skip_none=False, **options):
    """The lowered program's values equal Tracr's on every input (all inputs up to max_len by default),
    and it fails exactly where Tracr's evaluator raises. skip_none: positions where Tracr gives None are
    a documented departure (an Aggregate's default None) and are not compared."""
    low = lower(program, vocab, max_len, **options)
    inputs = all_inputs(vocab, max_len) if inputs is None else inputs
    for x, got in zip(inputs, run(low, inputs), strict=True):
        want = reference(program, x)
        if want is ERROR or got is ERROR:
            assert got is want, (x, got, want)
            continue
        assert len(got) == len(want), (x, got, want)
        for g, w in zip(got, want):
            if not (w is None and skip_none):
                assert same(g, w), (x, got, want)
    return low


def sop_line(low, name: str) -> str:
    return next(line for line in low.source.splitlines() if line.startswith(f"{name} = "))


# ------------------------------------------------------------------ selects

OPS = {"==": lambda k, q: k == q, "!=": lambda k, q: k != q, "<": lambda k, q: k < q,
       "<=": lambda k, q: k <= q, ">": lambda k, q: k > q, ">=": lambda k, q: k >= q}


@pytest.mark.parametrize("op", sorted(OPS))
def test_a_python_predicate_that_is_a_comparison_becomes_that_comparison(op):
    """docs/interop.md: 'A Select with a Python predicate becomes the comparison it equals when it is one'."""
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.indices, OPS[op]))
    low = assert_as_tracr(program, [0, 1, 2, 3], 3)
    assert f"select(tokens, indices, {op})" in low.source
    # floats, the queries computed (equal values that are distinct objects)
    floats = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.Map(lambda t: t + 1 - 1, rasp.tokens), OPS[op]))
    low = assert_as_tracr(floats, [0.5, 1.5, 2.5], 3)
    assert f"select(tokens, map, {op})" in low.source


def test_a_custom_predicate_that_raises_selects_nothing_there_and_lowering_goes_on():
    """`q % k` raises for k = 0: the lowering still succeeds; inputs without a 0 key give Tracr's values."""
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: q % k == 0))
    assert_as_tracr(program, [0, 1, 2, 3, 4], 3, inputs=all_inputs([1, 2, 3, 4], 3))


def _shifted(sop):
    """sop moved one position right: None at position 0 (Tracr's shift_by; an Aggregate with default None)."""
    return rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1), sop, default=None)


@pytest.mark.parametrize("predicate", [rasp.Comparison.LT, rasp.Comparison.NEQ, lambda k, q: k != q,
                                       lambda k, q: k is None or k < q])
def test_selects_never_match_a_none_key(predicate):
    """docs/interop.md: over strings None is a string of its own, which selects never match (a Comparison or
    a Python predicate). Expected values computed by hand from that rule."""
    program = rasp.SelectorWidth(rasp.Select(_shifted(rasp.tokens), rasp.tokens, predicate))
    low = lower(program, list("abc"), 3)
    inputs = all_inputs("abc", 3)
    pred = OPS[predicate.value] if isinstance(predicate, rasp.Comparison) else predicate
    want = [[sum(bool(pred(k, q)) for k in [None] + x[:-1] if k is not None) for q in x] for x in inputs]
    assert run(low, inputs) == want


@pytest.mark.parametrize("predicate", [rasp.Comparison.LT, rasp.Comparison.GEQ, lambda k, q: q is None or k <= q])
def test_selects_never_match_a_none_query(predicate):
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, _shifted(rasp.tokens), predicate))
    low = lower(program, list("abc"), 3)
    inputs = all_inputs("abc", 3)
    pred = OPS[predicate.value] if isinstance(predicate, rasp.Comparison) else predicate
    want = [[0 if q is None else sum(bool(pred(k, q)) for k in x) for q in [None] + x[:-1]] for x in inputs]
    assert run(low, inputs) == want


def test_none_among_strings_decodes_only_the_string_standing_for_it():
    """Strings that sort before "None" ("A") stay themselves; only the None string decodes to None."""
    program = _shifted(rasp.tokens)
    low = lower(program, ["A", "b"], 3)
    inputs = all_inputs(["A", "b"], 3)
    assert run(low, inputs) == [[None] + x[:-1] for x in inputs]


def test_a_pair_where_a_custom_predicate_raises_is_not_selected():
    """The lowering's own rule (Tracr's evaluator raises on such an input): the pair selects nothing."""
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: q % k == 0))
    low = lower(program, [0, 1, 2], 2)
    inputs = all_inputs([0, 1, 2], 2)
    want = [[sum(k != 0 and q % k == 0 for k in x) for q in x] for x in inputs]
    assert run(low, inputs) == want


@pytest.mark.parametrize("combine", ["and", "or", "not"])
def test_selector_and_or_not_of_selects_over_other_sops(combine):
    eq = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
    before = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    sel = {"and": rasp.SelectorAnd(eq, before), "or": rasp.SelectorOr(eq, before), "not": rasp.SelectorNot(eq)}[combine]
    low = assert_as_tracr(rasp.SelectorWidth(sel), [0, 1, 2], 3)
    assert sop_line(low, low.names[sel.label]).split(" = ", 1)[1].count(f"{combine} ") == 1


def test_a_constant_selector_selects_its_matrix():
    """Tracr's ConstantSelector (entry [query][key]), in a program that reads indices nowhere else."""
    matrix = [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
    program = rasp.numerical(rasp.Aggregate(rasp.ConstantSelector(matrix), rasp.numerical(rasp.Map(float, rasp.tokens)),
                                            default=0))
    assert_as_tracr(program, [0, 1, 2, 4], 3, inputs=all_inputs([0, 1, 2, 4], 3, min_len=3))
    width = rasp.SelectorWidth(rasp.ConstantSelector([[1, 0], [1, 1]]))
    assert_as_tracr(width, [0, 1], 2, inputs=all_inputs([0, 1], 2, min_len=2))


def test_nested_rows_in_several_classes_keep_the_class_condition():
    """`k % 2 == q % 2 and k <= q`: two classes (the parities), rows nested within each."""
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k % 2 == q % 2 and k <= q))
    low = assert_as_tracr(program, [0, 1, 2, 3, 4, 5], 3)
    assert " or " not in low.source


def test_nested_rows_of_one_class_covering_every_query_are_one_condition():
    """`k + q <= 3` over 0..3: rows {0}, {0,1}, {0,1,2}, {0,1,2,3}, one chain, every query selects something:
    a single `select(level, threshold, <=)` (no class condition)."""
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k + q <= 3))
    low = assert_as_tracr(program, [0, 1, 2, 3], 3)
    assert sop_line(low, low.names[program.selector.label]).count("select(") == 1


def test_disjoint_rows_with_a_query_that_selects_nothing():
    """Rows {0,3,6}, {1,4}, {2,5} (a class per key) and query 6 selecting nothing: it must match no class."""
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: q < 6 and k % 3 == q % 3))
    low = assert_as_tracr(program, list(range(7)), 2)
    line = sop_line(low, low.names[program.selector.label])
    assert line.count("select(") == 1 and " and " not in line


def test_disjoint_rows_over_many_keys_are_one_class_select():
    """Classes over 300 keys (pairs of indices): still one `select(class, class, ==)`."""
    program = rasp.SelectorWidth(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k // 2 == q // 2))
    low = lower(program, [0], 300)
    line = sop_line(low, low.names[program.selector.label])
    assert line.count("select(") == 1 and " and " not in line and " or " not in line
    assert run(low, [[0] * 5]) == [[2, 2, 2, 2, 1]]


def test_a_predicate_true_everywhere_is_the_all_true_select():
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k >= 0))
    low = assert_as_tracr(program, [0, 1, 2], 3)
    assert sop_line(low, low.names[program.selector.label]).endswith("= select(1, 1, ==);")
    many = rasp.SelectorWidth(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k >= 0))   # 300 keys
    low = lower(many, [0], 300)
    assert sop_line(low, low.names[many.selector.label]).endswith("= select(1, 1, ==);")


def test_a_predicate_between_numbers_and_strings_is_a_table():
    """Keys numbers, queries strings: Python cannot order them, so no comparison is tried on them."""
    strings = rasp.Map(lambda t: str(t), rasp.tokens)
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, strings, lambda k, q: str(k) == q))
    assert_as_tracr(program, [0, 1], 3)


def test_rows_nested_only_if_classes_are_joined_right():
    """Rows {1,2}, {2}, {0,2} share key 2 (one class) but are not a chain: no class/level form can say them
    (it would if the union-find that joins keys sharing a row left key 0 out of the class)."""
    rel = {0: {1, 2}, 1: {2}, 2: {0, 2}}
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k in rel[q]))
    assert_as_tracr(program, [0, 1, 2], 3)


def test_overlapping_rows_two_queries_share():
    """Rows {0,1}, {1,2} overlap without nesting; queries 0 and 2 have the same row (equal, distinct sets)."""
    rel = {0: {0, 1}, 1: {1, 2}, 2: {0, 1}}
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k in rel[q]))
    low = assert_as_tracr(program, [0, 1, 2], 3)
    assert " or " in low.source


def test_nested_rows_with_a_query_that_selects_nothing():
    """Two classes of nested rows, and query 5 selecting nothing (its class and level match no key)."""
    program = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens,
                                             lambda k, q: q != 5 and k % 2 == q % 2 and k <= q))
    assert_as_tracr(program, [0, 1, 2, 3, 4, 5], 3)


def test_a_comparison_predicate_over_coded_values_compares_values_not_codes():
    """Keys (t,) and queries (t + 1,) are both coded, each with its own codes: `k == q` must compare the
    tuples (code c1 of the keys is (1,), of the queries (2,))."""
    keys = rasp.Map(lambda t: (t,), rasp.tokens)
    queries = rasp.Map(lambda t: (t + 1,), rasp.tokens)
    program = rasp.SelectorWidth(rasp.Select(keys, queries, lambda k, q: k == q))
    assert_as_tracr(program, [0, 1, 2], 3)


# ------------------------------------------------------------------ the table limit

def test_a_select_table_of_exactly_the_limit_is_lowered_and_one_more_is_refused():
    """docs/interop.md: one table holds at most 200,000 entries (select key x query values)."""
    queries = rasp.Map(lambda i: i % 400, rasp.indices)
    ok = rasp.Select(rasp.indices, queries, lambda k, q: k == q)       # 500 keys x 400 queries
    low = lower(rasp.SelectorWidth(ok), [0], 500)
    assert "select(indices, " in low.source and ", ==)" in low.source
    over = rasp.Select(rasp.indices, rasp.Map(lambda i: i % 401, rasp.indices), lambda k, q: k == q)
    with pytest.raises(RaspError, match=r"a select table of 200500 pairs is over the limit of 200000"):
        lower(rasp.SelectorWidth(over), [0], 500)


def test_a_sequence_map_table_of_exactly_the_limit_is_lowered():
    program = rasp.SequenceMap(lambda a, b: a + b, rasp.indices, rasp.Map(lambda i: i % 400, rasp.indices))
    low = lower(program, [0], 500)                                    # 500 x 400 pairs
    assert "199999: 898" in sop_line(low, low.output)


def test_a_sequence_map_table_over_the_limit_is_refused_with_its_size():
    program = rasp.SequenceMap(lambda i, w: i + w, rasp.indices,
                               rasp.SelectorWidth(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)))
    with pytest.raises(RaspError, match=r"a table of 250500 pairs is over the limit of 200000"):
        lower(program, [0], 500)   # 500 indices x 501 widths


def test_a_custom_select_over_ten_values_each_is_under_the_limit():
    program = rasp.SelectorWidth(rasp.Select(rasp.indices, rasp.indices, lambda k, q: (k + q) % 3 == 0))
    assert_as_tracr(program, [0], 10, inputs=[[0] * n for n in range(1, 11)])


def test_a_mean_with_too_many_values_for_a_table_is_refused_as_a_select_key_or_query():
    mean = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE), rasp.tokens,
                                         default=0))
    for keys, queries in ((mean, rasp.tokens), (rasp.tokens, mean)):
        program = rasp.SelectorWidth(rasp.Select(keys, queries, lambda k, q: k + q > 3))
        with pytest.raises(RaspError, match="too many values to tabulate"):
            lower(program, list(range(20_001)), 1)


# ------------------------------------------------------------------ maps and value sets

def test_a_numerical_mean_of_up_to_20000_values_can_be_tabulated():
    """docs/interop.md: a numerical mean has at most 20,000 possible values when a function of it must be
    tabulated (MAX_MEANS); beyond, lowering stops naming the expression."""
    def program():
        mean = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE),
                                             rasp.tokens, default=0)).named("mean")
        return rasp.Map(lambda m: m + 1, mean)
    low = lower(program(), list(range(20_000)), 1)
    assert "19999: 20000" in sop_line(low, low.output)
    with pytest.raises(RaspError, match="'mean' has more than 20000 possible values"):
        lower(program(), list(range(20_001)), 1)


def test_the_vocabulary_and_coded_values_are_sorted_by_value_and_never_compared_across_kinds():
    low = lower(rasp.tokens, [10, 2, 1], 2)
    assert low.vocab == [1, 2, 10]
    mixed = rasp.Map(lambda t: (1, "a") if t else (1, 2), rasp.tokens)      # tuples that Python cannot order
    low = assert_as_tracr(mixed, [0, 1], 2)
    assert set(low.codes[low.output]) == {(1, "a"), (1, 2)}

def test_values_rasp_cannot_hold_are_coded():
    """inf is no RASP number: a Map giving it is coded (Tracr's values back through decode)."""
    program = rasp.Map(lambda x: float("inf") if x == 0 else x, rasp.tokens)
    low = assert_as_tracr(program, [0, 1, 2], 3)
    assert low.output in low.codes
    nan = lower(rasp.Map(lambda x: float("nan") if x == 0 else x, rasp.tokens), [0, 1, 2], 2)   # nor is NaN
    assert nan.output in nan.codes
    got = run(nan, [[0, 1], [2]])
    assert got[0][0] != got[0][0] and got[0][1:] == [1] and got[1] == [2]


def test_the_source_header_lists_each_coded_sops_values():
    program = rasp.Map(lambda t: (t,), rasp.tokens).named("pairs")
    low = lower(program, [1, 2], 2)
    assert "# pairs holds codes: c0 = (1,), c1 = (2,)" in low.source.splitlines()


def test_the_value_sets_of_length_and_selector_width_are_exact():
    """length: 1..max_len; SelectorWidth: 0..max_len (seen through a coded Map over them)."""
    per_length = rasp.Map(lambda n: (n,), rasp.length)
    low = assert_as_tracr(per_length, [0, 1], 3)
    assert low.codes[low.output] == [(1,), (2,), (3,)]
    width = rasp.Map(lambda n: (n,), rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)))
    low = assert_as_tracr(width, [0, 1], 3)
    assert low.codes[low.output] == [(0,), (1,), (2,), (3,)]


def test_means_are_every_mean_of_one_to_max_len_values():
    assert sorted(_means([0, 1], 2)) == [0, 0.5, 1]
    assert sorted(_means([0, 1], 3)) == [0, 1 / 3, 0.5, 2 / 3, 1]
    assert sorted(_means([2, 4], 1)) == [2, 4]
    # limit: the most sums and means that may be listed (3 each here)
    assert sorted(_means([0, 1], 2, limit=3)) == [0, 0.5, 1]
    assert _means([0, 1], 2, limit=2) is None
    assert _means([0, 1, 2], 2, limit=4) is None        # 5 sums, 4 means


def test_a_numerical_mean_has_exactly_its_possible_values():
    mean = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ),
                                         rasp.numerical(rasp.Map(lambda t: t, rasp.tokens)), default=0))
    program = rasp.Map(lambda m: (m,), mean)
    low = assert_as_tracr(program, [0, 1], 3)
    assert sorted(v for (v,) in low.codes[low.output]) == [0, 1 / 3, 0.5, 2 / 3, 1]


def test_labels_become_valid_distinct_names():
    """A label starting with a digit, one that is a RASP word, and two equal labels."""
    a = rasp.Map(lambda t: t + 1, rasp.tokens).named("3rd")
    b = rasp.Map(lambda t: t * 2, a).named("select")
    c = rasp.SequenceMap(lambda x, y: x - y, a, b).named("3rd")
    low = assert_as_tracr(c, [0, 1, 2], 2)
    names = [low.names[x.label] for x in (a, b)] + [low.output]
    assert names[0] == "_3rd" and names[1] == "select_" and len(set(names)) == 3


def test_full_fills_every_position_and_refuses_what_rasp_cannot_hold():
    assert_as_tracr(rasp.SequenceMap(lambda x, y: x + y, rasp.Full(3), rasp.tokens), [0, 1], 3)
    assert_as_tracr(rasp.SequenceMap(lambda x, y: x + str(y), rasp.Full("x"), rasp.tokens), [0, 1], 2)
    with pytest.raises(RaspError, match="only a number, string or bool can fill"):
        lower(rasp.Full((1, 2)), [0, 1], 2)


def test_a_function_that_raises_leaves_an_evaluation_error_there():
    """No table entry where f raises: Tracr raises there too, and every other input has Tracr's value."""
    assert_as_tracr(rasp.Map(lambda x: 6 // x, rasp.tokens), [0, 1, 2, 3], 3)


def test_a_step_function_with_a_value_that_raises_is_no_step_function():
    """A step function over ten numbers, except that f raises at 5: a value there would be a wrong value."""
    program = rasp.Map(lambda x: 1 // (x - 5) + 1 if x == 5 else int(x > 5), rasp.tokens)
    assert_as_tracr(program, list(range(10)), 2)


def test_a_map_of_many_numbers_with_few_steps_is_written_as_steps():
    """docs/interop.md: a Map of many numbers that is a step function of a few steps is `a if x < t else b`
    (thresholds at the midpoints); values as Tracr's, the first value a step of its own."""
    vocab = list(range(10))
    two = rasp.Map(lambda x: int(x >= 5), rasp.tokens)
    low = assert_as_tracr(two, vocab, 2)
    assert sop_line(low, low.output) == f"{low.output} = (0 if tokens < 4.5 else 1);"
    three = rasp.Map(lambda x: 0 if x == 0 else 1 if x < 5 else 2, rasp.tokens)
    low = assert_as_tracr(three, vocab, 2)
    assert " if tokens < 0.5 else " in sop_line(low, low.output)
    uneven = rasp.Map(lambda x: 7 if x < 3 else -1, rasp.tokens)
    assert_as_tracr(uneven, [0, 1, 2, 6, 7, 8, 9, 10, 11], 2)
    last_alone = rasp.Map(lambda x: int(x >= 9), rasp.tokens)
    low = assert_as_tracr(last_alone, vocab, 2)
    assert " if " in sop_line(low, low.output)


def test_a_step_function_of_computed_values_is_two_steps():
    """Equal results that are distinct objects (computed floats and large ints) are one step."""
    for f in (lambda x: (x >= 4) / 2, lambda x: 1000 * (x >= 4) + 1000):
        low = assert_as_tracr(rasp.Map(f, rasp.tokens), list(range(10)), 2)
        assert sop_line(low, low.output).count(" if ") == 1


def test_a_map_of_many_numbers_to_one_value_stays_an_sop():
    program = rasp.Map(lambda x: 7, rasp.tokens)
    low = assert_as_tracr(program, list(range(10)), 2)
    assert "{" in sop_line(low, low.output)


def test_the_step_form_is_for_more_than_eight_values_and_at_most_eight_steps():
    def line(vocab, f):
        low = assert_as_tracr(rasp.Map(f, rasp.tokens), vocab, 2)
        return sop_line(low, low.output)
    assert line(list(range(8)), lambda x: int(x >= 4)).startswith("map") and "{" in line(list(range(8)),
                                                                                          lambda x: int(x >= 4))
    assert " if " in line(list(range(9)), lambda x: int(x >= 4))
    assert line(list(range(9)), lambda x: min(x, 7)).count(" if ") == 7          # eight steps
    assert " if " not in line(list(range(9)), lambda x: x)                      # nine steps: a table
    assert " if " not in line(list(range(5)), lambda x: int(x >= 2))            # five values: a table


def test_a_map_of_many_strings_is_a_table():
    assert_as_tracr(rasp.Map(lambda t: t < "e", rasp.tokens), list("abcdefghij"), 2)


def test_a_map_of_many_numbers_to_tuples_is_a_table():
    low = assert_as_tracr(rasp.Map(lambda x: (x >= 5,), rasp.tokens), list(range(10)), 2)
    assert " if " not in sop_line(low, low.output)


# ------------------------------------------------------------------ sequence maps

def test_a_sequence_map_that_raises_leaves_an_evaluation_error_there():
    """Only the pairs where f raises are missing (x // 0 for the token 0; the other pairs of that x stay)."""
    assert_as_tracr(rasp.SequenceMap(lambda x, y: x // y, rasp.tokens, rasp.indices), [1, 2], 3)
    assert_as_tracr(rasp.SequenceMap(lambda x, y: x // y, rasp.indices, rasp.tokens), [0, 1, 2], 3)


def test_a_linear_sequence_map_of_strings_and_numbers_fails_where_tracr_fails():
    """`x + y` of a string and a number raises in Tracr: the lowering goes on and every input fails."""
    for fst, snd in ((rasp.tokens, rasp.indices), (rasp.indices, rasp.tokens)):
        assert_as_tracr(rasp.LinearSequenceMap(fst, snd, 1, 1), ["a", "b"], 2)

def test_a_linear_sequence_map_has_exactly_its_possible_values():
    """2x + 3y over x in {0, 1}, y in indices 0..2: {0, 2, 3, 5, 6, 8}; a Map over it is tabulated on them."""
    program = rasp.Map(lambda v: v * 10, rasp.LinearSequenceMap(rasp.tokens, rasp.indices, 2, 3))
    assert_as_tracr(program, [0, 1], 3)
    coded = rasp.Map(lambda v: (v,), rasp.LinearSequenceMap(rasp.tokens, rasp.indices, 2, 3))
    low = assert_as_tracr(coded, [0, 1], 3)
    assert low.codes[low.output] == [(0,), (2,), (3,), (5,), (6,), (8,)]


def test_a_sequence_map_gives_none_where_either_input_is_none():
    """None stays None through a SequenceMap (f is not called on it), whichever side holds it."""
    for first in (True, False):
        pair = (_shifted(rasp.tokens), rasp.tokens) if first else (rasp.tokens, _shifted(rasp.tokens))
        program = rasp.SequenceMap(lambda x, y: x + y, *pair)
        low = lower(program, list("ab"), 3)
        inputs = all_inputs("ab", 3)
        assert run(low, inputs) == [reference(program, x) for x in inputs]


# ------------------------------------------------------------------ aggregates

PREFIX = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)     # each query: the keys up to it
BEFORE = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)      # nothing selected at position 0


@pytest.mark.parametrize("f", [lambda x: None if x == 0 else x / 2,        # floats and None: coded
                               lambda x: True if x == 0 else x + 1,        # a bool among numbers: coded
                               lambda x: None if x == 0 else x == 1])      # bools and None
def test_a_mean_of_numbers_held_as_codes(f):
    """Numbers held as codes are decoded before the mean (bools as 0 and 1; None as 0, noted)."""
    program = rasp.numerical(rasp.Aggregate(PREFIX, rasp.Map(f, rasp.tokens), default=0))
    inputs = all_inputs([0, 1, 2, 3], 3)
    low = lower(program, [0, 1, 2, 3], 3)
    for x, got in zip(inputs, run(low, inputs), strict=True):
        vals = [None if t == 0 and f(0) is None else f(t) for t in x]
        want = [sum(0 if v is None else float(v) for v in vals[:i + 1]) / (i + 1) for i in range(len(x))]
        assert got == pytest.approx(want), (x, got)
    assert any("None" in n for n in low.notes) == (f(0) is None)


@pytest.mark.parametrize("numerical,default", [(True, None), (True, 0), (False, 0)])
def test_a_mean_of_bools_averages_them_as_zero_and_one(numerical, default):
    """docs/interop.md: an Aggregate of bools that is numerical or has a number default averages them as 0
    and 1 (Tracr's evaluator too)."""
    program = rasp.Aggregate(PREFIX, rasp.Map(lambda t: t == 1, rasp.tokens), default=default)
    program = rasp.numerical(program) if numerical else program
    low = lower(program, [0, 1], 3)
    inputs = all_inputs([0, 1], 3)
    for x, got in zip(inputs, run(low, inputs), strict=True):
        assert got == pytest.approx([float(w) for w in reference(program, x)]), x   # one True is 1
    assert any("0 and 1" in n for n in low.notes)


def test_a_numerical_aggregate_of_strings_is_refused_naming_five_values():
    for vocab, shown in (("abcdef", "'a', 'b', 'c', 'd', 'e', ... (Tracr"), ("abcde", "'a', 'b', 'c', 'd', 'e' (Tracr"),
                         ("abcd", "'a', 'b', 'c', 'd' (Tracr")):
        program = rasp.numerical(rasp.Aggregate(PREFIX, rasp.tokens, default=0))
        with pytest.raises(RaspError) as info:
            lower(program, list(vocab), 2)
        assert f"holds {shown}" in info.value.message


def test_a_categorical_aggregate_of_numbers_is_a_mean_unless_copying_is_asked():
    """Tracr's evaluator averages several selected numbers even for a categorical Aggregate (the default
    lowering); copy_categorical (what the compiler retries with) copies codes: one selected value is
    Tracr's, several is an evaluation error, never a mean."""
    program = rasp.Aggregate(PREFIX, rasp.Map(lambda t: t * 2, rasp.tokens), default=0)
    assert_as_tracr(program, [0, 1, 2], 3)
    low = lower(program, [0, 1, 2], 3, copy_categorical=True)
    assert low.codes[low.output] == [0, 2, 4]
    inputs = all_inputs([0, 1, 2], 3)
    for x, got in zip(inputs, run(low, inputs), strict=True):
        assert got is ERROR if len(x) > 1 else got == [2 * x[0]]


def test_a_default_none_over_numbers_is_zero_and_a_value_of_the_aggregate():
    """docs/interop.md: an Aggregate with default None gives 0 for numbers where nothing is selected; a Map
    over the Aggregate must be defined at that 0 (values 1 and 2 have no mean 0)."""
    agg = rasp.numerical(rasp.Aggregate(BEFORE, rasp.numerical(rasp.Map(lambda t: t + 1, rasp.tokens)), default=None))
    program = rasp.Map(lambda m: m * 10, agg)
    low = lower(program, [0, 1], 3)
    inputs = all_inputs([0, 1], 3)
    want = [[0] + [10 * sum(t + 1 for t in x[:i]) / i for i in range(1, len(x))] for x in inputs]
    for got, row in zip(run(low, inputs), want, strict=True):
        assert got == pytest.approx(row)
    assert any("default None is RASP's default 0" in n for n in lower(agg, [0, 1], 3).notes)


def test_a_default_none_over_bools_is_a_value_of_the_aggregate():
    """Bools that are all True: False (where nothing is selected) must still be in the Aggregate's values."""
    agg = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1),
                         rasp.Map(lambda t: True, rasp.tokens), default=None)
    low = lower(rasp.Map(lambda b: 10 + int(b), agg), [0, 1], 3)
    inputs = all_inputs([0, 1], 3)
    assert run(low, inputs) == [[10] + [11] * (len(x) - 1) for x in inputs]


def test_a_categorical_aggregate_of_strings_with_a_string_default():
    agg = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1), rasp.tokens, default="-")
    assert_as_tracr(rasp.Map(lambda t: t + "!", agg), ["a", "b"], 3)


def test_a_default_number_is_a_value_of_a_categorical_aggregate():
    agg = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1),
                         rasp.Map(lambda t: t + 1, rasp.tokens), default=0)
    assert_as_tracr(rasp.Map(lambda m: m * 10, agg), [0, 1], 3)


def test_a_default_of_another_kind_than_the_values_is_coded():
    agg = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1),
                         rasp.Map(lambda t: t + 1, rasp.tokens), default="none")
    low = assert_as_tracr(agg, [0, 1], 3)
    assert low.output in low.codes


def test_an_aggregate_of_values_held_as_codes_copies_them():
    """Tuples (coded): the selected one is copied; the default where nothing is selected."""
    previous = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1),
                              rasp.Map(lambda t: (t,), rasp.tokens), default=None)
    low = assert_as_tracr(previous, [0, 1], 3)
    assert sorted(low.codes[low.output], key=repr) == [(0,), (1,), None]


def test_a_default_none_over_bools_is_false_and_a_bool_default_is_kept():
    """docs/interop.md: an Aggregate with default None gives False for bools where nothing is selected."""
    bools = rasp.Map(lambda t: t == 1, rasp.tokens)
    previous = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1)
    low = lower(rasp.Aggregate(previous, bools, default=None), [0, 1], 3)
    inputs = all_inputs([0, 1], 3)
    for x, got in zip(inputs, run(low, inputs), strict=True):
        assert got[0] is False and all(same(g, t == 1) for g, t in zip(got[1:], x)), (x, got)
    assert any("None is False" in n for n in low.notes)
    assert_as_tracr(rasp.Aggregate(previous, bools, default=True), [0, 1], 3)


def test_a_function_that_tells_a_whole_mean_as_int_from_float_is_refused():
    """A whole mean is an int where one key is selected and a float where several are (Tracr's evaluator):
    a Map that tells them apart (str) would need two RASP values for one, so it is refused with the reason
    (it gave "1" where Tracr gives "1.0"); a Map that treats them alike is lowered, and so is one over it."""
    mean = rasp.numerical(rasp.Aggregate(PREFIX, rasp.numerical(rasp.Map(lambda t: t, rasp.tokens)), default=0))
    for f in (str, type, lambda x: isinstance(x, int)):
        with pytest.raises(RaspError, match=r"gives .* for 0 and .* for 0\.0, and its input is a numerical mean"):
            lower(rasp.Map(f, mean), [0, 1], 2)
    plus = rasp.numerical(rasp.Map(lambda x: x + 1, mean))
    assert_as_tracr(plus, [0, 1], 2)
    with pytest.raises(RaspError, match=r"gives '1' for 1 and '1.0' for 1.0, and its input is a numerical mean"):
        lower(rasp.Map(str, plus, simplify=False), [0, 1], 2)          # a map of the map, not fused into one
    for first in (True, False):                                         # a SequenceMap, with the mean on either side
        pair = (mean, rasp.tokens) if first else (rasp.tokens, mean)
        with pytest.raises(RaspError, match="numerical mean"):
            lower(rasp.SequenceMap(lambda a, b: f"{a}{b}", *pair), [0, 1], 2)
        assert_as_tracr(rasp.numerical(rasp.SequenceMap(lambda a, b: a + b, *pair)), [0, 1], 2)
    assert_as_tracr(rasp.Map(str, rasp.Map(lambda t: t, rasp.tokens)), [0, 1], 2)   # no mean: as it was


def test_max_len_one_is_a_length():
    assert_as_tracr(rasp.Map(lambda t: t + 1, rasp.tokens), [0, 1], 1)
    for bad in (0, True, 1.0):
        with pytest.raises(RaspError, match="max_len must be a positive int"):
            lower(rasp.tokens, [0, 1], bad)
