"""Random Tracr-API programs: rasplay's lowering gives the values of a direct reading of Tracr's
semantics (a small reference evaluator written here from Tracr's documentation) on every input."""
from __future__ import annotations

import itertools

from hypothesis import given, settings, strategies as st

import rasplay.tracr as tracr
from rasplay.interop import tracr_eval
from rasplay.tracr import rasp

VOCAB = [0, 1, 2]
MAX_LEN = 4
COMPARISONS = [rasp.Comparison.EQ, rasp.Comparison.LT, rasp.Comparison.LEQ, rasp.Comparison.GT,
               rasp.Comparison.GEQ, rasp.Comparison.NEQ, rasp.Comparison.TRUE]


def reference(expr, xs):
    """Tracr's evaluation rules, directly."""
    if isinstance(expr, rasp.TokensType):
        return list(xs)
    if isinstance(expr, rasp.IndicesType):
        return list(range(len(xs)))
    if isinstance(expr, rasp.Map):
        return [None if v is None else expr.f(v) for v in reference(expr.inner, xs)]
    if isinstance(expr, rasp.SequenceMap):
        return [None if a is None or b is None else expr.f(a, b)
                for a, b in zip(reference(expr.fst, xs), reference(expr.snd, xs))]
    if isinstance(expr, rasp.Select):
        keys, queries = reference(expr.keys, xs), reference(expr.queries, xs)
        return [[bool(expr.predicate(k, q)) for k in keys] for q in queries]
    if isinstance(expr, rasp.SelectorWidth):
        return [sum(row) for row in reference(expr.selector, xs)]
    if isinstance(expr, rasp.Aggregate):
        values = reference(expr.sop, xs)
        out = []
        for row in reference(expr.selector, xs):
            chosen = [v for s, v in zip(row, values) if s]
            out.append(expr.default if not chosen else chosen[0] if len(chosen) == 1 else sum(chosen) / len(chosen))
        return out
    raise TypeError(expr)


@st.composite
def programs(draw):
    pool = [rasp.tokens, rasp.indices]
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["map", "seqmap", "width", "mean", "copy"]))
        a, b = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        if kind == "map":
            m, c = draw(st.integers(1, 3)), draw(st.integers(0, 3))
            pool.append(rasp.Map(lambda x, m=m, c=c: (m * x + c) % 4, a))
        elif kind == "seqmap":
            op = draw(st.sampled_from([lambda x, y: x + y, lambda x, y: max(x, y), lambda x, y: (x * y) % 3]))
            pool.append(rasp.SequenceMap(op, a, b))
        elif kind == "width":
            pool.append(rasp.SelectorWidth(rasp.Select(a, b, draw(st.sampled_from(COMPARISONS)))))
        elif kind == "mean":   # a numerical mean of a 0/1 s-op, then a threshold on it
            ones = rasp.numerical(rasp.Map(lambda x: 1 if x > 0 else 0, a))
            mean = rasp.numerical(rasp.Aggregate(rasp.Select(a, b, draw(st.sampled_from(COMPARISONS))), ones,
                                                 default=0))
            pool.append(rasp.Map(lambda x: 1 if x > 0.5 else 0, mean))
        else:   # copy one key: select on indices with a key-to-query offset
            off = draw(st.integers(-1, 1))
            sel = rasp.Select(rasp.indices, rasp.indices, lambda k, q, off=off: k == q + off)
            pool.append(rasp.Aggregate(sel, a, default=0))
    return pool[-1]


@settings(max_examples=30, deadline=None)
@given(programs())
def test_random_programs_match_tracrs_semantics(program):
    inputs = [list(x) for n in range(1, MAX_LEN + 1) for x in itertools.product(VOCAB, repeat=n)]
    low = tracr.to_rasp(program, VOCAB, MAX_LEN)
    for start in range(0, len(inputs), 200):
        batch = inputs[start:start + 200]
        doc = tracr.evaluate(program, batch, vocab=VOCAB, max_len=MAX_LEN)
        result = doc["results"][low.output]
        for x, got, err in zip(batch, result["values"], result["errors"]):
            assert err is None, (x, err, low.source)
            want = reference(program, x)
            assert [float(v) for v in low.decode(low.output, got)] == [float(v) for v in want], (x, low.source)
            assert rasp.evaluate(program, x) == want and tracr_eval.evaluate_batch(program, [x])[0] == [want]


