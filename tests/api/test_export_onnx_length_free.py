"""ONNX out for length-free models (interop/onnx_length_free.py): the graph, run in the real onnxruntime, gives
the evaluator's values (the independent reference) and the numpy runner's outputs on every input up to
length 6 and on seeded inputs at 64 and 300 (past the 256 positions a position encoding is probed over), in
float64 and float32, for the length-free programs and the shipped examples in the fragment; causal models;
position encodings with a prefix and a period; refusals with the reason (soft attention, an encoding with
no closed form); the CLI, the Python functions and the REST download."""
from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

import rasplay
from rasplay.cli.main import main as cli_main
from rasplay.engine import check_dialect
from rasplay.engine.examples import load_examples
from support.exports import ROOT
from support.needs import need

if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    import onnx  # noqa: F401  (make test installs the onnx extra: in CI this test must run, never skip)
    import onnxruntime  # noqa: F401
else:
    onnx = need("onnx")
    need("onnxruntime")

from rasplay.interop import export_onnx, load_onnx  # noqa: E402
from rasplay.interop.onnx_graph import OnnxExportError  # noqa: E402
from rasplay.interop.onnx_length_free import SOFT_REASON  # noqa: E402

LF = ROOT / "tests" / "length_free_programs"
PROGRAMS = {"parity": "01", "majority": "01", "dyck1": "()", "a_before_b": "abc", "flipflop": "01ri",
            "induction": "abc"}
EXHAUSTIVE = range(1, 7)
SAMPLED = {64: 6, 300: 2}
ENCODINGS = ("shifted = indices - 3;\nphase = shifted % 3;\nlate = indices + 2 > 5;\n"
             "marked = late and phase == 1 and tokens == \"a\";")


