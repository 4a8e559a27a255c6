"""Tracr's RASP API in rasplay: `from rasplay.tracr import rasp` (or, after `install_alias()`,
`from tracr.rasp import rasp`) builds programs that rasplay evaluates, analyses, draws and compiles.
The code lives in interop/ (`rasplay.interop`); docs/interop.md explains it."""
from ..interop.tracr import (LIMITS, analyze, compile, evaluate, install_alias, load_program,  # noqa: F401
                             page_link, show, to_rasp)
from ..interop.tracr_lower import Lowered  # noqa: F401
from . import rasp  # noqa: F401

__all__ = ["rasp", "evaluate", "analyze", "compile", "to_rasp", "install_alias", "load_program", "show", "page_link",
           "Lowered"]
