"""ONNX out: compiled models written as ONNX graphs (interop/onnx_graph.py) and run in the real onnxruntime
(the `onnx` extra) give the compiler's decoded outputs on every input up to max_len, in float64 and float32,
with average-hard and softmax attention; the CLI, the Python functions and the REST download."""
from __future__ import annotations

import io
import itertools
import json
import os
from pathlib import Path

import numpy as np
import pytest

import rasplay
from rasplay.cli.main import main as cli_main
from rasplay.engine import NumpyTransformer
from support.needs import need

if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    import onnx  # noqa: F401  (make test installs the onnx extra: in CI this test must run, never skip)
    import onnxruntime  # noqa: F401
else:
    onnx = need("onnx")
    need("onnxruntime")

from rasplay.interop import export_onnx, load_onnx  # noqa: E402
from rasplay.interop.onnx_graph import LENGTH_FREE_REASON, OnnxExportError, build_graph  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = {
    # name: (source, vocab, max_len, causal)
    "reverse": ((ROOT / "bench/tracr_programs/reverse.rasp").read_text(), "abc", 5, False),      # 2 layers
    "frac_prevs": ((ROOT / "bench/tracr_programs/frac_prevs.rasp").read_text(), "abc", 5, False),  # numerical
    "sort": ((ROOT / "bench/tracr_programs/sort.rasp").read_text(), "abc", 4, False),              # 2 heads
    "histogram_bos": ((ROOT / "examples/histogram_bos.rasp").read_text(), "abc", 4, False),
    "copy": ("copy = aggregate(select(indices, indices, ==), tokens);", "ab", 5, False),
    "frac_prevs_causal": ((ROOT / "bench/tracr_programs/frac_prevs.rasp").read_text(), "abc", 5, True),
}


def ids_of_length(vocab: str, n: int) -> np.ndarray:
    return np.array(list(itertools.product(range(len(vocab)), repeat=n)), dtype=np.int64)


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
    for n in range(1, max_len + 1):
        idx = ids_of_length(vocab, n)
        ids = np.concatenate([np.full((len(idx), 1), model.config["bos_id"]), idx + 1], axis=1)
        got = runner.forward(ids)[:, 1:]
        assert got.dtype == np.dtype(dtype)
        ours = model.forward_outputs(idx, mode=attention)
        if dtype == "float64":
            np.testing.assert_allclose(got, ours, rtol=0, atol=1e-9)
        assert model.decode_output(got.astype(np.float64)) == model.decode_output(model.forward_outputs(idx))
        want, ok = model.expected(idx)
        assert model.compare(got.astype(np.float64), want)[0][ok].all()
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
    rng = np.random.default_rng(0)
    d, H, dh, dm, L = 8, 2, 4, 6, 2
    config = {"vocab": ["<bos>", "a", "b"], "bos_id": 0, "max_len": 5, "d_model": d, "n_layers": L, "n_heads": H,
              "d_head": dh, "d_mlp": dm, "layer_norm": True, "attn_scale": None,
              "output": {"kind": "categorical", "classes": ["x", "y", "z"]}}
    w = {"tok_emb.weight": rng.normal(size=(3, d)), "pos_emb.weight": rng.normal(size=(5, d)),
         "unembed.weight": rng.normal(size=(3, d)), "unembed.bias": rng.normal(size=3),
         "ln_f.weight": rng.normal(size=d), "ln_f.bias": rng.normal(size=d)}
    for i in range(L):
        p = f"layers.{i}."
        for m in "qkv":
            w[p + f"attn.{m}.weight"] = rng.normal(size=(H * dh, d))
        w[p + "attn.o.weight"] = rng.normal(size=(d, H * dh))
        w.update({p + "mlp.fc1.weight": rng.normal(size=(dm, d)), p + "mlp.fc1.bias": rng.normal(size=dm),
                  p + "mlp.fc2.weight": rng.normal(size=(d, dm)), p + "mlp.fc2.bias": rng.normal(size=d)})
        for n in ("ln1", "ln2"):
            w[p + f"{n}.weight"], w[p + f"{n}.bias"] = rng.normal(size=d), rng.normal(size=d)
    ids = rng.integers(0, 3, size=(7, 5))
    ours = NumpyTransformer(config, w).forward(ids, mode="soft").out
    theirs = load_onnx(export_onnx((config, w), attention="soft")).forward(ids)
    np.testing.assert_allclose(theirs, ours, rtol=0, atol=1e-9)


def test_length_free_and_bad_options_are_refused():
    source = (ROOT / "tests/length_free_programs/dyck1.rasp").read_text()
    model = rasplay.compile(source, vocab="()", length_free=True)
    with pytest.raises(OnnxExportError, match="length-free model cannot be exported to ONNX"):
        export_onnx(model)
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
    lf = tmp_path / "dyck.rasp"
    lf.write_text((ROOT / "tests/length_free_programs/dyck1.rasp").read_text())
    assert cli_main(["compile", str(lf), "--vocab", "()", "--length-free", "--export", "onnx", str(out)]) == 2
    assert LENGTH_FREE_REASON in capsys.readouterr().err
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
    idx = ids_of_length(vocab, 3)
    got = runner.forward(np.concatenate([np.zeros((len(idx), 1), dtype=np.int64), idx + 1], axis=1))[:, 1:]
    assert model.decode_output(got.astype(np.float64)) == model.decode_output(model.forward_outputs(idx))


def test_api_refusals_are_json(api):
    lf = (ROOT / "tests/length_free_programs/dyck1.rasp").read_text()
    lf_id = api.post("/api/v1/compile", json={"source": lf, "vocab": "()", "length_free": True}).json()["id"]
    r = api.get(f"/api/v1/models/{lf_id}/model.onnx")
    assert r.status_code == 422 and "length-free model cannot be exported to ONNX" in r.json()["error"]["message"]
    source, vocab, _, _ = PROGRAMS["reverse"]
    model_id = api.post("/api/v1/compile", json={"source": source, "vocab": vocab, "max_len": 3}).json()["id"]
    r = api.get(f"/api/v1/models/{model_id}/model.onnx", params={"dtype": "float16"})
    assert r.status_code == 422 and r.json()["error"]["message"]
    assert api.get("/api/v1/models/mzzzzzzzzzzzzzzz/model.onnx").status_code == 404
    assert api.get("/api/v1/models/not-a-model/model.onnx").status_code == 422
