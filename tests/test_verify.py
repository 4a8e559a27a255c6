"""Proven exercise verdicts (engine/verify): a proof, a counterexample past the exercise's lengths, an
unproved pair, a program outside the fragments, z3 absent, the time limit, and an internal error. Every
"proved" and every "identical up to N" is cross-checked against exhaustive evaluation by the evaluator."""
from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from dataclasses import replace

from rasplay.engine.evaluate import evaluate
from rasplay.engine.exercises import CHECK_LIMITS, check, load_catalog, parse_exercise
from rasplay.engine.exercises.grading import same_values
from rasplay.engine.verify import verdict as verdict_module
from rasplay.engine.verify.verdict import ProofLimits, prove

SEEN = """# title: Seen a b
# task: Define `seen`: "y" once a b has occurred, else "n".
# target: seen
# alphabet: ab
# lengths: 1-3
# inputs: 14
{extra}# --- reference
prefix = select(indices, indices, <=);
seen = "y" if aggregate(prefix, indicator(tokens == "b")) > 0 else "n";
"""
PREFIX = 'prefix = select(indices, indices, <=);\n'


def exercise(extra: str = "", template: str = SEEN):
    return parse_exercise(template.format(extra=extra), "seen", "teacher/seen.exercise")


def seen_with(test: str) -> str:
    return PREFIX + f'seen = "y" if {test} else "n";\n'


def agree_up_to(ex, a: str, b: str, length: int) -> bool:
    """Exhaustive evaluation: the two programs' targets on every input up to `length`."""
    inputs = ["".join(p) for n in range(1, length + 1) for p in itertools.product(ex.alphabet, repeat=n)]
    va = evaluate(a, inputs, names=[ex.target])["results"][ex.target]["values"]
    vb = evaluate(b, inputs, names=[ex.target])["results"][ex.target]["values"]
    return all(same_values(x, y) for x, y in zip(va, vb))


def test_a_counting_proof_by_k_induction_agrees_with_exhaustive_evaluation():
    ex = exercise()
    mine = seen_with('aggregate(prefix, indicator(tokens == "b")) != 0')
    r = check(ex, mine)
    v = r["verdict"]
    assert r["status"] == "pass" and v["outcome"] == "proved" and v["scope"] == "every_length"
    assert v["fragment"] == "causal C-RASP" and "k-induction with z3" in v["how"]
    assert r["message"].startswith("proved right at every length (causal C-RASP; k-induction with z3")
    assert agree_up_to(ex, ex.reference, mine, 10)


def test_a_finite_state_proof_explores_every_state():
    catalog, _ = load_catalog()
    ex = catalog.get("previous")
    mine = 'prev = shift(tokens, 1, "_");'
    r = check(ex, mine)
    assert r["verdict"]["outcome"] == "proved" and r["verdict"]["fragment"] == "causal B-RASP"
    assert "reachable states all explored" in r["verdict"]["how"]
    assert agree_up_to(ex, ex.reference, mine, 6)


def test_a_counterexample_past_the_exercises_lengths_is_replayed_and_counts():
    ex = exercise()
    mine = seen_with('aggregate(prefix, indicator(tokens == "b")) > 0.25')   # wrong once b is a quarter or less
    r = check(ex, mine)
    assert r["inputs_right"] == r["inputs_checked"] == 14        # every sampled input is right
    assert r["status"] == "wrong" and r["passed"] is False
    v, c = r["verdict"], r["counterexample"]
    assert v["outcome"] == "different" and v["length"] == 4 and len(c["input"]) == 4 == len(v["input"])
    assert "longer than the exercise's lengths 1-3" in r["message"]
    # the evaluator's own values on it (the replay): they differ at its last position
    ref = evaluate(ex.reference, [c["input"]], names=["seen"])["results"]["seen"]["values"][0]
    got = evaluate(mine, [c["input"]], names=["seen"])["results"]["seen"]["values"][0]
    assert c["expected"] == ref and c["got"] == got and ref != got
    assert agree_up_to(ex, ex.reference, mine, 3)                 # so no shorter one exists


def test_an_exercise_whose_lengths_alone_matter_proves_them_exhaustively():
    ex = exercise("# proof: lengths\n")
    r = check(ex, seen_with('aggregate(prefix, indicator(tokens == "b")) > 0.25'))
    v = r["verdict"]
    assert r["status"] == "pass" and v["outcome"] == "proved" and v["scope"] == "exercise_lengths"
    assert v["length"] == 3 and "on every input up to length 3" in r["message"]


def test_an_unproved_pair_is_identical_up_to_the_length_it_names():
    ex = exercise()
    mine = seen_with('aggregate(prefix, indicator(tokens == "b")) > 0.0625')   # first differs at length 16
    v = prove(ex, mine, [], [], [], time.monotonic() + 30, limits=ProofLimits(bound=8))
    assert v["outcome"] == "not_proved" and v["length"] == 8 and v["method"] == "proof"
    assert "k-induction with z3 found no proof" in v["reason"]
    assert agree_up_to(ex, ex.reference, mine, 8)
    longer = "a" * 15 + "b"                     # so it is not proved because it is not true
    assert evaluate(mine, [longer], names=["seen"])["results"]["seen"]["values"][0][-1] == "n"


