"""The dialect check's length-generalisation predictions (issue 33, item 1): C-RASP with periodic and local
positional relations (Huang et al., ICLR 2025) and RASP-L (Zhou et al., ICLR 2024). One program inside and one
just outside each boundary, with the line that keeps it out; the shipped programs' membership as a table;
the size measure; the wording ("no guarantee from this program", never a prediction of failure)."""
from pathlib import Path

import pytest

from rasplay.engine import analyze, check_dialect
from rasplay.engine.dialect import dialect_document, type_program
from rasplay.engine.examples import find_example

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
TESTS = ROOT / "tests"
LG = TESTS / "length_generalization_programs"
LF = TESTS / "length_free_programs"
PREFIX = "prefix = select(indices, indices, <=);\n"


def predictions(source, output=None):
    doc = check_dialect(source, output)
    part = doc["length_generalization"]
    return part, {f["id"]: f for f in part["fragments"]}


def crasp(source, output=None):
    return predictions(source, output)[1]["c-rasp-periodic-local"]


def raspl(source, output=None):
    return predictions(source, output)[1]["rasp-l"]


# ------------------------------------------------------------ C-RASP[periodic, local]

def test_c_rasp_prefix_counts_inside_whole_string_counts_just_outside():
    inside = crasp((LG / "majority_prefix.rasp").read_text())
    assert inside["member"] and inside["reason"] is None and inside["prediction"] == "guaranteed"
    assert "Huang et al." in inside["statement"] and "learned absolute positional encodings" in inside["statement"]
    out = crasp((LG / "majority_whole.rasp").read_text())
    assert not out["member"] and out["line"] == 4 and out["col"] == 8
    assert "counts every position, not a prefix" in out["reason"] and "j <= i" in out["reason"]


def test_c_rasp_local_previous_position_inside_next_position_just_outside():
    inside = crasp("prev = shift(tokens, 1, \"_\");\nsame = prev == tokens;")
    assert inside["member"]
    out = crasp("nxt = shift(tokens, -1, \"_\");\nsame = nxt == tokens;")
    assert not out["member"] and out["line"] == 1 and "after the query" in out["reason"]


def test_c_rasp_periodic_position_inside_lookup_by_count_just_outside():
    even = PREFIX + "a_even = selector_width(select(tokens == \"a\" and indices % 2 == 0, True, ==) and prefix);\n" \
                    "x = a_even > 2;"
    inside = crasp(even)
    assert inside["member"], inside
    plain = check_dialect(even)                   # Yang and Chiang's C-RASP has no i mod m: the new fragment does
    assert not {f["id"]: f for f in plain["fragments"]}["c-rasp"]["member"]
    lookup = PREFIX + "ones = selector_width(select(tokens, \"1\", ==) and prefix);\n" \
                      "bit = aggregate(select(indices, ones - 1, ==), indices % 2 == 0, False);"
    out = crasp(lookup)
    assert not out["member"] and out["line"] == 3 and "neither a periodic nor a local relation" in out["reason"]


def test_c_rasp_counts_only_tie_breaking_just_outside():
    out = crasp((LF / "flipflop.rasp").read_text())
    assert not out["member"] and out["line"] == 10 and "no tie-breaking" in out["reason"]


def test_c_rasp_outside_every_length_free_fragment_says_so_with_the_line():
    out = crasp((LG / "parity_prefix.rasp").read_text())
    assert not out["member"] and out["line"] == 5 and out["col"] == 10
    assert "MOD" in out["reason"] and "outside every length-free fragment" in out["reason"]


# ------------------------------------------------------------ RASP-L

def test_rasp_l_causal_selectors_inside_a_whole_string_selector_just_outside():
    inside = raspl((LG / "majority_prefix.rasp").read_text())
    assert inside["member"] and inside["prediction"] == "conjectured"
    assert "conjecture" in inside["statement"] and "not a theorem" in inside["statement"]
    out = raspl((LG / "majority_whole.rasp").read_text())
    assert not out["member"] and out["line"] == 4 and "causal" in out["reason"]
    shifted = raspl("prev = aggregate(select(indices, indices - 1, ==), tokens, \"_\");")   # key = query - 1
    nxt = raspl("nxt = aggregate(select(indices, indices + 1, ==), tokens, \"_\");")        # key = query + 1
    assert shifted["member"] and not nxt["member"] and nxt["line"] == 1


