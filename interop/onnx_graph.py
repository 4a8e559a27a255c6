"""ONNX out: a compiled max_len model (or any .npz in the docs/weights.md layout) as a standard ONNX graph.

    from rasplay.interop import export_onnx, load_onnx
    export_onnx(model, "model.onnx")                       # float64, average-hard attention (the exact model)
    export_onnx(model, "m32.onnx", dtype="float32", attention="soft")
    runner = load_onnx("model.onnx")                       # needs the `onnx` extra (onnxruntime)
    runner.run(["abc", "cab"])                             # [[...values...], ...] decoded like the compiler's

The graph (opset 17, only standard operators): input `input_ids` (int64, [batch, seq], BOS's id first, then
the tokens' ids: id i is vocab[i] of the model's config), output `logits` for a categorical output
([batch, seq, classes]: the value at a position is the class with the largest logit) or `values` for a
numerical one ([batch, seq, 1]). Position p + 1 holds input position p. The layers are those of
engine/numpy_transformer.py: embeddings, attention (average-hard: every key whose score is within 1e-6 of
the row's maximum shares the weight equally, as `mode="hard"`; or softmax of attn_scale * scores, as
`mode="soft"`), ReLU MLPs (the hidden units whose output weights are all zero are left out: they add exactly
0), layer norm where the model has it, the causal mask where it is causal. The graph's metadata
(`metadata_props`) holds the vocabulary, BOS's id, the output's description and the attention mode as JSON,
which `load_onnx` reads to encode inputs and decode outputs.

A length-free model (engine/compiler/length_free) is written by interop/onnx_length_free.py: a graph with a
dynamic sequence axis, hard attention, that runs at any length. Its .npz (or config and weights) alone is
refused (OnnxExportError): the model object carries the sublayers' structure.
"""
from __future__ import annotations

import io
import json

import numpy as np

from ..engine.numpy_transformer import HARD_TOLERANCE, LN_EPS
from .export_tl import _read
from .onnx_errors import OnnxExportError

OPSET = 17
INPUT = "input_ids"
DTYPES = ("float64", "float32")
ATTENTION = ("hard", "soft")
LENGTH_FREE_REASON = ("a length-free model is exported from the compiled model itself (export_onnx(model)), not from "
                      "its .npz or config and weights, which do not hold the sublayers' structure")


