"""TransformerLens out: compiled models exported for TransformerLens 4's `TransformerBridge` (booted on its
native architecture; the real package, the `tl` extra) reproduce the compiled outputs exactly on every input
up to max_len: logits, decoded outputs, cached attention patterns and head ablations."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import rasplay
from rasplay.engine import NumpyTransformer as Transformer
from rasplay.interop.export_tl import (export_transformer_lens, load_transformer_bridge, tl_config,
                                       tl_state_dict, to_transformer_bridge, token_ids)
from rasplay.cli.main import main as cli_main
from support.exports import (PROGRAMS, assert_decodes_as_compiled, every_input, inputs_of_length,
                             layer_norm_model, with_bos)
from support.needs import need

if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    import torch  # noqa: F401  (make test installs the tl extra: in CI this test must run, never skip)
    import transformer_lens  # noqa: F401
else:
    torch = need("torch")
    need("transformer_lens")

pytestmark = pytest.mark.train   # needs torch

@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def exported(request, tmp_path_factory):
    source, vocab, max_len = PROGRAMS[request.param]
    model = rasplay.compile(source, vocab=vocab, max_len=max_len)
    out = tmp_path_factory.mktemp(request.param)
    doc = export_transformer_lens(model, out)
    return request.param, model, doc, load_transformer_bridge(out)


def test_every_input_reproduces_the_compiled_outputs(exported):
    name, model, doc, tl_model = exported
    _, vocab, max_len = PROGRAMS[name]
    checked = 0
    for idx in every_input(len(vocab), max_len):
        n = idx.shape[1]
        inputs = [[vocab[i] for i in row] for row in idx]
        ids = token_ids(doc, inputs)
        assert ids.shape == (len(inputs), n + 1) and (ids[:, 0] == doc["tokens"]["bos_id"]).all()
        logits, cache = tl_model.run_with_cache(torch.tensor(ids))
        got = logits[:, 1:].detach().numpy()
        ours_soft = model.forward_outputs(idx, mode="soft")          # the same beta as the export
        np.testing.assert_allclose(got, ours_soft, rtol=0, atol=1e-9)
        assert_decodes_as_compiled(model, got, idx)
        # the cache holds every head's pattern, the softmax of our runner's scores at the export's scale
        trace = Transformer(model.config, model.weights).forward(with_bos(idx), mode="soft", trace=True)
        for layer in range(model.config["n_layers"]):
            pattern = cache[f"blocks.{layer}.attn.hook_pattern"].detach().numpy()
            assert pattern.shape[-2:] == (n + 1, n + 1)
            np.testing.assert_allclose(pattern[:, :model.config["n_heads"]], trace.attention[layer], rtol=0, atol=1e-9)
        checked += len(inputs)
    assert checked == sum(len(vocab) ** n for n in range(1, max_len + 1))


def test_config_maps_our_layout(exported):
    name, model, doc, tl_model = exported
    cfg, c = doc["transformer_bridge_config"], model.config
    assert tl_model.cfg.normalization_type is None and tl_model.cfg.attention_dir == "bidirectional"
    assert tl_model.cfg.n_layers == c["n_layers"] and tl_model.cfg.d_model == c["d_model"]
    assert tl_model.cfg.n_ctx == c["max_len"] and tl_model.cfg.d_vocab == len(c["vocab"])
    assert tl_model.cfg.attn_scale == pytest.approx(1 / c["attn_scale"])
    assert tl_model.embed.weight.dtype == torch.float64
    assert doc["tokens"]["output_label"] == model.summary()["output"]      # the output label, named explicitly
    assert doc["tokens"]["vocab"][doc["tokens"]["bos_id"]] == "<bos>"
    assert c["d_mlp"] > 0 and cfg["d_mlp"] == c["d_mlp"] and "attn_only" not in cfg
    json.dumps(doc)   # plain JSON


def test_a_model_without_mlps_is_attention_only():
    """The same weights with the MLP (which adds exactly 0 in copy) removed, d_mlp 0: TransformerLens
    gets attn_only=True and gives the same outputs on every input."""
    model = rasplay.compile(PROGRAMS["copy"][0], vocab="ab", max_len=5)
    config, weights = dict(model.config), dict(model.weights)
    assert not weights["layers.0.mlp.fc2.weight"].any()
    config["d_mlp"] = 0
    d = config["d_model"]
    weights.update({"layers.0.mlp.fc1.weight": np.zeros((0, d)), "layers.0.mlp.fc1.bias": np.zeros(0),
                    "layers.0.mlp.fc2.weight": np.zeros((d, 0)), "layers.0.mlp.fc2.bias": np.zeros(d)})
    assert tl_config(config)["attn_only"] is True and "d_mlp" not in tl_config(config)
    tl_model = to_transformer_bridge((config, weights))
    assert tl_model.cfg.attn_only
    ours = Transformer(config, weights)
    for idx in every_input(2, 5):
        ids = with_bos(idx)
        want = ours.forward(ids, mode="soft").out
        np.testing.assert_allclose(tl_model(torch.tensor(ids)).detach().numpy(), want, rtol=0, atol=1e-9)
        assert (want[:, 1:].argmax(-1) == ids[:, 1:] - 1).all()   # and it copies


def test_layer_norm_weights_map_too():
    """A model in our layout with layer norm and softmax at 1/sqrt(d_head) (as trained models are):
    TransformerLens gives our runner's logits."""
    config, w, ids = layer_norm_model()
    ours = Transformer(config, w).forward(ids, mode="soft").out
    theirs = to_transformer_bridge((config, w))(torch.tensor(ids)).detach().numpy()
    np.testing.assert_allclose(theirs, ours, rtol=0, atol=1e-9)
    assert set(tl_state_dict(config, w)) >= {"ln_final.weight", "blocks.1.ln2.bias"}
    assert tl_config(config)["normalization_type"] == "LN"


