"""Exercise files and checks at their boundaries (issue 24's mutants): the shortest counterexample
when the first wrong input is longer, `lengths` up to the check's limit, duplicate keys, `cases`
against `inputs`, and caches keyed by the file's text, not its id."""
from __future__ import annotations

import pytest

from rasplay.engine.exercises import CHECK_LIMITS, CheckLimits, ExerciseError, check, check_text, parse_exercise
from rasplay.engine.exercises.grading import reference_values
from rasplay.engine.exercises.generate import generate_inputs

COPY = """# title: Copy
# task: Define `copied`: the tokens themselves.
# target: copied
# alphabet: ab
# lengths: 1-4
{extra}# --- reference
copied = tokens;
"""


def copy(extra: str = "", **kw):
    return parse_exercise(COPY.format(extra=extra), "copy", "teacher/copy.exercise", **kw)


def refused(extra: str) -> ExerciseError:
    with pytest.raises(ExerciseError) as info:
        copy(extra)
    return info.value


# ------------------------------------------------------------------ the counterexample

def test_the_counterexample_is_the_shortest_even_when_a_longer_input_fails_first():
    """The cases come first: the long case fails first, but the shortest wrong input is shown (the
    earliest of the shortest: "b", a case, before the generated "a")."""
    exercise = copy('# cases: ["abab", "b"]\n')
    inputs = generate_inputs(exercise)
    assert inputs[:3] == ["abab", "b", "a"]
    r = check(exercise, 'copied = tokens == "z";')
    assert r["status"] == "wrong" and r["inputs_right"] == 0
    assert r["counterexample"]["input"] == "b"
    assert r["counterexample"]["expected"] == ["b"] and r["counterexample"]["got"] == [False]
    assert "e.g. 'b': expected ['b'], got [False]" in r["message"]


def test_a_counterexample_among_right_inputs_is_the_shortest_wrong_one():
    """Right on one token, wrong on longer ones: the shortest wrong input has two tokens."""
    exercise = copy('# cases: ["abab", "a"]\n')
    src = 'copied = tokens if length < 2 else "x";'
    r = check(exercise, src)
    c = r["counterexample"]
    assert r["status"] == "wrong" and len(c["input"]) == 2
    assert c["input"] == generate_inputs(exercise)[3]   # "aa": after the cases and the two inputs of length 1
    assert r["inputs_right"] == 2                      # "a" and "b"


# ------------------------------------------------------------------ lengths

@pytest.mark.parametrize("value,low,high", [("1-64", 1, 64), ("64", 64, 64), ("3", 3, 3), ("1 - 2", 1, 2),
                                            ("1-1", 1, 1)])
def test_lengths_up_to_the_check_limit_are_accepted(value, low, high):
    e = parse_exercise(COPY.format(extra="").replace("1-4", value), "copy")
    assert (e.min_length, e.max_length) == (low, high)
    assert e.public()["lengths"] == [low, high]


@pytest.mark.parametrize("value", ["1-65", "65", "0-3", "0", "3-2", "-1", "1-", "a-b", "1-2-3"])
def test_lengths_past_the_limits_are_refused_on_their_line(value):
    with pytest.raises(ExerciseError) as info:
        parse_exercise(COPY.format(extra="").replace("1-4", value), "copy")
    assert info.value.line == 5 and "lengths must" in info.value.message


def test_the_length_limit_follows_the_check_limits():
    text = COPY.format(extra="").replace("1-4", "1-10")
    assert parse_exercise(text, "copy", limits=CheckLimits(max_length=10)).max_length == 10
    with pytest.raises(ExerciseError, match="MAX <= 9"):
        parse_exercise(text, "copy", limits=CheckLimits(max_length=9))


