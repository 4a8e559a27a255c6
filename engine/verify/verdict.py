"""The proven verdict of one exercise check: both programs as machines (build.py), their model checked
against the evaluator on the sampled inputs, a breadth-first search for the shortest difference (or a
proof when the states run out), k-induction with z3 for counter machines, and every counterexample
replayed through the evaluator before it is shown. Outcomes (docs/exercises.md):

    proved      equal at every length (scope every_length), or on every input of the exercise's lengths
    different   a confirmed counterexample (its length may pass the exercise's lengths)
    not_proved  identical on every input up to length `length`, and no proof
    sampled     no proof was tried (outside the fragments, no alphabet, proof: off): `reason` says why
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..exercises.format import Exercise
from ..limits import DEFAULT_LIMITS
from .build import FRAGMENT_NAMES, build
from .model import ERROR, Product, Unsupported
from .search import ReferenceFails, Searcher, differ


@dataclass(frozen=True)
class ProofLimits:
    bound: int = 64               # longest inputs the search and the bounded check read
    self_check_inputs: int = 48   # sampled inputs the machines are compared with the evaluator on
    max_states: int = 400_000     # product states the search keeps


PROOF_LIMITS = ProofLimits()


class InternalError(Exception):
    """The proof and the evaluator disagree: a bug, reported as such, never a verdict."""


def sampled(reason: str) -> dict:
    return {"method": "sampled", "outcome": "sampled", "fragment": None, "scope": None, "length": None,
            "input": None, "how": None, "reason": reason, "internal_error": None, "elapsed_ms": 0.0}


def as_input(exercise: Exercise, tokens: list):
    return "".join(tokens) if exercise.input_format == "str" else list(tokens)


def _self_check(product: Product, inputs: list, columns: list[list], limit: int) -> None:
    """The machines' values against the evaluator's on sampled inputs (the shortest and longest first)."""
    order = sorted(range(len(inputs)), key=lambda i: len(inputs[i]))
    picked = sorted(set(order[: limit // 2] + order[-(limit - limit // 2):]))
    for i in picked:
        ours = product.run(list(inputs[i]))
        for which, (model_values, column) in enumerate(zip(ours, columns)):
            if column[i] is None or any(v is ERROR for v in model_values):
                continue
            if any(differ(a, b) for a, b in zip(model_values, column[i])):
                who = "reference" if which == 0 else "submitted program"
                raise InternalError(f"the proof's model of the {who} disagrees with the evaluator on the input "
                                    f"{inputs[i]!r}")


def proven_verdict(exercise: Exercise, source: str, inputs: list, expected: list, got: list, deadline: float,
                   engine_limits=None, limits: ProofLimits = PROOF_LIMITS) -> dict:
    """prove(), with a disagreement between the proof and the evaluator reported as an internal error
    (the sampled verdict then stands)."""
    started = time.monotonic()
    try:
        verdict = prove(exercise, source, inputs, expected, got, deadline, engine_limits, limits)
        if verdict["outcome"] == "different" and verdict["input"] in inputs:
            raise InternalError(f"the proof's counterexample {verdict['input']!r} is among the sampled inputs, on "
                                f"which the evaluator finds the programs equal")
    except InternalError as e:
        verdict = {**sampled(f"internal error: {e}; the sampled verdict stands"), "internal_error": str(e)}
    verdict["elapsed_ms"] = round(1000 * (time.monotonic() - started), 1)
    return verdict


def prove(exercise: Exercise, source: str, inputs: list, expected: list, got: list, deadline: float,
          engine_limits=None, limits: ProofLimits = PROOF_LIMITS) -> dict:
    """The verdict dict (see the module doc). `expected`/`got`: the evaluator's target values on `inputs`
    (the sampled check's), which the machines must reproduce."""
    if exercise.proof == "off":
        return sampled("the exercise asks for the sampled check only (proof: off)")
    if not exercise.alphabet:
        return sampled("the exercise has no alphabet, so there is no set of every input to prove over")
    engine_limits = engine_limits or DEFAULT_LIMITS
    ref = build(exercise.reference, exercise.target, exercise.alphabet, "ref", engine_limits)
    if ref.program is None:
        return sampled("the exercise's reference is outside the fragments with proofs (causal B-RASP, causal "
                       "C-RASP)")
    mine = build(source, exercise.target, exercise.alphabet, "sub", engine_limits)
    if mine.program is None:
        return sampled(f"your program has no proof: {mine.reason}")
    fragment = "c-rasp" if "c-rasp" in (ref.fragment, mine.fragment) else "b-rasp"
    product = Product([ref.program, mine.program], tuple(exercise.alphabet))
    try:
        _self_check(product, inputs, [expected, got], limits.self_check_inputs)
        scope = "exercise_lengths" if exercise.proof == "lengths" else "every_length"
        found, proof = _decide(product, exercise, scope, fragment, deadline, limits)
    except Unsupported as e:
        return sampled(f"the proof's model does not represent {e}")
    except ReferenceFails as e:
        return sampled(f"the reference fails on the input {as_input(exercise, e.tokens)!r}, so nothing is proved")
    out = {"method": "proof", "fragment": FRAGMENT_NAMES[fragment], "scope": scope, "length": None,
           "input": None, "how": None, "reason": None, "internal_error": None}
    if found.outcome == "different":
        tokens = found.tokens
        if len(tokens) < exercise.min_length:      # a causal difference stays on every extension
            tokens = tokens + [exercise.alphabet[0]] * (exercise.min_length - len(tokens))
        return {**out, "outcome": "different", "length": len(tokens), "input": as_input(exercise, tokens),
                "how": f"breadth-first search over {found.states:,} states of the two programs"}
    if found.outcome == "proved":
        return {**out, "outcome": "proved", "how": f"the two programs' reachable states all explored ({found.states:,},"
                                                    f" by inputs up to length {found.length})"}
    if proof is not None:
        return {**out, "outcome": "proved", "how": proof}
    if scope == "exercise_lengths" and found.length >= exercise.max_length:
        return {**out, "outcome": "proved", "length": found.length,
                "how": f"every input up to length {found.length} read through the two programs' states"}
    return {**out, "outcome": "not_proved", "length": found.length,
            "how": f"breadth-first search over {found.states:,} states", "reason": _why_not(fragment)}


def _decide(product: Product, exercise: Exercise, scope: str, fragment: str, deadline: float,
            limits: ProofLimits):
    """The search (a share of the time), k-induction for counting programs (another share), then the
    search again up to the bound with what is left: (the search's result, the proof's text or None)."""
    searcher = Searcher(product, limits.max_states)
    bound = exercise.max_length if scope == "exercise_lengths" else limits.bound
    first = bound if fragment == "b-rasp" or scope == "exercise_lengths" else min(bound, max(exercise.max_length, 8))
    share = (deadline - time.monotonic()) * (0.35 if fragment == "c-rasp" else 1.0)
    found = searcher.run(first, time.monotonic() + share)
    if found.outcome != "bounded" or scope == "exercise_lengths" or found.length < 1:
        return found, None
    try:
        proof = _induction(product, time.monotonic() + (deadline - time.monotonic()) * 0.5, found.length)
    except Unsupported:
        proof = None
    if proof is not None:
        return found, proof
    return searcher.run(bound, deadline), None


def _why_not(fragment: str) -> str:
    from .induction import z3_missing
    missing = z3_missing()
    if missing:
        return missing
    return "k-induction with z3 found no proof within the limits (equality of C-RASP programs is undecidable " \
           "in general)" if fragment == "c-rasp" else "the search ran out of time before the states ran out"


def _induction(product: Product, deadline: float, base_length: int) -> str | None:
    from .induction import k_induction, z3_missing
    if z3_missing():
        return None
    return k_induction(product, deadline, base_length)
