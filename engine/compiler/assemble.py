"""Pass 8, assemble: embeddings, heads and MLPs stacked into the docs/weights.md layout, the
unembedding, and the BOS position's fixed behaviour.

Token ids: 0 is BOS, token i of the vocabulary is i + 1. Position 0 is BOS; position p >= 1 holds
the input's index p - 1.

BOS: the residual at the BOS position does not depend on the input (BOS attends only to itself), so
it is computed here, layer by layer, and each layer's `bos` column is set so that at BOS every
head's query, key and value are exactly what the construction needs (the key scores the BOS level,
the value is the aggregate's default or 1 for a selector width) and every MLP unit is off.
"""
from __future__ import annotations

import numpy as np

from ..numpy_transformer import HARD_TOLERANCE
from .fused import lookup
from .heads import HeadWeights
from .mlps import MLPWeights
from .plan import Block, Plan
from .validate import Program

MAX_LISTED_VALUES = 100_000     # a numerical output lists its possible values in the config up to this many


def assemble_model(program: Program, plan: Plan, d: int, heads: list[HeadWeights], mlps: dict[int, MLPWeights],
             beta: float, causal: bool = False, output_values=None) -> tuple[dict, dict]:
    """(config, weights). output_values: the numerical output's possible values (listed in the config
    so that a reader can decode the output number without the compiler)."""
    offset = 1 if plan.pre_mlp else 0
    n_layers = plan.layers + offset
    per_layer: list[list[HeadWeights]] = [[] for _ in range(n_layers)]
    for hw in heads:
        per_layer[hw.plan.layer + offset - 1].append(hw)
    mlp_of = {m + offset - 1: w for m, w in mlps.items()}
    H = max([1] + [len(x) for x in per_layer])
    dh = max([1] + [max(hw.q.shape[0], hw.v.shape[0]) for hw in heads])
    dm = max([1] + [w.width for w in mlps.values()])
    one = _block(plan, "one")
    bos = _block(plan, "bos")

    V, N = len(program.vocab), program.max_len
    w: dict[str, np.ndarray] = {}
    tok = np.zeros((V + 1, d))
    pos = np.zeros((N + 1, d))
    # `one`, 1 at every position: written by the embedding table with fewer rows (fewer weights)
    (tok if V <= N else pos)[:, one.start] = 1.0
    tok[0, bos.start] = 1.0
    tokens = next((b for b in plan.blocks if b.name == "tokens"), None)
    if tokens is not None:
        tok[1 + np.arange(V), tokens.dims[lookup(np.asarray(tokens.values), program.vocab_array)]] = 1.0
    indices = next((b for b in plan.blocks if b.name == "indices"), None)
    if indices is not None:
        pos[1 + np.arange(N), indices.dims[np.arange(N)]] = 1.0
    w["tok_emb.weight"], w["pos_emb.weight"] = tok, pos

    x_bos = tok[0] + pos[0]
    for i in range(n_layers):
        q, k, v = np.zeros((H * dh, d)), np.zeros((H * dh, d)), np.zeros((H * dh, d))
        o = np.zeros((d, H * dh))
        v_bos = np.zeros(H * dh)
        for h, hw in enumerate(per_layer[i]):
            rows = slice(h * dh, h * dh + hw.q.shape[0])
            vrows = slice(h * dh, h * dh + hw.v.shape[0])
            q[rows], k[rows], v[vrows] = hw.q, hw.k, hw.v
            o[:, vrows] = hw.o
            _set_bos(q, rows, hw.q_bos, x_bos, bos)
            _set_bos(k, rows, hw.k_bos, x_bos, bos)
            _set_bos(v, vrows, hw.v_bos, x_bos, bos)
            v_bos[vrows] = hw.v_bos
        x_bos = x_bos + o @ v_bos                      # BOS attends to itself only
        fc1, b1, fc2 = np.zeros((dm, d)), np.zeros(dm), np.zeros((d, dm))
        if i in mlp_of:
            m = mlp_of[i]
            fc1[:m.width], b1[:m.width], fc2[:, :m.width] = m.fc1, m.b1, m.fc2
            gated = m.width - m.erase
            if i < n_layers - 1:   # the last MLP's output at BOS is read by nothing: no gate there
                # every unit off at BOS (at -1 or below); padding units stay all zero (relu(0) = 0)
                pre = fc1[:gated] @ x_bos + b1[:gated]
                on = np.nonzero(pre > -1.0)[0]
                fc1[on, bos.start] += -1.0 - pre[on]
            if m.erase:            # erasure units stay on at BOS: the BOS residual loses the dead value too
                x_bos = x_bos + fc2[:, gated:m.width] @ np.maximum(fc1[gated:m.width] @ x_bos + b1[gated:m.width], 0)
        p = f"layers.{i}."
        w.update({p + "attn.q.weight": q, p + "attn.k.weight": k, p + "attn.v.weight": v, p + "attn.o.weight": o,
                  p + "mlp.fc1.weight": fc1, p + "mlp.fc1.bias": b1, p + "mlp.fc2.weight": fc2,
                  p + "mlp.fc2.bias": np.zeros(d)})

    U, output = _unembed(plan, d, one, output_values)
    w["unembed.weight"], w["unembed.bias"] = U, np.zeros(U.shape[0])

    config = {"vocab": [program.bos] + [_json(t) for t in program.vocab], "bos_id": 0, "max_len": N + 1,
              "d_model": d, "n_layers": n_layers, "n_heads": H, "d_head": dh, "d_mlp": dm,
              "layer_norm": False, "attn_scale": beta, "causal": bool(causal), "prepend_bos": True,
              "hard_tolerance": HARD_TOLERANCE, "output": output}
    return config, w


