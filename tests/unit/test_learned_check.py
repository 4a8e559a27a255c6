"""The check of a learned program against the task's program (engine/learned/check.py), with learned
programs written by hand so that exactly which inputs fail is known."""
import pytest

from rasplay.engine.learned.check import CheckLimits, CheckOptions, check_learned, make_plan
from rasplay.engine.learned.check_programs import CheckError

REVERSE = """flip = select(indices, length - indices - 1, ==);
reverse = aggregate(flip, tokens);
"""

# TransformerPrograms' layout: "<s>" first, "</s>" last; the input sits at positions 1..n
LEARNED_REVERSE = """# learned: transformer-programs
# bos: <s>
# eos: </s>
# output: rev
back = select(indices, length - indices - 1, ==);
rev = aggregate(back, tokens);
"""

IS_A = "isa = tokens == \"a\";\n"
# right everywhere except at length 3 (length counts the BOS), where every "b" reads as an "a"
LEARNED_IS_A = """# bos: <s>
# output: guess
guess = tokens == "a" or (tokens == "b" and length == 4);
"""


def test_a_right_program_agrees_on_every_input_and_its_selector_equals_the_tasks():
    report = check_learned(LEARNED_REVERSE, REVERSE, "abc", CheckOptions(max_length=4))
    assert report["all_agree"] is True
    assert [(r["length"], r["mode"], r["inputs"], r["agree"], r["tokens"]) for r in report["lengths"]] == [
        (1, "exhaustive", 3, 3, 3), (2, "exhaustive", 9, 9, 18), (3, "exhaustive", 27, 27, 81),
        (4, "exhaustive", 81, 81, 324)]
    assert report["failing"] == []
    back = next(s for s in report["selectors"] if s["name"] == "back")
    assert back["equals"] == ["flip"] and back["line"] == 5
    assert (report["task_output"], report["learned_output"], report["bos"], report["eos"]) == (
        "reverse", "rev", "<s>", "</s>")


def test_the_failing_inputs_are_exactly_those_known_and_the_shortest_come_first():
    report = check_learned(LEARNED_IS_A, IS_A, "ab", CheckOptions(max_length=4, show=3))
    by_length = {r["length"]: (r["inputs"], r["agree"], r["tokens"], r["tokens_agree"]) for r in report["lengths"]}
    # length 3: 8 inputs, only "aaa" agrees; tokens: 24, the 12 "b"s are wrong
    assert by_length == {1: (2, 2, 2, 2), 2: (4, 4, 8, 8), 3: (8, 1, 24, 12), 4: (16, 16, 64, 64)}
    assert report["all_agree"] is False
    assert [f["input"] for f in report["failing"]] == [["a", "a", "b"], ["a", "b", "a"], ["a", "b", "b"]]
    first = report["failing"][0]
    assert first["expected"] == [True, True, False] and first["got"] == [True, True, True]
    assert first["differs"] == [2] and first["error"] is None
    assert report["total"]["input_agreement"] == pytest.approx(23 / 30)


def test_an_error_of_the_learned_program_counts_as_a_failure_with_its_message():
    learned = "# bos: <s>\nback = select(indices, 4 - indices, ==);\nrev = aggregate(back, tokens);\n"
    report = check_learned(learned, REVERSE, "ab", CheckOptions(min_length=2, max_length=2))
    row = report["lengths"][0]
    assert (row["inputs"], row["agree"], row["learned_failed"]) == (4, 0, 4)
    assert report["failing"][0]["got"] is None
    assert "select nothing" in report["failing"][0]["error"]


def test_lengths_beyond_are_marked_and_a_large_length_is_sampled_with_its_seed():
    options = CheckOptions(max_length=3, beyond=2, exhaustive=30, samples=50, seed=7)
    report = check_learned(LEARNED_REVERSE, REVERSE, "abcd", options)
    modes = [(r["length"], r["mode"], r["beyond"]) for r in report["lengths"]]
    assert modes == [(1, "exhaustive", False), (2, "exhaustive", False), (3, "sampled", False),
                     (4, "sampled", True), (5, "sampled", True)]
    sampled = report["lengths"][2]["inputs"]
    assert 0 < sampled <= 50
    again = check_learned(LEARNED_REVERSE, REVERSE, "abcd", options)
    assert [r["inputs"] for r in again["lengths"]] == [r["inputs"] for r in report["lengths"]]


def test_a_learned_string_output_is_compared_with_a_number_output_by_its_text():
    task = "hist = selector_width(select(tokens, tokens, ==));\n"
    learned = ('# bos: <s>\n# output: h\nwidth = selector_width(select(tokens, tokens, ==));\n'
               'h = "1" if width == 1 else ("2" if width == 2 else "many");\n')
    report = check_learned(learned, task, "ab", CheckOptions(max_length=3))
    assert report["compared_as"] == "text"
    by_length = {r["length"]: r["agree"] for r in report["lengths"]}
    assert by_length == {1: 2, 2: 4, 3: 6}        # a count of 3 ("aaa", "bbb") is "many"
    assert report["failing"][0]["input"] == ["a", "a", "a"]


