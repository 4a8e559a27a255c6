"""The ONNX export's refusal, shared by the fixed-length writer (onnx_graph.py) and the length-free one
(onnx_length_free.py) without either importing the other."""


class OnnxExportError(ValueError):
    """A model this module cannot write as ONNX (the message says why)."""