def _unembed(plan: Plan, d: int, one: Block, output_values) -> tuple[np.ndarray, dict]:
    """The unembedding that reads the output from the residual stream, and the config's `output`."""
    out = plan.output
    if out.encoding == "categorical":
        classes = np.asarray(out.classes)
        U = np.zeros((len(classes), d))
        r = out.reader
        dims = np.array([one.start]) if r.block is None else r.block.dims
        cls = lookup(classes, np.asarray(r.values))
        ok = (cls >= 0) & ~np.asarray(r.bad)
        U[cls[ok], dims[ok]] = 1.0
        output = {"kind": "categorical", "classes": [_json(c) for c in classes.tolist()],
                  "type": _type_name(classes)}
    else:
        U = np.zeros((1, d))
        r = out.reader
        if r.terms is not None:
            for blk, a in r.terms:
                U[0, blk.start] += a
            U[0, one.start] += r.affine[1]
        elif r.affine is not None:
            U[0, r.block.start] = r.affine[0]
            U[0, one.start] += r.affine[1]
        else:
            dims = np.array([one.start]) if r.block is None else r.block.dims
            ok = ~np.asarray(r.bad)
            U[0, dims[ok]] = np.asarray(r.values, dtype=np.float64)[ok]
        output = {"kind": "numerical", "type": _type_name(output_values),
                  "values": None if output_values is None or len(output_values) > MAX_LISTED_VALUES
                  else [_json(v) for v in np.asarray(output_values).tolist()]}
    return U, output


def _type_name(values) -> str | None:
    """The evaluator's type of the output values: "int", "float", "bool" or "str", or "mixed" (classes of
    several types: an aggregate's default of another type beside its values)."""
    if values is None:
        return "float"
    kind = np.asarray(values).dtype.kind
    return {"i": "int", "u": "int", "f": "float", "b": "bool", "U": "str", "O": "mixed"}.get(kind)


def _block(plan: Plan, kind: str) -> Block:
    return next(b for b in plan.blocks if b.kind == kind)


def _set_bos(W: np.ndarray, rows: slice, desired: np.ndarray, x_bos: np.ndarray, bos: Block):
    """Make W @ x_bos equal `desired` on `rows` by adjusting the bos column (bos is 0 off BOS)."""
    W[rows, bos.start] += desired - W[rows] @ x_bos


def _json(v):
    if isinstance(v, (np.generic,)):
        return v.item()
    return v


def describe_heads(plan: Plan, heads: list[HeadWeights], name_of) -> list[dict]:
    offset = 1 if plan.pre_mlp else 0
    slots: dict[int, int] = {}
    out = []
    for hw in heads:
        h = hw.plan
        layer = h.layer + offset
        slot = slots.get(layer, 0)
        slots[layer] = slot + 1
        span = h.selector.origin
        out.append({"layer": layer, "head": slot, "selector": name_of(h.selector),
                    "label": h.selector.label or h.selector.describe(),
                    "line": span.line if span is not None and span.source == "<program>" else None,
                    "mode": h.mode, "part": f"{h.part[0] + 1}/{h.part[1]}" if h.part else None,
                    "serves": list(h.serves), "terms": len(h.tables), "bos_level": h.bos_level,
                    "width": int(max(hw.q.shape[0], hw.v.shape[0]))})
    return out


def describe_mlps(plan: Plan, mlps: dict[int, MLPWeights], n_layers: int) -> list[dict]:
    offset = 1 if plan.pre_mlp else 0
    out = []
    for i in range(n_layers):
        m = mlps.get(i - offset + 1)
        out.append({"layer": i + 1, "width": m.width if m else 0, "targets": m.targets if m else []})
    return out
