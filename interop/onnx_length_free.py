"""ONNX out for length-free models (engine/compiler/length_free): a graph with a dynamic sequence axis that
runs at any length, sublayer by sublayer as the numpy runner (engine/compiler/length_free/runner.py) does.

    export_onnx(length_free_model, "dyck.onnx")          # interop/onnx_graph.py dispatches here

Input `input_ids` (int64 [batch, seq]): id 0 is BOS (first), id i + 1 is the model's vocab[i] (the graph's
metadata lists [BOS] + vocab, so load_onnx encodes and decodes as for a max_len model). Output `logits`
([batch, seq, classes]): the output block, a one-hot of the value (zero at BOS); the value at a position is
the class with the largest entry. Position encodings are computed in the graph from the position
(t = p - 1, t^2, 1/(t + 2)); `i mod m` and `i op c` encodings through a finite table indexed by
`t if t < start else start + (t - start) mod period` (engine/compiler/length_free/position_form.py).

Sublayers, with standard operators only (opset 17):
- counting heads (uniform attention under a mask, BOS always visible): CumSum and one division, the same
  numbers as the runner (and as an n x n softmax of equal scores);
- lookup heads (previous position, count lookup, rightmost key): scores q W k^T, the causal mask where the
  head has one, ArgMax (the unique maximum) as a one-hot attention pattern, then the clean-up MLP;
- tables, readouts, linear sublayers, copies through counts: MatMul / Relu / Add;
- sign units: the runner's layer normalisation with epsilon = 0 of [z, -z] is [sign z, -sign z] (0 where
  z = 0), written with the standard Sign operator (LayerNormalization would divide 0 by 0 at z = 0).

Hard attention only: softmax attention of a length-free model needs an inverse temperature that grows with
the length per head (docs/every_length.md), which this export does not write; the refusal says so.
"""
from __future__ import annotations

import json

import numpy as np

from ..engine.compiler.length_free.position_form import MAX_TABLE
from .onnx_errors import OnnxExportError

INPUT = "input_ids"
SOFT_REASON = ("a length-free model exports with hard attention only (attention='hard', the exact model): its "
               "lookup heads need softmax at an inverse temperature that grows with the length, per head, "
               "which the ONNX export does not write")


def _refusal(message: str):
    return OnnxExportError(message)