def test_rasp_l_positions_compared_and_shifted_inside_arithmetic_just_outside():
    inside = raspl(PREFIX + "first_a = aggregate(select(tokens, \"a\", ==) and prefix and "
                            "select(indices, indices, ==), indices, -1);\nafter = first_a + 1 == indices;")
    assert inside["member"], inside
    out = raspl("even = indices % 2 == 0;")
    assert not out["member"] and out["line"] == 1 and out["col"] == 8 and "computes with a position" in out["reason"]
    out = raspl("first = indices == 0;")
    assert not out["member"] and "computes with a position" in out["reason"]
    out = raspl(PREFIX + "n = selector_width(prefix);\nx = aggregate(select(indices, n, ==) and prefix, tokens);")
    assert not out["member"] and out["line"] == 3 and "compares a position with a value" in out["reason"]


def test_rasp_l_integer_values_counts_inside_fractional_mean_just_outside():
    inside = raspl((LF / "dyck1.rasp").read_text())
    assert inside["member"]
    out = raspl(find_example("dyck1").source)     # the shipped dyck1 counts with means: fractions
    assert not out["member"] and out["line"] == 11 and "a fraction" in out["reason"]


def test_rasp_l_count_comparisons_inside_mod_on_a_count_just_outside():
    assert raspl((LG / "majority_prefix.rasp").read_text())["member"]
    out = raspl((LG / "parity_prefix.rasp").read_text())
    assert not out["member"] and out["line"] == 5 and out["col"] == 10
    assert "applies '%' to a count" in out["reason"]


# ------------------------------------------------------------ the shipped programs, as a table

# program -> (smallest fragment, C-RASP[periodic, local] member or the line, RASP-L member or the line, size)
TABLE = {
    "examples/count.rasp": ("rasp", 8, 8, 3),
    "examples/dyck1.rasp": ("c-rasp", True, 11, 15),
    "examples/first_last.rasp": ("b-rasp", True, True, 6),
    "examples/histogram.rasp": ("rasp", 8, 8, 2),
    "examples/induction.rasp": ("b-rasp", 15, True, 13),
    "examples/majority.rasp": ("tl-count", 7, 7, 8),
    "examples/parity.rasp": ("rasp", 9, 8, 4),
    "examples/reverse.rasp": ("rasp", 9, 8, 6),
    "examples/shift.rasp": ("b-rasp", True, True, 3),
    "examples/sort_stable.rasp": ("rasp", 10, 10, 8),
    "examples/sort_unique.rasp": ("rasp", 12, 10, 4),
    "tests/length_free_programs/dyck1.rasp": ("c-rasp", True, True, 15),
    "tests/length_free_programs/parity.rasp": ("length-free", 4, 4, 8),
    "tests/length_generalization_programs/majority_prefix.rasp": ("c-rasp", True, True, 8),
    "tests/length_generalization_programs/majority_whole.rasp": ("tl-count", 4, 4, 5),
    "tests/length_generalization_programs/parity_prefix.rasp": ("rasp", 5, 5, 6),
    "tests/length_generalization_programs/unique_copy.rasp": ("b-rasp", 14, True, 15),
    "tests/length_generalization_programs/repeat_copy.rasp": ("rasp", 6, 6, 7),
}


@pytest.mark.parametrize("path", sorted(TABLE))
def test_shipped_programs_membership_table(path):
    smallest, c, r, size = TABLE[path]
    doc = check_dialect((ROOT / path).read_text())
    part = doc["length_generalization"]
    got = {f["id"]: f for f in part["fragments"]}
    assert doc["smallest"] == smallest
    for fid, want in (("c-rasp-periodic-local", c), ("rasp-l", r)):
        f = got[fid]
        if want is True:
            assert f["member"] and f["reason"] is None and "line" not in f
        else:
            assert not f["member"] and f["line"] == want and f["reason"]
            assert f["prediction"] == "no guarantee from this program"
    assert part["size"]["operations"] == size


