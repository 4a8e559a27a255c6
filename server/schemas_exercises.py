"""Pydantic models of the exercise routes (docs/exercises.md): one part of the JSON formats of docs/api.md,
built on the shared ones of schemas.py."""
from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from ..engine.dialect import FRAGMENTS
from .schemas import Diagnostic, Token

FRAGMENT_IDS = tuple(fid for fid, _ in FRAGMENTS)


class ExerciseBudget(BaseModel):
    max_layers: Optional[int] = Field(None, description="layers the target may need (none: no budget)")
    max_heads_per_layer: Optional[int] = Field(None, description="heads in any one layer")
    max_heads: Optional[int] = Field(None, description="heads in all")


class ExerciseSummary(BaseModel):
    id: str
    title: str
    order: int = Field(description="teaching order: smaller first")
    tags: list[str]
    target: str = Field(description="the s-op the program must define")
    budget: ExerciseBudget


class ExercisePublic(ExerciseSummary):
    """An exercise as students see it: never its reference solution."""
    task: str = Field(description="the task in words")
    starter: str = Field(description="the starter code")
    input_format: Literal["str", "json"]
    alphabet: list[Token] = Field(description="tokens of the generated inputs")
    lengths: list[int] = Field(description="[shortest, longest] generated input")
    cases: list[Union[str, list[Token]]] = Field(description="inputs always checked (edge cases)")
    inputs: int = Field(description="how many inputs a check evaluates")
    example: Union[str, list[Token], None] = Field(None, description="the input shown first")
    forbid: list[str] = Field(description="names the program must not use")
    proof: Literal["auto", "every_length", "lengths", "off"] = Field(
        "auto", description="proven verdicts: auto (where both programs are in causal B-RASP or C-RASP), "
                            "every_length (asked for), lengths (only the exercise's lengths matter), off")
    fragment: Optional[Literal[FRAGMENT_IDS]] = Field(
        None, description="the fragment of RASP the program must be in (a fragment id of the dialect check, "
                          "smallest first: " + ", ".join(FRAGMENT_IDS) + "); none: any program")
    fragment_name: Optional[str] = Field(None, description="that fragment's name (e.g. C-RASP)")


class CheckRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"source": "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);"}]})

    source: str = Field(description="the student's RASP program")


class BudgetItem(BaseModel):
    used: int
    max: Optional[int] = Field(None, description="the budget (none: no budget)")
    ok: bool


class BudgetUse(BaseModel):
    layers: BudgetItem
    heads_per_layer: BudgetItem = Field(description="heads in the busiest layer")
    heads: BudgetItem = Field(description="heads in all")
    within: bool


class WrongSop(BaseModel):
    name: str = Field(description="the first s-op (by layer) that differs from the reference's s-op of the same "
                                  "name on the counterexample, else the target")
    layer: int
    expected: Optional[list[Any]] = Field(None, description="the reference's values (none if it has no such name)")
    got: Optional[list[Any]] = None
    error: Optional[str] = None
    selector: Optional[str] = Field(None, description="the selector to look at (a name, or #id of an unnamed one)")
    selector_name: Optional[str] = Field(None, description="its name for people (e.g. a library selector's)")


class Counterexample(BaseModel):
    input: Union[str, list[Token]]
    expected: list[Any] = Field(description="the reference's target values")
    got: Optional[list[Any]] = Field(None, description="the program's target values (none when it failed)")
    error: Optional[str] = Field(None, description="the program's error on this input")
    sop: WrongSop


class Verdict(BaseModel):
    """How the check decided (docs/exercises.md, "Proven verdicts")."""
    method: Literal["proof", "sampled"] = Field(description="proof: both programs are in causal B-RASP or causal "
                                                            "C-RASP and were compared on every input")
    outcome: Literal["proved", "different", "not_proved", "sampled"] = Field(
        description="proved: equal at every length (or on every input of the exercise's lengths, scope "
                    "exercise_lengths); different: a counterexample, replayed through the evaluator; not_proved: "
                    "identical on every input up to `length`, with no proof; sampled: no proof was tried "
                    "(`reason`)")
    fragment: Optional[str] = Field(None, description="the fragment the proof works in")
    scope: Optional[Literal["every_length", "exercise_lengths"]] = None
    length: Optional[int] = Field(None, description="different: the counterexample's length; not_proved: every "
                                                    "input up to this length is identical")
    input: Union[str, list[Token], None] = Field(None, description="different: the counterexample")
    how: Optional[str] = Field(None, description="the method in words (search, k-induction)")
    reason: Optional[str] = Field(None, description="why no proof (sampled), or why not proved")
    internal_error: Optional[str] = Field(None, description="a disagreement between the proof and the evaluator: "
                                                            "a bug, reported, never a verdict")
    elapsed_ms: float = 0.0


class CheckResult(BaseModel):
    exercise: str
    target: str
    passed: bool
    status: Literal["pass", "wrong", "outside_fragment", "over_budget", "error"] = Field(
        description="outside_fragment: right on every input, but not in the fragment the exercise asks for "
                    "(its `fragment`; the reason and line are in the message and a diagnostic of kind fragment)")
    message: str = Field(description="the verdict in words")
    inputs_checked: int
    inputs_right: int
    counterexample: Optional[Counterexample] = Field(None, description="the shortest input the program gets wrong")
    budget: Optional[BudgetUse] = None
    diagnostics: list[Diagnostic]
    verdict: Optional[Verdict] = Field(None, description="how the check decided: a proof or samples (none when "
                                                         "the program has errors)")
    elapsed_ms: float
