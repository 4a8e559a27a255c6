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


def render_compiled(path: str, doc: dict) -> str:
    """The summary of a compiled model (and its check and soft-attention study) as text."""
    s = doc["summary"]
    heads = ", ".join(str(h) for h in s["heads_per_layer"]) or "none"
    lines = [f"{path}: '{s['output']}' -> {s['layers']} layer{'s' if s['layers'] != 1 else ''} "
             f"(RASP analysis: {s['analysis_layers']}), heads per layer {heads}"]
    vocab = " ".join(_token_text(t) for t in s["vocab"])
    out = (f"categorical over {len(s['classes'])} classes" if s["output_encoding"] == "categorical"
           else "numerical")
    lines.append(f"  vocab {vocab} (BOS {s['bos']}), max_len {s['max_len']}; output {out}")
    lines.append(f"  residual width {s['residual_width']}, d_head {s['d_head']}, MLP widths "
                 f"{', '.join(str(w) for w in s['mlp_widths']) or 'none'}, parameters {s['params']} "
                 f"({s.get('nonzero_params', s['params'])} non-zero), compiled in {s['compile_seconds'] * 1000:.0f} ms"
                 + ("; causal" if s.get("causal") else ""))
    lines.append("  residual layout:")
    for b in s["layout"]:
        values = " ".join(b["values"]) if "values" in b else b.get("encoding", "")
        if len(values) > 60:
            values = values[:57] + "..."
        where = ",".join(map(str, b["dims"])) if "dims" in b else str(b["start"])   # dims: reuse (compiler.md)
        writer = b["written_by"] + (f", erased by {b['erased_by']}" if "erased_by" in b else "")
        lines.append(f"    {where:>4}  {b['name'][:28]:<28} {b['size']:>4}  {writer:<18} {values}")
    if s["heads"]:
        lines.append("  heads:")
        for h in s["heads"]:
            part = f", part {h['part']}" if h["part"] else ""
            line = f" (line {h['line']})" if h["line"] else ""
            lines.append(f"    layer {h['layer']} head {h['head']}: {h['selector']}{line} [{h['mode']}{part}] -> "
                         f"{', '.join(h['serves'])}")
    if any(m["targets"] for m in s["mlps"]):
        lines.append("  MLPs:")
        for m in s["mlps"]:
            for t in m["targets"]:
                lines.append(f"    layer {m['layer']}: {t['name']} from {', '.join(t['inputs']) or 'constants'} "
                             f"({t['units']} units: {t['method']})")
    for note in s["notes"]:
        lines.append(f"  note: {note}")
    for w in s.get("warnings", []):
        where = f"{path}:{w['line']}:{w['col']}: " if w.get("line") else f"{path}: "
        lines.append(f"{where}warning: {w['message']}")
    if "check" in doc:
        c = doc["check"]
        how = (f"exhaustive: every input of length {c['lengths'][0]}..{c['lengths'][1]}" if c["exhaustive"]
               else f"SAMPLED: a seeded sample of {c['inputs'] + c['evaluator_errors']} of the "
                    f"{c.get('population', '?')} inputs of length {c['lengths'][0]}..{c['lengths'][1]}; "
                    f"raise --check-limit to try them all")
        if c.get("causal"):
            how += "; causal: position i against the evaluator on the prefix of length i + 1"
        errs = f"; {c['evaluator_errors']} inputs on which the evaluator reports an error are skipped" \
            if c["evaluator_errors"] else ""
        lines.append(f"check: {c['agree']}/{c['inputs']} inputs agree with the evaluator ({how}){errs}")
        if c["first_mismatch"]:
            m = c["first_mismatch"]
            lines.append(f"  first mismatch: input {_input_text(m['input'])}: expected {m['expected']}, got {m['got']}")
    if "soft" in doc:
        st = doc["soft"]
        beta = "none up to 2^20" if st["min_beta"] is None else f"{st['min_beta']:.4g}"
        lines.append(f"soft attention: smallest beta with exact agreement on {st['inputs']} inputs: {beta}")
        for h in st["heads"]:
            lines.append(f"  layer {h['layer']} head {h['head']} ({h['selector']}): {h['kind']}, "
                         f"margin {h['margin']}")
    if "weights" in doc:
        lines.append(f"weights: {doc['weights']}")
    return "\n".join(lines)


def render_dialect(path: str, doc: dict) -> str:
    """The dialect check as lines: the smallest fragment and the theorem, then why not each smaller one."""
    lines = [f"{path}: '{doc['output']}' is in {doc['smallest_name']}"]
    for f in doc["fragments"]:
        mark = "yes" if f["member"] else "no "
        why = "" if f["member"] else f"  {path}:{f.get('line', '?')}:{f.get('col', '?')}: {f['reason']}"
        lines.append(f"  {mark} {f['name']}{why}")
    c = doc["causal"]
    if c["member"] is None:
        lines.append(f"  ?   causal  {c['reason']}")
    else:
        lines.append(f"  {'yes' if c['member'] else 'no '} causal" +
                     ("" if c["member"] else f"  {path}:{c.get('line', '?')}:{c.get('col', '?')}: {c['reason']}"))
    lines.append(doc["theorem"])
    if "length_generalization" in doc:
        lines.extend(render_length_generalization(path, doc["length_generalization"]))
    return "\n".join(lines)


def render_length_generalization(path: str, part: dict) -> list[str]:
    """The dialect check's length-generalisation part: each fragment (inside: what the result says; outside:
    the line that keeps the program out), then the one-line summary."""
    size = part["size"]
    kinds = ", ".join(f"{n} {k}" for k, n in size["by_kind"].items() if n)
    lines = [f"length generalisation (size {size['operations']} operations{': ' + kinds if kinds else ''}):"]
    for f in part["fragments"]:
        if f["member"]:
            how = "guaranteed by a theorem" if f["basis"] == "theorem" else "predicted by a conjecture"
            lines.append(f"  yes {f['name']}: {how}. {f['statement']}")
        else:
            lines.append(f"  no  {f['name']}  {path}:{f.get('line', '?')}:{f.get('col', '?')}: {f['reason']}")
    lines.append(part["summary"])
    return lines


def render_length_free(path: str, doc: dict) -> str:
    s = doc["summary"]
    lines = [f"{path}: length-free model of '{s['output']}' ({s['dialect']['smallest_name']}): {s['layers']} layers, "
             f"{len(s['heads'])} heads, {s['sublayers']} sublayers, {s['params']} parameters"]
    for h in s["heads"]:
        lines.append(f"  layer {h['layer']}: {h['name']} ({h['kind']}{', ' + h['range'] if 'range' in h else ''})")
    if "check" in doc:
        for p in doc["check"]["per_length"]:
            how = "every input" if p["exhaustive"] else "seeded sample"
            lines.append(f"  n={p['n']}: {p['agree']}/{p['inputs']} agree ({how})")
        lines.append("agrees with the evaluator" if doc["check"]["all_agree"] else "DISAGREES with the evaluator")
    if "soft" in doc:
        st = doc["soft"]
        lines.append(f"soft attention, share of {st['samples']} inputs right by length (hard | fixed beta "
                     f"{st['fixed_beta']:g} | scaled {st['scaling']}):")
        for n, h, f, c in zip(st["lengths"], st["hard"], st["fixed"], st["scaled"]):
            lines.append(f"  n={n}: {h:.2f} | {f:.2f} | {c:.2f}")
    if "export" in doc:
        e = doc["export"]
        lines.append(f"wrote {e['file']} (ONNX, {e['dtype']}, {e['attention']} attention, any length)")
    return "\n".join(lines)
