"""interop/transformer_programs.py: programs written here in the format of TransformerPrograms' decompiled
Python, translated to RASP, evaluated, and compared with hand-computed values and with an independent
Python statement of the format's semantics (tests/support/transformer_program_text.py), on every input up
to a length."""
from __future__ import annotations

import itertools

import pytest

from rasplay import evaluate
from rasplay.engine.header import parse_header
from rasplay.interop import import_transformer_program
from rasplay.interop.transformer_programs import transformer_program_ir
from rasplay.interop.transformer_programs_parts import TransformerProgramError

from support.transformer_program_text import (HELPERS, classify, closest, csv_text, predicate_text, score_text,
                                                summed, table_text)

POSITIONS = list(range(6))
P00 = {0: 2, 1: 3, 2: 1, 4: 1, 5: 0}                    # query position 3 matches nothing
NP00 = {"a": "b", "b": "b", "</s>": "a"}                 # "<s>" matches nothing
MLP00 = {("a", "a"): 1, ("a", "b"): 2, ("b", "a"): 2, ("<s>", "a"): 0}, 3
NMLP00 = {(0,): 0, (1,): 1, (2,): 1}, 2
P10 = {0: "a", 1: "b", 2: "</s>", 3: "<s>"}              # query mlp_0_0 value -> key token
NP10 = {"a": 1, "b": 4, "<s>": 0}                        # query attn_0_0 (a token) -> key position
CLASSES = ["x", "y", "z"]


def weights():
    cat = {"tokens": {t: w for t, w in zip(["a", "b", "<s>", "</s>"], [(1, 0, 0), (0, 1, 0), (0, 0, 0), (0, 0, 1)])},
           "positions": {str(p): (0.25 * p, 0, 0.5) for p in POSITIONS},
           "attn_0_0_outputs": {t: w for t, w in zip(["a", "b", "<s>", "</s>"],
                                                    [(0.5, 0, 0), (0, 0.5, 0), (0, 0, 0.25), (0.25, 0, 0)])},
           "mlp_0_0_outputs": {str(v): (0.125 * v, 0.25, 0) for v in range(4)},
           "num_mlp_0_0_outputs": {str(v): (0, 0.125 * v, 0) for v in range(3)},
           "attn_1_0_outputs": {str(p): (0, 0, 0.125 * p) for p in POSITIONS}}
    num = {"ones": (0, 0.25, 0.5), "num_attn_0_0_outputs": (0.5, -0.25, 0), "num_attn_1_0_outputs": (-0.125, 0.25, 0)}
    return cat, num


FEATURES = [("tokens", "tokens", False), ("positions", "positions", False), ("attn_0_0_outputs", "attn_0_0_outputs", False),
            ("mlp_0_0_outputs", "mlp_0_0_outputs", False), ("num_mlp_0_0_outputs", "num_mlp_0_0_outputs", False),
            ("attn_1_0_outputs", "attn_1_0_outputs", False), ("ones", "ones", True),
            ("num_attn_0_0_outputs", "num_attn_0_0_outputs", True), ("num_attn_1_0_outputs", "num_attn_1_0_outputs", True)]


