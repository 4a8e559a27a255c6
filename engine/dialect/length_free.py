"""length-free: TL[#] plus the position encodings that paper allows (i mod m through (-1)^i, tests i = c, and
a lookup of the position equal to a count through the unbounded encodings i and i^2): what
`compile(..., length_free=True)` builds, with weights that do not depend on the input length. A program is in
it exactly when the walk finds nothing outside (walk.py raises Outside for everything else)."""
from .fragment import Fragment

LENGTH_FREE = Fragment(
    "length-free", "length-free",
    "With the unbounded positional encodings i and i^2 (or temperature scaling by a function of "
    "n) soft attention selects the position named by a count, so the weights still do not "
    "depend on the length (Yang et al., Simulating hard attention using soft attention, the "
    "unbounded-encoding construction).",
    (),
)