def test_an_input_of_the_longest_length_is_checked():
    text = COPY.format(extra='# cases: ["' + "ab" * 32 + '"]\n').replace("1-4", "1-64")
    e = parse_exercise(text, "copy")
    assert e.cases == ("ab" * 32,)
    r = check(e, "copied = tokens;")
    assert r["passed"] and r["inputs_checked"] == 300
    with pytest.raises(ExerciseError, match="case 1 has 65 tokens; 1 to 64 allowed"):
        parse_exercise(text.replace('"]', 'a"]'), "copy")


# ------------------------------------------------------------------ header keys

def test_a_key_given_twice_is_refused_at_its_second_line():
    e = refused("# alphabet: abc\n")
    assert e.message == "the key 'alphabet' is given twice" and e.line == 6
    assert refused("# inputs: 5\n# inputs: 6\n").line == 7


def test_a_continuation_line_adds_to_its_key_and_a_blank_line_ends_it():
    e = parse_exercise(COPY.format(extra="").replace("# task: Define `copied`: the tokens themselves.\n",
                                                     "# task: Define `copied`:\n#   the tokens themselves.\n"), "copy")
    assert e.task == "Define `copied`: the tokens themselves."
    with pytest.raises(ExerciseError) as info:
        parse_exercise(COPY.format(extra="").replace("# target: copied\n", "\n#   stray\n# target: copied\n"),
                       "copy")
    assert info.value.line == 4 and "indented continuation" in info.value.message


# ------------------------------------------------------------------ cases against inputs

def test_as_many_cases_as_inputs_is_allowed_and_one_more_is_refused():
    e = copy('# cases: ["a", "b", "ab"]\n# inputs: 3\n')
    assert e.n_inputs == 3 and generate_inputs(e) == ["a", "b", "ab"]
    assert check(e, "copied = tokens;")["inputs_checked"] == 3
    err = refused('# cases: ["a", "b", "ab", "ba"]\n# inputs: 3\n')
    assert err.message == "4 cases but only 3 inputs are checked" and err.line == 7


def test_inputs_and_cases_limits_are_inclusive():
    assert copy(f"# inputs: {CHECK_LIMITS.max_inputs}\n").n_inputs == CHECK_LIMITS.max_inputs
    assert copy("# inputs: 1\n").n_inputs == 1
    assert "between 1 and 1000, not 0" in refused("# inputs: 0\n").message
    assert "between 1 and 1000, not 1001" in refused("# inputs: 1001\n").message
    cases = '["' + '", "'.join(["a"] * 3) + '"]'
    assert len(parse_exercise(COPY.format(extra=f"# cases: {cases}\n"), "copy",
                              limits=CheckLimits(max_cases=3)).cases) == 3
    with pytest.raises(ExerciseError, match="4 cases; the limit is 3"):
        parse_exercise(COPY.format(extra=f"# cases: {cases[:-1]}, \"b\"]\n"), "copy", limits=CheckLimits(max_cases=3))


# ------------------------------------------------------------------ caches keyed by the text

def test_the_check_cache_follows_the_file_text_not_the_id():
    """Two files with one id and different references: each check uses its own file's reference."""
    text_a = COPY.format(extra="")
    text_b = text_a.replace("copied = tokens;", 'copied = tokens == "a";')
    assert check_text(text_a, "copy", "copied = tokens;")["passed"]
    assert not check_text(text_b, "copy", "copied = tokens;")["passed"]
    assert check_text(text_b, "copy", 'copied = tokens == "a";')["passed"]
    assert check_text(text_a, "copy", "copied = tokens;")["passed"]


def test_reference_values_are_cached_per_file_content():
    a = copy()
    b = parse_exercise(COPY.format(extra="").replace("copied = tokens;", 'copied = tokens == "a";'), "copy")
    assert a.digest != b.digest and a.id == b.id
    inputs_a, values_a = reference_values(a)
    inputs_b, values_b = reference_values(b)
    assert inputs_a == inputs_b
    assert values_a[0] == list(inputs_a[0]) and values_b[0] == [t == "a" for t in inputs_b[0]]
    assert reference_values(a) == (inputs_a, values_a)


