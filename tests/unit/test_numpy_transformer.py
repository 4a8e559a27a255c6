"""The numpy transformer (docs/weights.md layout), export round trips, and the soft-attention study."""
import io
import json

import numpy as np
import pytest

from rasplay import engine
from rasplay.engine.compiler.agreement import input_ids
from rasplay.engine.compiler.soft import exact_at
from rasplay.engine.numpy_transformer import NumpyTransformer, load_npz
from rasplay.engine.examples import find_example
from support.needs import need

WEIGHT_NAMES = {"tok_emb.weight", "pos_emb.weight", "unembed.weight", "unembed.bias"} | {
    f"layers.{i}.{n}" for i in range(2) for n in
    ("attn.q.weight", "attn.k.weight", "attn.v.weight", "attn.o.weight", "mlp.fc1.weight", "mlp.fc1.bias",
     "mlp.fc2.weight", "mlp.fc2.bias")}


@pytest.fixture(scope="module")
def reverse():
    return engine.compile(find_example("reverse").source, vocab="abc", max_len=5)


@pytest.fixture(scope="module")
def histogram():
    return engine.compile(find_example("histogram").source, vocab="abc", max_len=5)


def all_ids(model, n_max=4):
    ids, _ = input_ids(len(model.vocab), n_max)
    return [np.concatenate([np.zeros((len(v), 1), int), v + 1], axis=1) for v in ids.values()]


def test_config_and_weight_names_follow_the_shared_layout(reverse):
    c = reverse.config
    assert set(reverse.weights) == WEIGHT_NAMES
    assert c["vocab"] == ["<bos>", "a", "b", "c"] and c["bos_id"] == 0 and c["max_len"] == 6
    assert c["layer_norm"] is False and c["attn_scale"] == 100.0
    assert c["output"] == {"kind": "categorical", "classes": ["a", "b", "c"], "type": "str"}
    assert c["causal"] is False and c["prepend_bos"] is True and c["hard_tolerance"] == 1e-6
    d, H, dh, dm = c["d_model"], c["n_heads"], c["d_head"], c["d_mlp"]
    assert reverse.weights["layers.0.attn.q.weight"].shape == (H * dh, d)
    assert reverse.weights["layers.1.mlp.fc1.weight"].shape == (dm, d)
    assert reverse.weights["unembed.weight"].shape == (3, d)


def test_hard_and_sharp_softmax_agree(reverse):
    for ids in all_ids(reverse):
        hard = reverse.transformer.forward(ids, "hard").out
        soft = reverse.transformer.forward(ids, "soft", beta=200.0).out
        assert np.allclose(hard, soft, atol=1e-9)


def test_trace_has_every_heads_attention_and_every_stage(reverse):
    fw = reverse.forward(np.array([[0, 1, 2]]), trace=True)
    assert len(fw.attention) == 2 and fw.attention[0].shape == (1, reverse.config["n_heads"], 4, 4)
    assert np.allclose(fw.attention[1].sum(axis=-1), 1.0)
    assert [s for s, _ in fw.residual] == ["embedding", "layer 1 attention", "layer 1 MLP", "layer 2 attention",
                                           "layer 2 MLP"]


def test_bos_attends_to_itself_and_holds_the_defaults(reverse):
    fw = reverse.forward(np.array([[0, 1, 2, 0]]), trace=True)
    for att in fw.attention:
        assert np.allclose(att[0, :, 0, 0], 1.0)       # every head: BOS row on BOS only


def test_npz_round_trip_gives_identical_outputs(reverse, tmp_path):
    path = tmp_path / "reverse.npz"
    reverse.export_npz(path, beta=7.5)
    config, weights, meta = load_npz(path)
    assert config["attn_scale"] == 7.5 and meta["output"] == "reverse"
    assert [b["name"] for b in meta["layout"]] == [b["name"] for b in reverse.layout]
    loaded = engine.load_model(path)
    for ids in all_ids(reverse):
        for mode in ("hard", "soft"):
            assert np.array_equal(loaded.forward(ids, mode, 3.0).out, reverse.transformer.forward(ids, mode, 3.0).out)
    buf = io.BytesIO()
    reverse.export_npz(buf)
    assert load_npz(buf.getvalue())[0] == reverse.config