def test_cli_export(tmp_path, capsys):
    prog = tmp_path / "reverse.rasp"
    prog.write_text(PROGRAMS["reverse"][0])
    out = tmp_path / "tl"
    assert cli_main(["compile", str(prog), "--vocab", "abc", "--max-len", "3", "--export", "transformer-lens",
                     str(out), "--json"]) == 0
    capsys.readouterr()
    assert {p.name for p in out.iterdir()} == {"config.json", "state_dict.pt", "state_dict.npz"}
    tl_model = load_transformer_bridge(out)
    doc = json.loads((out / "config.json").read_text())
    logits = tl_model(torch.tensor(token_ids(doc, ["abc", "cab"])))
    classes = doc["tokens"]["output"]["classes"]
    assert ["".join(classes[i] for i in row[1:]) for row in logits.argmax(-1).tolist()] == ["cba", "bac"]
    assert cli_main(["compile", str(prog), "--vocab", "abc", "--max-len", "3", "--export", "keras", str(out)]) == 2
    assert "unknown export format 'keras'" in capsys.readouterr().err


def test_config_is_accepted_as_written(tmp_path):
    """config.json's transformer_bridge_config goes straight into TransformerBridgeConfig (no dtype string in
    it); a bridge booted from it with TransformerLens' own calls (float32, its default) loads state_dict.pt
    strictly and still decodes the compiled outputs."""
    from transformer_lens import TransformerBridge, TransformerBridgeConfig
    import transformer_lens.model_bridge.sources.native  # noqa: F401

    source, vocab, max_len = PROGRAMS["reverse"]
    model = rasplay.compile(source, vocab=vocab, max_len=max_len)
    export_transformer_lens(model, tmp_path)
    doc = json.loads((tmp_path / "config.json").read_text())
    bridge = TransformerBridge.boot_native(TransformerBridgeConfig(**doc["transformer_bridge_config"]))
    bridge.load_state_dict({k: v.float() for k, v in torch.load(tmp_path / "state_dict.pt").items()}, strict=True)
    ids = token_ids(doc, ["abc", "cab", "bba"])
    classes = doc["tokens"]["output"]["classes"]
    got = ["".join(classes[i] for i in row[1:]) for row in bridge(torch.tensor(ids)).argmax(-1).tolist()]
    assert got == ["cba", "bac", "abb"]
    assert doc["torch_dtype"] == "float64"


