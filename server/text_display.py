"""A readable text display of an evaluation document, like the original RASP REPL's full display."""
from __future__ import annotations

import json

TYPE_PLURALS = {"int": "ints", "float": "floats", "str": "strs", "bool": "bools"}


def _token_text(token) -> str:
    if isinstance(token, bool):
        return "T" if token else "F"
    if isinstance(token, float):
        return f"{token:g}"
    return str(token)


def _value_text(value) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _input_text(tokens) -> str:
    if all(isinstance(t, str) and len(t) == 1 for t in tokens):
        return json.dumps("".join(tokens), ensure_ascii=False)
    return json.dumps(tokens, ensure_ascii=False)


def selector_grid(tokens, matrix) -> list[str]:
    """Rows are queries, columns are keys; both labelled with their tokens."""
    labels = [_token_text(t) for t in tokens]
    width = max(len(s) for s in labels)
    pad = " " * (width + 3)
    lines = [pad + " ".join(s.rjust(width) for s in labels)]
    for label, row in zip(labels, matrix):
        cells = " ".join(("1" if v else ".").rjust(width) for v in row)
        lines.append(f"{label.rjust(width)} | {cells}   width {sum(row)}")
    return lines


def render(doc: dict) -> str:
    out: list[str] = []
    for name, res in doc["results"].items():
        place = f"layer {res['layer']}"
        if res["kind"] == "selector" and res.get("head") is not None:
            place += f", head {res['head']}"
        for tokens, values, error in zip(doc["inputs"], res["values"], res["errors"]):
            call = f"{name}({_input_text(tokens)})"
            if error is not None:
                out.append(f"{call}: error: {error}")
            elif res["kind"] == "sop":
                shown = ", ".join(_value_text(v) for v in values)
                kind = TYPE_PLURALS.get(res.get("type") or "", res.get("type") or "")
                out.append(f"{call} = [{shown}] ({kind})   {place}")
            else:
                out.append(f"{call}   selector, {place}")
                out.extend("    " + line for line in selector_grid(tokens, values))
    analysis = doc["analysis"]
    heads = ", ".join(str(h) for h in analysis["heads_per_layer"]) or "none"
    out.append(f"-- {analysis['layers']} layer{'s' if analysis['layers'] != 1 else ''}; heads per layer: {heads}")
    return "\n".join(out)