def onnx_available() -> bool:
    """Whether onnx is installed, found without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec("onnx") is not None
    except (ImportError, ValueError):
        return False


def output_name(config: dict) -> str:
    return "logits" if config["output"]["kind"] == "categorical" else "values"


class _Graph:
    """Nodes and initializers of one graph, with fresh names."""

    def __init__(self, dtype):
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper, self.dtype = helper, numpy_helper, dtype
        self.elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        self.nodes, self.inits, self._n, self._shared = [], [], 0, {}

    def const(self, name: str, value, dtype=None) -> str:
        if dtype is None and isinstance(value, np.ndarray) and value.dtype.kind in "iub":
            dtype = value.dtype                     # integer and Boolean arrays keep their type
        arr = np.asarray(value, dtype=dtype or self.dtype)
        self.inits.append(self.numpy_helper.from_array(arr, name))
        return name

    def shared(self, name: str, value, dtype=None) -> str:
        """A constant made once, on first use (onnxruntime warns about unused initializers)."""
        if name not in self._shared:
            self._shared[name] = self.const(name, value, dtype)
        return name

    def op(self, op_type: str, inputs: list, out: str | None = None, **attrs) -> str:
        self._n += 1
        out = out or f"{op_type.lower()}_{self._n}"
        self.nodes.append(self.helper.make_node(op_type, inputs, [out], name=f"{op_type}_{self._n}", **attrs))
        return out


def _layer_norm(g: _Graph, x: str, weight, bias, prefix: str) -> str:
    return g.op("LayerNormalization", [x, g.const(prefix + ".weight", weight), g.const(prefix + ".bias", bias)],
                axis=-1, epsilon=LN_EPS)


def _attention(g: _Graph, h: str, config: dict, w: dict, i: int, mode: str, scale: float, mask: str | None) -> str:
    """One layer's attention output (batch, seq, d_model) before the residual add."""
    H, dh, p = config["n_heads"], config["d_head"], f"layers.{i}.attn."
    heads = g.shared("shape_heads", [0, 0, H, dh], np.int64)
    q, k, v = (g.op("Reshape", [g.op("MatMul", [h, g.const(p + f"{m}.weight_T", w[p + f"{m}.weight"].T)]), heads])
               for m in "qkv")
    q = g.op("Transpose", [q], perm=[0, 2, 1, 3])
    k = g.op("Transpose", [k], perm=[0, 2, 3, 1])
    v = g.op("Transpose", [v], perm=[0, 2, 1, 3])
    scores = g.op("MatMul", [q, k], out=f"layer{i}_scores")                      # (batch, H, query, key)
    if mask is not None:
        scores = g.op("Where", [mask, g.shared("neg_inf", -np.inf), scores])
    if mode == "hard":
        top = g.op("ReduceMax", [scores], axes=[-1], keepdims=1)
        near = g.op("GreaterOrEqual", [scores, g.op("Sub", [top, g.shared("hard_tolerance", HARD_TOLERANCE)])])
        share = g.op("Cast", [near], to=g.helper.np_dtype_to_tensor_dtype(np.dtype(g.dtype)))
        att = g.op("Div", [share, g.op("ReduceSum", [share, g.shared("last_axis", [-1], np.int64)], keepdims=1)], out=f"layer{i}_pattern")
    else:
        att = g.op("Softmax", [g.op("Mul", [scores, g.shared("attn_scale", scale)])], axis=-1, out=f"layer{i}_pattern")
    mixed = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [att, v])], perm=[0, 2, 1, 3]),
                                g.shared("shape_merge", [0, 0, -1], np.int64)])
    return g.op("MatMul", [mixed, g.const(p + "o.weight_T", w[p + "o.weight"].T)])


def _mlp(g: _Graph, h: str, w: dict, i: int) -> str | None:
    """One layer's MLP output, without the hidden units whose output weights are all zero (they add 0)."""
    p = f"layers.{i}.mlp."
    fc1, b1, fc2, b2 = w[p + "fc1.weight"], w[p + "fc1.bias"], w[p + "fc2.weight"], w[p + "fc2.bias"]
    used = np.any(fc2 != 0, axis=0)
    if not used.any():
        return None if not b2.any() else g.const(p + "fc2.bias", b2)
    hidden = g.op("Relu", [g.op("Add", [g.op("MatMul", [h, g.const(p + "fc1.weight_T", fc1[used].T)]),
                                        g.const(p + "fc1.bias", b1[used])])])
    return g.op("Add", [g.op("MatMul", [hidden, g.const(p + "fc2.weight_T", fc2[:, used].T)]),
                        g.const(p + "fc2.bias", b2)])


def _positions(g: _Graph, config: dict, w: dict) -> tuple[str, str | None]:
    """The position embeddings of the first seq positions, and the causal mask [query, key] (or None)."""
    seq = g.op("Slice", [g.op("Shape", [INPUT]), g.const("one", [1], np.int64), g.const("two", [2], np.int64)])
    zero = g.const("zero", [0], np.int64)
    pos = g.op("Slice", [g.const("pos_emb.weight", w["pos_emb.weight"]), zero, seq, zero])
    if not config.get("causal"):
        return pos, None
    n = config["max_len"]
    later = np.triu(np.ones((n, n), dtype=bool), k=1)
    seq2 = g.op("Concat", [seq, seq], axis=0)
    mask = g.op("Slice", [g.const("causal_later", later, np.bool_), g.const("zeros2", [0, 0], np.int64), seq2])
    return pos, mask


