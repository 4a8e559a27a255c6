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
    assert r["message"] == "right on all 30 sampled inputs, within budget (2 layers, 2 heads)"
    one = check(exercise(), "copied = aggregate(select(indices, indices, ==), tokens);")
    assert one["message"] == "right on all 14 sampled inputs, within budget (1 layer, 1 head)"
    assert check(exercise(), "copied = tokens;")["message"] == (
        "proved right at every length (causal B-RASP; the two programs' reachable states all explored (1, by inputs "
        "up to length 1)), within budget (0 layers, 0 heads)")
    tight = exercise(REVERSE, "# max_layers: 1\n# max_heads: 1\n", "reverse")
    r = check(tight, RIGHT)
    assert r["status"] == "over_budget" and r["passed"] is False
    assert r["message"] == "right on all 30 sampled inputs, but over budget: 2 layers (budget 1), 2 heads (budget 1)"
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
    kept = [int(text.split("# seed: ")[1].split("\n")[0]) for _, text in check_module._PARSED]
    assert kept == list(range(2, 66))         # the two parsed first went, the latest stayed


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
    times = iter([100.0])               # started at 100 s, done 200.25063 s later
    monkeypatch.setattr(check_module, "time", type("Clock", (), {"monotonic": staticmethod(
        lambda: next(times, 300.25063))}))
    r = check(e, "n = length;")
    assert r["inputs_right"] == 0 and r["inputs_checked"] == 0 and r["elapsed_ms"] == 200250.6


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


MIRROR = ("# title: Mirror\n# task: Define `{target}`.\n# target: {target}\n# alphabet: abc\n# lengths: 1-3\n"
          "# inputs: 20\n# --- reference\n{helper} = length - indices - 1;\n"
          "{target} = aggregate(select(indices, {helper}, ==), tokens);\n")


@pytest.mark.parametrize("helper, target", [("zeta", "alpha"), ("alpha", "zeta")])
def test_a_right_sop_is_never_the_culprit_whether_its_name_sorts_before_or_after_the_target(helper, target):
    e = parse_exercise(MIRROR.format(helper=helper, target=target), "mirror", "teacher/mirror.exercise")
    r = check(e, f"{helper} = length - indices - 1;\n{target} = aggregate(select(indices, {helper}, ==), indices);")
    assert r["status"] == "wrong" and r["counterexample"]["sop"]["name"] == target


def test_the_culprit_search_passes_over_sops_the_reference_does_not_name_or_names_as_a_selector():
    """The program's own helpers (`zz`, named after the target), an s-op named like one of the reference's
    selectors (`flip`) and a wrong s-op the target does not use (`opp`, wrong) are passed over: the culprit
    is the first wrong s-op the target needs among those the reference also defines as s-ops."""
    text = ("# title: Reverse\n# task: Define `reverse`.\n# target: reverse\n# alphabet: abc\n# lengths: 1-4\n"
            "# inputs: 30\n# --- reference\nopp = length - indices - 1;\nback = opp + 0;\nflip = select(indices, back, ==);\n"
            "reverse = aggregate(flip, tokens);\n")
    e = parse_exercise(text, "reverse", "teacher/reverse.exercise")
    program = ("opp = indices + 5;\nzz = indices + 0;\nflip = length - zz;\nback = flip - 0;\n"
               "reverse = aggregate(select(indices, back, ==), tokens);\n")
    r = check(e, program)
    assert r["status"] == "wrong"
    sop = r["counterexample"]["sop"]
    assert sop["name"] == "back" and sop["expected"] == [0] and sop["got"] == [1]


def test_a_reference_whose_target_is_a_selector_is_refused():
    from rasplay.engine.exercises import ExerciseError

    text = COPY.replace("# target: copied", "# target: same").replace("copied = tokens;", "same = select(tokens, tokens, ==);")
    with pytest.raises(ExerciseError, match=r"does not define the s-op 'same'"):
        reference_values(parse_exercise(text.format(extra=""), "s", "teacher/s.exercise"))


def test_a_broken_reference_is_described_by_its_errors_only():
    """The reference's errors are listed; its warnings (here: `or` on an s-op) are not."""
    from rasplay.engine.exercises import ExerciseError

    broken = COPY.replace("copied = tokens;", "copied = tokenz;\nflag = tokens == 1 or 2;")
    with pytest.raises(ExerciseError) as raised:
        reference_values(parse_exercise(broken.format(extra=""), "w", "teacher/w.exercise"))
    assert "'tokenz' is not defined" in str(raised.value) and "'or' with an s-op" not in str(raised.value)


def test_equal_strings_are_the_same_values_whatever_object_holds_them():
    made = "".join(["hel", "lo"])
    assert same_values(["hello", None, True], [made, None, True])
    assert not same_values(["hello"], ["hellO"])


def test_forbidden_names_after_a_tab_and_the_first_of_several_uses_is_the_message(monkeypatch):
    e = exercise(extra="# forbid: length\n")
    uses = forbidden_uses(e, "x = 1;\n\tn = length;\nm = length;")
    assert [(d["line"], d["col"]) for d in uses] == [(2, 6), (3, 5)]
    r = check(e, "x = 1;\n\tn = length;\nm = length;")
    assert r["status"] == "error" and r["message"].startswith("line 2, col 6: ")


def test_the_program_and_the_reference_run_with_the_time_left_of_the_check(monkeypatch):
    """With the clock stopped at 1000 s, a check of 10 s gives the reference (uncached) and then the program
    10 s each; a check whose time is gone gives the program a thousandth of a second, never less."""
    seen = []
    real = check_module.evaluate

    def recording(source, inputs, **kw):
        seen.append(kw["limits"].eval_seconds)
        return real(source, inputs, **kw)

    monkeypatch.setattr(check_module, "evaluate", recording)
    monkeypatch.setattr(check_module, "_CACHE", type(check_module._CACHE)())
    e = exercise()
    clock = iter([1000.0])
    monkeypatch.setattr(check_module, "time", type("Clock", (), {"monotonic": staticmethod(lambda: next(clock, 1000.0))}))
    reference_values(e, CheckLimits(seconds=10))
    assert seen == [10.0]
    clock = iter([1000.0])   # the check starts at 1000 s; every later reading: 1003 s, past its 2 s
    monkeypatch.setattr(check_module, "time", type("Clock", (), {"monotonic": staticmethod(lambda: next(clock, 1003.0))}))
    check(e, "copied = tokens;", check_limits=CheckLimits(seconds=2))
    assert seen == [10.0, 0.001]


def test_the_culprit_names_its_selector_by_the_first_of_its_names():
    e = exercise(REVERSE, name="reverse")
    program = ("opp = length - indices - 1;\nflip = select(indices, opp, ==);\nmirror = flip;\n"
               "reverse = aggregate(mirror, indices);\n")
    sop = check(e, program)["counterexample"]["sop"]
    assert sop["name"] == "reverse" and sop["selector"] == "flip"


@pytest.mark.parametrize("source, reason", [
    ("copied = ;", "line 1, col 10: unexpected ';'; expected an expression"),
    ("x = 1;\ncopied = zz;", "line 2, col 10: 'zz' is not defined"),
])
def test_a_program_that_fails_to_define_the_target_is_told_its_first_error(source, reason):
    r = check(exercise(), source)
    assert r["status"] == "error" and r["message"] == f"the program does not define the s-op 'copied' ({reason})"
