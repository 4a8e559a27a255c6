"""A causal program in causal B-RASP or C-RASP as a machine that reads one token at a time.

The value of every s-op at position i of a causal program depends only on tokens 0..i, so a program is
a transducer: a state summarising the prefix, and a step that reads the next token and gives the
target's value there. The state holds, per attention of the program (read from the dialect check's
selector shapes):

- a counting selector (key range: the prefix): how many keys of the prefix hold each (key values, value)
  pair; counts over keys that depend on the token alone are the shared per-token counters ("tok", t);
- a previous-position head (shift s): the last s values;
- a rightmost tie-break: per key values the value of its latest key, latest first.

Counters are exact integers and means exact fractions (the evaluator's floating point agrees with them
on every comparison with a constant of at most 1000 in the denominator for inputs shorter than 2^40
tokens). A step raises Unsupported for constructs outside this model; a value the evaluator would refuse
(a mean of strings) makes the position's output ERROR, and the input failed from there on.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .. import elementwise
from ..lang.errors import RaspError

ERROR = ("<error>",)                 # the output of a position where the program fails


class Unsupported(Exception):
    """A program the model cannot represent exactly (the verdict then samples)."""


class PositionError(Exception):
    """The program fails at this position (as the evaluator would)."""


def _scalar(x):
    v = x.tolist() if hasattr(x, "tolist") else x
    return v


def apply_fin(op: str, operands: list):
    """One elementwise operation on Python values, with the evaluator's semantics."""
    arrays = [np.asarray([x]) if not isinstance(x, (list, dict)) else x for x in operands]
    try:
        res = elementwise.apply(op, arrays, mixed=True)
    except RaspError as e:
        raise PositionError(e.message if hasattr(e, "message") else str(e)) from None
    if res.bad is not None and bool(np.asarray(res.bad).any()):
        raise PositionError(res.message or op)
    return _scalar(np.asarray(res.values, dtype=object)[0]) if res.values.dtype.kind == "O" else res.values.tolist()[0]


def atoms_of(fin) -> list:
    """The select atoms of a finite selector part (None, a node, or the dialect's list of conjuncts)."""
    if fin is None:
        return []
    if fin.kind == "select":
        return [fin]
    out = []
    for _, c in fin.children():
        for a in atoms_of(c):
            if all(a is not b for b in out):
                out.append(a)
    return out


def _is_number(v) -> bool:
    return isinstance(v, (int, float, Fraction)) and not isinstance(v, bool)


