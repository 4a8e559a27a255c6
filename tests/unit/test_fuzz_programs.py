"""Fuzzing over program text: random token soups and random edits of every example never make the
engine raise, and every diagnostic is well formed (the API over HTTP: tests/api/test_api_fuzz_programs.py)."""

from hypothesis import HealthCheck, given, settings

from rasplay import engine
from support.program_fuzz import SOURCES, check_document, programs

LIMITS = engine.Limits(eval_seconds=2.0, max_nodes=5000, max_iterations=20_000)


def test_the_fuzzing_covers_every_example():
    assert len(SOURCES) >= 10


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_evaluate_and_analyze_never_raise(source):
    check_document(engine.evaluate(source, ["ab", "aab"], limits=LIMITS))
    analysis = engine.analyze(source, limits=LIMITS)
    assert "diagnostics" in analysis and "layers" in analysis
