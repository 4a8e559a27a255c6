"""Arithmetic on counts for the length-free builder (build.py): integer linear forms of counts and of means,
and their comparisons, read by the sign of M -/+ 1/2 (never zero) over D, then combined in a table."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

from ... import elementwise
from ...lang.errors import RaspError
from ...program import Node
from . import runner as R
from .blocks import MAX_SCALE, Cnt, Fin, Rat, refuse


class CountingMixin:
    """The Builder's methods for count-valued and mean-valued s-ops (`self.b`, `self.p` and `self.add` are
    the Builder's)."""


    def cnt_map(self, n: Node):
        op = n.op
        if op in ("==", "!=", "<", ">", "<=", ">="):
            return self.compare(n)
        terms, const, dens = self.linear_terms(n)
        beta = next(self.b.info[c.id].beta for c in n.inputs if isinstance(self.b.info.get(c.id), Cnt))
        name = f"n{n.id}"
        self.add(R.Linear(name, [(self.b.info[c.id].block, float(k)) for c, k in terms], beta, float(const)))
        den = 1
        for c, k in terms:
            den = math.lcm(den, self.b.info[c.id].den * k.denominator)
        den = math.lcm(den, const.denominator)
        bound = sum(abs(float(k)) * self.b.info[c.id].bound for c, k in terms) + abs(float(const))
        self.b.info[n.id] = Cnt(name, beta, den, bound)

    def linear_terms(self, n: Node):
        """count-valued n = sum k_i * child_i + const (exact fractions)."""
        op = n.op
        args = [("arg", n.inputs[x]) if t == "arg" else ("const", Fraction(x)) for t, x in n.template]
        if op in ("+", "-"):
            sign = [Fraction(1), Fraction(1 if op == "+" else -1)]
            terms, const = [], Fraction(0)
            for s, (t, x) in zip(sign, args):
                if t == "arg":
                    terms.append((x, s))
                else:
                    const += s * x
            return terms, const, None
        if op == "neg":
            return [(args[0][1], Fraction(-1))], Fraction(0), None
        if op == "*":
            (t0, x0), (t1, x1) = args
            return ([(x1, x0)] if t0 == "const" else [(x0, x1)]), Fraction(0), None
        if op == "/":
            (t0, x0), (t1, x1) = args
            if x1 == 0:
                raise refuse(n, f"'{self.p.name(n)}' divides by zero")
            return [(x0, 1 / x1)], Fraction(0), None
        raise refuse(n, f"'{self.p.name(n)}' is not linear")

    def compare(self, n: Node):
        (t0, x0), (t1, x1) = n.template
        op = n.op
        if t0 == "const":                       # c op x  ->  x op' c
            op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
            (t0, x0), (t1, x1) = (t1, x1), (t0, x0)
        left = self.b.info[n.inputs[x0].id]
        right = self.b.info[n.inputs[x1].id] if t1 == "arg" else None
        c = Fraction(x1) if t1 == "const" else Fraction(0)
        if isinstance(left, Rat):
            return self.compare_rat(n, op, left, right, c)
        den = math.lcm(left.den, right.den if right else 1, c.denominator)
        self.check_scale(n, den * (left.bound + (right.bound if right else 0.0) + abs(float(c))))
        terms = [(left.block, float(den))] + ([(right.block, -float(den))] if right else [])
        y = f"n{n.id}.y"
        self.add(R.Linear(y, terms, left.beta, -float(den * c)))
        bits = self.sign_bits(n, y, left.beta, op)
        self.combine(n, bits, lambda *b: _verdict(op, *b))

    def check_scale(self, n: Node, scale: float):
        if scale > MAX_SCALE:
            raise refuse(n, f"'{self.p.name(n)}' compares a linear form with coefficients up to {scale:.3g} (times "
                            f"the length); above {MAX_SCALE} float64 rounding could reach the margin of 1/2 a "
                            f"count that decides the comparison")

    def compare_rat(self, n: Node, op: str, left: Rat, right, c: Fraction):
        den = math.lcm(left.den, right.den if right else 1, c.denominator)
        self.check_scale(n, den * (left.bound + (right.bound if right else 0.0) + abs(float(c))))
        terms = [(left.num, float(den))]
        if right is not None:
            terms.append((right.num, -float(den)))
        else:
            terms.append((left.wid, -float(den * c)))
        y = f"n{n.id}.y"
        self.add(R.Linear(y, terms))
        bits = self.sign_bits(n, y, left.beta, op)
        some = f"n{n.id}.some"
        self.add(R.Sign(some, left.wid, left.beta, 1.0, -0.5))
        d_right = right.default if right is not None else (float(c) if c.denominator != 1 else int(c))
        try:
            empty = bool(elementwise.compare(op, elementwise.as_array(left.default), elementwise.as_array(d_right)))
        except RaspError as e:
            raise refuse(n, e.message) from None
        self.combine(n, [some] + bits, lambda s, *b: _verdict(op, *b) if s else empty)

    def sign_bits(self, n: Node, y: str, beta: str, op: str) -> list[str]:
        """Sign units on y -/+ beta/2 (y = M / D with M an integer)."""
        lo, hi = f"n{n.id}.lo", f"n{n.id}.hi"
        if op in (">", "<="):
            self.add(R.Sign(lo, y, beta, 1.0, -0.5))
            return [lo]
        if op in (">=", "<"):
            self.add(R.Sign(hi, y, beta, 1.0, 0.5))
            return [hi]
        self.add(R.Sign(lo, y, beta, 1.0, -0.5))
        self.add(R.Sign(hi, y, beta, 1.0, 0.5))
        return [lo, hi]

    def combine(self, n: Node, bits: list[str], fn):
        combos = list(itertools.product([0, 1], repeat=len(bits)))
        outs = [1 if fn(*c) else 0 for c in combos]
        name = f"n{n.id}"
        self.add(R.Table(name, bits, [2] * len(bits), combos, outs, 2))
        self.b.info[n.id] = Fin(name, [False, True])

    def rat_map(self, n: Node):
        op = n.op
        if op in ("==", "!=", "<", ">", "<=", ">="):
            return self.compare(n)
        terms, const, _ = self.linear_terms(n)
        rats = [(self.b.info[c.id], k) for c, k in terms]
        base = rats[0][0]
        num_terms = [(r.num, float(k)) for r, k in rats]
        if const:
            num_terms.append((base.wid, float(const)))
        name = f"n{n.id}.N"
        self.add(R.Linear(name, num_terms))
        den = 1
        for r, k in rats:
            den = math.lcm(den, r.den * k.denominator)
        den = math.lcm(den, const.denominator)
        # the default (no key selected) follows the same arithmetic, as the evaluator computes it
        operands = []
        for t, x in n.template:
            operands.append(elementwise.as_array(self.b.info[n.inputs[x].id].default) if t == "arg"
                            else elementwise.as_array(x))
        try:
            dv = elementwise.apply(op, operands).values.item()
        except RaspError as e:
            raise refuse(n, e.message) from None
        bound = sum(abs(float(k)) * r.bound for r, k in rats) + abs(float(const))
        self.b.info[n.id] = Rat(name, base.wid, base.beta, den, dv, bound)


def _verdict(op: str, *bits) -> bool:
    """bits: [lo] for > and <= (lo = M - 1/2 > 0), [hi] for >= and < (hi = M + 1/2 > 0), [lo, hi] for == and !=."""
    if op == ">":
        return bool(bits[0])
    if op == "<=":
        return not bits[0]
    if op == ">=":
        return bool(bits[0])
    if op == "<":
        return not bits[0]
    eq = (not bits[0]) and bool(bits[1])
    return eq if op == "==" else not eq
