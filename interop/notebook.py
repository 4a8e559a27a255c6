"""rasplay in Jupyter: `rasplay.show(source, inputs)` renders the page's views (values, layers x heads,
selector heatmaps; compiled heads given a compiled model; trained attention given a trained one) as an
anywidget (the `notebook` extra), offline. The views are the page's own modules (web/js/*.js), sent
to the front end as text and linked there by interop/widget.js; plotly.js comes from the installed
plotly package. `RaspView.save_html(path)` writes the same widget as one self-contained HTML file.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

# The page modules the widget uses (api.js is replaced by an offline one in widget.js).
PAGE_MODULES = ("values.js", "docmodel.js", "diagram.js", "layout.js", "heatmap.js", "plotly.js", "compile.js",
                "forms.js", "state.js", "train.js")


@lru_cache(maxsize=1)
def page_modules() -> dict[str, str]:
    web = resources.files("rasplay.web")
    modules = {name: web.joinpath("js", name).read_text(encoding="utf-8") for name in PAGE_MODULES}
    # the diagram's layout engine: on the page, js/elk.js re-exports the vendored bundle; here the bundle is it
    modules["elk.js"] = web.joinpath("vendor", "elk.bundle.js").read_text(encoding="utf-8")
    return modules


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
def plotly_source() -> str:
    import plotly

    return (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text(encoding="utf-8")


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
    if isinstance(trained, dict) and "example" in trained and "program" in trained:
        # a training result: its example overlay (on the training's example input), as the overlay document
        ex, att = trained["example"], trained["example"]["attention"]
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


def _widget_class():
    import anywidget
    import traitlets

    class RaspView(anywidget.AnyWidget):
        """The page's views of one program on one input, in a notebook."""
        _esm = widget_esm()
        _css = widget_css()
        modules = traitlets.Dict().tag(sync=True)
        plotly = traitlets.Unicode().tag(sync=True)
        data = traitlets.Dict().tag(sync=True)

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
    return _CLASS(modules=page_modules(), plotly=plotly_source(), data=data)


def _script_json(value) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def standalone_html(data: dict) -> str:
    """One HTML file with the widget rendered by a minimal host of anywidget's front-end API
    (model.get), for viewing outside Jupyter (and for the browser test)."""
    state = {"modules": page_modules(), "plotly": plotly_source(), "data": data}
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
