"""rasplay's doors to other tools: Tracr programs in (tracr*.py), TransformerLens models out
(transformer_lens.py), notebook views (notebook.py). Imported as `rasplay.interop`."""
