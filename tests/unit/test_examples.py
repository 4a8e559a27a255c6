"""Every example evaluates without errors, and gives the outputs worked out by hand."""
import pytest

from rasplay import engine
from rasplay.engine.examples import find_example, load_examples

# example id -> [(input, {name: expected values})], computed by hand
HAND_COMPUTED = {
    "reverse": [("hello", {"reverse": list("olleh"), "opp_index": [4, 3, 2, 1, 0]}), ("a", {"reverse": ["a"]})],
    "length": [("hello", {"n": [5] * 5, "n_from_mean": [5] * 5}), ("abcdefg", {"n": [7] * 7})],
    "histogram": [("hello", {"hist": [1, 1, 2, 2, 1]}), ("aaa", {"hist": [3, 3, 3]})],
    "histogram_bos": [("$hello", {"hist": [0, 1, 1, 2, 2, 1]}), ("$aab", {"hist": [0, 2, 2, 1]})],
    "double_histogram": [("aaabbccdef", {"double_hist": [1, 1, 1, 2, 2, 2, 2, 3, 3, 3]}),
                         ("abab", {"double_hist": [2, 2, 2, 2]})],
    "sort_unique": [("dbeac", {"sorted": list("abcde")}), ("zy", {"sorted": ["y", "z"]})],
    "sort_stable": [("banana", {"sorted": list("aaabnn"), "sorted_desc": list("ananab")}),
                    ("cba", {"sorted": list("abc")})],
    "sort_by_frequency": [("abbccca", {"by_frequency": list("cccabba")}), ("aab", {"by_frequency": list("aab")})],
    "most_frequent": [("abcbcb", {"most_frequent": ["b"] * 6}), ("abab", {"most_frequent": ["a"] * 4})],
    "dyck1": [("(()())(", {"dyck1": list("PPPPPTP")}), ("())(", {"dyck1": list("PTFF")}), ("a(b)", {"dyck1": list("TPPT")})],
    "dyck2": [("({}){(}", {"dyck2": list("PPPTPPF")}), ("{()}", {"dyck2": list("PPPT")}), ("(]", {"dyck2": list("PP")}),
              (")(", {"dyck2": list("FF")}), ("({)}", {"dyck2": list("PPFF")})],
    "shift": [("hello", {"prev_token": list("_hell"), "two_back": list("__hel"), "bigram": ["_h", "he", "el", "ll", "lo"]})],
    "count": [("banana", {"count_a": [3] * 6, "frac_prev_a": [0, 1 / 2, 1 / 3, 2 / 4, 2 / 5, 3 / 6]})],
    "first_last": [("hello world", {"first_of_its_kind": [True, True, True, False, True, True, True, False, True, False, True],
                                    "where_first_l": [2] * 11}),
                   ("xyz", {"where_first_l": [-1] * 3, "last_l": [False] * 3})],
    "parity": [("1101001", {"parity": [0] * 7, "prefix_parity": [1, 0, 0, 1, 1, 1, 0]}), ("100", {"parity": [1] * 3})],
    "majority": [("1101001", {"majority": ["1"] * 7}), ("1100", {"majority": ["="] * 4}), ("100", {"majority": ["0"] * 3})],
    "induction": [("abcdabcab", {"induction": list("____bcdbc")}), ("aa", {"induction": list("_a")})],
    "pattern": [("xabcabbabc", {"abc_ends_here": [False, False, False, True] + [False] * 5 + [True],
                                "seen_abc": [False] * 3 + [True] * 7})],
    "match2": [([3, 13, 7, 5, 16, 0, 11], {"has_match": [True, True, False, True, True, True, True]}),
               ([8, 1], {"has_match": [False, False]}), ([8, 8], {"has_match": [True, True]})],
    "qsparse": [([512, 701, 330, 20], {"mean": [5.0, 6.0, 2.5, 4.0]}), ([900], {"mean": [9]})],
    # the length-generalization section (docs/length_generalization.md)
    "length_sort": [("dbcabd", {"sorted": list("abbcdd")}), ("ba", {"sorted": list("ab")})],
    "length_unique_copy": [("abcab", {"unique_copy": list("bcabc")}), ("abc", {"unique_copy": list("bc-")})],
    "length_majority": [("abcbcb", {"majority": ["b"] * 6}), ("abab", {"majority": ["a"] * 4})],
    "length_parity": [("1101001", {"parity": [0] * 7}), ("100", {"parity": [1] * 3})],
    "length_repeat_copy": [("abcabcab", {"repeat_copy": list("----abca")}), ("xyz", {"repeat_copy": list("-xy")})],
    "depth_l2": [("abbaab", {"in_L2": [False, True, True, True, True, True]}), ("bba", {"in_L2": [False] * 3})],
    "depth_l3": [("aabbba", {"in_L3": [False] * 5 + [True]}), ("abbaab", {"in_L3": [False] * 3 + [True] * 3})],
    "depth_l4": [("abbaab", {"in_L4": [False] * 5 + [True]}), ("aabbba", {"in_L4": [False] * 6})],
    "length_addition": [([3, 18, 9, 9, 4], {"carry": [0, 0, 1, 1, 1], "sum_digit": [3, 8, 0, 0, 5]}),
                        ([9, 9, 12], {"carry": [0, 0, 0], "sum_digit": [9, 9, 2]})],
}


def test_every_example_has_hand_computed_checks():
    assert {e.id for e in load_examples()} == set(HAND_COMPUTED)


@pytest.mark.parametrize("example", load_examples(), ids=lambda e: e.id)
def test_example_header_and_default_input(example):
    assert example.title and len(example.description) > 80 and example.tags and example.output
    doc = engine.evaluate(example.source, [example.input], input_format=example.input_format)
    assert [d for d in doc["diagnostics"] if d["severity"] == "error"] == []
    assert example.output in doc["results"]
    assert all(e is None for r in doc["results"].values() for e in r["errors"])


@pytest.mark.parametrize("example_id", sorted(HAND_COMPUTED))
def test_example_outputs(example_id):
    source = find_example(example_id).source
    for inp, expected in HAND_COMPUTED[example_id]:
        doc = engine.evaluate(source, [inp])
        for name, want in expected.items():
            res = doc["results"][name]
            assert res["errors"] == [None], (inp, name, res["errors"])
            got = res["values"][0]
            assert len(got) == len(want) and all(
                abs(g - w) < 1e-9 if isinstance(w, float) else g == w for g, w in zip(got, want)), (inp, name, got)


def test_every_example_id_is_one_the_api_serves():
    """GET /examples/{id} takes ids matching its pattern: a file name outside it (depth_L2.rasp) is an example
    the gallery lists but the page cannot open."""
    import re

    from rasplay.engine.examples import ID_PATTERN

    refused = [e.id for e in load_examples() if not re.fullmatch(ID_PATTERN.strip("^$"), e.id) or len(e.id) > 64]
    assert refused == []
