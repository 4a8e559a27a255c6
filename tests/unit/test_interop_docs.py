"""docs/interop.md's Python snippets run as written (each in a fresh namespace, in a temporary folder);
those needing an optional extra that is not installed are skipped."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from support.needs import need
from support.needs import unavailable

DOC = Path(__file__).resolve().parents[2] / "docs" / "interop.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
NEEDS = {"transformer_lens": "transformer_lens", "rasplay.show": "anywidget", "torch": "torch",
         "load_onnx": "onnxruntime"}


def test_the_doc_has_a_snippet_per_part():
    assert len(SNIPPETS) == 4


@pytest.mark.parametrize("index", [pytest.param(i, marks=pytest.mark.train) if "torch" in code else i
                                   for i, code in enumerate(SNIPPETS)])
def test_snippet_runs(index, tmp_path, monkeypatch):
    code = SNIPPETS[index]
    for marker, module in NEEDS.items():
        if marker in code and importlib.util.find_spec(module) is None:
            unavailable(f"needs {module}")
    if "load_tl" in code:
        need("transformer_lens")
    if "load_onnx" in code:
        need("onnxruntime")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"docs/interop.md snippet {index + 1}", "exec"), {"__name__": "__doc_snippet__"})
