"""rasplay in Jupyter: `rasplay.show(source, inputs)` renders the page's views (values, layers x heads,
selector heatmaps; compiled heads given a compiled model; trained attention given a trained one) as an
anywidget (the `notebook` extra), offline. The views are the page's own modules (web/js/*.js), sent
to the front end as text and linked there by interop/widget.js. plotly.js is the page's partial bundle
(web/vendor/plotly.min.js) and is not part of any widget's state: the first widget of a notebook page that
shows compiled or trained attention asks the kernel for it once (a custom message), and every later widget uses
that copy, so a saved notebook carries no plotly.js at all (the selector heatmaps are the page's own SVG: a
notebook of plain views never asks for plotly.js). Each widget's mimebundle also holds a static HTML picture
of its views (values, layers and heads, the selectors), shown where no widget can run (a notebook reopened
without a kernel, a rendered notebook on the web). `RaspView.save_html(path)` writes the widget as one self-contained HTML file.
"""
from __future__ import annotations

import html
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

# The page modules the widget uses (api.js is replaced by an offline one in widget.js).
PAGE_MODULES = ("values.js", "docmodel.js", "diagram.js", "layout.js", "heatmap.js", "heatmapsvg.js", "plotly.js",
                "compile.js", "forms.js", "state.js", "train.js", "lengths.js", "limits.js", "presentrow.js")


@lru_cache(maxsize=1)
def page_modules() -> dict[str, str]:
    web = resources.files("rasplay.web")
    # the diagram's layout engine (js/elk.js on the page) is not among them: like plotly.js, it is asked for
    # once per notebook page (elk_source), so no widget's saved state carries a copy
    return {name: web.joinpath("js", name).read_text(encoding="utf-8") for name in PAGE_MODULES}


@lru_cache(maxsize=1)
def widget_esm() -> str:
    return resources.files("rasplay.interop").joinpath("widget.js").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def widget_css() -> str:
    """The page's stylesheet scoped to the widget (CSS nesting), so it styles nothing else in the notebook."""
    page = resources.files("rasplay.web").joinpath("style.css").read_text(encoding="utf-8")
    page = page.replace(":root", "&")
    extra = ("font: var(--base)/1.4 var(--sans); color: var(--ink); background: #fff;"
             " .rw-section { margin: 10px 0 18px; } .rw-section > h2 { margin-bottom: 6px; }"
             " .rw-problems { color: #b00020; }")
    return f".rasplay-widget {{ {page}\n{extra} }}"


@lru_cache(maxsize=1)
def elk_source() -> str:
    """The diagram's layout engine: the vendored elkjs bundle (an ES module), linked as the widget's elk.js."""
    return resources.files("rasplay.web").joinpath("vendor", "elk.bundle.js").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def plotly_source() -> str:
    """The page's plotly.js: the partial bundle (core + heatmap) vendored in web/vendor."""
    return resources.files("rasplay.web").joinpath("vendor", "plotly.min.js").read_text(encoding="utf-8")


# Sources every widget of a notebook page shares, sent once when the first widget asks (a custom message).
SHARED_SOURCES = {"plotly": plotly_source, "elk": elk_source}


def _json(value):
    """Through JSON and back: plain lists, dicts, numbers and strings only."""
    return json.loads(json.dumps(value, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))


def _trained_maps(trained, tokens: list):
    """Attention maps {"tokens", "attention", "bos"} from a trained model, or maps as given."""
    if isinstance(trained, dict) and "attention" in trained:
        return trained
    if hasattr(trained, "config") and hasattr(trained, "forward"):   # a trained torch model (engine.train)
        from ..engine.train import attention_maps

        att = attention_maps(trained, tokens)
        bos = trained.config.bos_id is not None
        names = ([trained.config.vocab[trained.config.bos_id]] if bos else []) + list(tokens)
        return {"tokens": names, "attention": att.tolist(), "bos": bos}
    raise TypeError("trained must be a trained model, the result of rasplay.engine.train.train, or attention maps "
                    "{'tokens', 'attention', 'bos'}")