@st.composite
def programs_with_none(draw):
    """Programs where a value may be None (a categorical Aggregate that may select nothing), then numbers
    made of it and a numerical mean: the class of the silent wrong value (codes averaged as numbers)."""
    off = draw(st.integers(1, 2))
    letters = rasp.Map(lambda x: "abc"[x], rasp.tokens)       # strings: None stays None in the lowering
    prev = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q, off=off: k == q - off), letters)
    m, c = draw(st.integers(1, 3)), draw(st.integers(0, 2))
    nums = rasp.numerical(rasp.Map(lambda x, m=m, c=c: 1 if (m * "abc".index(x) + c) % 3 == 0 else 0, prev))
    lo = draw(st.integers(0, 2))
    window = rasp.Select(rasp.indices, rasp.indices, lambda k, q, lo=lo, off=off: off <= k <= q and k >= lo)
    mean = rasp.numerical(rasp.Aggregate(window, nums, default=0))
    if draw(st.booleans()):
        return mean
    return rasp.SequenceMap(lambda a, b: (a, b), mean, prev)


@settings(max_examples=25, deadline=None)
@given(programs_with_none())
def test_values_that_may_be_none_are_never_averaged_as_codes(program):
    """rasp.evaluate is Tracr's rules (the direct reading above, None propagating and a mean of None an error),
    and the compiled model agrees with them at every position where Tracr has a value."""
    inputs = [list(x) for n in range(1, MAX_LEN + 1) for x in itertools.product(VOCAB, repeat=n)]
    for x in inputs:
        try:
            want = reference_with_none(program, x)
        except (TypeError, ValueError):
            try:
                rasp.evaluate(program, x)
            except (TypeError, ValueError):
                continue
            raise AssertionError(("Tracr's rules raise, rasp.evaluate does not", x))
        assert rasp.evaluate(program, x) == want, x
        batch, errors = tracr_eval.evaluate_batch(program, [x])    # the numpy path (long inputs, check())
        assert errors == [None] and batch == [want], x
    model = tracr.compile(program, VOCAB, MAX_LEN)
    check = model.check()
    assert check["agree"] == check["inputs"], check["first_mismatch"]


def reference_with_none(expr, xs):
    """Tracr's evaluation rules with None: Map/SequenceMap keep None; a mean needs numbers."""
    if isinstance(expr, rasp.TokensType):
        return list(xs)
    if isinstance(expr, rasp.IndicesType):
        return list(range(len(xs)))
    if isinstance(expr, rasp.Map):
        return [None if v is None else expr.f(v) for v in reference_with_none(expr.inner, xs)]
    if isinstance(expr, rasp.SequenceMap):
        return [None if a is None or b is None else expr.f(a, b)
                for a, b in zip(reference_with_none(expr.fst, xs), reference_with_none(expr.snd, xs))]
    if isinstance(expr, rasp.Select):
        keys, queries = reference_with_none(expr.keys, xs), reference_with_none(expr.queries, xs)
        return [[bool(expr.predicate(k, q)) for k in keys] for q in queries]
    if isinstance(expr, rasp.Aggregate):
        values = reference_with_none(expr.sop, xs)
        out = []
        for row in reference_with_none(expr.selector, xs):
            chosen = [v for s, v in zip(row, values) if s]
            if len(chosen) > 1 and not all(isinstance(v, (int, float, bool)) for v in chosen):
                raise ValueError("a mean of non-numbers")
            out.append(expr.default if not chosen else chosen[0] if len(chosen) == 1 else sum(chosen) / len(chosen))
        return out
    raise TypeError(expr)