def build_graph(config: dict, weights: dict, meta: dict | None = None, dtype: str = "float64",
                attention: str = "hard"):
    """The onnx.ModelProto of a model in the docs/weights.md layout."""
    from onnx import TensorProto, helper

    if config.get("length_free"):
        raise OnnxExportError(LENGTH_FREE_REASON)
    _check_options(dtype, attention)
    g = _Graph(np.float64 if dtype == "float64" else np.float32)
    w = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
    scale = config.get("attn_scale")
    scale = float(scale) if scale is not None else 1.0 / np.sqrt(max(config["d_head"], 1))
    pos, mask = _positions(g, config, w)
    x = g.op("Add", [g.op("Gather", [g.const("tok_emb.weight", w["tok_emb.weight"]), INPUT]), pos])
    ln = bool(config.get("layer_norm"))
    for i in range(config["n_layers"]):
        p = f"layers.{i}."
        if config["n_heads"] and config["d_head"]:
            h = _layer_norm(g, x, w[p + "ln1.weight"], w[p + "ln1.bias"], p + "ln1") if ln else x
            x = g.op("Add", [x, _attention(g, h, config, w, i, attention, scale, mask)], out=f"layer{i}_attn_resid")
        if config["d_mlp"]:
            h = _layer_norm(g, x, w[p + "ln2.weight"], w[p + "ln2.bias"], p + "ln2") if ln else x
            added = _mlp(g, h, w, i)
            if added is not None:
                x = g.op("Add", [x, added], out=f"layer{i}_mlp_resid")
    if ln:
        x = _layer_norm(g, x, w["ln_f.weight"], w["ln_f.bias"], "ln_f")
    out = output_name(config)
    g.op("Add", [g.op("MatMul", [x, g.const("unembed.weight_T", w["unembed.weight"].T)]),
                 g.const("unembed.bias", w["unembed.bias"])], out=out)
    elem = TensorProto.DOUBLE if dtype == "float64" else TensorProto.FLOAT
    n_out = w["unembed.weight"].shape[0]
    graph = helper.make_graph(
        g.nodes, f"rasplay_{(meta or {}).get('output') or 'model'}",
        [helper.make_tensor_value_info(INPUT, TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info(out, elem, ["batch", "seq", n_out])], g.inits)
    return _finish(graph, _metadata(config, meta, dtype, attention, out))


def _check_options(dtype: str, attention: str) -> None:
    if dtype not in DTYPES or attention not in ATTENTION:
        raise OnnxExportError(f"dtype is one of {DTYPES} and attention one of {ATTENTION}, "
                              f"not {dtype!r} and {attention!r}")


def _finish(graph, props: dict):
    """The checked ModelProto of a graph, with rasplay's metadata."""
    from onnx import checker, helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="rasplay",
                              doc_string="A RASP program compiled by rasplay (docs/interop.md)")
    model.ir_version = 8
    helper.set_model_props(model, props)
    checker.check_model(model, full_check=True)
    return model


