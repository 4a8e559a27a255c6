"""C-RASP with periodic and local positional relations (Huang, Yang, Bhattamishra, Sarrof, Krebs, Zhou,
Nakkiran and Hahn, "A Formal Framework for Understanding Length Generalization in Transformers", ICLR 2025).

Their C-RASP counts over the prefix, #[j <= i, phi(i, j)] P(j), where the positional relation phi is periodic
(it depends on i and j modulo a constant) or local (it holds only at a bounded distance, e.g. j = i - c), and
compares counts linearly. Over the walk's typing (walk.py) that is: a program of the length-free fragment
whose counts are all over prefixes (key <= query, key < query), whose previous-position heads (local) and
position encodings i mod m and i op c (periodic; i op c is a count of the prefix compared with a constant)
are allowed, and which has no tie-breaking (rightmost) head, no count over the future or the whole string and
no lookup of the position named by a count (a relation neither periodic nor local). Every such program is
causal.
"""
from __future__ import annotations

from .fragment import Fragment
from .sorts import Dialect

C_RASP_PL = Fragment(
    "c-rasp-periodic-local", "C-RASP[periodic, local]",
    "Huang et al. (ICLR 2025) prove that every function a C-RASP program with periodic and local positional "
    "relations computes is length-generalisable in their idealised setting: a causal transformer with "
    "learned absolute positional encodings, fitted exactly to the task on every input up to a training "
    "length and chosen to minimise their norm-based regulariser, computes the task on longer inputs once the "
    "training length is large enough. The guarantee is about that idealised inference, not about SGD on "
    "sampled data at a given training length; their experiments (trained on lengths up to 50, tested to 150) "
    "agree with it.",
    ("range", "tiebreak", "lookup"),
)

# Why each excluded feature keeps a program out, after the walk's own description of the construct.
_WHY = {
    "range": "C-RASP counts only keys at or before the query (j <= i); a count over the whole string is the "
             "prefix count at the last position, so a program that reads its answer there can count the prefix",
    "tiebreak": "C-RASP has no tie-breaking (leftmost or rightmost) attention, only counts",
    "lookup": "'the key's position equals a count' is neither a periodic nor a local relation",
}


def check_c_rasp_pl(d: Dialect):
    """(None, None) when the typed program is in C-RASP[periodic, local]; else (node, reason)."""
    if d.outside is not None:
        return d.outside.node, (f"{d.outside.message} (outside every length-free fragment, so outside "
                                f"C-RASP[periodic, local] too)")
    for feature in C_RASP_PL.excludes:
        if feature in d.features:
            node, reason = d.features[feature]
            return node, f"{reason}; {_WHY[feature]}"
    return None, None