def test_every_shipped_example_has_predictions_worded_honestly():
    for path in sorted((ROOT / "examples").glob("*.rasp")):
        part = check_dialect(path.read_text())["length_generalization"]
        for f in part["fragments"]:
            text = (f["statement"] + " " + part["summary"]).lower()
            assert "will fail" not in text and "cannot learn" not in text
            if not f["member"]:
                assert f["statement"].startswith("No guarantee from this program") and "might be" in f["statement"]
        assert part["summary"].startswith("Length generalisation: ")


# ------------------------------------------------------------ size, document, analyze

def test_size_counts_each_operation_once_and_ignores_names():
    part, _ = predictions((LG / "majority_prefix.rasp").read_text())
    by = part["size"]["by_kind"]
    # prefix, two select(tokens, ...), two ands, two widths and one comparison; `prefix` shared, counted once
    assert by == {"select": 3, "and": 2, "or": 0, "not": 0, "aggregate": 0, "selector_width": 2, "map": 0,
                  "sequencemap": 1, "select_closest": 0, "aggregate_sum": 0}
    assert part["size"]["operations"] == 8 and part["size"]["attention"] == 2 and "distinct" in part["size"]["measure"]
    renamed = (LG / "majority_prefix.rasp").read_text().replace("ones", "n1").replace("zeros", "n0")
    assert predictions(renamed)[0]["size"] == part["size"]


def test_summary_line_for_each_case():
    assert "guaranteed in Huang et al.'s idealised setting" in predictions(
        (LG / "majority_prefix.rasp").read_text())[0]["summary"]
    assert "predicted by Zhou et al.'s conjecture, not a theorem" in predictions(
        (LG / "unique_copy.rasp").read_text())[0]["summary"]
    s = predictions((LG / "parity_prefix.rasp").read_text())[0]["summary"]
    assert "no guarantee from this program" in s and "line 5" in s and "might have one" in s


def test_existing_fields_unchanged_and_analyze_carries_the_new_part():
    doc = analyze((LG / "majority_prefix.rasp").read_text())["dialect"]
    assert doc["smallest"] == "c-rasp" and [f["id"] for f in doc["fragments"]] == [
        "b-rasp", "c-rasp", "tl-count", "length-free", "rasp"]
    assert doc["length_generalization"]["fragments"][0]["member"]


def test_the_compilers_document_is_unchanged():
    """dialect_document (what the length-free compiler reports) keeps its fields; the new part comes with
    check_dialect."""
    from rasplay.engine.interpret import interpret
    from rasplay.engine.limits import DEFAULT_LIMITS
    interp = interpret((LG / "majority_prefix.rasp").read_text(), DEFAULT_LIMITS)
    node = [d for d in interp.definitions if d.name == "majority"][-1].value
    doc = dialect_document(interp, "majority", type_program(interp, node))
    assert "length_generalization" not in doc and doc["smallest"] == "c-rasp"


def test_the_docs_table_is_what_the_check_answers():
    """docs/dialects.md's table of the shipped programs, row by row, against check_dialect."""
    names = {"B-RASP": "b-rasp", "C-RASP": "c-rasp", "TL[#]": "tl-count", "length-free": "length-free",
             "RASP": "rasp"}
    rows = [line.split("|")[1:-1] for line in (ROOT / "docs" / "dialects.md").read_text().splitlines()
            if line.startswith("| `") and line.count("|") == 6]
    assert len(rows) >= 10
    for program, smallest, c, r, size in rows:
        path = program.strip().split("`")[1]
        doc = check_dialect((ROOT / path).read_text())
        got = {f["id"]: f for f in doc["length_generalization"]["fragments"]}
        assert doc["smallest"] == names[smallest.strip()], path
        for fid, cell in (("c-rasp-periodic-local", c), ("rasp-l", r)):
            want = cell.strip().split(" ")[0]
            assert (got[fid]["member"] if want == "in" else got[fid].get("line") == int(want)), (path, fid)
        assert doc["length_generalization"]["size"]["operations"] == int(size), path