def build_length_free_graph(model, dtype: str = "float64", attention: str = "hard"):
    """The onnx.ModelProto of a length-free model (interop/onnx_length_free.py): any length, hard attention."""
    from onnx import TensorProto, helper

    from .onnx_length_free import SOFT_REASON, metadata, write_length_free

    _check_options(dtype, attention)
    if attention != "hard":
        raise OnnxExportError(SOFT_REASON)
    g = _Graph(np.float64 if dtype == "float64" else np.float32)
    out = g.op("Identity", [write_length_free(g, model)], out="logits")
    elem = TensorProto.DOUBLE if dtype == "float64" else TensorProto.FLOAT
    graph = helper.make_graph(
        g.nodes, f"rasplay_{model.output_name or 'model'}_length_free",
        [helper.make_tensor_value_info(INPUT, TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info(out, elem, ["batch", "seq", len(model.classes)])], g.inits)
    return _finish(graph, metadata(model, dtype))


def _metadata(config: dict, meta: dict | None, dtype: str, attention: str, out: str) -> dict:
    return {"rasplay.vocab": json.dumps(config["vocab"], ensure_ascii=False),
            "rasplay.bos_id": json.dumps(config.get("bos_id")),
            "rasplay.max_len": json.dumps(config["max_len"]),
            "rasplay.output": json.dumps(config["output"], ensure_ascii=False),
            "rasplay.output_name": json.dumps((meta or {}).get("output"), ensure_ascii=False),
            "rasplay.attention": attention, "rasplay.dtype": dtype, "rasplay.graph_output": out,
            "rasplay.input": "input_ids: BOS's id then the tokens' ids (vocab[i] is id i); position p+1 is "
                             "input position p"}


def export_onnx(model, path=None, dtype: str = "float64", attention: str = "hard", beta: float | None = None) -> bytes:
    """Write `model` (a CompiledModel, a .npz path or bytes, or a (config, weights) pair) as ONNX to `path`
    (a file name or a binary file; None: only return the bytes). Returns the serialized model."""
    if getattr(model, "length_free", False) and hasattr(model, "ops"):
        data = build_length_free_graph(model, dtype, attention).SerializeToString()
    else:
        config, weights, meta = _read(model)
        if beta is not None:
            config["attn_scale"] = float(beta)
        data = build_graph(config, weights, meta, dtype, attention).SerializeToString()
    if path is not None:
        if hasattr(path, "write"):
            path.write(data)
        else:
            with open(path, "wb") as f:
                f.write(data)
    return data


class OnnxRunner:
    """An exported model in onnxruntime, with rasplay's token mapping: `run(inputs)` -> decoded values."""

    def __init__(self, source):
        import onnxruntime as ort

        data = source if isinstance(source, (bytes, bytearray)) else open(source, "rb").read()
        self.session = ort.InferenceSession(bytes(data), providers=["CPUExecutionProvider"])
        props = self.session.get_modelmeta().custom_metadata_map
        self.vocab = json.loads(props["rasplay.vocab"])
        self.bos_id = json.loads(props["rasplay.bos_id"])
        self.output = json.loads(props["rasplay.output"])
        self.output_name = props["rasplay.graph_output"]
        self._index = {json.dumps(t): i for i, t in enumerate(self.vocab)}

    def ids(self, inputs: list) -> np.ndarray:
        """Inputs of one length (strings or token lists) -> (B, n + 1) ids, BOS first."""
        rows = []
        for k, item in enumerate(inputs):
            row = [self.bos_id]
            for t in list(item):
                i = self._index.get(json.dumps(t))
                if i is None or i == self.bos_id:
                    raise ValueError(f"input {k + 1}: the token {t!r} is not in the vocabulary")
                row.append(i)
            rows.append(row)
        if len({len(r) for r in rows}) > 1:
            raise ValueError("inputs of one length per call (the graph has no padding)")
        return np.array(rows, dtype=np.int64)

    def forward(self, ids: np.ndarray) -> np.ndarray:
        return self.session.run([self.output_name], {INPUT: np.asarray(ids, dtype=np.int64)})[0]

    def run(self, inputs: list) -> list:
        """Output values per input (class names, or numbers as the graph computes them); inputs of several
        lengths run as one batch per length."""
        result: list = [None] * len(inputs)
        for n in sorted({len(list(x)) for x in inputs}):
            which = [k for k, x in enumerate(inputs) if len(list(x)) == n]
            out = self.forward(self.ids([inputs[k] for k in which]))[:, 1:]
            if self.output["kind"] == "categorical":
                rows = [[self.output["classes"][i] for i in row] for row in out.argmax(-1).tolist()]
            else:
                rows = out[..., 0].tolist()
            for k, row in zip(which, rows):
                result[k] = row
        return result


def load_onnx(source) -> OnnxRunner:
    """An exported .onnx file (or its bytes) in onnxruntime (the `onnx` extra)."""
    return OnnxRunner(source)


def onnx_bytes(model, dtype: str = "float64", attention: str = "hard") -> bytes:
    """The serialized graph (for downloads)."""
    buf = io.BytesIO()
    export_onnx(model, buf, dtype=dtype, attention=attention)
    return buf.getvalue()