def test_a_program_outside_the_fragments_is_sampled_and_says_why():
    ex = exercise()
    r = check(ex, 'n = length;\nseen = "y" if aggregate(select(indices, indices, <=), indicator(tokens == "b")) '
                  '> 0 and n > 0 else "n";')
    v = r["verdict"]
    assert r["status"] == "pass" and v["outcome"] == "sampled" and v["method"] == "sampled"
    assert v["reason"].startswith("your program has no proof: it is outside B-RASP and C-RASP (the selector of "
                                  "'n' counts every position")
    assert r["message"].startswith("right on all 14 sampled inputs")


def test_proof_off_samples():
    r = check(exercise("# proof: off\n"), seen_with('aggregate(prefix, indicator(tokens == "b")) != 0'))
    assert r["verdict"]["outcome"] == "sampled" and "proof: off" in r["verdict"]["reason"]


def test_without_z3_counting_programs_are_not_proved_and_finite_state_ones_still_are():
    script = f"""
import json, sys
sys.modules["z3"] = None          # `import z3` now raises ImportError, as when it is not installed
from rasplay.engine.exercises import check, parse_exercise, load_catalog
ex = parse_exercise({SEEN.format(extra="")!r}, "seen", "seen.exercise")
counting = check(ex, {seen_with('aggregate(prefix, indicator(tokens == "b")) != 0')!r})["verdict"]
prev = check(load_catalog()[0].get("previous"), 'prev = shift(tokens, 1, "_");')["verdict"]
print(json.dumps([counting, prev]))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    counting, prev = json.loads(out.stdout.strip().splitlines()[-1])
    assert counting["outcome"] == "not_proved" and counting["reason"].startswith("z3 is not installed")
    assert counting["length"] >= 3
    assert prev["outcome"] == "proved"


def test_the_time_limit_bounds_the_proof():
    catalog, _ = load_catalog()
    ex = catalog.get("dyck1")
    mine = ex.reference.replace("indicator(balance < 0)) > 0", "indicator(balance < 0)) > 0.015625")
    limits = replace(CHECK_LIMITS, seconds=2.0)
    r = check(ex, mine, check_limits=limits)
    v = r["verdict"]
    assert v["outcome"] == "not_proved" and r["status"] == "pass"
    assert v["elapsed_ms"] <= 2000          # it stops at its share of the check's time
    assert agree_up_to(ex, ex.reference, mine, min(v["length"], 10))


def test_a_disagreement_with_the_evaluator_is_an_internal_error(monkeypatch):
    ex = exercise()
    monkeypatch.setattr(verdict_module.Product, "run", lambda self, tokens: [["?"] * len(tokens)] * 2)
    r = check(ex, seen_with('aggregate(prefix, indicator(tokens == "b")) != 0'))
    v = r["verdict"]
    assert v["outcome"] == "sampled" and v["internal_error"].startswith("the proof's model of the reference "
                                                                         "disagrees with the evaluator")
    assert r["status"] == "pass" and r["message"].startswith("right on all 14 sampled inputs")


def test_at_least_six_shipped_exercises_have_proven_verdicts():
    catalog, _ = load_catalog()
    proved = {}
    for ex in catalog.ordered():
        v = check(ex, ex.reference)["verdict"]
        if v["outcome"] == "proved":
            proved[ex.id] = v["fragment"]
    assert {"dyck1", "induction", "previous", "majority_so_far", "seen_ab", "doubled"} <= set(proved), proved
    assert proved["dyck1"] == "causal C-RASP" and proved["induction"] == "causal B-RASP"


def test_the_proof_key_of_an_exercise_file(tmp_path):
    from rasplay.engine.exercises import ExerciseError, load_directory
    assert exercise().proof == "auto" and exercise("# proof: lengths\n").public()["proof"] == "lengths"
    try:
        exercise("# proof: always\n")
        raise AssertionError("accepted")
    except ExerciseError as e:
        assert "proof must be one of auto, every_length, lengths, off, not 'always'" in str(e) and e.line == 7
    # a teacher's file that asks for proofs is refused unless its reference has them
    (tmp_path / "seen.exercise").write_text(SEEN.format(extra="# proof: every_length\n"))
    outside = SEEN.format(extra="# proof: every_length\n").replace(
        'seen = "y" if', 'n = length;\nseen = "y" if n > 0 and')
    (tmp_path / "far.exercise").write_text(outside)
    found, problems = load_directory(tmp_path)
    assert [e.id for e in found] == ["seen"]
    assert len(problems) == 1 and "asks for proofs (proof: every_length), but the reference has none" in str(problems[0])
