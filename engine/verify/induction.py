"""Counter machines (causal C-RASP) proved equal by k-induction with z3 (the optional extra `verify`).

The two programs become one transition system over symbolic states: the per-token counters (shared by
both programs, so that what both count is one variable) and each program's own counters (keys counted
by values that depend on earlier counts). A finite value is a set of cases (value, condition); a count
is a linear term; a mean is a numerator and a denominator, compared by cross-multiplying where the
denominator is positive. Every state satisfies: counters are >= 0, and a selector's counters over all
its key values add up to the positions read. With the search's result that no input up to length L
differs (the base case), the solver shows that any k + 1 consecutive steps from such a state whose
first k outputs agree agree on the last one too (k < L): then no input of any length differs.
"""
from __future__ import annotations

import time
from fractions import Fraction

from .model import PositionError, Product, Program, Unsupported, apply_fin, atoms_of
from .search import differ

MAX_K = 6


def z3_missing() -> str | None:
    """None when z3 imports, else what to install."""
    try:
        import z3  # noqa: F401
    except ImportError:
        return "z3 is not installed (pip install 'rasplay[verify]'), so counting programs are not proved"
    return None


def _key(v):
    return (type(v).__name__, v)


def _merge(cases: list, z3) -> list:
    out: dict = {}
    for v, c in cases:
        k = _key(v)
        out[k] = (v, z3.Or(out[k][1], c) if k in out else c)
    return list(out.values())


class Frame:
    """One step's state variables, made on demand (the same keys in every frame)."""

    def __init__(self, z3, name: str, keys: dict):
        self.z3, self.name, self.keys, self.vars = z3, name, keys, {}

    def get(self, key):
        if key not in self.vars:
            self.keys.setdefault(key, len(self.keys))
            self.vars[key] = self.z3.Int(f"{self.name}_{self.keys[key]}")
        return self.vars[key]


