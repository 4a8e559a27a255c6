"""Sizes against Tracr's figures taken with the same vocabulary (bench/tracr_figures.json)."""
import json
from pathlib import Path

import pytest

from rasplay import engine

ROOT = Path(__file__).resolve().parents[2]
FIGURES = json.loads((ROOT / "bench" / "tracr_figures.json").read_text())["rows"]
ROWS = [r for r in FIGURES if r["N"] == 5 and r["vocab"] != "123"]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['name']}@{r['N']}")
def test_at_or_below_tracr_with_the_same_vocabulary(row):
    source = (ROOT / "bench" / "tracr_programs" / f"{row['name']}.rasp").read_text()
    vocab = next(line.split(":", 1)[1].strip() for line in source.splitlines() if line.startswith("# vocab:"))
    assert vocab == row["vocab"]
    s = engine.compile(source, vocab=vocab, max_len=row["N"]).summary()
    assert s["layers"] <= row["layers"]
    if row["d_model"] is not None:
        assert s["residual_width"] <= row["d_model"]
    if row["nonzero"] is not None:
        assert s["nonzero_params"] <= row["nonzero"]
        assert s["params"] <= row["params"]
    assert 0 < s["nonzero_params"] <= s["params"]


def test_empty_mlp_rows_carry_no_weights():
    """Padding units of a layer whose MLP is narrower than d_mlp (or absent) are all zero."""
    source = (ROOT / "bench" / "tracr_programs" / "reverse.rasp").read_text()
    m = engine.compile(source, vocab="abc", max_len=10)
    widths = m.summary()["mlp_widths"]
    for i, width in enumerate(widths):
        for name in ("fc1.weight", "fc2.weight", "fc1.bias"):
            w = m.weights[f"layers.{i}.mlp.{name}"]
            pad = w[width:] if name != "fc2.weight" else w[:, width:]
            assert not pad.any(), (i, name)


def test_a_linear_numerical_output_needs_no_mlp():
    source = (ROOT / "bench" / "tracr_programs" / "pair_balance.rasp").read_text()
    m = engine.compile(source, vocab="()", max_len=6)
    assert m.summary()["mlp_widths"] == [0]
    r = m.check()
    assert r["exhaustive"] and r["agree"] == r["inputs"] > 0
