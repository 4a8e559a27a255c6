"""C-RASP (Yang and Chiang, "Counting like transformers"): counts over prefix selectors (key <= query),
compared linearly with each other and with constants; no tie-breaking, no previous-position lookup."""
from .fragment import Fragment

C_RASP = Fragment(
    "c-rasp", "C-RASP",
    "C-RASP programs compile to softmax transformers whose counting heads are uniform attention, exact "
    "at every length with no temperature at all (Yang and Chiang, Counting like transformers, CoLM "
    "2024).",
    ("shift", "tiebreak", "range", "periodic", "lookup"),
)