class Program:
    """One program's target as a step over a shared state (keys tagged by `tag`)."""

    def __init__(self, tag: str, interp, target, dialect, alphabet: tuple):
        self.tag, self.interp, self.target, self.d, self.alphabet = tag, interp, target, dialect, alphabet
        self.nodes = self._needed()
        self.token_only = self._token_only()
        self._pred_cache: dict = {}       # (finite selector part, key values, query values) -> bool
        self._fin_cache: dict = {}        # (node id, typed operands) -> value
        self._tok_cache: dict = {}        # (node id, token) -> a token-only node's value
        self.kinds = {n.id: self._summary_kind(n) for n in self.nodes}
        # how each node is computed at a position: "attend", "fin" or "linear"
        self.plan = [(n, self._how(n)) for n in self.nodes]

    # ---------------------------------------------------------------- structure

    def sort(self, node):
        if node.kind == "constant":
            return "fin"
        return self.d.sorts[node.id].tag

    def deps(self, node) -> list:
        k = node.kind
        if k in ("tokens", "constant"):
            return []
        if k == "indices":
            raise Unsupported("a position (indices) used as a value")
        if k in ("map", "sequencemap"):
            return list(node.inputs)
        if k in ("aggregate", "selector_width"):
            shape = self.d.shapes[node.selector.id]
            out = [node.sop] if k == "aggregate" else []
            if shape.kind in ("counting", "tiebreak"):
                if shape.range not in ("past", "strict_past"):
                    raise Unsupported("a selector that is not causal")
                for a in atoms_of(shape.finite):
                    out += [a.keys, a.queries]
            elif shape.kind != "shift":
                raise Unsupported(f"a {shape.kind} selector")
            return out
        raise Unsupported(f"the operation '{k}'")

    def _needed(self) -> list:
        seen, stack = {}, [self.target]
        while stack:
            n = stack.pop()
            if n.id not in seen:
                seen[n.id] = n
                stack.extend(self.deps(n))
        return [seen[i] for i in sorted(seen)]

    def _token_only(self) -> set:
        """Ids of the needed nodes whose value is a function of the current token alone."""
        out = set()
        for n in self.nodes:
            if n.kind in ("tokens", "constant") or (n.kind in ("map", "sequencemap")
                                                     and all(c.id in out for c in n.inputs)):
                out.add(n.id)
        return out

    def _how(self, n) -> str:
        if n.kind in ("aggregate", "selector_width"):
            return "attend"
        if n.kind in ("tokens", "constant"):
            return "fin"
        return "fin" if all(self.sort(c) == "fin" for c in n.inputs) else "linear"

    def uses_token_counts(self) -> bool:
        return "tok" in self.kinds.values()

    def _summary_kind(self, n) -> str | None:
        if n.kind not in ("aggregate", "selector_width"):
            return None
        shape = self.d.shapes[n.selector.id]
        if shape.kind != "counting":
            return shape.kind
        parts = [a.keys for a in atoms_of(shape.finite)] + ([n.sop] if n.kind == "aggregate" else [])
        return "tok" if all(p.id in self.token_only for p in parts) else "cnt"

    # ---------------------------------------------------------------- values

    def pred(self, fin, kv: tuple, qv: tuple, atoms: list) -> bool:
        if fin is None:
            return True
        key = (id(fin), tuple((type(v), v) for v in kv), tuple((type(v), v) for v in qv))   # 1, 1.0, True apart
        hit = self._pred_cache.get(key)
        if hit is None:
            hit = self._pred_cache[key] = bool(self._pred(fin, dict(zip((a.id for a in atoms), zip(kv, qv)))))
        return hit

    def _pred(self, fin, pairs: dict) -> bool:
        k = fin.kind
        if k == "select":
            key, query = pairs[fin.id]
            return bool(apply_fin(fin.predicate, [key, query]))
        if k in ("select_and", "and_list"):
            return all(self._pred(c, pairs) for _, c in fin.children())
        if k == "select_or":
            return any(self._pred(c, pairs) for _, c in fin.children())
        if k == "select_not":
            return not self._pred(fin.inner, pairs)
        raise Unsupported(f"the selector operation '{k}'")

    def value_at_token(self, node, token):
        """A token-only node's value for `token` (memoised)."""
        cache = self._tok_cache
        key = (node.id, token)
        if key not in cache:
            vals = {}
            for n in self.nodes:
                if n.id in self.token_only:
                    vals[n.id] = self._fin(n, vals, token)
                if n.id == node.id:
                    break
            cache[key] = vals[node.id]
        return cache[key]

    def _fin(self, n, vals: dict, token):
        if n.kind == "tokens":
            return token
        if n.kind == "constant":
            return n.value
        args = [vals[c.id] for c in n.inputs]
        key = (n.id,) + tuple((type(x), x) for x in args)
        try:
            return self._fin_cache[key]
        except KeyError:
            out = self._fin_cache[key] = apply_fin(n.op, n.operands(args))
            return out
        except TypeError:    # an unhashable value
            return apply_fin(n.op, n.operands(args))

    def linear(self, n, vals: dict):
        """A map over counts or means: exact arithmetic (comparisons give bools)."""
        ops = [Fraction(x) if _is_number(x) or isinstance(x, bool) else x for x in n.operands(
            [vals[c.id] for c in n.inputs])]
        op = n.op
        if any(not isinstance(x, (int, Fraction)) for x in ops):
            raise Unsupported(f"'{n.describe()}' mixes a count with a value that is not a number")
        if op in ("==", "!=", "<", ">", "<=", ">="):
            a, b = ops
            return {"==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
        if op == "neg":
            return -ops[0]
        if op == "pos":
            return ops[0]
        if op in ("+", "-", "*"):
            a, b = ops
            return a + b if op == "+" else a - b if op == "-" else a * b
        if op == "/" and ops[1] != 0:
            return ops[0] / ops[1]
        raise Unsupported(f"'{n.describe()}' on a count")

    # ---------------------------------------------------------------- one step

    def step(self, old: dict, new: dict, token):
        """The target's value at the position that reads `token`; updates this program's part of `new`
        (a copy of `old` with the per-token counters already counting the token)."""
        if old.get((self.tag, "failed")):
            return ERROR
        vals: dict = {}
        try:
            for n, how in self.plan:
                if how == "attend":
                    vals[n.id] = self._attend(n, old, new, vals, token)
                elif how == "fin":
                    vals[n.id] = self._fin(n, vals, token)
                else:
                    vals[n.id] = self.linear(n, vals)
        except PositionError:
            new[(self.tag, "failed")] = True
            return ERROR
        return vals[self.target.id]

    def _attend(self, n, old: dict, new: dict, vals: dict, token):
        shape = self.d.shapes[n.selector.id]
        v_i = vals[n.sop.id] if n.kind == "aggregate" else None
        if shape.kind == "shift":
            key = (self.tag, "shift", n.id)
            buf = old.get(key, ())
            new[key] = (buf + (v_i,))[-shape.shift:]
            return buf[-shape.shift] if len(buf) >= shape.shift else n.default
        atoms = atoms_of(shape.finite)
        kv = tuple(vals[a.keys.id] for a in atoms)
        qv = tuple(vals[a.queries.id] for a in atoms)
        if shape.kind == "tiebreak":
            key = (self.tag, "last", n.selector.id, n.sop.id)
            latest = ((kv, v_i),) + tuple(x for x in old.get(key, ()) if x[0] != kv)
            new[key] = latest
            return next((v for k, v in latest if self.pred(shape.finite, k, qv, atoms)), n.default)
        items = self._counts(n, shape, atoms, old, new, kv, v_i, token)
        chosen = [(v, c) for k, v, c in items if c > 0 and self.pred(shape.finite, k, qv, atoms)]
        total = sum(c for _, c in chosen)
        if n.kind == "selector_width":
            return total
        if self.sort(n) == "rat":
            if total == 0:
                return Fraction(n.default) if _is_number(n.default) or isinstance(n.default, bool) else n.default
            values = [(int(v) if isinstance(v, bool) else v, c) for v, c in chosen]
            if all(isinstance(v, int) for v, _ in values):
                return Fraction(sum(v * c for v, c in values), total)
            return sum(Fraction(v) * c for v, c in values) / total
        if total == 0:
            return n.default
        if total == 1:
            return chosen[0][0]
        if all(_is_number(v) for v, _ in chosen):
            raise Unsupported(f"'{n.describe()}' averages numbers it copies as symbols")
        raise PositionError("a mean of several values that are not numbers")

    def _counts(self, n, shape, atoms, old, new, kv, v_i, token) -> list:
        """(key values, value, count) over the keys of the selector's range at this position."""
        strict = shape.range == "strict_past"
        if self.kinds[n.id] == "tok":
            out = []
            for t in self.alphabet:
                c = new.get(("tok", t), 0) - (1 if strict and t == token else 0)
                if c:
                    k = tuple(self.value_at_token(a.keys, t) for a in atoms)
                    out.append((k, self.value_at_token(n.sop, t) if n.kind == "aggregate" else None, c))
            return out
        key = (self.tag, "cnt", n.selector.id, n.sop.id if n.kind == "aggregate" else None)
        before = dict(old.get(key, ()))
        after = dict(before)
        after[(kv, v_i)] = after.get((kv, v_i), 0) + 1
        new[key] = frozenset(after.items())
        return [(k, v, c) for (k, v), c in (before if strict else after).items()]


class Product:
    """Two programs (reference, submission) over one state: the per-token counters are shared."""

    def __init__(self, programs: list[Program], alphabet: tuple):
        self.programs, self.alphabet = programs, alphabet
        self.token_counts = any(p.uses_token_counts() for p in programs)

    def initial(self) -> frozenset:
        return frozenset()

    def step(self, state: frozenset, token) -> tuple[frozenset, list]:
        old = dict(state)
        new = dict(old)
        if self.token_counts:
            new[("tok", token)] = new.get(("tok", token), 0) + 1
        outs = [p.step(old, new, token) for p in self.programs]
        return frozenset(new.items()), outs

    def run(self, tokens) -> list[list]:
        """Each program's values on one input (the model's, to compare with the evaluator's)."""
        state, out = self.initial(), [[] for _ in self.programs]
        for t in tokens:
            state, outs = self.step(state, t)
            for column, v in zip(out, outs):
                column.append(v)
        return out
