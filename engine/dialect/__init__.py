"""The dialect check: which fragments of RASP a program belongs to, and why not the smaller ones.

Fragments, smallest first (docs/every_length.md gives the theorems behind each), one module each:
b_rasp.py (B-RASP), c_rasp.py (C-RASP), tl_count.py (TL[#]), length_free.py (length-free), rasp.py (RASP).
Orthogonally, **causal**: every selector looks only at the query's position and before it.

The check is structural, over the operation graph (walk.py, the shared walk). A node's *sort* (sorts.py)
says what its values are: ``fin`` (a finite set of values that does not grow with the length), ``idx`` (the
position i + c), ``cnt`` (an integer linear combination of counts over one range of keys), ``rat`` (a mean
over one selector). The first construct outside every fragment names the line; so does each fragment's
reason. document.py builds the document the page, the CLI and the API show.

Beside that ladder, the fragments that length-generalisation results speak about (prediction.py, the
document's `length_generalization` part; docs/dialects.md): C-RASP with periodic and local positional
relations (c_rasp_periodic_local.py; Huang et al.'s theorem) and RASP-L (rasp_l.py, its own walk; Zhou et
al.'s conjecture), with the program-size measure (size.py).
"""
from .document import FRAGMENTS, THEOREMS, check_dialect, dialect_document  # noqa: F401 (re-exported)
from .sorts import MAX_DENOMINATOR, RANGES, Dialect, Outside, SelectorShape, Sort, span_of  # noqa: F401
from .walk import type_program

__all__ = ["check_dialect", "type_program", "Dialect", "Sort", "SelectorShape", "FRAGMENTS", "THEOREMS"]
