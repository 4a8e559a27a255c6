"""The exercise file's `fragment` key: the fragment of RASP (a fragment of the dialect check) a program must be
in. Parsed by id or name, refused with the known names when unknown, shown in the public view, and enforced by
the check (status outside_fragment, the dialect check's reason at its line) and by a teacher folder's self-check."""
from __future__ import annotations

import pytest

from rasplay.cli.main import main
from rasplay.engine.dialect import FRAGMENTS
from rasplay.engine.exercises import ExerciseError, check, load_catalog, load_directory, parse_exercise

COUNT_A = """# title: Count the a's so far
# task: Define `more_a`: "y" where the prefix has more a's than b's, else "n".
# target: more_a
# alphabet: ab
# lengths: 1-6
# fragment: {fragment}
# --- reference
prefix = select(indices, indices, <=);
a = aggregate(prefix, indicator(tokens == "a"));
b = aggregate(prefix, indicator(tokens == "b"));
more_a = "y" if a > b else "n";
"""

# right on every input, but `length` takes it out of C-RASP (line 3, col 17: the product with length)
COUNT_A_WITH_LENGTH = """prefix = select(indices, indices, <=);
a = aggregate(prefix, indicator(tokens == "a"));
more_a = "y" if a * length > aggregate(prefix, indicator(tokens == "b")) * length else "n";
"""


@pytest.mark.parametrize("written,fid", [("c-rasp", "c-rasp"), ("C-RASP", "c-rasp"), ("b-rasp", "b-rasp"),
                                         ("TL[#]", "tl-count"), ("Length-Free", "length-free")])
def test_the_key_takes_a_fragment_by_id_or_name(written, fid):
    exercise = parse_exercise(COUNT_A.format(fragment=written), "count_a")
    assert exercise.fragment == fid
    public = exercise.public()
    assert public["fragment"] == fid and public["fragment_name"] == dict(FRAGMENTS)[fid]


def test_without_the_key_an_exercise_asks_for_no_fragment():
    exercise = parse_exercise(COUNT_A.replace("# fragment: {fragment}\n", ""), "count_a")
    assert exercise.fragment is None
    assert exercise.public()["fragment"] is None and exercise.public()["fragment_name"] is None


@pytest.mark.parametrize("written", ["crasp", "C RASP", "causal", ""])
def test_an_unknown_fragment_is_refused_with_its_line_and_the_known_names(written):
    with pytest.raises(ExerciseError) as info:
        parse_exercise(COUNT_A.format(fragment=written), "count_a", "teacher/count_a.exercise")
    assert info.value.line == 6
    assert info.value.message.startswith(f"unknown fragment {written!r}: the dialect check knows ")
    for fid, name in FRAGMENTS:
        assert f"{fid} ({name})" in info.value.message


def test_a_right_program_outside_the_fragment_is_outside_fragment_with_the_reason_and_its_place():
    exercise = parse_exercise(COUNT_A.format(fragment="c-rasp"), "count_a")
    assert check(exercise, exercise.reference)["status"] == "pass"
    r = check(exercise, COUNT_A_WITH_LENGTH)
    assert r["status"] == "outside_fragment" and not r["passed"] and r["inputs_right"] == r["inputs_checked"]
    assert "but line 3, col 17: this exercise asks for a program in C-RASP, and it is not: 'a * length'" in r["message"]
    fragment = [d for d in r["diagnostics"] if d["kind"] == "fragment"]
    assert len(fragment) == 1 and fragment[0]["severity"] == "warning"
    assert (fragment[0]["line"], fragment[0]["col"]) == (3, 17)
    # the same program passes where no fragment is asked for, or a larger one is
    assert check(parse_exercise(COUNT_A.format(fragment="rasp"), "count_a"), COUNT_A_WITH_LENGTH)["status"] == "pass"
    no_key = parse_exercise(COUNT_A.replace("# fragment: {fragment}\n", ""), "count_a")
    assert check(no_key, COUNT_A_WITH_LENGTH)["status"] == "pass"


def test_a_wrong_program_is_wrong_before_it_is_outside_the_fragment():
    exercise = parse_exercise(COUNT_A.format(fragment="c-rasp"), "count_a")
    r = check(exercise, COUNT_A_WITH_LENGTH.replace('"y" if', '"n" if'))
    assert r["status"] == "wrong" and not any(d["kind"] == "fragment" for d in r["diagnostics"])


def test_a_teachers_file_whose_reference_is_outside_its_fragment_is_refused(tmp_path):
    (tmp_path / "ok.exercise").write_text(COUNT_A.format(fragment="c-rasp"))
    (tmp_path / "strict.exercise").write_text(COUNT_A.format(fragment="b-rasp"))
    exercises, problems = load_directory(tmp_path)
    assert [e.id for e in exercises] == ["ok"]
    assert [p.path.endswith("strict.exercise") for p in problems] == [True]
    assert "the reference fails its own check" in problems[0].message
    assert "this exercise asks for a program in B-RASP, and it is not" in problems[0].message


def test_the_shipped_running_majority_asks_for_c_rasp_and_its_reference_is_in_it():
    catalog, problems = load_catalog()
    assert problems == []
    asked = {e.id: e.fragment for e in catalog.ordered() if e.fragment}
    assert asked == {"majority_so_far": "c-rasp"}
    exercise = catalog.get("majority_so_far")
    assert check(exercise, exercise.reference, prove=False)["status"] == "pass"


def test_the_command_line_says_outside_fragment(tmp_path, capsys):
    (tmp_path / "count_a.exercise").write_text(COUNT_A.format(fragment="c-rasp"))
    program = tmp_path / "p.rasp"
    program.write_text(COUNT_A_WITH_LENGTH)
    assert main(["check", str(program), "--exercise", str(tmp_path / "count_a.exercise")]) == 1
    assert capsys.readouterr().out.startswith("OUTSIDE FRAGMENT  count_a: right on all ")
