"""The inputs an exercise is checked on (engine/exercises/generate.py): cases first, then every input of the
shortest lengths while they fit in a quarter of the inputs (plus the cases), then random ones without repeats,
never more than `inputs`, deterministic for a file. Written against cosmic-ray's survivors (docs/testing.md)."""
from __future__ import annotations

import itertools

from rasplay.engine.exercises import parse_exercise
from rasplay.engine.exercises.generate import generate_inputs


def exercise(alphabet: str, lengths: str, n: int, cases: str | None = None, input_format: str | None = None,
             seed: int = 7):
    extra = f"# inputs: {n}\n# seed: {seed}\n" + (f"# cases: {cases}\n" if cases else "") \
        + (f"# input_format: {input_format}\n" if input_format else "")
    text = (f"# title: Copy\n# task: Define `copied`.\n# target: copied\n# alphabet: {alphabet}\n"
            f"# lengths: {lengths}\n{extra}# --- reference\ncopied = tokens;\n")
    return parse_exercise(text, "copy", "teacher/copy.exercise")


def every(alphabet: str, length: int) -> list[str]:
    return ["".join(p) for p in itertools.product(alphabet, repeat=length)]


def test_every_input_of_the_shortest_lengths_while_they_fit_in_a_quarter():
    inputs = generate_inputs(exercise("ab", "1-6", 56))   # a quarter: 14 = 2 + 4 + 8 (lengths 1 to 3)
    assert inputs[:14] == every("ab", 1) + every("ab", 2) + every("ab", 3)
    assert inputs[14:30] != every("ab", 4)                # 14 + 16 > 14: length 4 is drawn at random
    assert len(inputs) == 56 == len(set(inputs)) and all(1 <= len(s) <= 6 for s in inputs)
    assert max(len(s) for s in inputs[14:]) == 6 and min(len(s) for s in inputs[14:]) >= 1


def test_the_quarter_is_counted_from_the_cases():
    # the cases take 3; a quarter of 40 is 10: lengths 1 and 2 fit (3 + 1 + 3 = 7 inputs), length 3 would make 15
    inputs = generate_inputs(exercise("ab", "1-3", 40, '["bb", "abb", "a"]'))
    assert inputs[:7] == ["bb", "abb", "a", "b", "aa", "ab", "ba"]
    assert inputs[7:14] != [s for s in every("ab", 3) if s != "abb"]
    # the space holds 14 inputs, fewer than 40: every one is checked, though the random rounds drew repeats
    assert sorted(inputs) == sorted(every("ab", 1) + every("ab", 2) + every("ab", 3)) and len(inputs) == 14
    # each round draws only as many as are left in the space (pinned: the draws decide the order)
    assert inputs[7:] == ["aaa", "aab", "aba", "bab", "baa", "bba", "bbb"]


def test_random_rounds_that_draw_repeats_are_filled_up_to_the_inputs():
    inputs = generate_inputs(exercise("ab", "1-8", 160))   # lengths 1-4 are all taken: many draws repeat
    assert len(inputs) == 160 == len(set(inputs))
    # the rest stays random, lengths uniform over 5-8 (the space is counted whole, not capped small): about a
    # quarter of the 130 have 8 tokens, where filling up shortest first would give almost none
    assert sum(len(s) == 8 for s in inputs) >= 30


def test_a_larger_quarter_takes_longer_lengths_whole():
    inputs = generate_inputs(exercise("ab", "1-8", 160))   # a quarter: 40; 2 + 4 + 8 + 16 = 30, + 32 would pass it
    assert inputs[:30] == every("ab", 1) + every("ab", 2) + every("ab", 3) + every("ab", 4)
    assert inputs[30:62] != every("ab", 5)
    assert len(inputs) == 160 == len(set(inputs))


def test_a_space_smaller_than_the_inputs_is_given_whole_in_order():
    assert generate_inputs(exercise("ab", "1-2", 40)) == ["a", "b", "aa", "ab", "ba", "bb"]


def test_never_more_than_the_inputs_even_with_repeated_cases():
    # four cases, all "a": one input; the quarter (1) plus the cases (4) would admit a fifth
    assert generate_inputs(exercise("a", "1-9", 4, '["a", "a", "a", "a"]')) == ["a", "aa", "aaa", "aaaa"]


def test_json_inputs_are_lists_and_the_draw_is_pinned_by_the_seed():
    inputs = generate_inputs(exercise("[1, 2]", "1-3", 5, input_format="json"))
    assert inputs == [[2, 2, 1], [1, 1], [1, 2, 1], [2, 1], [1, 1, 1]]
    # no exhaustive part: a quarter of 12 is 3, and the 4 inputs of length 2 do not fit in it
    assert generate_inputs(exercise("ab", "2-5", 12)) == ["baaba", "baab", "aaba", "aabbb", "bbbb", "babaa", "babba",
                                                          "aa", "ba", "bab", "aab", "abbba"]
    assert generate_inputs(exercise("ab", "2-5", 12)) != generate_inputs(exercise("ab", "2-5", 12, seed=8))


def test_filling_up_stops_at_the_inputs_in_a_large_space():
    inputs = generate_inputs(exercise("abcdefghij", "1-40", 60))   # 10^40 inputs: only the 60 asked for
    assert len(inputs) == 60 == len(set(inputs))


def test_the_space_is_counted_whole_up_to_the_most_inputs_a_check_takes():
    inputs = generate_inputs(exercise("ab", "1-10", 1000))   # 2046 inputs exist: all 1000 are drawn at random
    assert len(inputs) == 1000 == len(set(inputs))
    assert sum(len(s) == 10 for s in inputs) >= 200          # about a quarter at the longest length, not ~100
