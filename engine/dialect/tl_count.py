"""TL[#] (Yang, Strobl, Chiang, Angluin, "Simulating hard attention using soft attention"): temporal logic with
counting terms: previous/next (a shift by a constant), since/until with leftmost/rightmost tie-breaking, counts
over the past, the future or the whole string compared linearly."""
from .fragment import Fragment

TL_COUNT = Fragment(
    "tl-count", "TL[#]",
    "Temporal logic with counting terms is computed by soft-attention transformers at every length, "
    "with previous/since heads sharpened by temperature scaling (Yang, Strobl, Chiang and Angluin, "
    "Simulating hard attention using soft attention).",
    ("periodic", "lookup"),
)
