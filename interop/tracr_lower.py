"""Tracr expressions -> RASP source for rasplay (and so rasplay's own operation graph).

A Tracr program holds Python functions (Map, SequenceMap, custom Select predicates) that rasplay
cannot read. Like Tracr's compiler, the lowering evaluates them on *value sets*: given the
vocabulary and max_len it infers every s-op's possible values (tokens: the vocabulary; indices:
0..max_len-1; Map: f over its input's values; SequenceMap: f over all pairs; a numerical
aggregate: every mean of 1..max_len values; a categorical one: its input's values; selector width:
0..max_len) and writes each function as a table lookup:

    map_3 = {"a": 1, "b": 0}[tokens];                         # Map
    sequence_map_7 = {0: 0, 1: 1, ...}[{...}[x] * 3 + {...}[y]];   # SequenceMap: pair index -> value
    select_5 = select({0: 0, 1: 1}[indices], {1: 0, 2: 1}[indices], ==);   # custom predicate

Everything elementwise stays elementwise (no layer, fused by the compiler), every Select stays one
select (one head). Values that RASP cannot hold (tuples, None, mixed types) are *coded*: the s-op
holds an index into its value list (`Lowered.codes`), and the tables read and write codes.
The result is ordinary RASP: evaluate it, analyse it, open it in the page, compile it.

Departures from Tracr's evaluator, each reported in `Lowered.notes` when it happens:
* an Aggregate whose default is None gets RASP's default 0 where no key is selected when its values
  are numbers (Tracr's compiled models also output 0 there), False for bools; over strings None is
  the string "None" (a value of its own: Maps and SequenceMaps give None for it, selects never match it);
* an Aggregate of bools that is numerical or has a number default averages them as 0 and 1 (RASP
  averages only numbers), so a single selected True is 1.
"""
from __future__ import annotations

import re

from ..engine.lang.errors import RaspError
from ..engine.program import format_constant
from . import tracr_rasp as rasp

from .tracr_values import (COMPARISONS, MAX_MEANS, MAX_STEPS, MAX_TABLE, RESERVED, _PY_COMPARE,  # noqa: F401
                           _RAISED, Lowered, Rep, _components, _explicit, _hashable, _kind, _means,
                           _rep, _sorted, code_name)


