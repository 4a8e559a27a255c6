"""rasplay's doors to other tools: Tracr programs in (tracr*.py), TransformerLens models out
(transformer_lens.py), notebook views (notebook.py). Imported as `rasplay.interop`."""


def load_tl(path):
    """A compiled model exported for TransformerLens (`rasplay compile --export transformer-lens DIR`) as a
    float64 `transformer_lens.HookedTransformer` with `.rasplay_encoder` (see interop/export_tl.py)."""
    from .export_tl import load_tl as _load_tl

    return _load_tl(path)
