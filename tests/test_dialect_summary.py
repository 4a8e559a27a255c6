"""The dialect check in plain words (engine/dialect_summary.py): one line that says whether a compiled model
runs at any length, what the theorem guarantees and no more, with the line to look at; the details on demand."""
from rasplay.engine import analyze
from rasplay.engine.dialect_summary import summarize

COUNTING = 'ones = count(tokens, "1");\nodd = ones % 2 == 1;\n'
PREFIX = 'prefix = select(indices, indices, <=);\nopens = aggregate(prefix, indicator(tokens == "("));\n' \
         'closes = aggregate(prefix, indicator(tokens == ")"));\nbad = closes > opens;\n'


def test_a_length_free_program_says_yes_and_names_its_fragment_and_theorem():
    dialect = analyze(PREFIX)["dialect"]
    s = dialect["summary"]
    assert s["headline"] == "Runs at any length when compiled: yes" and s["any_length"] is True
    assert s["fragment"] == "C-RASP, causal" and s["theorem"] == dialect["theorem"]
    assert s["why"].startswith("Not B-RASP (line 4): ") and s["why_line"] == 4 and s["line"] is None


def test_a_program_outside_says_no_guarantee_with_the_line_never_that_it_fails():
    s = analyze(COUNTING)["dialect"]["summary"]
    assert s["headline"] == "Runs at any length when compiled: no guarantee from this program (line 2)"
    assert s["any_length"] is False and s["line"] == 2 and s["fragment"] == "RASP"
    assert s["why"].startswith("Not length-free (line 2): ")
    assert "fail" not in s["headline"]


def test_fragments_it_does_not_know_are_read_the_same_way():
    doc = {"length_free": False, "smallest_name": "RASP", "theorem": "T.", "causal": {"member": False},
           "fragments": [{"id": "rasp-l", "name": "RASP-L", "member": False, "reason": "it sorts", "line": 3},
                         {"id": "rasp", "name": "RASP", "member": True, "reason": None}]}
    s = summarize(doc)
    assert s["headline"] == "Runs at any length when compiled: no guarantee from this program (line 3)"
    assert s["why"] == "Not RASP-L (line 3): it sorts." and s["fragment"] == "RASP"
    assert summarize({**doc, "fragments": []})["headline"] == \
        "Runs at any length when compiled: no guarantee from this program"