def every_input(V: int, n: int) -> np.ndarray:
    codes = np.arange(V ** n, dtype=np.int64)
    return (codes[:, None] // (V ** np.arange(n - 1, -1, -1, dtype=np.int64))[None, :]) % V


def assert_onnx_agrees(model, dtype: str) -> int:
    """The graph's decoded outputs equal the numpy runner's and the evaluator's; returns inputs checked."""
    runner = load_onnx(export_onnx(model, dtype=dtype))
    rng = np.random.default_rng(7)
    V, checked = len(model.vocab), 0
    batches = [every_input(V, n) for n in EXHAUSTIVE] + [rng.integers(0, V, (k, n)) for n, k in SAMPLED.items()]
    for idx in batches:
        ids = np.concatenate([np.zeros((len(idx), 1), np.int64), idx + 1], axis=1)
        got = runner.forward(ids)
        assert got.dtype == np.dtype(dtype) and got.shape == (len(idx), idx.shape[1] + 1, len(model.classes))
        ours = model.forward(idx)[model.output_block]
        np.testing.assert_array_equal(got.argmax(-1)[:, 1:], ours.argmax(-1)[:, 1:])
        want, ok = model.expected(idx)
        assert ok.all() and model.matches(got.argmax(-1)[:, 1:], want).all()
        checked += len(idx)
    return checked


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_length_free_programs_agree_with_the_evaluator(name, dtype):
    model = rasplay.compile((LF / f"{name}.rasp").read_text(), vocab=PROGRAMS[name], length_free=True)
    V = len(PROGRAMS[name])
    assert assert_onnx_agrees(model, dtype) == sum(V ** n for n in EXHAUSTIVE) + sum(SAMPLED.values())


def test_shipped_examples_in_the_fragment_agree():
    checked = []
    for ex in load_examples():
        if not check_dialect(ex.source)["length_free"]:
            continue
        vocab = sorted(set(re.search(r"^# input: (.*)$", ex.source, re.M).group(1)))[:4]
        model = rasplay.compile(ex.source, vocab=vocab, length_free=True)
        for dtype in ("float64", "float32"):
            assert_onnx_agrees(model, dtype)
        checked.append(ex.id)
    assert {"dyck1", "majority", "induction", "first_last", "shift", "pattern"} <= set(checked)


def test_causal_model_and_position_encodings():
    dyck = rasplay.compile((LF / "dyck1.rasp").read_text(), vocab="()", length_free=True, causal=True)
    assert assert_onnx_agrees(dyck, "float64") > 0
    model = rasplay.compile(ENCODINGS, "marked", vocab="ab", length_free=True)
    assert sorted(f[:2] for f in model.built.periodic_form.values()) == [(3, 3), (4, 1)]
    assert_onnx_agrees(model, "float64")
    runner = load_onnx(export_onnx(model, dtype="float32"))
    text = "a" * 400
    assert runner.run([text]) == model.run([text])["outputs"]          # position 399: past the 256 probed


def test_graph_names_metadata_and_a_dynamic_sequence_axis():
    model = rasplay.compile((LF / "dyck1.rasp").read_text(), vocab="()", length_free=True)
    graph = onnx.load_from_string(export_onnx(model))
    onnx.checker.check_model(graph, full_check=True)
    assert [i.name for i in graph.graph.input] == ["input_ids"] and [o.name for o in graph.graph.output] == ["logits"]
    dims = [d.dim_param for d in graph.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq"] and {op.domain for op in graph.opset_import} == {""}
    props = {p.key: p.value for p in graph.metadata_props}
    assert json.loads(props["rasplay.vocab"]) == [model.bos, "(", ")"] and props["rasplay.bos_id"] == "0"
    assert props["rasplay.length_free"] == "true" and json.loads(props["rasplay.max_len"]) is None
    assert json.loads(props["rasplay.output"])["classes"] == model.classes
    runner = load_onnx(export_onnx(model))
    inputs = ["(()", "())(", "(" * 90 + ")" * 90]
    assert runner.run(inputs) == model.run(inputs)["outputs"]


def test_refusals_name_the_reason():
    model = rasplay.compile((LF / "parity.rasp").read_text(), vocab="01", length_free=True)
    with pytest.raises(OnnxExportError, match="hard attention only"):
        export_onnx(model, attention="soft")
    wide = rasplay.compile("big = indices % 5000;\nhit = big == 3;", "hit", vocab="01", length_free=True)
    with pytest.raises(OnnxExportError, match=r"position encoding 'big' \(indices % 5000\) has no closed form"):
        export_onnx(wide)
    with pytest.raises(OnnxExportError, match="exported from the compiled model itself"):
        export_onnx(({"length_free": True}, {}))


def test_cli_exports_a_length_free_model(tmp_path, capsys):
    prog = tmp_path / "dyck1.rasp"
    prog.write_text((LF / "dyck1.rasp").read_text())
    out = tmp_path / "dyck1.onnx"
    assert cli_main(["compile", str(prog), "--vocab", "()", "--length-free", "--export", "onnx", str(out),
                     "--onnx-dtype", "float32", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["export"] == {"format": "onnx", "file": str(out), "dtype": "float32", "attention": "hard"}
    model = rasplay.compile(prog.read_text(), vocab="()", length_free=True)
    assert load_onnx(out).run(["(())", ")("]) == model.run(["(())", ")("])["outputs"]
    assert cli_main(["compile", str(prog), "--vocab", "()", "--length-free", "--export", "onnx", str(out),
                     "--onnx-attention", "soft"]) == 2
    assert SOFT_REASON in capsys.readouterr().err
    assert cli_main(["compile", str(prog), "--vocab", "()", "--length-free", "--export", "transformer-lens",
                     str(tmp_path / "tl")]) == 2
    assert "a length-free model exports as --export onnx" in capsys.readouterr().err


def test_api_download_of_a_length_free_model(api):
    source = (LF / "majority.rasp").read_text()
    model_id = api.post("/api/v1/compile", json={"source": source, "vocab": "01", "length_free": True}).json()["id"]
    r = api.get(f"/api/v1/models/{model_id}/model.onnx", params={"dtype": "float32"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/octet-stream", r.text[:300]
    assert ".onnx" in r.headers["content-disposition"]
    model = rasplay.compile(source, vocab="01", length_free=True)
    inputs = ["0110", "1" * 70 + "0" * 69, "0"]
    assert load_onnx(r.content).run(inputs) == model.run(inputs)["outputs"]
    r = api.get(f"/api/v1/models/{model_id}/model.onnx", params={"attention": "soft"})
    assert r.status_code == 422 and r.json()["error"]["message"] == SOFT_REASON