def test_head_ablation_matches_our_runner_without_that_head():
    """Zeroing one head's output (its hook_z slice) in TransformerLens gives our runner's logits with that
    head's columns of the output projection zeroed, on every input up to max_len; and ablating the flip head
    of reverse changes its outputs (the ablation acts)."""
    source, vocab, max_len = PROGRAMS["sort"]
    model = rasplay.compile(source, vocab=vocab, max_len=max_len)
    bridge = to_transformer_bridge(model)
    c = model.config
    dh = c["d_head"]
    for layer in range(c["n_layers"]):
        for head in range(c["n_heads"]):
            w = dict(model.weights)
            o = w[f"layers.{layer}.attn.o.weight"].copy()
            o[:, head * dh:(head + 1) * dh] = 0
            w[f"layers.{layer}.attn.o.weight"] = o
            ours = Transformer(c, w)

            def ablate(z, hook, head=head):            # (batch, pos, head, d_head)
                z = z.clone()
                z[:, :, head] = 0
                return z
            for idx in every_input(len(vocab), max_len):
                ids = with_bos(idx)
                got = bridge.run_with_hooks(torch.tensor(ids), fwd_hooks=[(f"blocks.{layer}.attn.hook_z", ablate)])
                want = ours.forward(ids, mode="soft").out
                np.testing.assert_allclose(got.detach().numpy(), want, rtol=0, atol=1e-9)
    reverse = rasplay.compile(PROGRAMS["reverse"][0], vocab="abc", max_len=4)
    flip = to_transformer_bridge(reverse)
    ids = torch.tensor(token_ids({"tokens": {"vocab": reverse.config["vocab"], "bos_id": 0}}, ["abca"]))
    last = reverse.config["n_layers"] - 1
    kept = reverse.decode_output(flip(ids)[:, 1:].detach().numpy())
    ablated = flip.run_with_hooks(ids, fwd_hooks=[(f"blocks.{last}.attn.hook_z", lambda z, hook: z * 0)])
    assert kept == [list("acba")] and reverse.decode_output(ablated[:, 1:].detach().numpy()) != kept


def test_load_tl_encoder_and_padding_recipe(tmp_path):
    """rasplay.interop.load_tl: a float64 TransformerBridge whose encoder adds BOS; mixed lengths padded and
    the pad keys masked by the bridge's attention_mask give every input's own outputs (unmasked padding does not)."""
    from rasplay.interop import load_tl

    source, vocab, max_len = PROGRAMS["reverse"]
    model = rasplay.compile(source, vocab=vocab, max_len=max_len)
    export_transformer_lens(model, tmp_path)
    tl_model = load_tl(tmp_path)
    enc = tl_model.rasplay_encoder
    assert tl_model.embed.weight.dtype == torch.float64 and tl_model.rasplay_output_label == model.summary()["output"] == "reversed"
    ids = enc(["abc", "cab"])
    assert ids[:, 0].tolist() == [enc.bos_id] * 2 and ids.shape == (2, 4)
    assert enc.decode(tl_model(ids)) == [list("cba"), list("bac")]
    inputs = ["abcab", "a", "cb", "bca"]
    ids, mask = enc(inputs, pad=True)
    assert ids.shape == (4, 6) and mask.sum(1).tolist() == [6, 2, 3, 4]
    logits = tl_model(ids, attention_mask=mask)
    assert enc.decode(logits, mask) == [list(x[::-1]) for x in inputs]
    unmasked = enc.decode(tl_model(ids), mask)
    assert unmasked != [list(x[::-1]) for x in inputs]     # the mask is what makes padding exact
    with pytest.raises(ValueError, match="pad=True"):
        enc(["ab", "a"])
    with pytest.raises(ValueError, match="not in the vocabulary"):
        enc(["az"])


def test_loss_on_a_numerical_output_is_refused_clearly(tmp_path):
    from rasplay.interop import load_tl

    source, vocab, max_len = PROGRAMS["frac_prevs"]
    export_transformer_lens(rasplay.compile(source, vocab=vocab, max_len=max_len), tmp_path)
    tl_model = load_tl(tmp_path)
    ids = tl_model.rasplay_encoder(["abc"])
    with pytest.raises(ValueError, match='return_type="loss".*numerical'):
        tl_model(ids, return_type="loss")
    values = tl_model.rasplay_encoder.decode(tl_model(ids))
    assert len(values[0]) == 3


def test_an_attention_scale_of_one_goes_into_the_queries():
    """TransformerLens 4 refuses attn_scale 1 with d_head > 1; an export at beta 1 keeps TL's default scale
    (sqrt(d_head)) and multiplies the query weights by it: the logits still equal our runner's at beta 1."""
    model = rasplay.compile(PROGRAMS["sort"][0], vocab="abc", max_len=4)
    config = dict(model.config)
    assert config["d_head"] > 1
    assert "attn_scale" not in tl_config(config, beta=1.0)
    bridge = to_transformer_bridge(model, beta=1.0)
    ids = with_bos(inputs_of_length(3, 4))
    want = Transformer(config, model.weights).forward(ids, mode="soft", beta=1.0).out
    np.testing.assert_allclose(bridge(torch.tensor(ids)).detach().numpy(), want, rtol=0, atol=1e-9)