class Symbolic:
    """One program's step over symbolic values."""

    def __init__(self, program: Program, z3):
        self.p, self.z3 = program, z3

    def step(self, frame: Frame, nxt: dict, tok_is: dict):
        tok_cases = list(tok_is.items())
        vals: dict = {"tok_is": tok_is}
        for n, how in self.p.plan:
            if how == "attend":
                vals[n.id] = self.attend(n, frame, nxt, vals)
            elif n.kind == "tokens":
                vals[n.id] = tok_cases
            elif n.kind == "constant":
                vals[n.id] = [(n.value, self.z3.BoolVal(True))]
            elif how == "fin":
                vals[n.id] = self.lift(n, vals)
            else:
                vals[n.id] = self.linear(n, vals)
        return vals[self.p.target.id]

    def lift(self, n, vals: dict) -> list:
        combos = [([], self.z3.BoolVal(True))]
        for c in n.inputs:
            combos = [(args + [v], self.z3.And(cond, c2)) for args, cond in combos for v, c2 in vals[c.id]]
        try:
            return _merge([(apply_fin(n.op, n.operands(args)), cond) for args, cond in combos], self.z3)
        except PositionError as e:
            raise Unsupported(f"'{n.describe()}', which fails on some value ({e})") from None

    def linear(self, n, vals: dict):
        ops = []
        for t, x in n.template:
            if t == "const":
                if isinstance(x, bool) or not isinstance(x, (int, float)):
                    raise Unsupported(f"'{n.describe()}' on a count")
                ops.append(("const", Fraction(x)))
            else:
                ops.append(vals[n.inputs[x].id])
        return self._linear(n, ops)

    def _linear(self, n, ops):
        z3, op = self.z3, n.op
        rats = [o for o in ops if o[0] == "rat"]
        den = rats[0][2] if rats else None
        if any(not z3.eq(z3.simplify(r[2]), z3.simplify(den)) for r in rats):
            raise Unsupported(f"'{n.describe()}' combines means with different denominators")

        def num(o):   # the numerator over den (counts and constants times den), and the value at den == 0
            if o[0] == "rat":
                return o[1], o[3]
            if o[0] == "const":
                return (z3.RealVal(o[1]) * den if den is not None else z3.RealVal(o[1])), o[1]
            return (o[1] * den if den is not None else o[1]), None

        parts = [num(o) for o in ops]
        if op in ("==", "!=", "<", ">", "<=", ">="):
            fn = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
                  ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}[op]
            cond = fn(parts[0][0], parts[1][0])
            if den is not None:
                d0, d1 = parts[0][1], parts[1][1]
                if d0 is None or d1 is None:
                    raise Unsupported(f"'{n.describe()}' compares a mean over no key with a count")
                cond = z3.If(den > 0, cond, z3.BoolVal(bool(fn(Fraction(d0), Fraction(d1)))))
            return [(True, cond), (False, z3.Not(cond))]
        return self._arith(n, op, ops, parts, den)

    def _arith(self, n, op, ops, parts, den):
        kinds = [o[0] for o in ops]
        if op in ("+", "-") and len(ops) == 2:
            (a, da), (b, db) = parts
            value = a + b if op == "+" else a - b
            dflt = None if da is None or db is None else (Fraction(da) + Fraction(db) if op == "+" else
                                                          Fraction(da) - Fraction(db))
        elif op == "neg":
            value, dflt = -parts[0][0], None if parts[0][1] is None else -Fraction(parts[0][1])
        elif op == "*" and "const" in kinds:
            c = next(o[1] for o in ops if o[0] == "const")
            (a, da) = next(p for p, o in zip(parts, ops) if o[0] != "const")
            value, dflt = a * self.z3.RealVal(c), None if da is None else Fraction(da) * c
        elif op == "/" and kinds[1] == "const" and ops[1][1] != 0:
            value, dflt = parts[0][0] / self.z3.RealVal(ops[1][1]), None if parts[0][1] is None else \
                Fraction(parts[0][1]) / ops[1][1]
        else:
            raise Unsupported(f"'{n.describe()}' on a count")
        if den is not None:
            return ("rat", value, den, dflt)
        return ("cnt", value)

    def attend(self, n, frame: Frame, nxt: dict, vals: dict):
        z3 = self.z3
        shape = self.p.d.shapes[n.selector.id]
        if shape.kind != "counting":
            raise Unsupported(f"a {shape.kind} head (only counting is encoded for the solver)")
        atoms = atoms_of(shape.finite)
        items = self.counters(n, shape, atoms, frame, nxt, vals)   # [(kv, v, term)]
        q_cases = [([], z3.BoolVal(True))]
        for a in atoms:
            q_cases = [(q + [v], z3.And(c, c2)) for q, c in q_cases for v, c2 in vals[a.queries.id]]
        total, weighted = 0, 0
        for q, cond in q_cases:
            chosen = [(v, term) for kv, v, term in items if self.p.pred(shape.finite, kv, tuple(q), atoms)]
            total = total + z3.If(cond, z3.Sum([t for _, t in chosen]) if chosen else z3.IntVal(0), 0)
            if n.kind == "aggregate":
                if any(not isinstance(v, (bool, int, float)) for v, _ in chosen):
                    raise Unsupported(f"'{n.describe()}' copies a value that is not a number")
                weighted = weighted + z3.If(cond, z3.Sum([t * z3.RealVal(Fraction(int(v) if isinstance(v, bool)
                                                                                      else v)) for v, t in chosen])
                                            if chosen else z3.RealVal(0), 0)
        if n.kind == "selector_width":
            return ("cnt", total)
        if self.p.sort(n) != "rat" or isinstance(n.default, str):
            raise Unsupported(f"'{n.describe()}' copies a value through a counting selector")
        return ("rat", weighted, total, n.default)

    def counters(self, n, shape, atoms, frame: Frame, nxt: dict, vals: dict) -> list:
        z3 = self.z3
        strict = shape.range == "strict_past"
        sop = [n.sop] if n.kind == "aggregate" else []
        if self.p.kinds[n.id] == "tok":
            out = []
            for t in self.p.alphabet:
                term = nxt[("tok", t)] - (z3.If(vals["tok_is"][t], 1, 0) if strict else 0)
                kv = tuple(self.p.value_at_token(a.keys, t) for a in atoms)
                out.append((kv, self.p.value_at_token(n.sop, t) if sop else None, term))
            return out
        combos = [([], z3.BoolVal(True))]
        for part in [a.keys for a in atoms] + sop:
            combos = [(k + [v], z3.And(c, c2)) for k, c in combos for v, c2 in vals[part.id]]
        out = []
        group = (self.p.tag, "cnt", n.selector.id, n.sop.id if sop else None)
        for k, cond in _merge_keys(combos, z3):
            kv, v = (tuple(k[:-1]), k[-1]) if sop else (tuple(k), None)
            before = frame.get(group + (_key(kv), _key(v)))
            after = before + z3.If(cond, 1, 0)
            nxt[group + (_key(kv), _key(v))] = after
            out.append((kv, v, before if strict else after))
        return out


