"""rasplay's doors to other tools: Tracr programs in (tracr*.py), TransformerLens models out
(export_tl.py), ONNX graphs out (onnx_graph.py), notebook views (notebook.py), TransformerPrograms' learned
programs in (transformer_programs.py). Imported as `rasplay.interop`."""


def load_tl(path):
    """A compiled model exported for TransformerLens (`rasplay compile --export transformer-lens DIR`) as a
    float64 TransformerLens 4 `TransformerBridge` with `.rasplay_encoder` (see interop/export_tl.py)."""
    from .export_tl import load_tl as _load_tl

    return _load_tl(path)


def export_onnx(model, path=None, dtype: str = "float64", attention: str = "hard") -> bytes:
    """A compiled max_len model as an ONNX graph (input `input_ids`, output `logits` or `values`) written to
    `path` (also returned as bytes); needs the `onnx` extra (see interop/onnx_graph.py)."""
    from .onnx_graph import export_onnx as _export

    return _export(model, path, dtype=dtype, attention=attention)


def load_onnx(path):
    """An exported .onnx file in onnxruntime, with `.run(inputs)` -> decoded values (see interop/onnx_graph.py)."""
    from .onnx_graph import load_onnx as _load

    return _load(path)


def import_transformer_program(py_text: str, csv_text: str, *, title: str = "") -> str:
    """TransformerPrograms' decompiled Python and its weights CSV (both as text; the Python is parsed, never
    run) -> a rasplay learned program's RASP source (see interop/transformer_programs.py)."""
    from .transformer_programs import import_transformer_program as _import

    return _import(py_text, csv_text, title=title)
