"""select_closest and aggregate_sum (rasplay's extensions for learned programs) against hand-computed values."""
import pytest

from rasplay import compile as rasp_compile
from rasplay import evaluate
from rasplay.engine import check_dialect


def values(source, inp, name):
    doc = evaluate(source, [inp])
    res = doc["results"][name]
    assert res["errors"] == [None], res["errors"]
    return res["values"][0]


def test_select_closest_picks_the_nearest_match_and_ties_to_the_smaller_position():
    # query i matches every key j with tokens[j] == "a"; the nearest wins, a tie the smaller j
    src = "c = select_closest(tokens, \"a\", ==); p = aggregate(c, indices);"
    #            0    1    2    3    4
    assert values(src, ["a", "b", "b", "a", "b"], "p") == [0, 0, 3, 3, 3]
    # position 2: matches 0 (|2-0| = 2) and 4 (2): the tie goes to 0
    assert values(src, ["a", "b", "b", "b", "a"], "p") == [0, 0, 0, 4, 4]


def test_the_querys_own_position_scores_the_number_of_matches():
    # TransformerPrograms' rule: the own position's score is len(matches), others |i - j|
    src = "c = select_closest(tokens, tokens, ==); p = aggregate(c, indices);"
    # position 2 ("a") matches 0 and 2: own score 2 == |2-0|, tie -> 0; position 0 matches 0, 2:
    # own score 2, key 2 scores 2 -> tie -> 0 (own, smaller)
    assert values(src, ["a", "b", "a"], "p") == [0, 1, 0]
    # position 3 ("a") matches 0, 1, 3: own scores 3, key 1 scores 2 -> 1
    assert values(src, ["a", "a", "b", "a"], "p") == [1, 0, 2, 1]
    # the own position alone: chosen
    assert values(src, ["a", "b", "c"], "p") == [0, 1, 2]


def test_no_match_selects_position_zero():
    src = "c = select_closest(tokens, \"z\", ==); p = aggregate(c, tokens);"
    assert values(src, ["<s>", "a", "b"], "p") == ["<s>", "<s>", "<s>"]


def test_select_closest_of_a_selector_is_causal_when_the_selector_is():
    src = ("c = select_closest(select(tokens, tokens, ==) and select(indices, indices, <=));"
           "p = aggregate(c, indices);")
    # position 3 ("b") matches 0 (score |3-0| = 3) and itself (score: 2 matches) -> 3; a later match never counts
    assert values(src, ["b", "a", "c", "b"], "p") == [0, 1, 2, 3]
    # position 1 ("b") matches 0 (score 1) and itself (score 2) -> 0, though position 2 also holds "b"
    assert values(src, ["b", "b", "b"], "p") == [0, 0, 1]


def test_aggregate_sum_adds_the_selected_values_and_none_is_zero():
    src = "s = aggregate_sum(select(indices, indices, <), indices); w = aggregate_sum(select(tokens, \"q\", ==), indices);"
    assert values(src, ["a", "b", "c", "d"], "s") == [0, 0, 1, 3]
    assert values(src, ["a", "b", "c", "d"], "w") == [0, 0, 0, 0]
    f = "s = aggregate_sum(select(indices, indices, <=), indices * 0.5);"
    assert values(f, ["a", "b", "c"], "s") == [0.0, 0.5, 1.5]
    b = "s = aggregate_sum(select(tokens, tokens, ==), tokens == \"a\");"
    assert values(b, ["a", "b", "a"], "s") == [2, 0, 2]


def test_aggregate_sum_of_strings_is_an_error_for_that_input():
    doc = evaluate("s = aggregate_sum(select(indices, indices, ==), tokens);", [["a", "b"]])
    err = doc["results"]["s"]["errors"][0]
    assert err is not None and "adds numbers" in str(err)


def test_wrong_arguments_are_located_errors():
    doc = evaluate("x = select_closest(tokens);", [["a"]])
    diags = [d for d in doc.get("diagnostics", []) if d.get("severity") == "error"]
    assert diags and "select_closest takes a selector" in diags[0]["message"] and diags[0]["line"] == 1
    doc = evaluate("x = aggregate_sum(tokens, tokens);", [["a"]])
    diags = [d for d in doc.get("diagnostics", []) if d.get("severity") == "error"]
    assert diags and "must be a selector" in diags[0]["message"]


def test_each_is_one_head_in_the_layer_analysis():
    src = ("c = select_closest(tokens, \"a\", ==); p = aggregate(c, indices);"
           "s = aggregate_sum(select(p, indices, ==), indices); q = aggregate(c, tokens);")
    doc = evaluate(src, [["a", "b"]])
    a = doc["analysis"]
    assert a["layers"] == 2 and a["heads_per_layer"] == [1, 1]
    assert doc["results"]["s"]["layer"] == 2 and doc["results"]["c"]["layer"] == 1


def test_the_compiler_refuses_them_with_the_reason():
    src = "c = select_closest(tokens, \"a\", ==); p = aggregate(c, indices);"
    with pytest.raises(Exception) as e:
        rasp_compile(src, vocab=["a", "b"], max_len=4)
    assert "refused" in str(e.value) and "select_closest" in str(e.value) and "line 1" in str(e.value)
    src = "s = aggregate_sum(select(indices, indices, <), indices);"
    with pytest.raises(Exception) as e:
        rasp_compile(src, vocab=["a", "b"], max_len=4)
    assert "aggregate_sum" in str(e.value)


def test_the_dialect_check_says_they_are_outside_b_rasp_and_c_rasp():
    doc = check_dialect("c = select_closest(tokens, \"a\", ==); p = aggregate(c, indices);")
    frags = {f["id"]: f for f in doc["fragments"]}
    assert not frags["b-rasp"]["member"] and "select_closest" in frags["b-rasp"]["reason"]
    assert not frags["c-rasp"]["member"]
    doc = check_dialect("s = aggregate_sum(select(indices, indices, <), indices);")
    frags = {f["id"]: f for f in doc["fragments"]}
    assert not frags["c-rasp"]["member"] and "aggregate_sum" in frags["c-rasp"]["reason"]


def test_provenance_of_a_closest_head_reads_the_whole_row():
    from rasplay.engine.provenance import provenance

    src = "nearest_a = select_closest(tokens, \"a\", ==); from_a = aggregate(nearest_a, indices);"
    doc = provenance(src, "abba", 2, name="from_a")["provenance"]
    assert doc["heads"][0]["reads"] == [{"query": 2, "keys": [3]}]
    tokens = next(s for s in doc["sops"] if s["name"] == "tokens")
    assert tokens["positions"] == [0, 1, 2, 3]     # which key is closest depends on every key's token
    src = "s = aggregate_sum(select(indices, indices, <), indices);"
    doc = provenance(src, "abcd", 2, name="s")["provenance"]
    assert doc["heads"][0]["reads"] == [{"query": 2, "keys": [0, 1]}]
