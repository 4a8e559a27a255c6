"""RASP (Weiss, Goldberg and Yahav 2021): everything; a compiled model needs a max_len."""
from .fragment import Fragment

RASP = Fragment(
    "rasp", "RASP",
    "General RASP compiles for one max_len (Weiss et al. 2021; Lindner et al. 2023, Tracr): positions "
    "are one-hot up to max_len and the model is undefined past it.",
    (),
)
