"""rasplay: a visual playground for RASP, the language of "Thinking Like Transformers".

One import name holds everything: `rasplay.engine` (parsing, evaluation, analysis, compiler, training),
`rasplay.server` (the FastAPI app), `rasplay.cli` (the `rasplay` command), and the browser app and
examples as package data (`rasplay.web`, `rasplay.examples`). The engine's public functions are re-exported here:

    import rasplay
    doc = rasplay.evaluate("r = aggregate(select(indices, length - indices - 1, ==), tokens);", ["hello"])
"""
from .engine import *  # noqa: F401,F403
from .engine import __all__ as _engine_all

__version__ = "0.1.0"
__all__ = list(_engine_all) + ["show"]


def show(source: str, inputs=None, **options):
    """The page's views of a RASP program in Jupyter (an anywidget; see docs/interop.md):
    values, layers x heads, selector heatmaps; `compiled=` a compiled model, `trained=` a trained one."""
    from .interop.notebook import show as _show

    return _show(source, inputs, **options)
