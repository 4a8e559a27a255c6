"""The exercise checker's parts (engine/exercises/grading.py): comparing values, forbidden names with their
place, the budget at its bounds, the caches' sizes, the messages of each status. Written against
mutation testing's classes of mistakes (docs/testing.md)."""
from __future__ import annotations

import importlib

import pytest

from rasplay.engine.exercises import CheckLimits, check, parse_exercise
from rasplay.engine.exercises.grading import (_ancestors, budget_use, forbidden_uses, reference_values,
                                            same_values)

COPY = """# title: Copy
# task: Define `copied`: the tokens themselves.
# target: copied
# alphabet: ab
# lengths: 1-3
# inputs: 14
{extra}# --- reference
copied = tokens;
"""
REVERSE = """# title: Reverse
# task: Define `reverse`.
# target: reverse
# alphabet: abc
# lengths: 1-4
# inputs: 30
{extra}# --- reference
opp = length - indices - 1;
reverse = aggregate(select(indices, opp, ==), tokens);
"""
check_module = importlib.import_module("rasplay.engine.exercises.grading")
RIGHT = "opp = length - indices - 1;\nreverse = aggregate(select(indices, opp, ==), tokens);\n"


def exercise(template=COPY, extra="", name="copy"):
    return parse_exercise(template.format(extra=extra), name, f"teacher/{name}.exercise")


def test_same_values():
    assert same_values([1, 2], [1, 2]) and same_values([1, 2], [1.0, 2.0])
    assert same_values([0.1 + 0.2], [0.3]) and not same_values([1.0], [1.0 + 1e-6])
    assert not same_values([1, 2], None) and not same_values([1, 2], [1, 2, 3]) and not same_values([1], [])
    assert not same_values([True, 1], [1, 1]) and not same_values([1], [True])
    assert same_values([True, False], [True, False]) and not same_values([True], [False])
    assert same_values(["a", "b"], ["a", "b"]) and not same_values(["a"], ["b"])
    assert not same_values(["1"], [1]) and not same_values([1], ["1"])
    # values of mixed types: numpy would turn [1, "a"] into the strings ["1", "a"]
    assert not same_values([1, "a"], ["1", "a"]) and not same_values(["1", "a"], [1, "a"])
    assert not same_values([1.5, "a"], ["1.5", "a"]) and same_values([1, "a"], [1.0, "a"])
    assert same_values([0.1 + 0.2, True, "x"], [0.3, True, "x"]) and not same_values([1, True], [1, 1])
    assert not same_values([1, "a"], [1.5, "a"]) and not same_values([1.0, "a"], [1.0 + 1e-6, "a"])


def test_forbidden_names_outside_comments_and_strings_with_their_place():
    e = exercise(extra="# forbid: length, aggregate\n")
    source = '# length is forbidden\nx = "length";\ny = 1 + length;\nz = aggregate(s, x);'
    uses = forbidden_uses(e, source)
    assert [(d["line"], d["col"], d["end_line"], d["end_col"]) for d in uses] == [(3, 9, 3, 15), (4, 5, 4, 14)]
    assert uses[0]["message"] == "this exercise asks you not to use 'length'" and uses[0]["kind"] == "forbidden"
    assert forbidden_uses(e, "lengths = indices; my_length = 1; x = 'length';") == []
    assert forbidden_uses(exercise(), "length") == []
    r = check(e, "copied = tokens;\nn = length;")
    assert r["status"] == "error" and r["message"] == "line 2, col 5: this exercise asks you not to use 'length'"
    assert r["inputs_checked"] == 0


def test_the_budget_at_its_bounds():
    e = exercise(extra="# max_layers: 2\n# max_heads_per_layer: 1\n")
    use = budget_use(e, {"layers": 2, "heads_per_layer": [1, 2]})
    assert use["layers"] == {"used": 2, "max": 2, "ok": True}
    assert use["heads_per_layer"] == {"used": 2, "max": 1, "ok": False}
    assert use["heads"] == {"used": 3, "max": None, "ok": True} and use["within"] is False
    assert budget_use(e, {"layers": 0, "heads_per_layer": []})["heads_per_layer"]["used"] == 0
    assert budget_use(e, {"layers": 1, "heads_per_layer": [1]})["within"] is True


def test_the_messages_of_each_status():
    e = exercise(REVERSE, name="reverse")
    r = check(e, RIGHT)
    assert r["status"] == "pass" and r["passed"] is True and r["inputs_right"] == r["inputs_checked"] == 30
    assert r["message"] == "right on all 30 inputs, within budget (2 layers, 2 heads)"
    one = check(exercise(), "copied = aggregate(select(indices, indices, ==), tokens);")
    assert one["message"] == "right on all 14 inputs, within budget (1 layer, 1 head)"
    assert check(exercise(), "copied = tokens;")["message"] == "right on all 14 inputs, within budget (0 layers, 0 heads)"
    tight = exercise(REVERSE, "# max_layers: 1\n# max_heads: 1\n", "reverse")
    r = check(tight, RIGHT)
    assert r["status"] == "over_budget" and r["passed"] is False
    assert r["message"] == "right on all 30 inputs, but over budget: 2 layers (budget 1), 2 heads (budget 1)"
    r = check(exercise(), "copied = 1;")
    assert r["status"] == "error" and "not an s-op, e.g. a constant" in r["message"]
    r = check(exercise(), "copied = select(indices, indices, ==);")
    assert r["message"] == "'copied' must be an s-op, but the program makes it a selector"
    r = check(exercise(), "x = tokens;\ncopied = undefined_name;")
    assert r["status"] == "error" and "(line 2, col 10:" in r["message"]
    r = check(exercise(), 'copied = tokens + "";\nkopied = 1;')
    assert r["status"] == "pass"