def test_state_dict_has_the_npz_tensors(reverse, tmp_path):
    torch = need("torch")
    sd = reverse.state_dict()
    _, weights, _ = load_npz(_saved(reverse, tmp_path))
    assert set(sd) == set(weights) == WEIGHT_NAMES
    for k, v in weights.items():
        assert isinstance(sd[k], torch.Tensor) and np.array_equal(sd[k].numpy(), v)


def _saved(model, tmp_path):
    path = tmp_path / "m.npz"
    model.export_npz(path)
    return path


def test_layer_norm_and_default_scale_for_other_weights():
    """Trained models in the same layout (layer norm, attn_scale null) run too."""
    rng = np.random.default_rng(0)
    c = {"vocab": ["a", "b"], "bos_id": None, "max_len": 4, "d_model": 8, "n_layers": 1, "n_heads": 2,
         "d_head": 4, "d_mlp": 16, "layer_norm": True, "attn_scale": None, "output": {"kind": "numerical"}}
    shapes = {"tok_emb.weight": (2, 8), "pos_emb.weight": (4, 8), "layers.0.attn.q.weight": (8, 8),
              "layers.0.attn.k.weight": (8, 8), "layers.0.attn.v.weight": (8, 8), "layers.0.attn.o.weight": (8, 8),
              "layers.0.mlp.fc1.weight": (16, 8), "layers.0.mlp.fc1.bias": (16,), "layers.0.mlp.fc2.weight": (8, 16),
              "layers.0.mlp.fc2.bias": (8,), "unembed.weight": (1, 8), "unembed.bias": (1,)}
    w = {k: rng.normal(size=s) for k, s in shapes.items()}
    for name in ("layers.0.ln1", "layers.0.ln2", "ln_f"):
        w[name + ".weight"], w[name + ".bias"] = np.ones(8), np.zeros(8)
    out = NumpyTransformer(c, w).forward(np.array([[0, 1, 1]]), "soft").out
    assert out.shape == (1, 3, 1) and np.isfinite(out).all()
    with pytest.raises(ValueError, match="unembed.weight has shape"):
        NumpyTransformer(c, dict(w, **{"unembed.weight": np.zeros((2, 8))}))


# ---------------------------------------------------------------- the soft-attention study

@pytest.mark.parametrize("name", ["reverse", "histogram"])
def test_soft_study_finds_the_smallest_exact_beta(name, request):
    model = request.getfixturevalue(name)
    study = model.soft_study(per_n=False)
    json.dumps(study)
    beta = study["min_beta"]
    assert beta is not None and 0.5 < beta < 50
    ids, exhaustive = input_ids(len(model.vocab), model.max_len)
    assert exhaustive and study["inputs"] == sum(len(v) for v in ids.values())
    assert exact_at(model, ids, beta)
    assert not exact_at(model, ids, beta * 0.9)
    curve = {round(c["beta"], 6): c for c in study["curve"]}
    assert curve[round(beta, 6)]["agreement"] == 1.0
    assert min(c["agreement"] for c in study["curve"]) < 1.0
    assert {g["n"] for g in study["grid"]} == set(range(1, 6))


def test_soft_study_classifies_heads(reverse, histogram):
    kinds = {h["selector"]: h["kind"] for h in reverse.soft_study(per_n=False)["heads"]}
    assert kinds == {"full_s": "uniform", "flip": "tieless"}
    heads = histogram.soft_study(per_n=False)["heads"]
    assert heads[0]["kind"] == "averaging" and heads[0]["margin"] == 1.0


def test_minimal_beta_grows_with_length(histogram):
    by_n = histogram.soft_study()["min_beta_by_n"]
    betas = [row["min_beta"] for row in by_n]
    assert betas[1] < betas[2] < betas[3] < betas[4]