def _merge_keys(combos: list, z3) -> list:
    out: dict = {}
    for k, c in combos:
        key = tuple(_key(x) for x in k)
        out[key] = (k, z3.Or(out[key][1], c) if key in out else c)
    return list(out.values())


def _outputs_equal(a: list, b: list, z3):
    return z3.Or([z3.And(ca, cb) for va, ca in a for vb, cb in b if not differ(va, vb)] or [z3.BoolVal(False)])


def _invariants(frame: Frame, alphabet: tuple, z3) -> list:
    """What every reachable state satisfies: counters >= 0; each selector's counters add up to the
    positions read (exactly one key value holds at each position)."""
    n = z3.Sum([frame.get(("tok", t)) for t in alphabet])
    out = [v >= 0 for v in frame.vars.values()]
    groups: dict = {}
    for key, v in frame.vars.items():
        if key[1:2] == ("cnt",):
            groups.setdefault(key[:4], []).append(v)
    out += [z3.Sum(vs) == n for vs in groups.values()]
    return out


def _transition(syms: list, alphabet: tuple, frame: Frame, token, z3):
    tok_is = {t: token == j for j, t in enumerate(alphabet)}
    nxt = {("tok", t): frame.get(("tok", t)) + z3.If(tok_is[t], 1, 0) for t in alphabet}
    outs = [s.step(frame, nxt, tok_is) for s in syms]
    return nxt, outs


def k_induction(product: Product, deadline: float, base_length: int, max_k: int = MAX_K) -> str | None:
    """A proof that the two programs agree on every input (the base case, every input up to base_length,
    is the search's), or None. Raises Unsupported for programs outside the encoding."""
    import z3
    alphabet = product.alphabet
    syms = [Symbolic(p, z3) for p in product.programs]
    for k in range(0, min(max_k, base_length - 1) + 1):
        left = deadline - time.monotonic()
        if left <= 0.05:
            return None
        solver = z3.Solver()
        solver.set("timeout", max(int(left * 1000), 1))
        keys: dict = {}
        frames = [Frame(z3, "s0", keys)]
        equal = []
        for i in range(k + 1):
            token = z3.Int(f"t{i}")
            solver.add(token >= 0, token < len(alphabet))
            nxt, (ref, mine) = _transition(syms, alphabet, frames[-1], token, z3)
            new = Frame(z3, f"s{i + 1}", keys)
            solver.add(*[new.get(key) == expr for key, expr in nxt.items()])
            equal.append(_outputs_equal(ref, mine, z3))
            frames.append(new)
        for f in frames:
            solver.add(*_invariants(f, alphabet, z3))
        solver.add(*equal[:-1])
        solver.add(z3.Not(equal[-1]))
        if solver.check() == z3.unsat:
            return f"k-induction with z3 (k = {k}), the base case being every input up to length {base_length}"
    return None