@pytest.mark.parametrize("options, limits, words", [
    (CheckOptions(min_length=3, max_length=2), CheckLimits(), "min_length <= max_length"),
    (CheckOptions(max_length=10, beyond=10), CheckLimits(max_length=16), "the limit is 16"),
    (CheckOptions(max_length=12, exhaustive=1000), CheckLimits(max_inputs=5000), "would run"),
    (CheckOptions(samples=0), CheckLimits(), "samples at least 1"),
])
def test_options_outside_the_limits_are_refused_before_any_work(options, limits, words):
    with pytest.raises(CheckError, match=words):
        make_plan(4, options, limits)


def test_programs_and_vocabularies_that_cannot_be_checked_are_refused_with_line_and_column():
    with pytest.raises(CheckError, match=r"learned program has an error \(line 2, col") as e:
        check_learned("a = tokens;\nb = = 1;\n", REVERSE, "ab")
    assert e.value.line == 2
    with pytest.raises(CheckError, match="no s-op named 'nope'"):
        check_learned(LEARNED_REVERSE, REVERSE, "ab", output="nope")
    with pytest.raises(CheckError, match="vocabulary is empty"):
        check_learned(LEARNED_REVERSE, REVERSE, "")
    with pytest.raises(CheckError, match="repeated token"):
        check_learned(LEARNED_REVERSE, REVERSE, "aa")
    with pytest.raises(CheckError, match="is a selector"):
        check_learned(LEARNED_REVERSE, REVERSE, "ab", output="flip")


def test_a_check_past_its_time_limit_stops_with_a_timeout():
    with pytest.raises(CheckError, match="longer than") as e:
        check_learned(LEARNED_REVERSE, REVERSE, "abcd", CheckOptions(max_length=8),
                      limits=CheckLimits(seconds=0))
    assert e.value.kind == "timeout"


# TransformerPrograms' form: a position table read through select_closest (no match: the BOS, position 0);
# the mirror position only for inputs of length 3 (positions 1..3 between "<s>" and "</s>")
CLOSEST_REVERSE = """# learned: transformer-programs
# bos: <s>
# eos: </s>
# output: rev
target = 3 if indices == 1 else (2 if indices == 2 else (1 if indices == 3 else 0));
mirror = select_closest(indices, target, ==);
rev = aggregate(mirror, tokens);
"""


def test_a_select_closest_program_fails_exactly_off_its_length_and_its_selector_is_matched_there():
    report = check_learned(CLOSEST_REVERSE, REVERSE, "ab", CheckOptions(max_length=3, beyond=1, show=1))
    assert [(r["length"], r["agree"], r["inputs"]) for r in report["lengths"]] == [
        (1, 0, 2), (2, 0, 4), (3, 8, 8), (4, 0, 16)]
    assert report["failing"] == [{"input": ["a"], "length": 1, "beyond": False, "expected": ["a"], "got": ["<s>"],
                                  "differs": [0], "error": None}]
    mirror = next(s for s in report["selectors"] if s["name"] == "mirror")
    assert mirror["equals"] == []
    at_three = check_learned(CLOSEST_REVERSE, REVERSE, "ab", CheckOptions(min_length=3, max_length=3))
    assert next(s for s in at_three["selectors"] if s["name"] == "mirror")["equals"] == ["flip"]


def test_number_tokens_reach_a_program_with_a_bos_as_their_text_and_outputs_are_compared_by_text():
    report = check_learned(LEARNED_REVERSE, REVERSE, [0, 1, 2], CheckOptions(max_length=3))
    assert report["all_agree"] is True and report["compared_as"] == "text"
    no_bos = check_learned("rev = aggregate(select(indices, length - indices - 1, ==), tokens);\n", REVERSE,
                           [0, 1, 2], CheckOptions(max_length=3))
    assert no_bos["all_agree"] is True and no_bos["compared_as"] == "value"
    off_by_one = check_learned("rev = aggregate(select(indices, length - indices - 1, ==), tokens) + 0.5;\n",
                               REVERSE, [0, 1], CheckOptions(max_length=2))
    assert off_by_one["total"]["agree"] == 0 and off_by_one["failing"][0]["got"] == [0.5]


def test_an_unnamed_head_is_named_by_the_s_op_it_computes():
    learned = "# bos: <s>\n# output: rev\nrev = aggregate(select(indices, length - indices, ==), tokens);\n"
    report = check_learned(learned, REVERSE, "ab", CheckOptions(max_length=2))
    assert [s["name"] for s in report["selectors"]] == ["full_s", "head of rev"]   # full_s: the library's length
    assert report["selectors"][1]["equals"] == ["flip"]
