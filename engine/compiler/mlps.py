"""Pass 7, build the MLPs: tabulate each fused function over its inputs' value sets.

Every MLP target is a value (an s-op, or a tuple of s-ops) computed from the blocks present before
its MLP. The table is built by evaluating the fused elementwise chain (engine.elementwise) at every
realizable combination of the inputs' values, then turned into ReLU units:

* categorical inputs only: one unit per combination, relu(sum of the matching one-hots - (k-1)),
  which is 1 exactly at that combination; its output weights write the result's encoding.
* numerical inputs too: the combination of categorical values gates a group of units (a large
  negative weight unless every one-hot matches); within the group the result is a function of a
  scalar t, a linear projection of the numerical inputs that is one-to-one on their values. That
  is the linear part of the function when it has one (`opens - closes`, `(i+1) * (a - b)`), else a
  lexicographic combination. Along sorted t the result is a step function: a base unit for the
  smallest t and, at each midpoint where the result changes, a clamped ramp
  relu(z) - relu(z - 1), z = (t - mid) / w + 1/2, w = half the gap there. It is exact on every
  value and tolerates input errors up to a quarter of the gap.
* a numerical result that is linear in numerical inputs is computed exactly by relu(x) - relu(-x).

Units test classes of input values where that has fewer weights (gates.py); a categorical result's
most common value may come from one unit that is always on, corrected by the others' units.
At the BOS position every unit is switched off (the assembly pass sets the BOS column).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..lang.errors import RaspError
from ..program import Node
from .fused import Fused, block_domain, depends_on, lookup, unique_values
from .gates import Gates, coarse_gates, fine_gates, nonzero, result_labels
from .plan import Block, Plan, Target, mlp


@dataclass
class MLPWeights:
    layer: int                    # analysis layer (0: the pre-attention MLP)
    fc1: np.ndarray               # (h, d)
    b1: np.ndarray                # (h,)
    fc2: np.ndarray               # (d, h)
    targets: list = field(default_factory=list)   # per target: name, units, inputs, method
    erase: int = 0                # the last `erase` units erase dead blocks (reuse.py): left on at BOS

    @property
    def width(self) -> int:
        return self.fc1.shape[0]


class _Units:
    """Hidden units being collected: fc1 rows, biases, fc2 columns."""

    def __init__(self, d: int):
        self.d = d
        self.w1: list[np.ndarray] = []
        self.b1: list[np.ndarray] = []
        self.w2: list[np.ndarray] = []   # each (n, d): rows = units

    ties = 0   # inputs at which float rounding of the RASP ops decides the value (e.g. round(2.5 +- 1e-16))

    def add(self, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray):
        if len(b1):
            self.w1.append(w1)
            self.b1.append(b1)
            self.w2.append(w2)

    @property
    def count(self) -> int:
        return sum(len(b) for b in self.b1)

    def nonzero(self) -> int:
        return int(sum(np.count_nonzero(a) for part in (self.w1, self.b1, self.w2) for a in part))

    def arrays(self):
        if not self.b1:
            return np.zeros((0, self.d)), np.zeros(0), np.zeros((self.d, 0))
        return np.vstack(self.w1), np.concatenate(self.b1), np.vstack(self.w2).T


class _Output:
    """A target's value at each domain point, and how to write it into the residual."""

    def __init__(self, block: Block, y, valid: np.ndarray):
        self.block, self.y, self.valid = block, y, valid
        self.categorical = block.kind == "categorical"

    def rows(self, y, d: int, sign: float = 1.0) -> np.ndarray:
        """fc2 rows (one per entry of y) writing y's encoding."""
        out = np.zeros((len(y), d))
        if self.categorical:
            out[np.arange(len(y)), self.block.start + np.asarray(y, dtype=np.int64)] = sign
        else:
            out[:, self.block.start] = sign * np.asarray(y, dtype=np.float64)
        return out

    def delta_rows(self, y0, y1, d: int) -> np.ndarray:
        if self.categorical:
            return self.rows(y1, d) - self.rows(y0, d)
        return self.rows(np.asarray(y1, dtype=np.float64) - np.asarray(y0, dtype=np.float64), d)

    def same(self, a, b) -> np.ndarray:
        if self.categorical:
            return np.asarray(a) == np.asarray(b)
        return np.isclose(a, b, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ linear structure

@dataclass
class _Form:
    """A value as a function of the numerical inputs x, per combination c of categorical values:
    const (no dependence), lin (A[c] @ x + b[c]), or nonlin (through the coordinates `coords`)."""
    kind: str
    A: np.ndarray | None = None
    b: np.ndarray | None = None
    values: np.ndarray | None = None
    coords: list = field(default_factory=list)

    def as_coords(self) -> list:
        if self.kind == "lin":
            return [(self.A, self.b)]
        return list(self.coords)


LINEAR_OPS = ("+", "-", "neg", "pos", "*", "/")


class _Linearizer:
    def __init__(self, cat_env: dict, C: int, num: dict, J: int, virtual: dict):
        self.cat_env, self.C, self.num, self.J, self.virtual = cat_env, C, num, J, virtual
        self.memo: dict = {}
        self.fused = Fused(cat_env, C, virtual)

    def form(self, node) -> _Form:
        key = node.id if isinstance(node, Node) else node
        if key not in self.memo:
            self.memo[key] = self._form(node, key)
        return self.memo[key]

    def _form(self, node, key) -> _Form:
        C, J = self.C, self.J
        if key in self.num:
            j, identity = self.num[key]
            e = np.zeros((C, J))
            e[:, j] = 1.0
            return _Form("lin", e, np.zeros(C)) if identity else _Form("nonlin", coords=[(e, np.zeros(C))])
        if depends_on(node, lambda k: k in self.cat_env, self.virtual) is not None:
            values, _ = self.fused.value(node)
            return _Form("const", values=np.asarray(values))
        if key in self.virtual:
            coords = []
            for p in self.virtual[key].parts:
                coords += self.form(p).as_coords()
            return _Form("nonlin", coords=coords)
        forms = [self.form(c) for c in node.inputs]
        if node.op in LINEAR_OPS:
            ops = [forms[x] if t == "arg" else _Form("const", values=np.broadcast_to(np.asarray(x), (C,)))
                   for t, x in node.template]
            out = _linear_op(node.op, ops, C)
            if out is not None:
                return out
        coords = []
        for f in forms:
            coords += f.as_coords()
        return _Form("nonlin", coords=coords)


def _numeric(f: _Form) -> bool:
    return f.kind == "const" and f.values.dtype.kind in "bif"


def _as_lin(f: _Form, C: int, J: int):
    if f.kind == "lin":
        return f.A, f.b
    return np.zeros((C, J)), f.values.astype(np.float64)


def _linear_op(op: str, ops: list[_Form], C: int) -> _Form | None:
    if not any(f.kind == "lin" for f in ops) or any(f.kind == "nonlin" for f in ops):
        return None
    if not all(f.kind == "lin" or _numeric(f) for f in ops):
        return None
    J = next(f.A.shape[1] for f in ops if f.kind == "lin")
    if op in ("+", "-"):
        (A1, b1), (A2, b2) = _as_lin(ops[0], C, J), _as_lin(ops[1], C, J)
        s = 1.0 if op == "+" else -1.0
        return _Form("lin", A1 + s * A2, b1 + s * b2)
    if op in ("neg", "pos"):
        s = -1.0 if op == "neg" else 1.0
        return _Form("lin", s * ops[0].A, s * ops[0].b)
    if op == "*":
        lin, const = (ops[0], ops[1]) if ops[0].kind == "lin" else (ops[1], ops[0])
        if const.kind != "const":
            return None
        c = const.values.astype(np.float64)
        return _Form("lin", lin.A * c[:, None], lin.b * c)
    if op == "/" and ops[0].kind == "lin" and ops[1].kind == "const":
        c = ops[1].values.astype(np.float64)
        if (c == 0).any():
            return None
        return _Form("lin", ops[0].A / c[:, None], ops[0].b / c)
    return None


def _dedupe(coords: list) -> list:
    out = []
    for A, b in coords:
        if not np.any(A):
            continue
        if not any(np.allclose(A, A2) and np.allclose(b, b2) for A2, b2 in out):
            out.append((A, b))
    return out


# ------------------------------------------------------------------ one target

def _target_output(t: Target, domain, virtual: dict) -> _Output:
    fused = Fused(domain.env, domain.size, virtual)
    block = t.block
    if t.components is None:
        y, bad = fused.value(t.node)
        if block.kind == "categorical":
            idx = lookup(np.asarray(block.values), y)
            return _Output(block, idx, ~bad & (idx >= 0))
        return _Output(block, np.asarray(y, dtype=np.float64), ~bad)
    # a joint block: the index of the tuple of component values
    codes, bad = [], np.zeros(domain.size, dtype=bool)
    row_codes = []
    for n in t.components:
        y, b = fused.value(n)
        table = unique_values(np.asarray(block.provides[n.id]), exact=True)
        c = lookup(table, y)
        codes.append(c)
        row_codes.append(lookup(table, np.asarray(block.provides[n.id])))
        bad |= b | (c < 0)
    sizes = [max(int(np.max(rc)) + 1, int(np.max(c, initial=0)) + 1) for rc, c in zip(row_codes, codes)]
    key = np.ravel_multi_index(tuple(np.where(bad, 0, c) for c in codes), sizes)
    row_key = np.ravel_multi_index(tuple(row_codes), sizes)
    order = np.argsort(row_key)
    pos = np.clip(np.searchsorted(row_key[order], key), 0, len(order) - 1)
    idx = np.where(row_key[order][pos] == key, order[pos], -1)
    return _Output(block, idx, ~bad & (idx >= 0))


def build_target(t: Target, plan: Plan, d: int, limit: int, name: str, span) -> tuple[_Units, dict]:
    nodes = list(t.components) if t.components is not None else [t.node]
    srcs: list[Block] = []
    for n in nodes:
        found = plan.availability.sources(n, mlp(t.layer))
        if found is None:
            raise AssertionError(f"{name}: inputs missing before the MLP of layer {t.layer}")
        for b in found:
            if all(b is not x for x in srcs):
                srcs.append(b)
    srcs.sort(key=lambda b: b.order)
    domain = block_domain(srcs, plan.constraints, limit, f"'{name}'", span, plan.joints)
    out = _target_output(t, domain, plan.virtual)
    cat = [(i, b) for i, b in enumerate(srcs) if b.kind == "categorical"]
    num = [(i, b) for i, b in enumerate(srcs) if b.kind == "numerical"]
    info = {"name": name, "inputs": [b.name for b in srcs], "combinations": int(domain.size)}
    units, info["method"] = _table_units(out, domain, cat, num, nodes, plan.virtual, fine_gates(domain, cat, d), d)
    coarse = coarse_gates(domain, cat, num, result_labels(out), d) if cat else None
    if coarse is not None:
        # the cost model: the table over classes of input values when it has fewer non-zero weights
        alt, method = _table_units(out, domain, cat, num, nodes, plan.virtual, coarse, d)
        if alt.nonzero() < units.nonzero():
            merged = ", ".join(f"{k} {v} values in {c} classes" for k, (v, c) in coarse.merged.items())
            units, info["method"] = alt, f"{method}; over classes of input values ({merged})"
    info["units"] = units.count
    if units.ties:
        info["ties"] = units.ties
    return units, info


def _table_units(out: _Output, domain, cat: list, num: list, nodes: list, virtual: dict, gates: Gates,
                 d: int) -> tuple[_Units, str]:
    units = _Units(d)
    if not num:
        _categorical_units(units, out, gates)
        return units, "one unit per input combination"
    return units, _numerical_units(units, out, domain, cat, num, nodes, virtual, gates)


def _categorical_units(units: _Units, out: _Output, gates: Gates):
    d = units.d
    keep = out.valid.copy()
    if not out.categorical:
        keep &= np.asarray(out.y, dtype=np.float64) != 0
    pts = np.nonzero(keep)[0]
    if not gates.sizes:
        pts = pts[:1]
    elif len(pts):
        code = np.ravel_multi_index(tuple(c[pts] for c in gates.point_class), gates.sizes)
        _, first = np.unique(code, return_index=True)
        pts = pts[first]
    w1, share = gates.units([c[pts] for c in gates.point_class], d)
    w1, b1, y = w1[:len(pts)], 1.0 + share[:len(pts)], np.asarray(out.y)[pts]
    w2 = out.rows(y, d)
    if out.categorical and out.valid.all() and len(y) > 2:
        # the most common result from one unit that is always on, which the unit of each other result
        # corrects (its +1 on its result, -1 on the common one): exactly one unit fires at a realizable
        # combination, so the one-hot is the same; kept when it has fewer non-zero weights
        values, counts = np.unique(y, return_counts=True)
        other = y != values[counts.argmax()]
        common = out.rows(values[counts.argmax():counts.argmax() + 1], d)
        alt = nonzero(w1[other], b1[other]) + np.count_nonzero(w2[other] - common) + 3  # + bias, fc2, a BOS gate
        if alt < nonzero(w1, b1, w2):
            units.add(np.zeros((1, d)), np.ones(1), common)
            w1, b1, w2 = w1[other], b1[other], w2[other] - common
    units.add(w1, b1, w2)


def _numerical_units(units: _Units, out: _Output, domain, cat: list, num: list, nodes: list, virtual: dict,
                     gates: Gates) -> str:
    P = domain.size
    if cat:
        code = np.ravel_multi_index(tuple(gates.point_class), gates.sizes)
        combos, first, combo_of = np.unique(code, return_index=True, return_inverse=True)
        combo_of = combo_of.ravel()
    else:
        combos, first, combo_of = np.zeros(1), np.zeros(1, dtype=np.int64), np.zeros(P, dtype=np.int64)
    C = len(combos)
    cat_env = {}
    for i, b in cat:
        for key, arr in b.provides.items():
            cat_env[key] = np.asarray(arr)[domain.index[i][first]]
    X = np.stack([b.phys_values()[domain.index[i]] for i, b in num], axis=1)          # (P, J)
    xmax = np.array([np.max(np.abs(b.phys_values())) for _, b in num])
    numkeys = {}
    for j, (_, b) in enumerate(num):
        for key in b.provides:
            numkeys[key] = (j, b.identity)
    lin = _Linearizer(cat_env, C, numkeys, len(num), virtual)
    forms = [lin.form(n) for n in nodes]
    linear = (len(forms) == 1 and forms[0].kind == "lin" and not out.categorical)
    coords = [] if linear else _dedupe([c for f in forms for c in f.as_coords()])
    num_dims = np.array([b.start for _, b in num])
    order = np.argsort(combo_of, kind="stable")
    bounds = np.searchsorted(combo_of[order], np.arange(C + 1))
    used = 0
    for c in range(C):
        pts = order[bounds[c]:bounds[c + 1]]
        pts = pts[out.valid[pts]]
        if not len(pts):
            continue
        row, share = gates.units([[pc[pts[0]]] for pc in gates.point_class], units.d)
        gate = (row[0], float(share[0]))
        if linear:
            _linear_units(units, out, forms[0], c, gate, num_dims, xmax)
        else:
            used = max(used, _step_units(units, out, X[pts], np.asarray(out.y)[pts],
                                         [(A[c], b[c]) for A, b in coords], gate, num_dims, xmax))
    if linear:
        return "linear in its numerical inputs: relu(x) - relu(-x)"
    return f"steps along {used} coordinate{'s' if used != 1 else ''} per categorical combination"


def _majority(out: _Output, y: np.ndarray, group: np.ndarray, yu: np.ndarray) -> np.ndarray:
    """Per group of inputs that project to the same point, the most frequent value."""
    keys = np.asarray(y) if out.categorical else np.round(np.asarray(y, dtype=np.float64), 12)
    pairs, counts = np.unique(np.stack([group, keys.astype(np.float64)], axis=1), axis=0, return_counts=True)
    best = {}
    for (g, v), c in zip(pairs.tolist(), counts.tolist()):
        if c > best.get(int(g), (0, None))[0]:
            best[int(g)] = (c, v)
    out_y = np.array(yu, copy=True)
    for g, (_, v) in best.items():
        out_y[g] = int(v) if out.categorical else v
    return out_y


def _gate(w1: np.ndarray, gate: tuple, B) -> np.ndarray:
    """Add the categorical test `gate` (fc1 row, bias share; see gates.py) scaled by B (per unit) to the
    units' fc1 rows; returns the bias it adds (B times the share: 0 when every test passes)."""
    B = np.asarray(B, dtype=np.float64).reshape(-1)
    w1 += B[:, None] * gate[0][None, :]
    return B * gate[1]


def _linear_units(units: _Units, out: _Output, form: _Form, c: int, gate: tuple, num_dims, xmax):
    d = units.d
    base_w1 = np.zeros((1, d))
    units.add(base_w1, 1.0 + _gate(base_w1, gate, 1.0), out.rows([form.b[c]], d))
    a = form.A[c]
    js = np.nonzero(a)[0]
    for sign in (1.0, -1.0):
        w1 = np.zeros((len(js), d))
        w1[np.arange(len(js)), num_dims[js]] = sign * a[js]
        B = np.abs(a[js]) * xmax[js] + 1.0
        units.add(w1, _gate(w1, gate, B), out.rows(np.full(len(js), sign), d))


def _step_units(units: _Units, out: _Output, X: np.ndarray, y: np.ndarray, coords: list, gate: tuple,
                num_dims, xmax) -> int:
    """Units for one categorical combination; returns how many coordinates the steps run along."""
    d = units.d
    coords = [(A, b) for A, b in coords if np.any(A)]
    T = np.stack([X @ A + b for A, b in coords], axis=1) if coords else np.zeros((len(X), 0))
    # canonical coordinate values (values equal to 12 digits are one value), their gaps and spans
    keep, gaps, spans = [], [], []
    for r in range(T.shape[1]):
        u = unique_values(T[:, r])
        if u.size > 1:
            T[:, r] = u[_nearest(u, T[:, r])]
            keep.append(r)
            gaps.append(np.min(np.diff(u)))
            spans.append(u[-1] - u[0])
    # lexicographic projection t = sum_r mu_r T_r: each coordinate's span is under half the previous one's gap
    mu = np.ones(len(keep))
    for i in range(len(keep) - 2, -1, -1):
        mu[i] = 2.0 * np.dot(mu[i + 1:], spans[i + 1:]) / gaps[i]
    if len(keep):
        mu = mu / mu[0]
        a_t = sum(m * coords[r][0] for m, r in zip(mu, keep))
        b_t = float(sum(m * coords[r][1] for m, r in zip(mu, keep)))
    else:
        a_t, b_t = np.zeros(X.shape[1]), 0.0
    rows, first, inverse = np.unique(T[:, keep], axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    yu = y[first]
    conflict = ~out.same(y, yu[inverse])
    raw = [(np.eye(X.shape[1])[j], 0.0) for j in range(X.shape[1])]
    if conflict.any() and not _same_coords(coords, raw):
        # the projection merges inputs with different results (a linear part such as 7*a + 3*b is 3.0
        # at one input and 2.9999999999999996 at another, and the evaluator keeps them apart): step
        # along the numerical inputs themselves, which are one-to-one on the domain
        return _step_units(units, out, X, y, raw, gate, num_dims, xmax)
    if conflict.any():
        yu = _majority(out, y, inverse, yu)
        units.ties += int(np.unique(inverse[conflict]).size)
    t = rows @ mu if len(keep) else np.zeros(len(rows))
    srt = np.argsort(t, kind="stable")
    tu, yu = t[srt], yu[srt]
    base_w1 = np.zeros((1, d))
    units.add(base_w1, 1.0 + _gate(base_w1, gate, 1.0), out.rows(yu[:1], d))
    change = np.nonzero(~out.same(yu[1:], yu[:-1]))[0]
    if not len(change):
        return len(keep)
    t0, t1 = tu[change], tu[change + 1]
    if np.any(t1 <= t0):
        raise AssertionError("an MLP table's projection is not one-to-one (numerical precision)")
    mid, w = (t0 + t1) / 2.0, (t1 - t0) / 2.0
    tmax = float(np.dot(np.abs(a_t), xmax) + abs(b_t))
    B = (tmax + np.abs(mid)) / w + 2.0
    n = len(change)
    w1 = np.zeros((n, d))
    w1[:, num_dims] = a_t[None, :] / w[:, None]
    bias = (b_t - mid) / w + 0.5 + _gate(w1, gate, B)
    delta = out.delta_rows(yu[change], yu[change + 1], d)
    units.add(w1, bias, delta)
    units.add(w1.copy(), bias - 1.0, -delta)
    return len(keep)


def _same_coords(a: list, b: list) -> bool:
    return len(a) == len(b) and all(np.array_equal(A1, A2) and float(b1) == float(b2)
                                    for (A1, b1), (A2, b2) in zip(a, b))


def _nearest(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Index of the nearest element of the sorted array u for each of v."""
    pos = np.clip(np.searchsorted(u, v), 1, len(u) - 1)
    return np.where(np.abs(u[pos - 1] - v) <= np.abs(u[pos] - v), pos - 1, pos)


# ------------------------------------------------------------------ all MLPs

def build_mlps(plan: Plan, d: int, name_of, limits) -> dict[int, MLPWeights]:
    """analysis layer -> the MLP computing that layer's targets."""
    out: dict[int, MLPWeights] = {}
    for layer in sorted({t.layer for t in plan.targets}):
        units = _Units(d)
        infos, spans = [], []
        for t in [t for t in plan.targets if t.layer == layer]:
            span = t.node.origin if t.node is not None else t.components[0].origin
            u, info = build_target(t, plan, d, limits.max_domain, name_of(t.key), span)
            units.w1 += u.w1
            units.b1 += u.b1
            units.w2 += u.w2
            infos.append(info)
            spans.append(span)
            if info.get("ties"):
                plan.notes.append(f"computing '{info['name']}': at {info['ties']} input value(s) float rounding in "
                                  f"the RASP ops decides the result (a tie such as round(2.5)); the MLP takes "
                                  f"the most common result there")
        if units.count > limits.max_hidden:
            i = max(range(len(infos)), key=lambda i: infos[i]["units"])
            raise RaspError(f"the MLP of layer {layer} would need {units.count} hidden units (the limit is "
                            f"{limits.max_hidden}); computing '{infos[i]['name']}' alone needs {infos[i]['units']}",
                            spans[i], "limit")
        fc1, b1, fc2 = units.arrays()
        out[layer] = MLPWeights(layer, fc1, b1, fc2, infos)
    return out
