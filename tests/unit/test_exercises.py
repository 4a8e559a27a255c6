"""Exercises in the engine (file format, input generator, checker); the command line's `rasplay check FILE
--exercise ID` is tests/cli/test_cli_exercises.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rasplay.engine.exercises import (CHECK_LIMITS, SHIPPED_DIR, CheckLimits, ExerciseError, check, generate_inputs,
                                      load_catalog, load_directory, parse_exercise, validate)
from rasplay.engine import evaluate
from rasplay.engine.exercises.grading import same_values
from rasplay.cli.main import main
from support.exercise_texts import MINIMAL

ROOT = Path(__file__).resolve().parents[2]

REVERSE_RIGHT = "opp = length - indices - 1;\nreverse = aggregate(select(indices, opp, ==), tokens);\n"
REVERSE_OFF_BY_ONE = "opp_index = length - indices;\nflip = select(indices, opp_index, ==);\nreverse = aggregate(flip, tokens, \"_\");\n"
REVERSE_THREE_LAYERS = ("opp = length - indices - 1;\nagain = aggregate(select(indices, indices, ==), opp);\n"
                        "reverse = aggregate(select(indices, again, ==), tokens);\n")

def shipped(exercise_id: str):
    catalog, problems = load_catalog()
    assert problems == []
    return catalog.get(exercise_id)


# ------------------------------------------------------------------ the shipped set

def test_at_least_twelve_exercises_in_teaching_order_and_every_reference_passes_its_own_check():
    exercises, problems = load_directory(SHIPPED_DIR, self_check=True)
    assert problems == [], [str(p) for p in problems]
    ordered = [e.id for e in sorted(exercises, key=lambda e: (e.order, e.title.lower()))]
    assert len(ordered) >= 12
    for earlier, later in [("length", "reverse"), ("reverse", "histogram"), ("histogram", "sort"),
                           ("sort", "most_frequent"), ("most_frequent", "dyck1"), ("dyck1", "dyck2"),
                           ("dyck2", "match2"), ("match2", "induction")]:
        assert ordered.index(earlier) < ordered.index(later)


def test_every_shipped_starter_is_not_already_a_solution():
    catalog, _ = load_catalog()
    for exercise in catalog.ordered():
        assert not check(exercise, exercise.starter)["passed"], exercise.id


def test_public_view_never_holds_the_reference():
    catalog, _ = load_catalog()
    for exercise in catalog.ordered():
        text = json.dumps(exercise.public())
        for line in exercise.reference.splitlines():
            if line.strip() and line not in exercise.starter:
                assert line not in text, (exercise.id, line)
        assert "reference" not in exercise.public()


# ------------------------------------------------------------------ the input generator

def test_generated_inputs_start_with_the_cases_and_cover_every_short_input():
    reverse = shipped("reverse")
    inputs = generate_inputs(reverse)
    assert inputs[:4] == ["a", "ab", "abc", "hello"]
    assert len(inputs) == reverse.n_inputs == 300
    assert len(set(inputs)) == len(inputs)
    assert set("abcde") <= set(inputs)                  # every input of length 1 (edge cases)
    assert all(1 <= len(x) <= 10 for x in inputs)
    assert generate_inputs(reverse) == inputs           # deterministic


def test_json_exercises_generate_lists_of_their_alphabet():
    match2 = shipped("match2")
    inputs = generate_inputs(match2)
    assert all(isinstance(x, list) and all(t in range(16) for t in x) for x in inputs)
    assert [0] in inputs and [3, 13, 7] in inputs


@settings(max_examples=60, deadline=None)
@given(alphabet=st.text(alphabet="abcdefxyz()", min_size=1, max_size=6), low=st.integers(1, 5),
       extra=st.integers(0, 6), n=st.integers(1, 400), seed=st.integers(0, 1000))
def test_generator_invariants(alphabet, low, extra, n, seed):
    text = MINIMAL.replace("# alphabet: ab\n# lengths: 1-4", f"# alphabet: {json.dumps(alphabet)}\n"
                           f"# lengths: {low}-{low + extra}\n# inputs: {n}\n# seed: {seed}")
    exercise = parse_exercise(text, "copy")
    inputs = generate_inputs(exercise)
    letters = set(alphabet)
    possible = sum(len(letters) ** k for k in range(low, low + extra + 1))
    assert len(inputs) == min(n, possible) or (len(inputs) < n and len(inputs) >= min(n, possible) * 0.5)
    assert len(set(inputs)) == len(inputs)
    assert all(low <= len(x) <= low + extra and set(x) <= letters for x in inputs)


# ------------------------------------------------------------------ checking

def test_a_right_program_within_budget_passes():
    r = check(shipped("reverse"), REVERSE_RIGHT)
    assert r["passed"] and r["status"] == "pass"
    assert r["inputs_checked"] == r["inputs_right"] == 300
    assert r["budget"]["layers"] == {"used": 2, "max": 2, "ok": True}
    assert r["budget"]["heads"] == {"used": 2, "max": 2, "ok": True}
    assert r["counterexample"] is None


def test_a_wrong_program_gets_the_shortest_counterexample_and_the_first_wrong_sop():
    r = check(shipped("reverse"), REVERSE_OFF_BY_ONE)
    assert r["status"] == "wrong" and not r["passed"]
    c = r["counterexample"]
    assert c["input"] == "a" and c["expected"] == ["a"] and c["got"] == ["_"]
    # the reference also names opp_index: it is the first s-op (layer 1) that differs, not the target
    assert c["sop"]["name"] == "opp_index" and c["sop"]["layer"] == 1
    assert c["sop"]["expected"] == [0] and c["sop"]["got"] == [1]
    # opp_index depends on `length`, whose head's selector is the library's (unnamed in the program): #id
    graph = evaluate(REVERSE_OFF_BY_ONE, ["a"])["analysis"]["graph"]
    selector = next(n for n in graph["nodes"] if f"#{n['id']}" == c["sop"]["selector"])
    assert selector["kind"] == "select" and selector["layer"] == 1
    assert c["sop"]["selector_name"] == "full_s"
    assert r["inputs_right"] == 0


def test_the_selector_shown_is_the_one_feeding_the_wrong_target():
    src = "flip = select(indices, length - indices, ==);\nreverse = aggregate(flip, tokens, \"_\");\n"
    c = check(shipped("reverse"), src)["counterexample"]
    assert c["sop"]["name"] == "reverse" and c["sop"]["selector"] == "flip"


def test_a_right_program_over_budget_is_not_a_pass():
    r = check(shipped("reverse"), REVERSE_THREE_LAYERS)
    assert r["status"] == "over_budget" and not r["passed"]
    assert r["inputs_right"] == 300
    assert r["budget"]["layers"] == {"used": 3, "max": 2, "ok": False}
    assert "3 layers (budget 2)" in r["message"]


def test_a_program_without_the_target_is_an_error_with_its_diagnostics():
    r = check(shipped("reverse"), "rev = tokens;")
    assert r["status"] == "error" and "does not define the s-op 'reverse'" in r["message"]
    r = check(shipped("reverse"), "reverse = aggregate(select(indices, indices ==), tokens);")
    assert r["status"] == "error" and any(d["kind"] == "syntax" and d["line"] == 1 for d in r["diagnostics"])


def test_an_error_on_some_inputs_is_a_counterexample_with_the_message():
    # the mean of several strings is undefined: it fails on every input of two tokens or more
    src = "reverse = aggregate(select(indices, indices, <=), tokens);"
    r = check(shipped("reverse"), src)
    c = r["counterexample"]
    assert r["status"] == "wrong" and c["got"] is None and "mean is undefined" in c["error"]
    assert len(c["input"]) == 2


def test_forbidden_names_are_refused_with_their_place_but_not_in_comments():
    length = shipped("length")
    r = check(length, "# length would be too easy\nn = length;")
    assert r["status"] == "error" and r["diagnostics"][0]["line"] == 2 and r["diagnostics"][0]["col"] == 5
    assert check(length, "# not length\nn = selector_width(select(1, 1, ==));")["passed"]


def test_numbers_compare_with_a_tolerance_but_bools_never_equal_numbers():
    assert same_values([1 / 3, 0.5], [0.3333333333333333, 0.5000000000001])
    assert not same_values([1.0, 0.5], [1.0, 0.51])
    assert not same_values([True, False], [1, 0])
    assert not same_values([1, True], [1, 1])  # an s-op of type mixed: position 1 holds a bool
    assert not same_values(["a"], ["a", "b"]) and not same_values(["a"], None)
    assert same_values([1, 2], [1.0, 2.0])


def test_the_time_limit_of_a_check_is_kept():
    heavy = "x = indices;\n" + "".join(f"x = aggregate(select(x, indices, >=), x) + {i % 3};\n" for i in range(300)) \
        + "reverse = tokens if x > -1 else tokens;"
    reverse = shipped("reverse")
    assert check(reverse, REVERSE_RIGHT)["passed"]      # the reference's values are now cached, as in a worker
    r = check(reverse, heavy, check_limits=CheckLimits(seconds=0.2))
    assert r["status"] == "error" and r["message"] == "the check took longer than 0.2 s (its time limit) and was stopped"
    assert r["diagnostics"][-1]["kind"] == "timeout"


def test_a_check_stopped_early_by_its_time_limit_says_only_that():
    """Stopped before the line that defines the target, the check does not also say the target is undefined
    (a busy machine reaches the time limit earlier: the last diagnostic must still be the time-out)."""
    heavy = "x = indices;\n" + "".join(f"x = aggregate(select(x, indices, >=), x) + {i % 3};\n" for i in range(300)) \
        + "reverse = tokens if x > -1 else tokens;"
    reverse = shipped("reverse")
    assert check(reverse, REVERSE_RIGHT)["passed"]
    r = check(reverse, heavy, check_limits=CheckLimits(seconds=0.001))
    assert r["status"] == "error" and [d["kind"] for d in r["diagnostics"]] == ["timeout"]


def test_a_reference_past_the_time_limit_is_a_timeout_not_a_crash():
    from rasplay.engine.exercises.grading import _CACHE

    _CACHE.clear()
    r = check(shipped("dyck2"), "dyck2 = tokens;", check_limits=CheckLimits(seconds=0.001))
    assert r["status"] == "error" and "the reference took longer than the check's time limit" in r["message"]
    assert r["diagnostics"] == [{"severity": "error", "kind": "timeout", "message": r["message"]}]


# ------------------------------------------------------------------ bad files

BAD = [
    (MINIMAL.replace("# target: copied\n", "# target: copied\n# max_layer: 2\n"), "unknown key 'max_layer'", 4),
    (MINIMAL.replace("# --- reference\ncopied = tokens;\n", ""), "no reference solution", None),
    (MINIMAL.replace("# target: copied\n", ""), "needs '# target:'", None),
    (MINIMAL.replace("# lengths: 1-4", "# lengths: 4-1"), "1 <= MIN <= MAX", 5),
    (MINIMAL.replace("# lengths: 1-4", "# lengths: 1-400"), "1 <= MIN <= MAX <= 64", 5),
    (MINIMAL.replace("# lengths: 1-4", "# lengths: 1-4\n# cases: [\"ab\""), "cases must be a JSON list", 6),
    (MINIMAL.replace("# lengths: 1-4", "# lengths: 1-4\n# cases: [\"\"]"), "case 1 has 0 tokens", 6),
    (MINIMAL.replace("# lengths: 1-4", "# lengths: 1-4\n# inputs: 5000"), "between 1 and 1000", 6),
    (MINIMAL.replace("# lengths: 1-4\n", ""), "an alphabet needs '# lengths: MIN-MAX'", None),
    (MINIMAL.replace("# task:", "task:"), "only '# key: value' lines", 2),
    (MINIMAL.replace("# lengths: 1-4", "# lengths: 1-4\n# max_layers: zero"), "max_layers must be a whole number", 6),
]


@pytest.mark.parametrize("text,message,line", BAD)
def test_bad_files_are_refused_with_file_and_line(text, message, line):
    with pytest.raises(ExerciseError) as info:
        parse_exercise(text, "copy", "teacher/copy.exercise")
    assert message in info.value.message
    assert info.value.line == line
    assert str(info.value).startswith("teacher/copy.exercise:")


def test_a_reference_that_fails_its_own_check_is_refused(tmp_path):
    (tmp_path / "good.exercise").write_text(MINIMAL)
    (tmp_path / "over.exercise").write_text(MINIMAL.replace("# --- reference\ncopied = tokens;",
                                                            "# max_layers: 1\n# --- reference\n"
                                                            "copied = aggregate(select(indices, indices, ==), "
                                                            "aggregate(select(indices, indices, ==), tokens));"))
    (tmp_path / "broken.exercise").write_text(MINIMAL.replace("copied = tokens;", "copied = aggregate(select(indices, indices, <=), tokens);"))
    (tmp_path / "undefined.exercise").write_text(MINIMAL.replace("copied = tokens;", "other = tokens;"))
    exercises, problems = load_directory(tmp_path)
    assert [e.id for e in exercises] == ["good"]
    messages = {Path(p.path).stem: p.message for p in problems}
    assert "over budget: 2 layers (budget 1)" in messages["over"]
    assert "the reference fails on the input" in messages["broken"] and "mean is undefined" in messages["broken"]
    assert "does not define the s-op 'copied'" in messages["undefined"]
    with pytest.raises(ExerciseError):
        validate(parse_exercise(MINIMAL.replace("copied = tokens;", "copied = select(indices, indices, ==);"), "x"))


def test_teacher_folders_add_to_and_replace_shipped_exercises(tmp_path):
    (tmp_path / "reverse.exercise").write_text(MINIMAL.replace("Copy", "My reverse"))
    (tmp_path / "copy.exercise").write_text(MINIMAL)
    catalog, problems = load_catalog([tmp_path])
    assert problems == []
    assert catalog.get("reverse").title == "My reverse" and catalog.get("copy") is not None
    assert catalog.get("dyck2") is not None


def test_file_size_limit(tmp_path):
    path = tmp_path / "huge.exercise"
    path.write_text(MINIMAL + "#" * CHECK_LIMITS.max_file_bytes)
    _, problems = load_directory(tmp_path)
    assert "the limit is 65536" in problems[0].message


# ------------------------------------------------------------------ the command line

def test_cli_check_pass_and_fail(tmp_path, capsys):
    right, wrong = tmp_path / "right.rasp", tmp_path / "wrong.rasp"
    right.write_text(REVERSE_RIGHT)
    wrong.write_text(REVERSE_OFF_BY_ONE)
    assert main(["check", str(right), "--exercise", "reverse"]) == 0
    assert capsys.readouterr().out.startswith("PASS  reverse: right on all 300 sampled inputs")
    assert main(["check", str(wrong), "--exercise", "reverse"]) == 1
    out = capsys.readouterr().out
    assert "WRONG  reverse" in out and "  input:    a\n" in out and "first wrong s-op: opp_index (layer 1)" in out


def test_cli_check_over_budget_as_json(tmp_path, capsys):
    prog = tmp_path / "p.rasp"
    prog.write_text(REVERSE_THREE_LAYERS)
    assert main(["check", str(prog), "--exercise", "reverse", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "over_budget" and result["budget"]["layers"]["used"] == 3


def test_a_constant_target_is_explained():
    r = check(shipped("dyck1"), 'dyck1 = "P";')
    assert r["status"] == "error" and "not an s-op, e.g. a constant" in r["message"]
    assert "e.g. a constant" not in check(shipped("dyck1"), "x = tokens;")["message"]


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3])
def test_only_the_right_offset_passes(k):
    src = f"opp = length - indices - {k};\nreverse = aggregate(select(indices, opp, ==), tokens, \"_\");\n"
    r = check(shipped("reverse"), src)
    assert r["passed"] == (k == 1)
    if k != 1:
        assert r["counterexample"]["input"] == "a" and r["counterexample"]["got"] == ["_"]


def test_the_counterexample_is_the_shortest_wrong_input():
    # right on inputs of one and two tokens, wrong from three on (unless a palindrome)
    src = ("rev = aggregate(select(indices, length - indices - 1, ==), tokens);\n"
           "reverse = rev if length < 3 else tokens;\n")
    r = check(shipped("reverse"), src)
    c = r["counterexample"]
    assert r["status"] == "wrong" and len(c["input"]) == 3 and c["input"] != c["input"][::-1]
    assert c["expected"] == list(c["input"][::-1]) and c["got"] == list(c["input"])


def test_a_link_out_of_the_teachers_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.exercise").write_text(MINIMAL)
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "good.exercise").write_text(MINIMAL.replace("Copy", "Good"))
    (folder / "leak.exercise").symlink_to(outside / "secret.exercise")
    (folder / "inside.exercise").symlink_to(folder / "good.exercise")   # a link within the folder is fine
    exercises, problems = load_directory(folder)
    assert len(exercises) == 2
    (problem,) = problems
    assert problem.path.endswith("leak.exercise") and "outside" in problem.message