# ------------------------------------------------------------------ folders

def test_a_folder_of_as_many_files_as_the_limit_loads_and_one_more_is_refused(tmp_path):
    from rasplay.engine.exercises import load_directory
    limits = CheckLimits(max_exercises=2)
    for name in ("one", "two"):
        (tmp_path / f"{name}.exercise").write_text(COPY.format(extra=""))
    exercises, problems = load_directory(tmp_path, limits, self_check=False)
    assert sorted(e.id for e in exercises) == ["one", "two"] and problems == []
    (tmp_path / "three.exercise").write_text(COPY.format(extra=""))
    exercises, problems = load_directory(tmp_path, limits, self_check=False)
    assert exercises == [] and [p.message for p in problems] == ["3 exercise files; the limit is 2"]


def test_a_teachers_folder_is_self_checked_by_default(tmp_path):
    from rasplay.engine.exercises import load_catalog
    (tmp_path / "copy.exercise").write_text(COPY.format(extra="# max_layers: 1\n").replace(
        "copied = tokens;", "copied = aggregate(select(indices, indices, ==), aggregate(select(indices, indices, ==), "
                            "tokens));"))
    catalog, problems = load_catalog([tmp_path])
    assert catalog.get("copy") is None and "over budget" in problems[0].message
    catalog, problems = load_catalog([tmp_path], self_check_extra=False)
    assert catalog.get("copy") is not None and problems == []


# ------------------------------------------------------------------ more limits and messages (mutation survivors)

JSON = """# title: Sum
# task: Define `s`.
# target: s
# input_format: json
{extra}# --- reference
s = tokens;
"""


def test_the_id_may_have_64_characters_not_65():
    assert parse_exercise(COPY.format(extra=""), "a" * 64).id == "a" * 64
    with pytest.raises(ExerciseError, match="the file name must be"):
        parse_exercise(COPY.format(extra=""), "a" * 65)


@pytest.mark.parametrize("key,high", [("max_layers", 100), ("max_heads_per_layer", 100), ("max_heads", 1000),
                                      ("order", 10_000), ("seed", 2**31 - 1)])
def test_numeric_keys_take_their_upper_limit_and_refuse_one_more(key, high):
    e = copy(f"# {key}: {high}\n")
    got = e.seed if key == "seed" else e.order if key == "order" else getattr(e.budget, key)
    assert got == high
    assert f"{key} must be between" in refused(f"# {key}: {high + 1}\n").message


def test_case_messages_name_the_case_and_the_input_format():
    e = refused('# cases: ["a", 3]\n')
    assert e.message == "case 2 must be a string" and e.line == 6
    with pytest.raises(ExerciseError) as info:
        parse_exercise(JSON.format(extra='# cases: [[1, 2], "ab"]\n'), "sum")
    assert info.value.message == "case 2 must be a JSON list of tokens (input_format: json)"
    with pytest.raises(ExerciseError) as info:
        parse_exercise(JSON.format(extra='# cases: [[1], [2, null]]\n'), "sum")
    assert info.value.message == "case 2 holds a token that is not a number or string"


def test_the_first_example_of_a_json_alphabet_of_words_stays_a_list():
    e = parse_exercise(JSON.format(extra='# alphabet: ["ab", "c"]\n# lengths: 1-3\n'), "sum")
    assert e.example == ["ab", "c", "ab"]
    e = parse_exercise(JSON.format(extra='# alphabet: ["a", "c"]\n# lengths: 2-9\n'), "sum")
    assert e.example == "acacac"
    assert copy().example == "abab"


@pytest.mark.parametrize("key", ["max_layers", "max_heads_per_layer", "max_heads", "inputs"])
def test_budgets_and_inputs_start_at_one(key):
    assert f"{key} must be between 1 and" in refused(f"# {key}: 0\n").message
    e = copy(f"# {key}: 1\n")
    assert (e.n_inputs if key == "inputs" else getattr(e.budget, key)) == 1


