"""engine/learned: a LearnedProgram written as RASP by write_rasp, evaluated, against hand-computed values."""
import pytest

from rasplay import evaluate
from rasplay.engine.header import parse_header
from rasplay.engine.learned import (CATEGORICAL, NUMERICAL, Classifier, Head, LearnedProgram, LearnedProgramError,
                                    Table, Variable, write_rasp)
from rasplay.engine.learned.write_rasp import literal, no_match_value

C, N = CATEGORICAL, NUMERICAL


def small_program(**changes) -> LearnedProgram:
    variables = {
        "tokens": Variable("tokens", C, ("a", "b", "<s>")),
        "positions": Variable("positions", C, (0, 1, 2, 3)),
        "ones": Variable("ones", N),
        "attn_0_0": Variable("attn_0_0", C, ("a", "b", "<s>")),
        "num_attn_0_0": Variable("num_attn_0_0", N),
        "mlp_0_0": Variable("mlp_0_0", C, (0, 1, 2)),
        "num_mlp_0_0": Variable("num_mlp_0_0", C, (0, 1)),
    }
    steps = [
        Head("attn_0_0", "positions", "positions", "tokens", {0: 0, 1: 2, 2: 1, 3: 1}, closest=True),
        Head("num_attn_0_0", "tokens", "tokens", "ones", {"a": "a", "b": "a"}, closest=False, aggregate="sum"),
        Table("mlp_0_0", ("attn_0_0", "tokens"), {("a", "a"): 1, ("a", "b"): 1, ("b", "a"): 2}, 0),
        Table("num_mlp_0_0", ("num_attn_0_0",), {(0,): 1, (2,): 1}, 0),
    ]
    classifier = Classifier(
        ("x", "y"), ("tokens", "mlp_0_0", "num_attn_0_0", "num_mlp_0_0", "ones"),
        categorical={"tokens": {"a": (1.0, 0.0), "b": (0.0, 1.0), "<s>": (0.0, 0.0)},
                     "mlp_0_0": {0: (0.0, 0.5), 1: (0.5, 0.0), 2: (0.25, 0.0)},
                     "num_mlp_0_0": {0: (0.0, 0.0), 1: (0.0, 0.75)}},
        numerical={"num_attn_0_0": (0.5, -0.5), "ones": (0.0, 0.125)})
    fields = dict(variables=variables, steps=steps, classifier=classifier, bos="<s>", origin="rasplay",
                  title="Small")
    fields.update(changes)
    return LearnedProgram(**fields)


def run(source, tokens):
    doc = evaluate(source, [tokens])
    out = {}
    for name, res in doc["results"].items():
        assert res["errors"] == [None], (name, res["errors"])
        out[name] = res["values"][0]
    return out


def test_the_written_program_computes_each_step_by_hand():
    src = write_rasp(small_program())
    v = run(src, ["<s>", "a", "b", "a"])
    # attn_0_0: query position q looks for key position {0:0, 1:2, 2:1, 3:1}[q]; its token
    assert v["attn_0_0"] == ["<s>", "b", "a", "a"]
    # num_attn_0_0: queries "a"/"b" count the "a" keys; "<s>" matches nothing: 0
    assert v["num_attn_0_0"] == [0, 2, 2, 2]
    # mlp_0_0 over (attn_0_0, tokens): (<s>,<s>) -> 0, (b,a) -> 2, (a,b) -> 1, (a,a) -> 1
    assert v["mlp_0_0"] == [0, 2, 1, 1]
    assert v["num_mlp_0_0"] == [1, 1, 1, 1]
    # scores: x = tokens + mlp + 0.5 * num_attn; y = tokens + mlp - 0.5 * num_attn + 0.75 * num_mlp + 0.125
    assert v["score_0"] == [0.0, 1.0 + 0.25 + 1.0, 0.0 + 0.5 + 1.0, 1.0 + 0.5 + 1.0]
    assert v["score_1"] == [0.5 + 0.75 + 0.125, 0.0 - 1.0 + 0.875, 1.0 - 1.0 + 0.875, 0.0 - 1.0 + 0.875]
    assert v["prediction"] == ["y", "x", "x", "x"]


