"""Tracr lowering cases that only a second branch reaches (issue 24's mutants): custom predicates
whose rows overlap (no class per key can say them: the overlap check), the max_len inferred from the
longest input (not the shortest), and the export's beta= override. Values are compared with plain
Python over the same predicate, never with our own lowered program."""
from __future__ import annotations

import itertools
import json

import pytest

import rasplay
import rasplay.tracr as tracr
from rasplay.interop.export_tl import export_transformer_lens, tl_config
from rasplay.tracr import rasp

VOCAB = [0, 1, 2, 3]


def all_inputs(vocab, max_len):
    return [list(x) for n in range(1, max_len + 1) for x in itertools.product(vocab, repeat=n)]


PREDICATES = {
    "neighbours": lambda k, q: abs(k - q) <= 1,                  # rows {0,1}, {0,1,2}, {1,2,3}, {2,3}: overlap
    "divides": lambda k, q: q % k == 0 if k else q == 0,         # overlapping, non-nested rows
    "same_parity": lambda k, q: k % 2 == q % 2,                  # disjoint rows: one class per key
    "nested": lambda k, q: k <= q % 3,                           # rows {0}, {0,1}, {0,1,2}: nested
}


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_custom_predicate_widths_and_means_equal_python(name):
    pred = PREDICATES[name]
    sel = rasp.Select(rasp.tokens, rasp.tokens, pred)
    width = rasp.SelectorWidth(sel)
    inputs = all_inputs(VOCAB, 3)
    doc = tracr.evaluate(width, inputs, vocab=VOCAB, max_len=3)
    got = doc["results"][doc["lowered"]["output"]]["values"]
    assert got == [[sum(bool(pred(k, q)) for k in x) for q in x] for x in inputs]
    assert doc["tracr"]["differ"] == []
    mean = rasp.numerical(rasp.Aggregate(sel, rasp.numerical(rasp.Map(lambda t: t, rasp.tokens)), default=0))
    doc = tracr.evaluate(mean, inputs, vocab=VOCAB, max_len=3)
    got = doc["results"][doc["lowered"]["output"]]["values"]
    for x, row in zip(inputs, got):
        for q, v in zip(x, row):
            picked = [k for k in x if pred(k, q)]
            assert v == pytest.approx(sum(picked) / len(picked) if picked else 0), (x, q)


def test_overlapping_rows_are_not_lowered_as_classes():
    low = tracr.to_rasp(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, PREDICATES["neighbours"])),
                        VOCAB, 4)
    assert " or " in low.source
    disjoint = tracr.to_rasp(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens,
                                                            PREDICATES["same_parity"])), VOCAB, 4)
    assert " or " not in disjoint.source and "==" in disjoint.source


def test_overlapping_rows_compile_to_an_exact_model():
    width = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, PREDICATES["divides"]))
    model = tracr.compile(width, VOCAB, 3)
    r = model.check()
    assert r["exhaustive"] and r["agree"] == r["inputs"] == 4 + 16 + 64


def test_max_len_defaults_to_the_longest_input():
    length = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE))
    inputs = ["abc", "a", "abcde", "ab"]
    doc = tracr.evaluate(length, inputs)
    assert "max_len 5." in doc["lowered"]["source"].splitlines()[0]
    assert doc["results"][doc["lowered"]["output"]]["values"] == [[len(x)] * len(x) for x in inputs]
    assert doc["tracr"]["differ"] == []
    indices = tracr.evaluate(rasp.Map(lambda i: i + 1, rasp.indices), [[1, 2, 3, 4], [5]])
    assert "max_len 4." in indices["lowered"]["source"].splitlines()[0]
    assert indices["results"][indices["lowered"]["output"]]["values"] == [[1, 2, 3, 4], [1]]


def test_the_export_beta_overrides_the_models_attention_scale(tmp_path):
    model = rasplay.compile("r = aggregate(select(indices, length - indices - 1, ==), tokens);", vocab="ab",
                            max_len=3)
    default = model.config["attn_scale"]
    assert tl_config(model.config)["attn_scale"] == pytest.approx(1 / default)
    assert tl_config(model.config, beta=7)["attn_scale"] == pytest.approx(1 / 7)
    assert default != 7
    doc = export_transformer_lens(model, tmp_path / "b7", beta=7, torch_file=False)
    assert doc["transformer_bridge_config"]["attn_scale"] == pytest.approx(1 / 7)
    written = json.loads((tmp_path / "b7" / "config.json").read_text())
    assert written["transformer_bridge_config"]["attn_scale"] == pytest.approx(1 / 7)
    plain = export_transformer_lens(model, tmp_path / "plain", torch_file=False)
    assert plain["transformer_bridge_config"]["attn_scale"] == pytest.approx(1 / default)


def test_nested_rows_are_two_conditions_not_one_per_row():
    low = tracr.to_rasp(rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, PREDICATES["nested"])), VOCAB, 4)
    assert " or " not in low.source