class _Writer:
    """The blocks of the residual stream as graph tensors (batch, seq, width), written sublayer by sublayer."""

    def __init__(self, g, model):
        self.g, self.model, self.blocks = g, model, {}
        self._positions()
        self._embedding()

    # -------------------------------------------------------------- positions and embeddings

    def _positions(self):
        g = self.g
        self.shape = g.op("Shape", [INPUT])                                              # [B, P]
        p_scalar = g.op("Gather", [self.shape, g.const("index_1", np.array(1, dtype=np.int64))])
        self.pos_i = g.op("Range", [g.const("start_0", np.array(0, dtype=np.int64)), p_scalar,
                                    g.const("step_1", np.array(1, dtype=np.int64))])     # (P,) 0 .. n
        self.pos = g.op("Cast", [self.pos_i], to=g.elem)                                 # (P,)
        self.P = g.op("Cast", [p_scalar], to=g.elem)                                     # scalar n + 1
        self.p_col = g.op("Reshape", [self.pos, g.const("shape_1p1", [1, -1, 1], np.int64)])   # (1, P, 1)
        self.first = g.op("Equal", [self.pos_i, g.const("zero_i", np.array(0, dtype=np.int64))])
        self.first_col = g.op("Reshape", [self.first, g.const("shape_1p1b", [1, -1, 1], np.int64)])

    def expand(self, x: str, width: int) -> str:
        """x broadcast to (B, P, width)."""
        g = self.g
        return g.op("Expand", [x, g.op("Concat", [self.shape, g.shared(f"width_{width}", [width], np.int64)], axis=0)])

    def _embedding(self):
        g, m = self.g, self.model
        not_bos = g.op("Cast", [g.op("Greater", [self.pos_i, g.const("zero_i2", np.array(0, np.int64))])], to=g.elem)
        not_bos = self.expand(g.op("Unsqueeze", [not_bos, g.const("axis_last", [-1], np.int64)]), 1)
        self.blocks["not_bos"] = not_bos
        self.blocks["bos"] = g.op("Sub", [g.const("one_f", 1.0), not_bos])
        self.blocks["one"] = self.expand(g.const("ones_11", np.ones((1, 1))), 1)
        V = len(m.vocab)
        table = np.vstack([np.zeros((1, V)), np.eye(V)])                                # id 0 = BOS -> zeros
        self.blocks["tokens"] = g.op("Mul", [g.op("Gather", [g.const("embed.tokens", table), INPUT]), not_bos])
        t = g.op("Sub", [self.pos, g.const("one_f2", 1.0)])
        parts = [t, g.op("Mul", [t, t]), g.op("Div", [g.const("one_f3", 1.0), g.op("Add", [t, g.const("two_f", 2.0)])])]
        cols = [g.op("Unsqueeze", [x, g.const(f"axis_{i}", [-1], np.int64)]) for i, x in enumerate(parts)]
        self.blocks["pos"] = self.expand(g.op("Concat", cols, axis=-1), 3)
        for name, (_, width) in m.embedding.periodic.items():
            self.blocks[name] = self._periodic(name, width, not_bos)

    def _periodic(self, name: str, width: int, not_bos: str) -> str:
        form = self.model.built.periodic_form.get(name, f"'{name}'")
        if isinstance(form, str):
            raise _refusal(f"the position encoding {form} has no closed form that a finite table of the graph can "
                           f"hold (i mod m or a comparison with a constant c, with m, c below {MAX_TABLE})")
        g = self.g
        start, period, index = form
        t = g.op("Max", [g.op("Sub", [self.pos_i, g.const(f"{name}.one", np.array(1, np.int64))]),
                         g.const(f"{name}.zero", np.array(0, np.int64))])
        s = g.const(f"{name}.start", np.array(start, np.int64))
        folded = g.op("Add", [s, g.op("Mod", [g.op("Sub", [t, s]), g.const(f"{name}.period", np.array(period, np.int64))])])
        row = g.op("Where", [g.op("Less", [t, s]), t, folded])
        onehot = np.zeros((len(index), width))
        onehot[np.arange(len(index)), index] = 1.0
        return g.op("Mul", [self.expand(g.op("Gather", [g.const(f"{name}.table", onehot), row]), width), not_bos])

    # -------------------------------------------------------------- sublayers

    def concat(self, names: list) -> str:
        xs = [self.blocks[k] for k in names]
        return xs[0] if len(xs) == 1 else self.g.op("Concat", xs, axis=-1)

    def last(self, x: str, tag: str) -> str:
        """x[..., -1:]."""
        g = self.g
        return g.op("Slice", [x, g.const(f"{tag}.m1", [-1], np.int64), g.const(f"{tag}.end", [np.iinfo(np.int64).max], np.int64),
                              g.const(f"{tag}.ax", [-1], np.int64)])

    def table(self, op, tag):
        g = self.g
        h = g.op("Relu", [g.op("Add", [g.op("MatMul", [self.concat(op.inputs), g.const(tag + "fc1.weight_T", op.fc1.T)]),
                                       g.const(tag + "fc1.bias", op.b1)])])
        return g.op("MatMul", [h, g.const(tag + "fc2.weight_T", op.fc2.T)])

    def counthead(self, op, tag):
        g, f = self.g, self.g.const
        v = g.op("Concat", [self.blocks[op.value], self.blocks["bos"]], axis=-1)
        cs = g.op("CumSum", [v, f(tag + "axis", np.array(1, np.int64))])
        before = g.op("CumSum", [v, f(tag + "axis_x", np.array(1, np.int64))], exclusive=1)
        total = g.op("ReduceSum", [v, f(tag + "axes", [1], np.int64)], keepdims=1)           # (B, 1, w)
        bos_v = g.op("Slice", [v, f(tag + "s0", [0], np.int64), f(tag + "s1", [1], np.int64), f(tag + "sa", [1], np.int64)])
        p, P, one = self.p_col, self.P, f(tag + "one", 1.0)
        n = g.op("Sub", [P, one])
        mean_all = g.op("Div", [total, P])
        if op.rng == "all":
            return g.op("Add", [mean_all, g.op("Mul", [v, f(tag + "zero", 0.0)])])      # broadcast to v's shape
        if op.rng == "past":
            return g.op("Div", [cs, g.op("Add", [p, one])])
        if op.rng == "strict_past":         # keys 0 .. p-1 (BOS alone for p = 0)
            prev = g.op("Add", [before, g.op("Mul", [bos_v, g.op("Cast", [self.first_col], to=g.elem)])])
            return g.op("Div", [prev, g.op("Max", [p, one])])
        if op.rng == "future":              # BOS and keys p .. n
            num = g.op("Sub", [g.op("Add", [bos_v, total]), before])
            out = g.op("Div", [num, g.op("Add", [one, g.op("Add", [g.op("Sub", [n, p]), one])])])
        elif op.rng == "strict_future":     # BOS and keys p+1 .. n
            num = g.op("Sub", [g.op("Add", [bos_v, total]), cs])
            out = g.op("Div", [num, g.op("Add", [one, g.op("Sub", [n, p])])])
        else:
            raise _refusal(f"counting head '{op.name}': the mask {op.rng!r} has no ONNX form here")
        return g.op("Where", [self.first_col, mean_all, out])

    def readout(self, op, tag):
        g, f = self.g, self.g.const
        F = self.blocks[op.shares]
        shares = g.op("Slice", [F, f(tag + "s0", [0], np.int64), f(tag + "s1", [-1], np.int64), f(tag + "sa", [-1], np.int64)])
        pre = g.op("MatMul", [shares, f(tag + "readout_T", op.A.T)])
        if op.query is None:
            x = g.op("Slice", [pre, f(tag + "q0", [0], np.int64), f(tag + "q1", [1], np.int64), f(tag + "qa", [-1], np.int64)])
        else:
            gate = g.op("Mul", [f(tag + "M", op.M), g.op("Sub", [f(tag + "one", 1.0), self.blocks[op.query]])])
            up = g.op("Relu", [g.op("Sub", [pre, gate])])
            down = g.op("Relu", [g.op("Sub", [g.op("Neg", [pre]), gate])])
            x = g.op("ReduceSum", [g.op("Sub", [up, down]), f(tag + "axes", [-1], np.int64)], keepdims=1)
        return g.op("Add", [x, g.op("Mul", [f(tag + "const", op.const), self.last(F, tag + "beta")])])

    def linear(self, op, tag):
        g = self.g
        x = None
        for j, (k, c) in enumerate(op.terms):
            term = g.op("Mul", [g.const(f"{tag}c{j}", c), self.blocks[k]])
            x = term if x is None else g.op("Add", [x, term])
        if x is None:
            raise _refusal(f"linear sublayer '{op.name}' has no terms")
        if op.beta is not None and op.const:
            x = g.op("Add", [x, g.op("Mul", [g.const(tag + "const", op.const), self.last(self.blocks[op.beta], tag + "beta")])])
        return x

    def anyof(self, op, tag):
        g, f = self.g, self.g.const
        cols = [g.op("Slice", [self.blocks[b], f(f"{tag}b{j}0", [1], np.int64), f(f"{tag}b{j}1", [2], np.int64),
                               f(f"{tag}b{j}a", [-1], np.int64)]) for j, b in enumerate(op.bits)]
        bits = cols[0] if len(cols) == 1 else g.op("Concat", cols, axis=-1)
        slots = np.zeros((len(op.bits), op.width))
        slots[np.arange(len(op.bits)), op.slots] = 1.0
        total = g.op("ReduceSum", [bits, f(tag + "axes", [-1], np.int64)], keepdims=1)
        none = g.op("Relu", [g.op("Sub", [self.blocks["not_bos"], total])])
        default = np.zeros((1, op.width))
        default[0, op.default] = 1.0
        return g.op("Add", [g.op("MatMul", [bits, f(tag + "slots", slots)]), g.op("Mul", [none, f(tag + "default", default)])])

    def sign(self, op, tag):
        g, f = self.g, self.g.const
        z = g.op("Add", [g.op("Mul", [f(tag + "scale", op.scale), self.blocks[op.x]]),
                         g.op("Mul", [f(tag + "offset", op.offset), self.last(self.blocks[op.beta], tag + "beta")])])
        b = g.op("Div", [g.op("Add", [g.op("Sign", [z]), f(tag + "one", 1.0)]), f(tag + "two", 2.0)])
        return g.op("Concat", [g.op("Relu", [g.op("Sub", [self.blocks["not_bos"], b])]),
                               g.op("Relu", [g.op("Sub", [b, self.blocks["bos"]])])], axis=-1)

    def lookuphead(self, op, tag):
        g, f = self.g, self.g.const
        bos, not_bos = self.blocks["bos"], self.blocks["not_bos"]
        default = np.zeros((1, op.width))
        default[0, op.default] = 1.0
        v = (g.op("Mul", [self.blocks[op.value], not_bos]) if op.value is not None
             else g.op("Mul", [self.expand(f(tag + "zeros", np.zeros((1, op.width))), op.width), not_bos]))
        v = g.op("Add", [v, g.op("Mul", [bos, f(tag + "default", default)])])            # BOS's row: the default
        qW = g.op("MatMul", [self.concat(op.query), f(tag + "qk.weight", op.W)])
        k_t = g.op("Transpose", [self.concat(op.key)], perm=[0, 2, 1])
        scores = g.op("MatMul", [qW, k_t], out=f"{tag}scores")                          # (B, query, key)
        if op.mask == "past":
            later = g.op("Greater", [g.op("Unsqueeze", [self.pos_i, f(tag + "ax0", [0], np.int64)]),
                                     g.op("Unsqueeze", [self.pos_i, f(tag + "ax1", [1], np.int64)])])
            scores = g.op("Where", [later, f(tag + "neg_inf", -np.inf), scores])
        elif op.mask != "none":
            raise _refusal(f"lookup head '{op.name}': the mask {op.mask!r} has no ONNX form here")
        pick = g.op("ArgMax", [scores], axis=-1, keepdims=0)                            # the unique maximum
        keys = g.op("Reshape", [self.pos_i, f(tag + "keys", [1, 1, -1], np.int64)])
        chosen = g.op("Equal", [g.op("Unsqueeze", [pick, f(tag + "ax2", [-1], np.int64)]), keys])
        att = g.op("Cast", [chosen], to=g.elem, out=f"{tag}pattern")                   # one-hot (B, query, key)
        x = g.op("Sub", [g.op("MatMul", [att, v]), bos])
        # clean-up MLP relu(4x - 2) - relu(4x - 3): exactly 1 for x >= 3/4, 0 for x <= 1/2 (BOS rows 0)
        four_x = g.op("Mul", [f(tag + "four", 4.0), x])
        return g.op("Sub", [g.op("Relu", [g.op("Sub", [four_x, f(tag + "two", 2.0)])]),
                            g.op("Relu", [g.op("Sub", [four_x, f(tag + "three", 3.0)])])])