def test_the_header_names_origin_bos_eos_and_output():
    src = write_rasp(small_program(eos="</s>", origin="transformer-programs"))
    h = parse_header(src)
    assert h["learned"] == "transformer-programs" and h["bos"] == "<s>" and h["eos"] == "</s>"
    assert h["output"] == "prediction" and h["title"] == "Small"
    assert evaluate(src, [["<s>", "a", "</s>"]])["output"] == "prediction"


def test_a_tie_goes_to_the_first_class():
    p = small_program()
    cl = Classifier(("x", "y", "z"), ("tokens",),
                    categorical={"tokens": {"a": (1.0, 1.0, 0.5), "b": (0.0, 2.0, 2.0), "<s>": (0.0, 0.0, 0.0)}})
    src = write_rasp(small_program(classifier=cl, steps=p.steps))
    assert run(src, ["<s>", "a", "b"])["prediction"] == ["x", "x", "y"]


def test_a_causal_mean_head():
    p = small_program()
    head = Head("num_attn_0_0", "tokens", "tokens", "positions", {"a": "a", "b": "a"}, closest=False,
                aggregate="mean", causal=True)
    src = write_rasp(small_program(steps=[p.steps[0], head, *p.steps[2:]]))
    # the "a" keys at or before each query: positions 1 and 3; mean of their positions; <s> matches nothing: 0
    assert run(src, ["<s>", "a", "b", "a"])["num_attn_0_0"] == [0, 1, 1, 2]


def test_a_causal_closest_head_looks_back_only():
    p = small_program()
    head = Head("attn_0_0", "positions", "positions", "tokens", {0: 0, 1: 2, 2: 1, 3: 1}, closest=True, causal=True)
    src = write_rasp(small_program(steps=[head, *p.steps[1:]]))
    # query 1 looks for key 2, a later position: no match -> position 0
    assert run(src, ["<s>", "a", "b", "a"])["attn_0_0"] == ["<s>", "<s>", "a", "a"]


def test_a_missing_weight_is_an_error_for_that_input_not_a_value():
    cl = Classifier(("x", "y"), ("tokens",), categorical={"tokens": {"a": (1.0, 0.0), "<s>": (0.0, 0.0)}})
    src = write_rasp(small_program(classifier=cl))
    doc = evaluate(src, [["<s>", "b"], ["<s>", "a"]])
    assert doc["results"]["prediction"]["errors"][0] is not None
    assert doc["results"]["prediction"]["values"][1] == ["x", "x"]


def test_literals_and_the_no_match_value():
    assert literal("a") == '"a"' and literal('"') == "'\"'" and literal(3) == "3" and literal(0.5) == "0.5"
    with pytest.raises(LearnedProgramError):
        literal("'\"")
    with pytest.raises(LearnedProgramError):
        literal(float("nan"))
    p = small_program()
    assert no_match_value(p, "positions") == -1
    assert no_match_value(p, "tokens") == "<none>"
    p.variables["tokens"] = Variable("tokens", C, ("<none>", "a"))
    assert no_match_value(p, "tokens") == "<<none>>"


@pytest.mark.parametrize("change, message", [
    (lambda p: p.steps.reverse(), "before it is defined"),
    (lambda p: p.steps.append(p.steps[0]), "written twice"),
    (lambda p: p.variables.update(bad=Variable("1bad", C, (0,))), "not a RASP name"),
    (lambda p: p.steps.append(Table("t", ("a", "b", "c"), {}, 0)), "not declared"),
    (lambda p: p.classifier.features.__len__() and setattr(p, "output", "tokens"), "also a variable"),
])
def test_malformed_programs_say_why(change, message):
    p = small_program()
    change(p)
    with pytest.raises(LearnedProgramError, match=message):
        write_rasp(p)


def test_tokens_must_be_strings():
    p = small_program()
    p.variables["tokens"] = Variable("tokens", C, (1, 2))
    with pytest.raises(LearnedProgramError, match="strings"):
        write_rasp(p)
