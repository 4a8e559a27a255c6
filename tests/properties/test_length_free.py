"""Length-free models agree with the evaluator (the independent reference) on every input up to length 8 and
on seeded samples at 16, 64, 256, 1,024 and 4,096, plus hand-picked hard inputs at long lengths; the weights
do not depend on the length (one model runs every length); exports; soft attention by length."""
import io
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from rasplay.engine import RaspError, check_dialect, compile
from rasplay.engine.examples import load_examples
from rasplay.engine.compiler.length_free import length_study
from support.needs import need

PROGRAMS = Path(__file__).resolve().parents[1] / "length_free_programs"
EXHAUSTIVE = (1, 2, 3, 4, 5, 6, 7, 8)
SAMPLED = {16: 16, 64: 8, 256: 4, 1024: 2, 4096: 2}     # length -> seeded inputs (numpy-vectorised; CI-sized)

CASES = {   # program -> (vocab, hand-picked long inputs)
    "parity": ("01", ["1" * 4096, "1" * 4095 + "0", "0" * 4096, "0" * 4095 + "1"]),
    "majority": ("01", ["01" * 2048, "1" + "01" * 2047 + "0", "0" + "01" * 2047 + "1", "1" * 2049 + "0" * 2047]),
    "dyck1": ("()", ["(" * 2048 + ")" * 2048, "()" * 2048, "(" * 2048 + ")" * 2049, ")" + "()" * 2047 + "("]),
    "a_before_b": ("abc", ["a" + "c" * 4095, "b" * 4095 + "a", "a" + "c" * 4094 + "b", "c" * 4096]),
    "flipflop": ("01ri", ["1" + "i" * 4094 + "r", "r" + "1" * 4095, "0" + "ri" * 2047 + "1", "i" * 4096]),
    "induction": ("abc", ["ab" + "c" * 4094, "abc" * 1365 + "a", "a" * 4096, "ab" * 2048]),
}


def model_of(name, **kw):
    vocab, _ = CASES[name]
    return compile((PROGRAMS / f"{name}.rasp").read_text(), vocab=vocab, length_free=True, **kw)