def program_a(causal: bool = False) -> str:
    cut = "[: i + 1]" if causal else ""
    score_vars = {"tokens": "token", "positions": "position", "ones": "one"}
    body = [
        "def run(tokens):\n",
        "    classifier_weights = pd.read_csv(\"weights.csv\", index_col=[0, 1], dtype={\"feature\": str})\n",
        "    positions = list(range(len(tokens)))\n",
        "    ones = [1 for _ in range(len(tokens))]\n",
        predicate_text("predicate_0_0", "position", "position", P00),
        "    attn_0_0_pattern = select_closest(positions, positions, predicate_0_0)\n",
        "    attn_0_0_outputs = aggregate(attn_0_0_pattern, tokens)\n",
        predicate_text("num_predicate_0_0", "token", "token", NP00),
        "    num_attn_0_0_pattern = select(tokens, tokens, num_predicate_0_0)\n",
        "    num_attn_0_0_outputs = aggregate_sum(num_attn_0_0_pattern, ones)\n",
        table_text("mlp_0_0", ["attn_0_0_output", "token"], *MLP00),
        "    mlp_0_0_outputs = [mlp_0_0(k0, k1) for k0, k1 in zip(attn_0_0_outputs, tokens)]\n",
        table_text("num_mlp_0_0", ["num_attn_0_0_output"], *NMLP00),
        "    num_mlp_0_0_outputs = [num_mlp_0_0(k0) for k0 in num_attn_0_0_outputs]\n",
        predicate_text("predicate_1_0", "mlp_0_0_output", "token", P10),
        "    attn_1_0_pattern = select_closest(tokens, mlp_0_0_outputs, predicate_1_0)\n",
        "    attn_1_0_outputs = aggregate(attn_1_0_pattern, positions)\n",
        predicate_text("num_predicate_1_0", "attn_0_0_output", "position", NP10),
        "    num_attn_1_0_pattern = select(positions, attn_0_0_outputs, num_predicate_1_0)\n",
        "    num_attn_1_0_outputs = aggregate_sum(num_attn_1_0_pattern, num_attn_0_0_outputs)\n",
    ]
    for var, feature, numerical in FEATURES:
        body.append(score_text(score_vars.get(var, var), feature, numerical).replace(
            f"for v in {score_vars.get(var, var)}]", f"for v in {var}]").replace(f".mul({score_vars.get(var, var)},", f".mul({var},"))
    names = ", ".join(f"{score_vars.get(v, v)}_scores" for v, _, _ in FEATURES)
    body += [f"    feature_logits = pd.concat([df.reset_index() for df in [{names}]])\n",
             "    logits = feature_logits.groupby(level=0).sum(numeric_only=True).to_numpy()\n",
             "    classes = classifier_weights.columns.to_numpy()\n",
             "    predictions = classes[logits.argmax(-1)]\n",
             "    if tokens[0] == \"<s>\":\n        predictions[0] = \"<s>\"\n",
             "    return predictions.tolist()\n"]
    return HELPERS.format(causal=cut) + "\n\n" + "".join(body)


def reference_a(tokens: list[str], causal: bool = False) -> dict:
    """Program A by the independent statement of the format."""
    pos = list(range(len(tokens)))
    a00 = [tokens[j] for j in closest(pos, pos, P00, causal)]
    n00 = summed(tokens, tokens, NP00, [1] * len(tokens), causal)
    m00 = [MLP00[0].get((a, t), MLP00[1]) for a, t in zip(a00, tokens)]
    nm00 = [NMLP00[0].get((v,), NMLP00[1]) for v in n00]
    a10 = [pos[j] for j in closest(tokens, m00, P10, causal)]
    n10 = summed(pos, a00, NP10, n00, causal)
    values = {"tokens": tokens, "positions": pos, "attn_0_0_outputs": a00, "num_attn_0_0_outputs": n00,
              "mlp_0_0_outputs": m00, "num_mlp_0_0_outputs": nm00, "attn_1_0_outputs": a10,
              "num_attn_1_0_outputs": n10, "ones": [1] * len(tokens)}
    cat, num = weights()
    values["prediction"] = classify(CLASSES, [(f, values[v], n) for v, f, n in FEATURES], cat, num)
    return values


def translated(causal: bool = False) -> str:
    cat, num = weights()
    return import_transformer_program(program_a(causal), csv_text(CLASSES, cat, num), title="A")


def every_input(max_len: int, eos: bool = True):
    for n in range(1, max_len + 1):
        for body in itertools.product("ab", repeat=n):
            yield ["<s>", *body] + (["</s>"] if eos else [])


def test_hand_computed_values_on_one_input():
    doc = evaluate(translated(), [["<s>", "a", "b", "b", "</s>"]])
    v = {k: r["values"][0] for k, r in doc["results"].items()}
    # attn_0_0: position q looks for {0: 2, 1: 3, 2: 1, 4: 1}; 3 matches nothing -> position 0 ("<s>")
    assert v["attn_0_0_outputs"] == ["b", "b", "a", "<s>", "a"]
    # num_attn_0_0: "a", "b" count the "b" keys (2); "</s>" counts the "a" keys (1); "<s>" nothing
    assert v["num_attn_0_0_outputs"] == [0, 2, 2, 2, 1]
    # mlp_0_0 over (attn_0_0, token): (b,<s>) -> 3, (b,a) -> 2, (a,b) -> 2, (<s>,b) -> 3, (a,</s>) -> 3
    assert v["mlp_0_0_outputs"] == [3, 2, 2, 3, 3]
    assert v["num_mlp_0_0_outputs"] == [0, 1, 1, 1, 1]
    # attn_1_0: mlp value 3 looks for "<s>" (position 0), 2 for "</s>" (position 4)
    assert v["attn_1_0_outputs"] == [0, 4, 4, 0, 0]


