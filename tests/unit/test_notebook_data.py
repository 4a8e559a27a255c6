"""What a notebook widget shows and saves, without a browser or anywidget (interop/notebook.py): the traced
input (`index`) drives the heatmaps, the compiled run and the overlay; `input_format`; saved HTML keeps a
program's text from closing its <script> (an injection); the static picture escapes everything."""
from __future__ import annotations

import json
import re

import rasplay
from rasplay.interop.notebook import _script_json, standalone_html, static_html, view_data

REVERSE = "opp = length - indices - 1;\nreverse = aggregate(select(indices, opp, ==), tokens);\n"


def test_index_chooses_the_traced_input_for_every_view():
    model = rasplay.compile(REVERSE, "reverse", vocab=list("abxyz"), max_len=4)
    maps = {"tokens": ["x", "y", "z"], "attention": [[[[1 / 3] * 3] * 3]], "bos": False}
    data = view_data(REVERSE, ["ab", "xyz"], compiled=model, trained=maps, index=1)
    doc = data["doc"]
    assert doc["trace"]["input"] == 1 and doc["inputs"] == [["a", "b"], ["x", "y", "z"]]
    run = data["compiled"]["run"]
    assert json.dumps(run).count('"z"') >= 1 and '"a"' not in json.dumps(run)   # the model ran on "xyz"
    first = view_data(REVERSE, ["ab", "xyz"], compiled=model, index=0)
    assert first["doc"]["trace"]["input"] == 0 and '"z"' not in json.dumps(first["compiled"]["run"])
    assert data["overlay_name"] == "the trained model"
    assert "rasplay view" not in static_html(data)
    assert "<th>x</th><th>y</th><th>z</th>" in static_html(data)   # the picture shows the traced input
    assert "<th>a</th><th>b</th>" in static_html(first)


def test_input_format_reads_json_inputs():
    data = view_data("x = tokens + 1;", ["[1, 2, 30]"], input_format="json")
    assert data["doc"]["inputs"] == [[1, 2, 30]] and data["doc"]["results"]["x"]["values"] == [[2, 3, 31]]
    as_text = view_data("x = tokens;", ["[1, 2]"])
    assert as_text["doc"]["inputs"] == [list("[1, 2]")]


def test_a_training_result_for_another_input_is_refused():
    result = {"example": {"input": ["a", "b"], "attention": [[[[1.0]]]]}, "program": {"layers": 1,
              "heads_per_layer": [1]}, "output": "reverse"}
    data = view_data(REVERSE, ["xy", "ab"], trained=result, index=1)
    assert data["overlay"]["input"] == ["a", "b"] and data["overlay"]["layers"] == 1
    try:
        view_data(REVERSE, ["xy", "ab"], trained=result, index=0)
    except ValueError as e:
        assert "'ab' only, not on 'xy'" in str(e)
    else:
        raise AssertionError("a training result shown beside another input's values")


HOSTILE = 'x = tokens; # </script><script>alert(1)</script> <!-- & ]]> \u2028'


def test_saved_html_cannot_be_closed_by_the_programs_text():
    data = view_data(HOSTILE, ["</script>"])
    page = standalone_html(data)
    assert page.count("</script") == 1 and page.rstrip().endswith("</script></body></html>")
    assert "<script>alert" not in page and "<!--" not in page
    state = re.search(r"^const state = (.*);$", page, re.M).group(1)
    assert json.loads(state)["data"]["source"] == HOSTILE      # the text itself is kept, only encoded


def test_script_json_has_no_markup_characters_and_reads_back():
    value = {"a": "</script><b>&amp;</b>", "list": ["<!--", "-->"], "n": 1}
    text = _script_json(value)
    assert not set(text) & set("<>&") and json.loads(text) == value


def test_the_static_picture_escapes_names_values_and_messages():
    data = view_data('x = "<u>" + tokens;\ny = 1 + <;', ["a<"])
    picture = static_html(data)
    assert "<u>" not in picture and "<td>&lt;u&gt;a</td>" in picture and "<th>&lt;</th>" in picture
    assert "unexpected &#x27;&lt;&#x27;" in picture


def test_the_widget_carries_every_module_its_page_modules_import():
    """The widget links the page's modules as blobs: a module one of them imports that is not carried (a new
    presentrow.js or limits.js) leaves every view blank. api.js and elk.js are the widget's own."""
    import re

    from rasplay.interop.notebook import PAGE_MODULES, page_modules

    sources = page_modules()
    imported = {name for text in sources.values()
                for name in re.findall(r'(?:\bfrom\s*|\bimport\s*\(?\s*)["\']\./([\w.-]+\.js)["\']', text)}
    assert imported - set(PAGE_MODULES) - {"api.js", "elk.js"} == set()