def test_an_explicit_str_input_format_names_what_a_case_must_be():
    e = refused('# input_format: str\n# cases: [["a"]]\n')
    assert e.message == "case 1 must be a string"


def test_the_default_case_limit_is_inclusive():
    cases = "[" + ", ".join(['"a"'] * CHECK_LIMITS.max_cases) + "]"
    assert len(copy(f"# cases: {cases}\n").cases) == CHECK_LIMITS.max_cases == 200
    assert "201 cases; the limit is 200" in refused(f'# cases: {cases[:-1]}, "b"]\n').message


def test_the_file_size_limit_applies_to_text_too_and_is_inclusive():
    text = COPY.format(extra="")
    size = len(text.encode())
    assert parse_exercise(text, "copy", limits=CheckLimits(max_file_bytes=size)).id == "copy"
    with pytest.raises(ExerciseError, match=f"the file is {size} bytes; the limit is {size - 1}"):
        parse_exercise(text, "copy", limits=CheckLimits(max_file_bytes=size - 1))
    with pytest.raises(ExerciseError, match="the limit is 10"):
        parse_exercise(text + "#" * 100, "copy", limits=CheckLimits(max_file_bytes=10))


def test_an_exercise_needs_an_alphabet_or_cases_and_either_is_enough():
    no_alphabet = COPY.format(extra="").replace("# alphabet: ab\n# lengths: 1-4\n", "")
    with pytest.raises(ExerciseError, match="no inputs: give"):
        parse_exercise(no_alphabet, "copy")
    e = parse_exercise(no_alphabet.replace("# target: copied\n", '# target: copied\n# cases: ["ab", "b"]\n'), "copy")
    assert e.alphabet == () and generate_inputs(e) == ["ab", "b"] and e.example == "ab"


@pytest.mark.parametrize("key", ["title", "task", "target"])
def test_a_required_key_with_an_empty_value_is_missing(key):
    lines = COPY.format(extra="").splitlines(keepends=True)
    text = "".join(f"# {key}:\n" if line.startswith(f"# {key}:") else line for line in lines)
    with pytest.raises(ExerciseError, match=f"the header needs '# {key}:'"):
        parse_exercise(text, "copy")


def test_order_defaults_to_100_and_starts_at_0():
    assert copy().order == 100 and copy("# order: 0\n").order == 0
    assert "order must be between 0 and 10000, not -1" in refused("# order: -1\n").message


def test_alphabet_tokens_by_input_format():
    with pytest.raises(ExerciseError) as info:
        parse_exercise(COPY.format(extra="").replace("# alphabet: ab", '# alphabet: ["ab", "c"]'), "copy")
    assert info.value.message == 'alphabet tokens must be single characters; "ab" is not'
    with pytest.raises(ExerciseError) as info:
        parse_exercise(JSON.format(extra='# alphabet: [1, [2]]\n# lengths: 1-2\n'), "sum")
    assert info.value.message == "alphabet tokens must be numbers or strings; [2] is not"
    assert parse_exercise(JSON.format(extra='# alphabet: [1.5, 2, "x"]\n# lengths: 1-2\n'), "sum").alphabet == \
        (1.5, 2, "x")
    with pytest.raises(ExerciseError, match="NaN is not"):
        parse_exercise(JSON.format(extra='# alphabet: [1, NaN]\n# lengths: 1-2\n'), "sum")


def test_the_alphabet_limit_is_inclusive():
    text = COPY.format(extra="").replace("# alphabet: ab", "# alphabet: abc")
    assert parse_exercise(text, "copy", limits=CheckLimits(max_alphabet=3)).alphabet == ("a", "b", "c")
    with pytest.raises(ExerciseError, match="the alphabet has 3 tokens; the limit is 2"):
        parse_exercise(text, "copy", limits=CheckLimits(max_alphabet=2))
