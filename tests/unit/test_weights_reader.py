"""An export stands alone: a tiny numpy reader written from docs/weights.md only (no rasplay import
inside the reader) reproduces every output of compiled models from the .npz file alone."""
import io
import itertools
import json

import numpy as np
import pytest

from rasplay import engine
from support.needs import need


# ---------------------------------------------------------------- the reader (docs/weights.md, nothing else)

def read_npz(data: bytes):
    z = np.load(io.BytesIO(data), allow_pickle=False)
    config = json.loads(str(z["config"]))
    weights = {k: z[k] for k in z.files if k not in ("config", "rasplay")}
    return config, weights


def forward(config, w, tokens, mode="hard", beta=None):
    ids = [config["vocab"].index(t) for t in tokens]
    if config.get("prepend_bos"):
        ids = [config["bos_id"]] + ids
    n = len(ids)
    x = w["tok_emb.weight"][ids] + w["pos_emb.weight"][:n]
    H, dh = config["n_heads"], config["d_head"]
    tol = config.get("hard_tolerance", 1e-6)
    for i in range(config["n_layers"]):
        p = f"layers.{i}."
        q, k, v = (x @ w[p + f"attn.{m}.weight"].T for m in "qkv")
        heads = []
        for h in range(H):
            cols = slice(h * dh, (h + 1) * dh)
            S = q[:, cols] @ k[:, cols].T
            if config.get("causal"):
                S = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, S)
            if mode == "hard":
                top = S >= S.max(axis=1, keepdims=True) - tol
                A = top / top.sum(axis=1, keepdims=True)
            else:
                s = (beta if beta is not None else config["attn_scale"]) * S
                e = np.exp(s - s.max(axis=1, keepdims=True))
                A = e / e.sum(axis=1, keepdims=True)
            heads.append(A @ v[:, cols])
        x = x + np.concatenate(heads, axis=1) @ w[p + "attn.o.weight"].T
        hidden = np.maximum(x @ w[p + "mlp.fc1.weight"].T + w[p + "mlp.fc1.bias"], 0)
        x = x + hidden @ w[p + "mlp.fc2.weight"].T + w[p + "mlp.fc2.bias"]
    out = x @ w["unembed.weight"].T + w["unembed.bias"]
    return out[1:] if config.get("prepend_bos") else out


def decode(config, out):
    o = config["output"]
    if o["kind"] == "categorical":
        return [o["classes"][int(np.argmax(r))] for r in out]
    values, result = o.get("values"), []
    for r in out:
        x = float(r[0])
        shown = round(x, 9)
        if values:
            j = min(range(len(values)), key=lambda m: abs(values[m] - x))
            gaps = [abs(values[j] - values[m]) for m in (j - 1, j + 1) if 0 <= m < len(values)]
            tol = min(gaps) / 2 if gaps else max(1.0, abs(values[j])) / 2
            if abs(values[j] - x) < tol:
                shown = values[j]
                if o["type"] == "int":
                    shown = int(shown)
                elif o["type"] == "bool":
                    shown = bool(shown)
        result.append(shown)
    return result


# ---------------------------------------------------------------- the checks

SORT_INT = """before = select(tokens, tokens, <) or (select(tokens, tokens, ==) and select(indices, indices, <));
target = selector_width(before);
sorted = aggregate(select(target, indices, ==), tokens);"""
BALANCE = """prefix = select(indices, indices, <=);
balance = aggregate(prefix, indicator(tokens == "(")) - aggregate(prefix, indicator(tokens == ")"));"""
REVERSE = """n = selector_width(select(1, 1, ==));
reversed = aggregate(select(indices, n - indices - 1, ==), tokens);"""
HIST = "hist = selector_width(select(tokens, tokens, ==));"
CAUSAL = """frac = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
w = selector_width(select(tokens, tokens, ==) and select(indices, indices, <=));
res = w + frac;"""

CASES = [("reverse", REVERSE, "abc", 4, False), ("sort_int", SORT_INT, [1, 2, 3], 4, False),
         ("balance", BALANCE, "()", 5, False), ("hist", HIST, "ab", 5, False), ("causal", CAUSAL, "ab", 5, True)]


@pytest.mark.parametrize("name, src, vocab, max_len, causal", CASES, ids=[c[0] for c in CASES])
def test_independent_reader_reproduces_every_output(name, src, vocab, max_len, causal):
    model = engine.compile(src, vocab=vocab, max_len=max_len, causal=causal)
    buf = io.BytesIO()
    model.export_npz(buf)
    config, weights = read_npz(buf.getvalue())
    tokens = list(vocab)
    inputs = [list(t) for n in range(1, max_len + 1) for t in itertools.product(tokens, repeat=n)]
    doc = model.run(inputs, trace=False)
    checked = 0
    for inp, want, agree in zip(inputs, doc["expected"], doc["agree"]):
        if want is None:
            continue
        assert agree
        got = decode(config, forward(config, weights, inp))
        assert got == want, (inp, got, want)      # Python equality: 1 == 1.0, "a" != 1
        soft = decode(config, forward(config, weights, inp, mode="soft"))
        assert soft == want, (inp, soft, want)
        checked += 1
    assert checked > 0


def test_soft_attention_output_of_int_sort_decodes_with_the_listed_values():
    """With int tokens sort's output is numerical; under soft attention it is near, not at, the
    values (e.g. 3.7e-44 for 0): the listed values decode it."""
    model = engine.compile(SORT_INT, vocab=[0, 1, 2], max_len=4)
    buf = io.BytesIO()
    model.export_npz(buf)
    config, weights = read_npz(buf.getvalue())
    assert config["output"]["kind"] == "numerical" and 0 in config["output"]["values"]
    out = forward(config, weights, [2, 0, 1, 0], mode="soft", beta=20.0)
    assert not np.allclose(out[:, 0], np.round(out[:, 0]), rtol=0, atol=1e-300)  # not exactly integers
    assert decode(config, out) == [0, 0, 1, 2]


def test_torch_export_carries_the_config(tmp_path):
    torch = need("torch")
    model = engine.compile(REVERSE, vocab="abc", max_len=4)
    path = tmp_path / "m.pt"
    model.export_torch(path)
    obj = torch.load(path, weights_only=True)
    assert obj["config"] == model.config
    assert set(obj["state_dict"]) == set(model.weights)
    w = {k: v.numpy() for k, v in obj["state_dict"].items()}
    assert decode(obj["config"], forward(obj["config"], w, list("abc"))) == ["c", "b", "a"]