def write_length_free(g, model) -> str:
    """Every sublayer of `model` into the graph `g` (interop.onnx_graph._Graph); returns the output block."""
    w = _Writer(g, model)
    for k, op in enumerate(model.ops):
        kind = type(op).__name__
        method = getattr(w, kind.lower(), None)
        if method is None:
            raise _refusal(f"a length-free model's sublayer {k} ('{getattr(op, 'name', '')}', {kind}) has no ONNX "
                           f"form in this export")
        w.blocks[op.name] = method(op, f"ops.{k}.{kind.lower()}.")
    return w.blocks[model.output_block]


def metadata(model, dtype: str) -> dict:
    output = {"kind": "categorical", "encoding": "categorical", "classes": model.config()["classes"]}
    return {"rasplay.vocab": json.dumps([model.bos] + list(model.vocab), ensure_ascii=False),
            "rasplay.bos_id": "0", "rasplay.max_len": "null", "rasplay.length_free": "true",
            "rasplay.output": json.dumps(output, ensure_ascii=False),
            "rasplay.output_name": json.dumps(model.output_name, ensure_ascii=False),
            "rasplay.attention": "hard", "rasplay.dtype": dtype, "rasplay.graph_output": "logits",
            "rasplay.input": "input_ids: 0 (BOS) then the tokens' ids (vocab[i] is id i, vocab[0] being BOS); any "
                             "length; position p+1 is input position p"}
