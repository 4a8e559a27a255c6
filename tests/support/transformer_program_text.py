"""Small programs in the format of TransformerPrograms' decompiled Python (written here from tables, for
tests/unit/test_transformer_programs.py), and an independent Python statement of what such a program
computes (ours, from the paper's description of the format: closest-match selection with its tie-break and
position 0 by default, sums, tables, a linear classifier with the first class winning a tie)."""
from __future__ import annotations

HELPERS = '''import numpy as np
import pandas as pd


def select_closest(keys, queries, predicate):
    chosen = []
    for i, q in enumerate(queries):
        hits = [j for j, k in enumerate(keys{causal}) if predicate(q, k)]
        best = min(hits, key=lambda j: len(hits) if j == i else abs(i - j)) if hits else 0
        chosen.append([j == best for j in range(len(keys))])
    return chosen


def select(keys, queries, predicate):
    return [[predicate(q, k) for k in keys{causal}] for i, q in enumerate(queries)]


def aggregate(attention, values):
    return [[v for a, v in zip(row, values) if a][0] for row in attention]


def aggregate_sum(attention, values):
    return [sum(v for a, v in zip(row, values) if a) for row in attention]
'''


def predicate_text(name: str, q: str, k: str, table: dict) -> str:
    groups: dict = {}
    for qv, kv in table.items():
        groups.setdefault(kv, []).append(qv)
    lines = [f"    def {name}(q_{q}, k_{k}):"]
    for i, (kv, qvs) in enumerate(groups.items()):
        lines.append(f"        {'if' if i == 0 else 'elif'} q_{q} in {{{', '.join(map(repr, qvs))}}}:")
        lines.append(f"            return k_{k} == {kv!r}")
    return "\n".join(lines) + "\n"


def table_text(name: str, params: list[str], rows: dict, default) -> str:
    groups: dict = {}
    for key, out in rows.items():
        groups.setdefault(out, []).append(key if len(params) == 2 else key[0])
    key = f"({', '.join(params)})" if len(params) == 2 else params[0]
    lines = [f"    def {name}({', '.join(params)}):", f"        key = {key}"]
    for i, (out, keys) in enumerate(groups.items()):
        lines.append(f"        {'if' if i == 0 else 'elif'} key in {{{', '.join(map(repr, keys))}}}:")
        lines.append(f"            return {out!r}")
    lines.append(f"        return {default!r}")
    return "\n".join(lines) + "\n"


def score_text(var: str, feature: str, numerical: bool) -> str:
    if numerical:
        return (f"    {var}_scores = classifier_weights.loc[[({feature!r}, \"_\") for v in {var}]]"
                f".mul({var}, axis=0)\n")
    return f"    {var}_scores = classifier_weights.loc[[({feature!r}, str(v)) for v in {var}]]\n"


def csv_text(classes: list, categorical: dict, numerical: dict) -> str:
    lines = ["feature,value," + ",".join(classes)]
    for feature, rows in categorical.items():
        for value, weights in rows.items():
            lines.append(f"{feature},{value}," + ",".join(repr(float(w)) for w in weights))
    for feature, weights in numerical.items():
        lines.append(f"{feature},_," + ",".join(repr(float(w)) for w in weights))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ the independent statement

def closest(keys, queries, pred, causal=False):
    out = []
    for i, q in enumerate(queries):
        hits = [j for j, k in enumerate(keys) if pred.get(q, object()) == k and (j <= i or not causal)]
        if not hits:
            out.append(0)
            continue
        score = {j: (len(hits) if j == i else abs(i - j)) for j in hits}
        out.append(min(hits, key=lambda j: (score[j], j)))
    return out


def summed(keys, queries, pred, values, causal=False):
    return [sum(v for j, (k, v) in enumerate(zip(keys, values)) if pred.get(q, object()) == k
                and (j <= i or not causal)) for i, q in enumerate(queries)]


def classify(classes, columns: list[tuple], categorical: dict, numerical: dict) -> list:
    """columns: (feature, values, numerical) per feature; the first class wins a tie."""
    n = len(columns[0][1])
    out = []
    for i in range(n):
        scores = [0.0] * len(classes)
        for feature, values, is_num in columns:
            w = numerical[feature] if is_num else categorical[feature][str(values[i])]
            for c in range(len(classes)):
                scores[c] += w[c] * (values[i] if is_num else 1)
        out.append(classes[max(range(len(classes)), key=lambda c: (scores[c], -c))])
    return out
