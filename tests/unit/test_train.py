"""engine.train with torch: the docs/weights.md model, its state dict, saving and loading, attention (whole
training runs: tests/training/test_train_runs.py)."""
import re
from pathlib import Path

import numpy as np
import pytest

from support.needs import need
torch = need("torch")
from rasplay.engine.train import TrainError  # noqa: E402
from rasplay.engine.train.torch_transformer import ModelConfig, TrainableTransformer, load_model, model_from_state, save_model  # noqa: E402
from rasplay.engine.train.run import attention_maps, extract_attention  # noqa: E402

pytestmark = pytest.mark.train
ROOT = Path(__file__).resolve().parents[2]


def decode(data, split, row):
    n = split.lengths[row]
    return [data.vocab[i] for i in split.ids[row, data.offset:n]]


def random_model(layer_norm=True, **kw):
    torch.manual_seed(0)
    c = ModelConfig(vocab=list("abc") + ["<bos>"], max_len=7, d_model=12, n_layers=2, n_heads=3, d_head=5, d_mlp=9,
                    layer_norm=layer_norm, bos_id=3, output={"kind": "categorical", "classes": [1, 2, 3]}, **kw)
    return TrainableTransformer(c)


def test_attention_shapes_row_sums_and_padding():
    m = random_model()
    att = attention_maps(m, "abca")
    assert att.shape == (2, 3, 5, 5) and np.allclose(att.sum(-1), 1, atol=1e-5)
    ids = np.array([[3, 0, 1, 2, 0, 0], [3, 2, 1, 0, 1, 2]])
    padded = extract_attention(m, ids, np.array([4, 6]))
    assert padded.shape == (2, 2, 3, 6, 6)
    assert np.allclose(padded[0, :, :, :4, :4], attention_maps(m, "abc"), atol=1e-6)
    assert np.allclose(padded[0, :, :, :, 4:], 0)
    with pytest.raises(TrainError, match="not in the model's vocabulary"):
        attention_maps(m, "abz")


WEIGHTS_NAMES = re.findall(r"^(\S+)\s+\(", (ROOT / "docs" / "weights.md").read_text().split("## Parameters")[1]
                           .split("```")[1], re.M)


def test_state_dict_names_and_shapes_follow_docs_weights():
    m = random_model()
    names = set(m.state_dict())
    assert WEIGHTS_NAMES[:3] == ["tok_emb.weight", "pos_emb.weight", "layers.{i}.attn.q.weight"]
    expected = {n.replace("{i}", str(i)) for n in WEIGHTS_NAMES for i in range(2) if "ln1" not in n}
    expected |= {f"layers.{i}.{ln}.{w}" for i in range(2) for ln in ("ln1", "ln2") for w in ("weight", "bias")}
    expected |= {"ln_f.weight", "ln_f.bias"}
    assert names == expected
    sd = m.state_dict()
    assert tuple(sd["layers.0.attn.q.weight"].shape) == (15, 12) and tuple(sd["layers.1.attn.o.weight"].shape) == (12, 15)
    assert tuple(sd["layers.0.mlp.fc1.weight"].shape) == (9, 12) and tuple(sd["unembed.weight"].shape) == (3, 12)


@pytest.mark.parametrize("suffix", [".pt", ".npz"])
def test_save_and_load_round_trip(tmp_path, suffix):
    m = random_model()
    path = tmp_path / f"m{suffix}"
    save_model(m, path)
    m2 = load_model(path)
    assert m2.config == m.config
    ids = torch.tensor([[3, 0, 1, 2, 2]])
    assert torch.allclose(m(ids), m2(ids))


def test_layer_norm_free_model_loads_a_hand_made_state_dict():
    d, V, n, H, dh, dm = 4, 3, 3, 1, 2, 2
    cfg = {"vocab": ["a", "b", "BOS"], "bos_id": 2, "max_len": n, "d_model": d, "n_layers": 1, "n_heads": H,
           "d_head": dh, "d_mlp": dm, "layer_norm": False, "attn_scale": None, "output": {"kind": "numerical"}}
    eye = np.eye(d, dtype=np.float32)
    state = {"tok_emb.weight": eye[:V], "pos_emb.weight": np.zeros((n, d), np.float32),
             "layers.0.attn.q.weight": np.zeros((H * dh, d), np.float32),
             "layers.0.attn.k.weight": np.zeros((H * dh, d), np.float32),
             "layers.0.attn.v.weight": eye[:2], "layers.0.attn.o.weight": eye[:, :2] * 1.0,
             "layers.0.mlp.fc1.weight": np.zeros((dm, d), np.float32), "layers.0.mlp.fc1.bias": np.zeros(dm, np.float32),
             "layers.0.mlp.fc2.weight": np.zeros((d, dm), np.float32), "layers.0.mlp.fc2.bias": np.zeros(d, np.float32),
             "unembed.weight": np.array([[1, 0, 0, 0]], np.float32), "unembed.bias": np.zeros(1, np.float32)}
    m = model_from_state(cfg, state)
    assert not any("ln" in k for k in m.state_dict())
    # uniform attention (zero scores) averages dimension 0 ("is a") into every position: x0 + mean
    out = m(torch.tensor([[2, 0, 1]]))
    assert torch.allclose(out, torch.tensor([[1 / 3, 1 + 1 / 3, 1 / 3]]))
    hard = m(torch.tensor([[2, 0, 1]]), hard=True)
    assert torch.allclose(hard, out)
    with pytest.raises(TrainError, match=r"layers.0.mlp.fc1.bias has shape \(3,\), expected \(2,\)"):
        model_from_state(cfg, {**state, "layers.0.mlp.fc1.bias": np.zeros(3, np.float32)})
    with pytest.raises(TrainError, match="missing unembed.bias"):
        model_from_state(cfg, {k: v for k, v in state.items() if k != "unembed.bias"})
