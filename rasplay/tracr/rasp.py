"""Tracr's `rasp` module API (see interop/tracr_rasp.py)."""
from ..interop.tracr_rasp import *  # noqa: F401,F403
from ..interop.tracr_rasp import (Comparison, Encoding, Predicate, DEFAULT_ANNOTATORS, annotate,  # noqa: F401
                                  default_name, default_encoding, evaluate)