def test_a_wrong_program_names_its_counterexample_and_the_first_wrong_sop():
    e = exercise(REVERSE, name="reverse")
    wrong = "opp = length - indices;\nreverse = aggregate(select(indices, opp, ==), tokens);\n"
    r = check(e, wrong)
    assert r["status"] == "wrong" and r["inputs_right"] == 0
    c = r["counterexample"]
    assert c["input"] == "a" and c["expected"] == ["a"] and c["got"] == [0]   # an empty row: the default
    assert c["sop"]["name"] == "opp" and c["sop"]["expected"] == [0] and c["sop"]["got"] == [1]
    assert r["message"] == "wrong on 30 of 30 inputs; e.g. 'a': expected ['a'], got [0]"


def test_a_check_past_its_time_is_an_error_with_the_limit():
    heavy = ("for k in range(10) { x = [[(i * j + k) ^ 3 % 7 - i / (j + 1) for j in range(300)] "
             "for i in range(300)]; }\ncopied = tokens;")
    e = exercise()
    reference_values(e)   # the reference is cached: only the program can run out of time
    r = check(e, heavy, check_limits=CheckLimits(seconds=0.2))
    assert r["status"] == "error" and r["message"] == "the check took longer than 0.2 s (its time limit) and was stopped"
    assert r["diagnostics"][0]["kind"] == "timeout"


def test_the_caches_keep_the_last_64(monkeypatch):
    monkeypatch.setattr(check_module, "_CACHE", type(check_module._CACHE)())
    monkeypatch.setattr(check_module, "_PARSED", type(check_module._PARSED)())
    exercises = [exercise(extra=f"# seed: {i}\n") for i in range(66)]
    for e in exercises:
        reference_values(e)
    assert len(check_module._CACHE) == 64 and exercises[0].digest not in check_module._CACHE
    assert exercises[2].digest in check_module._CACHE
    reference_values(exercises[2])            # used again: now the most recent
    reference_values(exercise(extra="# seed: 1000\n"))
    assert exercises[2].digest in check_module._CACHE and exercises[3].digest not in check_module._CACHE
    for i in range(66):
        check_module.check_text(COPY.format(extra=f"# seed: {i}\n"), "copy", "copied = tokens;")
    assert len(check_module._PARSED) == 64


def test_ancestors_nearest_first():
    graph = {"edges": [{"source": 1, "target": 3}, {"source": 2, "target": 3}, {"source": 0, "target": 1},
                       {"source": 0, "target": 2}, {"source": 3, "target": 4}]}
    assert _ancestors(graph, 4) == [4, 3, 1, 2, 0]
    assert _ancestors(graph, 0) == [0]



def test_the_culprit_is_the_first_wrong_sop_whatever_its_name():
    text = ("# title: Mirror\n# task: Define `alpha`.\n# target: alpha\n# alphabet: abc\n# lengths: 1-3\n# inputs: 20\n"
            "# --- reference\nzeta = length - indices - 1;\nalpha = aggregate(select(indices, zeta, ==), tokens);\n")
    e = parse_exercise(text, "mirror", "teacher/mirror.exercise")
    r = check(e, "zeta = length - indices - 1;\nalpha = aggregate(select(indices, zeta, ==), indices);")
    assert r["status"] == "wrong" and r["counterexample"]["sop"]["name"] == "alpha"   # zeta is right


def test_a_reference_that_does_not_define_the_target_says_why():
    from rasplay.engine.exercises import ExerciseError

    broken = COPY.replace("copied = tokens;", "copied = ;")
    with pytest.raises(ExerciseError, match=r"does not define the s-op 'copied' \(.+\)"):
        reference_values(parse_exercise(broken.format(extra=""), "b", "teacher/b.exercise"))


def test_a_forbidden_name_on_the_first_line_and_the_time_it_took(monkeypatch):
    e = exercise(extra="# forbid: length\n")
    assert [(d["line"], d["col"]) for d in forbidden_uses(e, "length")] == [(1, 1)]
    times = iter([100.0])
    monkeypatch.setattr(check_module, "time", type("Clock", (), {"monotonic": staticmethod(
        lambda: next(times, 100.25063))}))
    r = check(e, "n = length;")
    assert r["inputs_right"] == 0 and r["inputs_checked"] == 0 and r["elapsed_ms"] == 250.6


@pytest.mark.parametrize("left, given", [(7.0, 7.0), (-3.0, 0.5)])
def test_the_culprit_search_has_the_time_the_check_has_left_and_at_least_half_a_second(monkeypatch, left, given):
    """After the program's run, the search for the first wrong s-op may use what is left of the check's time
    (7 s here), or half a second when nothing is (the check's own run took it all)."""
    e = exercise(REVERSE, name="reverse")
    reference_values(e)
    seconds = check_module.CHECK_LIMITS.seconds
    clock = iter([1000.0, 1000.0])     # the check starts, the program runs; later readings: `left` s before the end
    monkeypatch.setattr(check_module, "time", type("Clock", (), {"monotonic": staticmethod(
        lambda: next(clock, 1000.0 + seconds - left))}))
    seen = []
    real = check_module._culprit
    monkeypatch.setattr(check_module, "_culprit", lambda *a: seen.append(a[3].eval_seconds) or real(*a))
    r = check(e, "opp = length - indices;\nreverse = aggregate(select(indices, opp, ==), tokens);\n")
    assert r["status"] == "wrong" and seen == [given]