def view_data(source: str, inputs=None, *, compiled=None, trained=None, index: int = 0, selection=None,
              input_format=None) -> dict:
    """What the widget shows, computed with the functions behind the REST API."""
    from ..engine import evaluate

    inputs = list(inputs) if inputs is not None else None
    doc = evaluate(source, inputs, trace=index, input_format=input_format)
    data = {"source": source, "doc": _json(doc), "selection": selection}
    tokens = doc["inputs"][index] if doc["inputs"] else []
    if compiled is not None:
        data["compiled"] = _json({"summary": compiled.summary(), "run": compiled.run([tokens], mode="hard")})
    if isinstance(trained, dict) and trained.get("lengths"):
        # trained with test lengths: the chart of accuracy by length (any input may be shown above it)
        data["lengths"] = _json({k: trained[k] for k in ("config", "lengths", "example")})
    if isinstance(trained, dict) and "example" in trained and "program" in trained:
        # a training result holds the attention of one input only, its example: it is shown only when that is
        # the input shown above it (a view never puts one input's attention beside another input's values)
        ex, att = trained["example"], trained["example"]["attention"]
        if [str(t) for t in ex["input"]] != [str(t) for t in tokens]:
            raise ValueError(
                f"this training result holds the trained model's attention on its example input "
                f"{_shown(ex['input'])} only, not on {_shown(tokens)} shown here: pass the trained model "
                f"(train(..., save_path=P) then rasplay.engine.train.load_model(P)) to see any input, or show "
                f"the example input")
        data["overlay"] = _json({**ex, "output": trained["output"], "layers": len(att),
                                 "heads": len(att[0]) if att else 0,
                                 "program_layers": trained["program"]["layers"],
                                 "program_heads_per_layer": trained["program"]["heads_per_layer"]})
        data["overlay_name"] = "the training result"
    elif trained is not None:
        from ..engine.train import overlay_imported

        data["overlay"] = _json(overlay_imported(source, _trained_maps(trained, tokens)))
        data["overlay_name"] = "the trained model"
    return data


def _shown(tokens) -> str:
    return repr("".join(tokens)) if all(isinstance(t, str) and len(t) == 1 for t in tokens) else json.dumps(tokens)


def _widget_class():
    import anywidget
    import traitlets

    class RaspView(anywidget.AnyWidget):
        """The page's views of one program on one input, in a notebook."""
        _esm = widget_esm()
        _css = widget_css()
        modules = traitlets.Dict().tag(sync=True)
        data = traitlets.Dict().tag(sync=True)

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.on_msg(self._answer)

        def _answer(self, widget, content, buffers) -> None:
            """The front end asks once per notebook page for plotly.js and for the layout engine (neither is
            kept in the widget's state)."""
            if isinstance(content, dict) and content.get("kind") in SHARED_SOURCES:
                kind = content["kind"]
                self.send({"kind": kind, "source": SHARED_SOURCES[kind]()})

        def _repr_mimebundle_(self, **kwargs):
            bundle = super()._repr_mimebundle_(**kwargs)
            data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
            data = {**data, "text/html": static_html(self.data),
                    "text/plain": f"rasplay view of {_program_name(self.data)} (run the cell to see it)"}
            return data, metadata

        def standalone_html(self) -> str:
            return standalone_html(self.data)

        def save_html(self, path) -> None:
            Path(path).write_text(self.standalone_html(), encoding="utf-8")

    return RaspView


_CLASS = None


def show(source: str, inputs=None, *, compiled=None, trained=None, index: int = 0, selection: str | None = None,
         input_format: str | None = None):
    """A widget with the page's views of `source` on `inputs` (the heatmaps trace input `index`).
    compiled: a CompiledModel (rasplay.compile) adds its summary, compiled attention and residual;
    trained: a trained model, a training result or attention maps adds the trained overlay."""
    global _CLASS
    if _CLASS is None:
        _CLASS = _widget_class()
    data = view_data(source, inputs, compiled=compiled, trained=trained, index=index, selection=selection,
                     input_format=input_format)
    return _CLASS(modules=page_modules(), data=data)


def _script_json(value) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def standalone_html(data: dict) -> str:
    """One HTML file with the widget rendered by a minimal host of anywidget's front-end API
    (model.get), for viewing outside Jupyter (and for the browser test); it carries elkjs itself, and plotly.js
    where a view needs it (compiled or trained attention: the selector heatmap is the page's own SVG)."""
    state = {"modules": page_modules(), "elk": elk_source(), "data": data}
    if data.get("compiled") or data.get("overlay"):
        state["plotly"] = plotly_source()
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rasplay</title>
<style>{widget_css()}</style></head>
<body><div id="rasplay-view"></div>
<script type="module">
const esm = {_script_json(widget_esm())};
const state = {_script_json(state)};
const listeners = [];
const model = {{ get: (key) => state[key], set: (key, value) => {{ state[key] = value; }}, save_changes() {{}},
  on: (name, fn) => listeners.push([name, fn]), off() {{}}, send() {{}} }};
