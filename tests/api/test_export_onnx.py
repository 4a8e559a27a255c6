"""ONNX out: compiled models written as ONNX graphs (interop/onnx_graph.py) and run in the real onnxruntime
(the `onnx` extra) give the compiler's decoded outputs on every input up to max_len, in float64 and float32,
with average-hard and softmax attention; the CLI, the Python functions and the REST download."""
from __future__ import annotations

import io
import json
import os

import numpy as np
import pytest

import rasplay
from rasplay.cli.main import main as cli_main
from rasplay.engine import NumpyTransformer
from support.exports import (PROGRAMS as EXPORTED, assert_decodes_as_compiled, every_input,
                             inputs_of_length, layer_norm_model, with_bos)
from support.needs import need

if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    import onnx  # noqa: F401  (make test installs the onnx extra: in CI this test must run, never skip)
    import onnxruntime  # noqa: F401
else:
    onnx = need("onnx")
    need("onnxruntime")

from rasplay.interop import export_onnx, load_onnx  # noqa: E402
from rasplay.interop.onnx_graph import OnnxExportError, build_graph  # noqa: E402

PROGRAMS = {
    # name: (source, vocab, max_len, causal): the export tests' programs (support.exports), and one causal
    **{name: (*program, False) for name, program in EXPORTED.items()},
    "frac_prevs_causal": (*EXPORTED["frac_prevs"], True),
}


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def compiled(request):
    source, vocab, max_len, causal = PROGRAMS[request.param]
    return request.param, rasplay.compile(source, vocab=vocab, max_len=max_len, causal=causal)


@pytest.mark.parametrize("attention", ["hard", "soft"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_every_input_decodes_as_the_compiled_model(compiled, dtype, attention):
    name, model = compiled
    _, vocab, max_len, _ = PROGRAMS[name]
    runner = load_onnx(export_onnx(model, None, dtype=dtype, attention=attention))
    checked = 0
    for idx in every_input(len(vocab), max_len):
        got = runner.forward(with_bos(idx, model.config["bos_id"]))[:, 1:]
        assert got.dtype == np.dtype(dtype)
        ours = model.forward_outputs(idx, mode=attention)
        if dtype == "float64":
            np.testing.assert_allclose(got, ours, rtol=0, atol=1e-9)
        assert_decodes_as_compiled(model, got.astype(np.float64), idx)
        checked += len(idx)
    assert checked == sum(len(vocab) ** n for n in range(1, max_len + 1))


def test_graph_names_and_metadata(compiled):
    name, model = compiled
    graph = onnx.load_from_string(export_onnx(model))
    onnx.checker.check_model(graph, full_check=True)
    assert [i.name for i in graph.graph.input] == ["input_ids"]
    numerical = model.config["output"]["kind"] == "numerical"
    assert [o.name for o in graph.graph.output] == ["values" if numerical else "logits"]
    assert {op.domain for op in graph.opset_import} == {""}              # standard operators only
    props = {p.key: p.value for p in graph.metadata_props}
    assert json.loads(props["rasplay.vocab"]) == model.config["vocab"]
    assert json.loads(props["rasplay.output"]) == model.config["output"]
    assert props["rasplay.attention"] == "hard" and props["rasplay.dtype"] == "float64"


def test_runner_decodes_strings_and_refuses_bad_input(tmp_path):
    source, vocab, max_len, _ = PROGRAMS["reverse"]
    path = tmp_path / "reverse.onnx"
    export_onnx(rasplay.compile(source, vocab=vocab, max_len=max_len), path)
    runner = load_onnx(path)
    assert runner.run(["abc", "cab"]) == [list("cba"), list("bac")]
    with pytest.raises(ValueError, match="not in the vocabulary"):
        runner.run(["az"])
    assert runner.run(["ab", "a", "bca"]) == [list("ba"), ["a"], list("acb")]   # one batch per length
    with pytest.raises(ValueError, match="one length"):
        runner.ids(["ab", "a"])
    with pytest.raises(Exception):          # longer than max_len: the position embeddings end (no value)
        runner.forward(np.zeros((1, max_len + 2), dtype=np.int64))


def test_layer_norm_model_matches_the_numpy_runner():
    """Weights in our layout with layer norm and softmax at 1/sqrt(d_head) (as trained models are)."""
    config, w, ids = layer_norm_model()
    ours = NumpyTransformer(config, w).forward(ids, mode="soft").out
    theirs = load_onnx(export_onnx((config, w), attention="soft")).forward(ids)
    np.testing.assert_allclose(theirs, ours, rtol=0, atol=1e-9)


def test_bad_options_are_refused():
    reverse = rasplay.compile(PROGRAMS["reverse"][0], vocab="abc", max_len=3)
    with pytest.raises(OnnxExportError, match="dtype is one of"):
        build_graph(reverse.config, reverse.weights, dtype="float16")


def test_cli_export_onnx(tmp_path, capsys):
    prog = tmp_path / "reverse.rasp"
    prog.write_text(PROGRAMS["reverse"][0])
    out = tmp_path / "reverse.onnx"
    assert cli_main(["compile", str(prog), "--vocab", "abc", "--max-len", "3", "--export", "onnx", str(out),
                     "--onnx-dtype", "float32", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["export"] == {"format": "onnx", "file": str(out), "dtype": "float32", "attention": "hard"}
    runner = load_onnx(out)
    assert runner.run(["abc", "cab", "b"]) == [list("cba"), list("bac"), ["b"]]
    assert runner.forward(runner.ids(["ab"])).dtype == np.float32
    assert cli_main(["compile", str(prog), "--vocab", "abc", "--max-len", "3", "--export", "keras", str(out)]) == 2
    assert "unknown export format 'keras'; the formats are transformer-lens, onnx" in capsys.readouterr().err


def test_api_download_runs_in_onnxruntime(api):
    source, vocab, max_len, _ = PROGRAMS["frac_prevs"]
    model_id = api.post("/api/v1/compile", json={"source": source, "vocab": vocab, "max_len": max_len}).json()["id"]
    r = api.get(f"/api/v1/models/{model_id}/model.onnx", params={"dtype": "float32", "attention": "soft"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/octet-stream", r.text[:300]
    assert r.headers["content-disposition"].startswith("attachment") and ".onnx" in r.headers["content-disposition"]
    runner = load_onnx(io.BytesIO(r.content).getvalue())
    graph = onnx.load_from_string(r.content)
    assert {p.key: p.value for p in graph.metadata_props}["rasplay.attention"] == "soft"
    model = rasplay.compile(source, vocab=vocab, max_len=max_len)
    idx = inputs_of_length(len(vocab), 3)
    got = runner.forward(with_bos(idx))[:, 1:]
    assert model.decode_output(got.astype(np.float64)) == model.decode_output(model.forward_outputs(idx))


def test_api_refusals_are_json(api):
    source, vocab, _, _ = PROGRAMS["reverse"]
    model_id = api.post("/api/v1/compile", json={"source": source, "vocab": vocab, "max_len": 3}).json()["id"]
    r = api.get(f"/api/v1/models/{model_id}/model.onnx", params={"dtype": "float16"})
    assert r.status_code == 422 and r.json()["error"]["message"]
    assert api.get("/api/v1/models/mzzzzzzzzzzzzzzz/model.onnx").status_code == 404
    assert api.get("/api/v1/models/not-a-model/model.onnx").status_code == 422