class _Lowering:
    def __init__(self, vocab: list, max_len: int, causal_mask: bool = False, copy_categorical: bool = False):
        self.vocab, self.max_len = list(vocab), max_len
        self.causal_mask, self.copy_categorical = causal_mask, copy_categorical
        self.masked: dict[str, str] = {}
        self.lines: list[str] = []
        self.reps: dict[int, Rep] = {}            # unique_id -> Rep (s-ops)
        self.names: dict[int, str] = {}           # unique_id -> RASP name
        self.used: set[str] = set()
        self.notes: list[str] = []
        self.codes: dict[str, list] = {}
        self.encodings: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        self.nones: dict[str, str] = {}

    # -------------------------------------------------------------- names
    def _name_for(self, expr) -> str:
        base = re.sub(r"\W", "_", str(expr.name)) or "x"
        if base[0].isdigit():
            base = "_" + base
        if base in RESERVED:
            base += "_"
        name = base if base not in self.used else f"{base}_{expr.unique_id}"
        while name in self.used:
            name += "_"
        self.used.add(name)
        return name

    def _emit(self, expr, text: str, rep: Rep | None) -> str:
        name = self._name_for(expr)
        self.lines.append(f"{name} = {text};")
        self.names[expr.unique_id] = name
        self.labels[expr.label] = name
        if rep is not None:
            self.reps[expr.unique_id] = rep
            if not rep.plain:
                self.codes[name] = rep.values
            if rep.none is not None:
                self.nones[name] = rep.none
            enc = _explicit(expr, "encoding")
            if enc is not None:
                self.encodings[name] = enc.value
        return name

    # -------------------------------------------------------------- traversal
    def lower(self, expr) -> str:
        order, seen, stack = [], set(), [(expr, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if node.unique_id in seen:
                continue
            seen.add(node.unique_id)
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(node.children) if c.unique_id not in seen)
        for node in order:
            if node.unique_id not in self.names:
                self._lower_one(node)
        return self.names[expr.unique_id]

    def _lower_one(self, e) -> None:
        if isinstance(e, rasp.TokensType):
            return self._primitive(e, "tokens", self.vocab)
        if isinstance(e, rasp.IndicesType):
            return self._primitive(e, "indices", range(self.max_len))
        if isinstance(e, rasp.LengthType):
            return self._primitive(e, "length", range(1, self.max_len + 1))
        if isinstance(e, rasp.Full):
            rep = _rep([e.fill])
            if not rep.plain:
                raise RaspError(f"Full({e.fill!r}): only a number, string or bool can fill an s-op", None, "type")
            self._emit(e, format_constant(e.fill), rep)
            return
        if isinstance(e, rasp.ConstantSOp):
            rep = _rep(e.value)
            self._emit(e, f"[{', '.join(rep.key(v) for v in e.value)}][indices]", rep)
            return
        if isinstance(e, rasp.Map):
            return self._map(e)
        if isinstance(e, rasp.SequenceMap):
            return self._sequence_map(e)
        if isinstance(e, rasp.Aggregate):
            return self._aggregate(e)
        if isinstance(e, rasp.SelectorWidth):
            self._emit(e, f"selector_width({self._attend(e.selector)})",
                       _rep(range(self.max_len + 1)))
            return
        if isinstance(e, rasp.Select):
            return self._select(e)
        if isinstance(e, rasp.ConstantSelector):
            matrix = e.value
            n = self.max_len

            def related(k, q):
                return q < len(matrix) and k < len(matrix[q]) and matrix[q][k]
            idx = self.reps.get(rasp.indices.unique_id) or _rep(range(n))
            self._emit(e, self._relation(idx, idx, "indices", "indices", related), None)
            return
        if isinstance(e, rasp.SelectorOr):
            self._emit(e, f"{self.names[e.fst.unique_id]} or {self.names[e.snd.unique_id]}", None)
            return
        if isinstance(e, rasp.SelectorAnd):
            self._emit(e, f"{self.names[e.fst.unique_id]} and {self.names[e.snd.unique_id]}", None)
            return
        if isinstance(e, rasp.SelectorNot):
            self._emit(e, f"not {self.names[e.inner.unique_id]}", None)
            return
        raise RaspError(f"the Tracr expression {e!r} ({type(e).__name__}) has no RASP counterpart", None, "type")

    def _attend(self, selector) -> str:
        """The selector an Aggregate or SelectorWidth reads: itself, or with causal_mask (a causal model as
        Tracr compiles it) itself and `key <= query` (the attention mask Tracr's causal models apply)."""
        name = self.names[selector.unique_id]
        if not self.causal_mask:
            return name
        if name not in self.masked:
            if "causal_mask_" not in self.used:
                self.used.add("causal_mask_")
                self.lines.append("causal_mask_ = select(indices, indices, <=);")
            masked = f"{name}_causal"
            while masked in self.used:
                masked += "_"
            self.used.add(masked)
            self.lines.append(f"{masked} = {name} and causal_mask_;")
            self.masked[name] = masked
        return self.masked[name]

    @staticmethod
    def _nested(rel: dict, ks: list, qs: list, kr: Rep, qr: Rep, kname: str, qname: str) -> str | None:
        """A relation whose rows, within each class of keys (keys sharing a row), are nested (a chain, as
        `k[0] == q[0] and k[1] <= q[1]`): `select(class, class, ==) and select(level, threshold, <=)`, two
        conditions of one head, however many distinct rows."""
        rows = sorted({r for r in rel.values() if r}, key=len)
        comp = _components(rows, len(ks))
        by_comp: dict = {}
        for r in rows:
            by_comp.setdefault(comp[next(iter(r))], []).append(r)
        level: dict = {}
        for chain in by_comp.values():
            for small, big in zip(chain, chain[1:]):
                if not small < big:
                    return None
            for j, r in enumerate(chain):
                for i in r:
                    level.setdefault(i, j)
        row_level = {r: j for chain in by_comp.values() for j, r in enumerate(chain)}
        classes = sorted(set(comp))
        cls = {c: j for j, c in enumerate(classes)}
        kclass = ", ".join(f"{kr.key(k)}: {cls[comp[i]]}" for i, k in enumerate(ks))
        klevel = ", ".join(f"{kr.key(k)}: {level.get(i, len(ks) + 1)}" for i, k in enumerate(ks))
        qclass = ", ".join(f"{qr.key(q)}: {cls[comp[next(iter(rel[q]))]] if rel[q] else -1}" for q in qs)
        qlevel = ", ".join(f"{qr.key(q)}: {row_level[rel[q]] if rel[q] else -1}" for q in qs)
        level_sel = f"select({{{klevel}}}[{kname}], {{{qlevel}}}[{qname}], <=)"
        if len(classes) == 1 and all(rel[q] for q in qs):
            return level_sel
        return f"select({{{kclass}}}[{kname}], {{{qclass}}}[{qname}], ==) and {level_sel}"

    def _primitive(self, e, name: str, values) -> None:
        self.names[e.unique_id] = name
        self.labels[e.label] = name
        rep = _rep(values)
        if not rep.plain:
            raise RaspError("the vocabulary mixes kinds of tokens (numbers, strings, bools); use one kind", None,
                            "input")
        self.reps[e.unique_id] = rep
        self.used.add(name)

    def _values(self, e) -> list:
        rep = self.reps[e.unique_id]
        if rep.values is None:
            raise RaspError(f"'{self.names[e.unique_id]}' has more than {MAX_MEANS} possible values, too many to "
                            f"tabulate a function of it; use a smaller max_len", None, "limit")
        return rep.values

    def _index(self, e) -> tuple[str, int]:
        """A RASP expression for the position of e's value in its value list, and the list's size."""
        rep, name = self.reps[e.unique_id], self.names[e.unique_id]
        values = self._values(e)
        table = ", ".join(f"{rep.key(v)}: {i}" for i, v in enumerate(values))
        return f"{{{table}}}[{name}]", len(values)

    # -------------------------------------------------------------- s-ops
    def _map(self, e) -> None:
        src = self.reps[e.inner.unique_id]
        results = {}
        for v in self._values(e.inner):
            if v is None:
                results[v] = None
                continue
            try:
                results[v] = e.f(v)
            except Exception:  # a value the function rejects: no table entry (an evaluation error there)
                continue
        rep = _rep(results.values())
        if src.int_or_float:
            rep.int_or_float = self._same_for_int_and_float(e, lambda v: e.f(v), results)
        name = self.names[e.inner.unique_id]
        steps = self._steps(src, results, rep, name) if len(results) == len(src.values) else None
        if steps is not None:
            self._emit(e, steps, rep)
            return
        table = ", ".join(f"{src.key(v)}: {rep.key(r)}" for v, r in results.items())
        self._emit(e, f"{{{table}}}[{name}]", rep)

    @staticmethod
    def _same_for_int_and_float(e, f, results: dict) -> bool:
        """Refuse a function of a mean's values that gives another value for a whole number as an int
        than as a float (str, type, ...): Tracr's value there depends on how many keys were selected,
        and one RASP value cannot hold both. Otherwise: whether its results may be such numbers too."""
        for v, r in results.items():
            if _kind(v) != "number" or float(v) != int(v):
                continue
            try:
                other = f(float(v) if isinstance(v, int) else int(v))
            except Exception:
                other = _RAISED
            if other is _RAISED or not (other == r):
                raise RaspError(f"{e.label}: its function gives {r!r} for {int(v)!r} and {other if other is not _RAISED else 'an error'!r} "
                                f"for {float(v)!r}, and its input is a numerical mean (or a function of one), whose whole values Tracr gives as "
                                f"an int where one key is selected and as a float where several are: one RASP "
                                f"value cannot hold both (make the function treat them alike)", None, "type")
        return any(_kind(r) == "number" for r in results.values())

    @staticmethod
    def _steps(src: Rep, results: dict, rep: Rep, name: str) -> str | None:
        """A Map of many numbers that is a step function of few steps (`x < 0`, `x == 0` over means) as
        `a if x < t1 else (b if x < t2 else c)` with thresholds at the midpoints between values: a short
        program instead of a long table, and tolerant of float rounding in the input."""
        if not src.plain or src.none is not None or len(results) <= MAX_STEPS or not rep.plain or \
                rep.none is not None or not all(_kind(v) == "number" for v in results):
            return None
        xs = sorted(results)
        runs = [[xs[0]]]
        same = lambda a, b: type(a) is type(b) and a == b   # noqa: E731
        for x in xs[1:]:
            if same(results[x], results[runs[-1][-1]]):
                runs[-1].append(x)
            else:
                runs.append([x])
        if len(runs) > MAX_STEPS or len(runs) == 1:   # one value everywhere: a table keeps it an s-op
            return None
        expr = rep.key(results[runs[-1][0]])
        for run, after in zip(reversed(runs[:-1]), reversed(runs[1:])):
            mid = (run[-1] + after[0]) / 2
            expr = f"({rep.key(results[run[0]])} if {name} < {format_constant(float(mid))} else {expr})"
        return expr

    def _sequence_map(self, e) -> None:
        a, b = self.reps[e.fst.unique_id], self.reps[e.snd.unique_id]
        if isinstance(e, rasp.LinearSequenceMap) and a.plain and b.plain and \
                {_kind(v) for v in a.values or [0]} <= {"number"} and {_kind(v) for v in b.values or [0]} <= {"number"}:
            va, vb = self._values(e.fst), self._values(e.snd)
            values = {e.fst_fac * x + e.snd_fac * y for x in va for y in vb}
            rep = _rep(values)
            if rep.plain:
                text = (f"{format_constant(e.fst_fac)} * {self.names[e.fst.unique_id]} + "
                        f"{format_constant(e.snd_fac)} * {self.names[e.snd.unique_id]}")
                self._emit(e, text, rep)
                return
        va, vb = self._values(e.fst), self._values(e.snd)
        if len(va) * len(vb) > MAX_TABLE:
            raise RaspError(f"{e.label}: a table of {len(va) * len(vb)} pairs is over the limit of {MAX_TABLE}",
                            None, "limit")
        results = {}
        for i, x in enumerate(va):
            for j, y in enumerate(vb):
                if x is None or y is None:
                    results[i * len(vb) + j] = None
                    continue
                try:
                    results[i * len(vb) + j] = e.f(x, y)
                except Exception:
                    continue
        rep = _rep(results.values())
        alike = []   # each input that is (a function of) a numerical mean: its whole values as int or float
        for y in (vb if a.int_or_float else []):
            if y is None:   # a pair with None is None, whatever the function
                continue
            alike.append(self._same_for_int_and_float(e, lambda x, y=y: e.f(x, y), {
                x: results[i * len(vb) + vb.index(y)] for i, x in enumerate(va) if i * len(vb) + vb.index(y) in results}))
        for x in (va if b.int_or_float else []):
            if x is None:
                continue
            alike.append(self._same_for_int_and_float(e, lambda y, x=x: e.f(x, y), {
                y: results[va.index(x) * len(vb) + j] for j, y in enumerate(vb) if va.index(x) * len(vb) + j in results}))
        rep.int_or_float = any(alike)
        ia, _ = self._index(e.fst)
        ib, nb = self._index(e.snd)
        table = ", ".join(f"{k}: {rep.key(r)}" for k, r in results.items())
        self._emit(e, f"{{{table}}}[{ia} * {nb} + {ib}]", rep)

    def _aggregate(self, e) -> None:
        src, sel, sop = self.reps[e.sop.unique_id], self._attend(e.selector), self.names[e.sop.unique_id]
        numerical = _explicit(e, "encoding") == rasp.Encoding.NUMERICAL
        values = src.values
        if not src.plain and values is not None and all(_kind(v) in ("number", "bool") for v in values if v is not None):
            # numbers held as codes (None among them): decode them before any mean, None as 0
            numbers = {v: (0 if v is None else int(v) if _kind(v) == "bool" else v) for v in values}
            table = ", ".join(f"{src.key(v)}: {format_constant(numbers[v])}" for v in values)
            sop, values = f"{{{table}}}[{sop}]", _sorted(set(numbers.values()))
            src = Rep(values, True)
            if None in numbers:
                self.notes.append(f"{e.label}: None among the aggregated values counts as 0 (Tracr's evaluator "
                                  f"has no value there; its compiled models read 0)")
        if numerical and values is not None and not all(_kind(v) in ("number", "bool") for v in values):
            shown = ", ".join(repr(v) for v in values[:5])
            raise RaspError(f"{e.label}: a numerical Aggregate averages numbers, but its input "
                            f"'{self.names[e.sop.unique_id]}' holds {shown}{', ...' if len(values) > 5 else ''} "
                            f"(Tracr: numerical aggregates average numbers only)", None, "type")
        number_default = isinstance(e.default, (int, float)) and not isinstance(e.default, bool)
        if src.plain and values is not None and all(_kind(v) == "bool" for v in values) and \
                (numerical or number_default):
            sop, values = f"indicator({sop})", sorted({int(v) for v in values})
            self.notes.append(f"{e.label}: a mean of bools averages them as 0 and 1")
        numbers = src.plain and values is not None and all(_kind(v) == "number" for v in values)
        if self.copy_categorical and numbers and not numerical:
            # Tracr's categorical aggregate copies one value: held as codes, no mean is ever taken (several
            # selected is an evaluation error in RASP, and the compiled model copies)
            out = _sorted(set(values) | {e.default})
            rep = Rep(out, False, {v: i for i, v in enumerate(out)})
            recode = ", ".join(f"{src.key(v)}: {rep.key(v)}" for v in values)
            self._emit(e, f"aggregate({sel}, {{{recode}}}[{sop}], {rep.key(e.default)})", rep)
            return
        if src.plain:
            default = e.default
            default_text = "" if default is None else f", {format_constant(default)}"
            if default is None and (numbers or numerical):
                self.notes.append(f"{e.label}: Tracr's default None is RASP's default 0 where no key is selected")
                default = 0
            elif default is None and values is not None and all(_kind(v) == "bool" for v in values):
                self.notes.append(f"{e.label}: Tracr's default None is False here where no key is selected")
                default, default_text = False, ", False"
            elif default is None:   # strings: None is a string of its own
                rep = _rep(list(values or []) + [None])
                self._emit(e, f"aggregate({sel}, {sop}, {format_constant(rep.none)})", rep)
                return
            if numerical and values is not None:
                out = _means(values, self.max_len)
                out = None if out is None else out + ([default] if default is not None else [])
            elif values is not None:
                out = list(values) + ([default] if default is not None else [])
            else:
                out = None
            rep = _rep(out) if out is not None else Rep(None, True)
            rep.int_or_float = numerical
            if out is not None and not rep.plain:   # a default of another kind than the values: use codes
                recode = ", ".join(f"{src.key(v)}: {rep.key(v)}" for v in src.values)
                self._emit(e, f"aggregate({sel}, {{{recode}}}[{sop}], {rep.key(default)})", rep)
                return
            self._emit(e, f"aggregate({sel}, {sop}{default_text})", rep)
            return
        # values RASP holds as codes (strings): a copy of the selected code; several selected is an error,
        # as in Tracr (a mean of non-numbers)
        out = list(src.values) + [e.default]
        rep = _rep(out)
        recode = ", ".join(f"{src.key(v)}: {rep.key(v)}" for v in src.values)
        self._emit(e, f"aggregate({sel}, {{{recode}}}[{sop}], {rep.key(e.default)})", rep)

    # -------------------------------------------------------------- selectors
    def _select(self, e) -> None:
        kname, qname = self.names[e.keys.unique_id], self.names[e.queries.unique_id]
        if e.predicate is rasp.Comparison.TRUE:
            self._emit(e, "select(1, 1, ==)", None)
            return
        if e.predicate is rasp.Comparison.FALSE:
            self._emit(e, "select(0, 1, ==)", None)
            return
        kr, qr = self.reps[e.keys.unique_id], self.reps[e.queries.unique_id]
        if e.predicate in COMPARISONS and kr.plain and qr.plain and kr.none is None and qr.none is None:
            self._emit(e, f"select({kname}, {qname}, {COMPARISONS[e.predicate]})", None)
            return
        self._emit(e, self._relation(kr, qr, kname, qname, e.predicate), None)

    def _relation(self, kr: Rep, qr: Rep, kname: str, qname: str, predicate) -> str:
        """A select over any predicate: a comparison when it is one, else tables of classes."""
        if kr.values is None or qr.values is None:
            raise RaspError("a custom select predicate over an s-op with too many values to tabulate", None, "limit")
        ks, qs = kr.values, qr.values
        if len(ks) * len(qs) > MAX_TABLE:
            raise RaspError(f"a select table of {len(ks) * len(qs)} pairs is over the limit of {MAX_TABLE}",
                            None, "limit")

        def holds(k, q) -> bool:
            if k is None or q is None:
                return False
            try:
                return bool(predicate(k, q))
            except Exception:
                return False
        rel = {q: frozenset(i for i, k in enumerate(ks) if holds(k, q)) for q in qs}
        if kr.plain and qr.plain and kr.none is None and qr.none is None and \
                {_kind(v) for v in ks} == {_kind(v) for v in qs}:
            for op, f in _PY_COMPARE.items():
                if all((i in rel[q]) == f(k, q) for q in qs for i, k in enumerate(ks)):
                    return f"select({kname}, {qname}, {op})"
        rows = sorted({r for r in rel.values() if r}, key=sorted)
        if not rows:
            return "select(0, 1, ==)"
        if len(rows) == 1 and len(rows[0]) == len(ks) and all(rel[q] for q in qs):
            return "select(1, 1, ==)"
        klass = {}
        disjoint = sum(len(r) for r in rows) == len(set().union(*rows))
        if disjoint:
            for j, r in enumerate(rows):
                klass.update({i: j for i in r})
            kmap = ", ".join(f"{kr.key(k)}: {klass.get(i, -1)}" for i, k in enumerate(ks))
            qmap = ", ".join(f"{qr.key(q)}: {rows.index(rel[q]) if rel[q] else -2}" for q in qs)
            return f"select({{{kmap}}}[{kname}], {{{qmap}}}[{qname}], ==)"
        nested = self._nested(rel, ks, qs, kr, qr, kname, qname)
        if nested is not None:
            return nested
        atoms = []
        for r in rows:
            kmap = ", ".join(f"{kr.key(k)}: {1 if i in r else 0}" for i, k in enumerate(ks))
            qmap = ", ".join(f"{qr.key(q)}: {1 if rel[q] == r else 2}" for q in qs)
            atoms.append(f"select({{{kmap}}}[{kname}], {{{qmap}}}[{qname}], ==)")
        return " or ".join(atoms)


def lower(expr, vocab, max_len: int, causal_mask: bool = False, copy_categorical: bool = False) -> Lowered:
    """The RASP program computing Tracr expression `expr` on inputs over `vocab` up to `max_len`; with
    causal_mask, every selector that an Aggregate or SelectorWidth reads is and-ed with `key <= query`
    (Tracr's causal models: its causal_eval semantics); with copy_categorical, an Aggregate of numbers that
    Tracr encodes categorically copies codes (never a mean), as Tracr's compiled models do."""
    if isinstance(vocab, str):
        vocab = list(vocab)
    vocab = _sorted(set(vocab))
    if not vocab:
        raise RaspError("the vocabulary is empty", None, "input")
    if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 1:
        raise RaspError(f"max_len must be a positive int, not {max_len!r}", None, "input")
    if not isinstance(expr, rasp.RASPExpr):
        raise RaspError(f"expected a Tracr RASP expression, got {type(expr).__name__}", None, "type")
    lowering = _Lowering(vocab, max_len, causal_mask, copy_categorical)
    output = lowering.lower(expr)
    header = [f"# Lowered from a Tracr program by rasplay.tracr: vocab {format_constant(vocab)}, max_len {max_len}.",
              "# Map, SequenceMap and custom Select predicates are tables over their inputs' value sets."]
    for name, values in lowering.codes.items():
        header.append(f"# {name} holds codes: " + ", ".join(f"{code_name(i)} = {v!r}" for i, v in enumerate(values)))
    if output in ("tokens", "indices", "length"):
        lowering.lines.append(f"output = {output};")
        output = "output"
    source = "\n".join(header + lowering.lines) + "\n"
    return Lowered(source, output, dict(lowering.labels), lowering.codes, lowering.encodings, vocab, max_len,
                   lowering.notes, lowering.nones)
