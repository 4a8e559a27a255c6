"""Program text for fuzzing (tests/unit/test_fuzz_programs.py, tests/api/test_api_fuzz_programs.py): random
token soups and random edits of every shipped example, and the check that an evaluation document is well
formed."""
from pathlib import Path

from hypothesis import strategies as st

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.rasp"))
SOURCES = [p.read_text() for p in EXAMPLES]

TOKENS = [
    "x", "y", "f", "tokens", "indices", "length", "tokens_int", "select", "aggregate", "selector_width",
    "def", "return", "for", "in", "if", "else", "and", "or", "not", "load", "draw", "True", "range", "out",
    "0", "1", "-1", "2.5", "99999999999999999999", '"a"', "'b'", '"', "==", "!=", "<", ">=", "+", "-", "*",
    "/", "%", "^", "=", ",", ";", ":", "(", ")", "[", "]", "{", "}", "#", "\n", " ", "@", "\\", "set example",
    "sort", "count", "shift", "mark_first_instance", "e", "é", "\t",
]

token_soups = st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join)


@st.composite
def edited_examples(draw):
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        j = draw(st.integers(i, min(len(text), i + 30)))
        edit = draw(st.sampled_from(["delete", "insert", "duplicate", "replace"]))
        if edit == "delete":
            text = text[:i] + text[j:]
        elif edit == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif edit == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[j:]
    return text


programs = st.one_of(token_soups, edited_examples())


def check_document(doc: dict):
    assert set(doc) >= {"inputs", "results", "analysis", "diagnostics"}
    for d in doc["diagnostics"]:
        assert d["severity"] in ("error", "warning", "info") and isinstance(d["message"], str) and d["message"]
        if d.get("kind") == "syntax":
            assert d["line"] >= 1 and d["col"] >= 1
    for res in doc["results"].values():
        assert len(res["values"]) == len(res["errors"]) == len(doc["inputs"])
