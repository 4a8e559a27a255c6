"""Exercise files and checks at their boundaries (issue 24's mutants): the shortest counterexample
when the first wrong input is longer, `lengths` up to the check's limit, duplicate keys, `cases`
against `inputs`, and caches keyed by the file's text, not its id."""
from __future__ import annotations

import pytest

from rasplay.engine.exercises import CHECK_LIMITS, CheckLimits, ExerciseError, check, check_text, parse_exercise
from rasplay.engine.exercises.check import reference_values
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
