"""What the export tests share (ONNX: test_export_onnx.py, TransformerLens: test_export_tl.py): the programs
they compile and export, every input up to a length as token ids, the check that outputs decode as the
compiled model's, and a random model in our layout with layer norm (as trained models are)."""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = {
    # name: (source, vocab, max_len)
    "reverse": ((ROOT / "bench/tracr_programs/reverse.rasp").read_text(), "abc", 5),      # categorical, 2 layers
    "frac_prevs": ((ROOT / "bench/tracr_programs/frac_prevs.rasp").read_text(), "abc", 5),  # numerical output
    "sort": ((ROOT / "bench/tracr_programs/sort.rasp").read_text(), "abc", 4),            # 2 heads in layer 1
    "histogram_bos": ((ROOT / "examples/histogram_bos.rasp").read_text(), "abc", 4),       # extra MLP sublayer
    "copy": ("copy = aggregate(select(indices, indices, ==), tokens);", "ab", 5),          # an MLP that adds 0
}


def inputs_of_length(vocab_size: int, n: int) -> np.ndarray:
    """Every input of length `n` as token indices (vocab_size ** n rows of n, in itertools.product's order)."""
    return np.array(list(itertools.product(range(vocab_size), repeat=n)), dtype=np.int64).reshape(-1, n)


def every_input(vocab_size: int, max_len: int):
    """Every input of each length 1..max_len, one (vocab_size ** n, n) array of token indices a length."""
    for n in range(1, max_len + 1):
        yield inputs_of_length(vocab_size, n)


def with_bos(idx: np.ndarray, bos_id: int = 0) -> np.ndarray:
    """The model's token ids of these inputs: BOS first, token i as id i + 1 (the compiled vocabulary's order)."""
    return np.concatenate([np.full((len(idx), 1), bos_id, dtype=np.int64), idx + 1], axis=1)


def assert_decodes_as_compiled(model, got: np.ndarray, idx: np.ndarray) -> None:
    """Outputs `got` (float64, one row per input, BOS dropped) decode as the compiled model's own (hard
    attention), and match the program's values wherever the compiled model is exact."""
    assert model.decode_output(got) == model.decode_output(model.forward_outputs(idx, mode="hard"))
    want, ok = model.expected(idx)
    assert model.compare(got, want)[0][ok].all()


def layer_norm_model(seed: int = 0):
    """(config, weights, ids) of a random 2-layer model in our layout with layer norm and softmax at
    1/sqrt(d_head) (vocabulary <bos>, a, b; max_len 5; three categorical classes) and 7 random inputs of 5 ids."""
    rng = np.random.default_rng(seed)
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
    return config, w, rng.integers(0, 3, size=(7, 5))