const widget = await import(URL.createObjectURL(new Blob([esm], {{ type: "text/javascript" }})));
await widget.default.render({{ model, el: document.getElementById("rasplay-view") }});
</script></body></html>
"""


# ------------------------------------------------------------------ the static picture (no kernel, no widget)

def _program_name(data: dict) -> str:
    doc = data.get("doc", {})
    return f"{doc.get('output') or 'a program'} on {_shown(doc['inputs'][_traced(doc)])}" if doc.get("inputs") \
        else "a program"


def _traced(doc: dict) -> int:
    return (doc.get("trace") or {}).get("input", 0)


def _cell(value) -> str:
    return html.escape(json.dumps(value) if not isinstance(value, str) else value)


def static_html(data: dict, max_selectors: int = 6) -> str:
    """A static picture of a widget's views, from its data: the values table, the layer and head counts, and
    the selectors of the traced input as tables of marked cells (all text escaped; no script, no style sheet,
    so it shows wherever a notebook's HTML output is shown)."""
    doc = data.get("doc", {})
    parts = ['<div class="rasplay-static">',
             "<p><b>rasplay</b> &mdash; a static picture of this view; run the cell for the interactive one.</p>"]
    errors = [d for d in doc.get("diagnostics", []) if d.get("severity") == "error"]
    for d in errors:
        where = f"line {d['line']}:{d['col']}: " if d.get("line") else ""
        parts.append(f"<p>{html.escape(where + d['message'])}</p>")
    if not doc.get("inputs"):
        return "".join(parts) + "</div>"
    i = _traced(doc)
    tokens = doc["inputs"][i]
    results = doc.get("results", {})
    head = "".join(f"<th>{_cell(t)}</th>" for t in tokens)
    rows = [f"<tr><th>{html.escape(name)}</th>" + ("".join(f"<td>{_cell(v)}</td>" for v in r["values"][i])
            if r["values"][i] is not None else f"<td colspan='{len(tokens)}'>{_cell(r['errors'][i])}</td>") + "</tr>"
            for name, r in results.items() if r.get("kind") == "sop"]
    parts.append(f"<h3>Values</h3><table><thead><tr><th>input</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
                 "</table>")
    analysis = doc.get("analysis", {})
    layers = analysis.get("layers", 0)
    parts.append(f"<h3>Layers &times; heads</h3><p>{layers} layer{'' if layers == 1 else 's'}; heads per layer: "
                 f"{html.escape(json.dumps(analysis.get('heads_per_layer', [])))}</p>")
    # every selector the traced input went through (the heads of the layer x head diagram), by its label
    traced = (doc.get("trace") or {}).get("nodes", {})
    selectors = []
    for node in analysis.get("graph", {}).get("nodes", []):
        matrix = (traced.get(str(node["id"])) or {}).get("values")
        if isinstance(matrix, list) and matrix and all(isinstance(row, list) for row in matrix):
            selectors.append((node.get("label") or node.get("name") or "", node.get("layer"), matrix))
    for label, layer, matrix in selectors[:max_selectors]:
        keys = "".join(f"<th>{_cell(t)}</th>" for t in tokens)
        body = "".join(f"<tr><th>{_cell(q)}</th>" + "".join(f"<td>{'&#9632;' if v else '&middot;'}</td>" for v in row)
                       + "</tr>" for q, row in zip(tokens, matrix))
        where = f" (layer {layer})" if layer else ""
        parts.append(f"<h3>Selector {html.escape(label)}{where}</h3><table><thead><tr><th>query \\ key</th>{keys}"
                     f"</tr></thead><tbody>{body}</tbody></table>")
    if len(selectors) > max_selectors:
        parts.append(f"<p>and {len(selectors) - max_selectors} more selectors</p>")
    if data.get("compiled"):
        summary = data["compiled"].get("summary", {})
        parts.append(f"<h3>Compiled model</h3><p>{html.escape(str(summary.get('layers', '?')))} layers, heads per "
                     f"layer {html.escape(json.dumps(summary.get('heads_per_layer', [])))}</p>")
    if data.get("overlay"):
        parts.append(f"<h3>Trained attention</h3><p>{html.escape(data.get('overlay_name') or 'a trained model')}: "
                     f"{len(data['overlay'].get('selectors', []))} selectors matched to heads</p>")
    return "".join(parts) + "</div>"