@pytest.mark.parametrize("causal", [False, True])
def test_every_input_to_length_4_agrees_with_the_independent_statement(causal):
    src = translated(causal)
    inputs = list(every_input(4))     # with <s> and </s>: 6 positions, the positions the weights know
    results = {}
    for start in range(0, len(inputs), 256):
        chunk = inputs[start:start + 256]
        doc = evaluate(src, chunk)
        for name in ("attn_0_0_outputs", "num_attn_0_0_outputs", "mlp_0_0_outputs", "attn_1_0_outputs",
                     "num_attn_1_0_outputs", "prediction"):
            assert all(e is None for e in doc["results"][name]["errors"])
            results.setdefault(name, []).extend(doc["results"][name]["values"])
    for i, tokens in enumerate(inputs):
        want = reference_a(tokens, causal)
        for name, got in results.items():
            assert got[i] == want[name], (tokens, name)


def test_the_header_and_the_layers():
    src = translated()
    h = parse_header(src)
    assert (h["learned"], h["bos"], h["eos"], h["output"]) == ("transformer-programs", "<s>", "</s>", "prediction")
    doc = evaluate(src, [["<s>", "a", "</s>"]])
    assert doc["analysis"]["layers"] == 2 and doc["analysis"]["heads_per_layer"] == [2, 2]


def test_the_ir_reads_causal_helpers_and_features():
    cat, num = weights()
    ir = transformer_program_ir(program_a(True), csv_text(CLASSES, cat, num))
    assert all(s.causal for s in ir.steps if hasattr(s, "causal"))
    assert ir.classifier.features[:2] == ("tokens", "positions") and set(ir.classifier.numerical) == {
        "ones", "num_attn_0_0_outputs", "num_attn_1_0_outputs"}
    assert ir.eos == "</s>" and ir.classifier.classes == ("x", "y", "z")


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("return k_position == 2", "return k_position != 2"), "line 3[0-9], column"),
    (lambda t: t.replace("    ones = [1", "    print(tokens)\n    ones = [1"), "does not read"),
    (lambda t: t.replace("aggregate(attn_0_0_pattern", "aggregate(num_attn_0_0_pattern"), "no pattern named"),
    (lambda t: t.replace("def run(tokens):", "def run(tokens, extra):"), "run should take"),
    (lambda t: t + "\ndef helper():\n    pass\n", "outside their format"),
    (lambda t: t.replace("num_attn_0_0_outputs = aggregate_sum(num_attn_0_0_pattern, ones)",
                         "num_attn_0_0_outputs = aggregate(num_attn_0_0_pattern, ones)"), "first selected value"),
    (lambda t: t + "\ndef broken(:\n", "not Python"),
])
def test_anything_outside_the_format_is_a_located_error(edit, message):
    cat, num = weights()
    with pytest.raises(TransformerProgramError, match=message):
        import_transformer_program(edit(program_a()), csv_text(CLASSES, cat, num))


def test_the_python_is_never_run(tmp_path):
    marker = tmp_path / "ran"
    text = program_a().replace("import numpy as np", f"import numpy as np\nopen({str(marker)!r}, 'w').close()")
    cat, num = weights()
    import_transformer_program(text, csv_text(CLASSES, cat, num))
    assert not marker.exists()


def test_a_weight_listed_twice_is_left_out_and_said():
    cat, num = weights()
    text = csv_text(CLASSES, cat, num) + "tokens,_,1.0,0.0,0.0\ntokens,_,0.0,1.0,0.0\n"
    src = import_transformer_program(program_a(), text)
    assert "('tokens', '_') 2 times: left out" in src
    assert evaluate(src, [["<s>", "a", "</s>"]])["results"]["prediction"]["errors"] == [None]


def test_a_missing_numerical_weight_is_refused():
    cat, num = weights()
    del num["ones"]
    with pytest.raises(TransformerProgramError, match="no row .'ones', '_'."):
        import_transformer_program(program_a(), csv_text(CLASSES, cat, num))