def assert_agrees(model, lengths, per_length=None, seed=0):
    doc = model.check(lengths=lengths, per_length=per_length, seed=seed)
    bad = [p for p in doc["per_length"] if p["agree"] != p["inputs"] or p["inputs"] == 0]
    assert not bad, bad
    return doc


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_input_up_to_length_8(name):
    doc = assert_agrees(model_of(name), EXHAUSTIVE)
    assert all(p["exhaustive"] for p in doc["per_length"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_seeded_samples_up_to_4096_and_hard_inputs(name):
    model = model_of(name)
    assert_agrees(model, sorted(SAMPLED), SAMPLED, seed=25)
    run = model.run(CASES[name][1])
    assert run["agree"] == [True] * len(CASES[name][1]), run["agree"]


def test_every_shipped_example_in_the_fragment_compiles_and_agrees():
    checked = []
    for ex in load_examples():
        doc = check_dialect(ex.source)
        if not doc["length_free"]:
            continue
        vocab = sorted(set(re.search(r"^# input: (.*)$", ex.source, re.M).group(1)))[:4]
        model = compile(ex.source, vocab=vocab, length_free=True)
        assert_agrees(model, EXHAUSTIVE + (256, 4096), {256: 4, 4096: 1})
        checked.append(ex.id)
    assert {"dyck1", "majority", "induction", "first_last", "shift", "pattern"} <= set(checked)


def test_causal_models_agree_on_every_prefix():
    model = model_of("dyck1", causal=True)
    idx = np.random.default_rng(1).integers(0, 2, size=(8, 40))
    got = model.output_indices(idx)
    for p in range(1, 41):      # position p - 1 on the prefix of length p: the evaluator on that prefix
        want, ok = model.expected(idx[:, :p])
        assert ok.all() and model.matches(got[:, p - 1:p], want[:, p - 1:p]).all()
    assert all(op.mask == "past" for op in model.ops if hasattr(op, "mask"))


def test_weights_do_not_depend_on_the_length():
    model = model_of("induction")
    before = {k: v.copy() for k, v in model.weights().items()}
    model.run(["ab" * 300, "abc"])
    after = model.weights()
    assert before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)
    buf = io.BytesIO()
    model.export_npz(buf)
    z = np.load(io.BytesIO(buf.getvalue()))
    assert "config" in z and any(k.endswith("attn.qk.weight") for k in z.files)


def test_wrong_construction_is_caught_by_the_check():
    """The self-check compares with the evaluator: a rightmost head turned leftmost disagrees."""
    model = model_of("a_before_b")
    head = next(op for op in model.ops if type(op).__name__ == "LookupHead")
    head.W[-1, -2] = 0.5                  # 1/(p+1) with the opposite sign: leftmost
    doc = model.check(lengths=(4, 64), per_length={64: 8})
    assert not doc["all_agree"]


def test_soft_attention_fixed_temperature_breaks_scaled_holds():
    model = model_of("a_before_b")
    study = length_study(model, lengths=(8, 64, 256), fixed_beta=20.0, samples=8)
    assert study["hard"] == [1.0, 1.0, 1.0] and study["scaled"] == [1.0, 1.0, 1.0]
    assert study["fixed"][-1] < 1.0


def test_torch_state_dict_export():
    torch = need("torch")
    sd = model_of("parity").state_dict()
    assert all(isinstance(v, torch.Tensor) for v in sd.values()) and any("qk" in k for k in sd)


RANGES = ["<=", "<", ">=", ">", None]


@st.composite
def counting_programs(draw):
    """A comparison of a linear form of counts (or of means of one selector) with a constant, over one range."""
    rng = draw(st.sampled_from(RANGES))
    pos = f" and select(indices, indices, {rng})" if rng else ""
    tok = st.sampled_from("abc")
    lines, names = [], []
    if draw(st.booleans()):           # counts: integer coefficients
        for i in range(draw(st.integers(1, 3))):
            t = draw(tok)
            pred = draw(st.sampled_from([f'select(tokens, "{t}", ==)', f'select(tokens, "{t}", !=)',
                                         "select(tokens, tokens, ==)", "select(tokens, tokens, <)"]))
            lines.append(f"c{i} = selector_width({pred}{pos});")
            names.append((f"c{i}", draw(st.integers(-3, 3))))
        form = " + ".join(f"{k} * {name}" for name, k in names)
        const = draw(st.integers(-4, 4))
        lhs = f"{form} + {const}"
    else:                              # means over one selector: a mean against a constant, or a difference
        sel = f"select(tokens, \"{draw(tok)}\", !=){pos}" if draw(st.booleans()) else (pos[5:] or "select(1, 1, ==)")
        lines.append(f"s = {sel};")
        a, b = draw(tok), draw(tok)
        if draw(st.booleans()):
            lhs = f"aggregate(s, indicator(tokens == \"{a}\"), 0) - aggregate(s, indicator(tokens == \"{b}\"), 0)"
        else:
            lhs = f"aggregate(s, indicator(tokens == \"{a}\"), 0) * {draw(st.sampled_from([1, 2, 3, 4]))}"
        const = draw(st.sampled_from([0, 0.25, 0.5, 1, 1.5]))
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
    lines.append(f"verdict = ({lhs}) {op} {const};")
    return "\n".join(lines)


TIE = ('p = select(indices, indices, <=);\n'
       'verdict = aggregate(p, indicator(tokens == "a")) * 3 - aggregate(p, indicator(tokens == "b")) >= 0.25;')


@settings(max_examples=40, deadline=None)
@given(counting_programs())
@example(TIE)        # 3 * (3/28) - 2/28 is 0.25 exactly but not in floats: must be refused, not miscompiled
def test_property_counting_comparisons_agree_with_the_evaluator(source):
    """Either refused (the evaluator's float rounding could decide a tie) or equal to the evaluator."""
    try:
        model = compile(source, vocab="abc", length_free=True)
    except RaspError as e:
        assert "rounding" in e.message and e.span is not None
        return
    assert_agrees(model, (1, 2, 3, 4, 5, 6, 28, 37), {28: 32, 37: 16})


def test_float_ties_are_refused_not_miscompiled():
    """At n = 28, a = 3 and b = 2 make 3 * (3/28) - 2/28 exactly 0.25, which the evaluator's floats miss."""
    with pytest.raises(RaspError) as e:
        compile(TIE, vocab="abc", length_free=True)
    assert "rounding" in e.value.message and e.value.span.line == 2
    fine = TIE.replace("* 3 - ", "- ").replace(">= 0.25", "> 0")      # the sign of a difference is exact
    model = compile(fine, vocab="abc", length_free=True)
    assert model.run(["aaabb" + "c" * 23])["agree"] == [True]


EXAMPLE_SOURCES = [p.read_text() for p in sorted(PROGRAMS.glob("*.rasp"))] + \
    [ex.source for ex in load_examples()]
SNIPPETS = [" and select(indices, indices, <)", " + 1", " - 1", " * 2", " > 0", " == 1", ' == "a"', " <= ",
            "not ", "shift(tokens, 1, \"a\")", "selector_width(select(tokens, \"a\", ==))", " or ", "(", ")"]


@st.composite
def edited_programs(draw):
    """Small random edits of the length-free programs and the examples."""
    text = draw(st.sampled_from(EXAMPLE_SOURCES))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text) - 1))
        j = draw(st.integers(i, min(len(text), i + 12)))
        text = text[:i] + draw(st.sampled_from(SNIPPETS + [""])) + text[j:]
    return text


@settings(max_examples=60, deadline=None)
@given(edited_programs())
def test_property_edited_programs_compile_exactly_or_are_refused(source):
    """The dialect check never raises on a program that interprets; a program it calls length-free either
    compiles to a model that agrees with the evaluator or is refused with a located reason."""
    try:
        doc = check_dialect(source)
    except RaspError:
        return                              # no s-op, or the program has errors
    if not doc["length_free"]:
        assert any(f["reason"] for f in doc["fragments"])
        return
    try:
        model = compile(source, vocab="ab(", length_free=True)
    except RaspError as e:
        assert e.kind in ("compile", "type", "value") and e.message
        return
    assert_agrees(model, (1, 2, 3, 4, 21), {21: 8})


def test_huge_coefficients_are_refused():
    with pytest.raises(RaspError) as e:
        compile('c = selector_width(select(tokens, "a", ==));\nv = c * 3000000 > 7;', vocab="ab", length_free=True)
    assert e.value.span.line == 2 and "float64 rounding" in e.value.message
