"""Pydantic models of the learned-program routes (docs/learned_programs.md, "Checking"): one part of the
JSON formats of docs/api.md, built on the shared ones of schemas.py."""
from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from .schemas import Token

LEARNED_EXAMPLE = ("# learned: transformer-programs\n# bos: <s>\n# eos: </s>\n# output: rev\n"
                   "back = select(indices, length - indices - 1, ==);\nrev = aggregate(back, tokens);")
TASK_EXAMPLE = "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);"


class LearnedCheckRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"learned": LEARNED_EXAMPLE, "task": TASK_EXAMPLE, "vocab": "abc", "max_length": 5, "beyond": 2}]})

    learned: str = Field(description="the learned program (RASP; its header's `# bos:`/`# eos:` say what it reads "
                                     "around the input, `# output:` its output)")
    task: str = Field(description="the task's program (RASP)")
    output: Optional[str] = Field(None, max_length=200, description="the task's s-op (default: its default output)")
    learned_output: Optional[str] = Field(None, max_length=200,
                                          description="the learned program's s-op (default: its `# output:`)")
    vocab: Union[str, list[Token]] = Field(description="input tokens: a string of characters or a list")
    min_length: int = Field(1, ge=1, description="the shortest input checked")
    max_length: int = Field(6, ge=1, description="the longest input checked within training's lengths")
    beyond: int = Field(0, ge=0, description="lengths past max_length also checked, marked `beyond`")
    exhaustive: int = Field(20_000, ge=0, description="a length's every input is checked when there are at "
                                                       "most this many (vocabulary size ^ length); else samples")
    samples: int = Field(1000, ge=1, description="seeded random inputs at a length with more inputs than "
                                                 "`exhaustive` (duplicates removed)")
    seed: int = Field(0, ge=0, le=2 ** 32 - 1, description="the samples' seed")
    show: int = Field(5, ge=0, description="the shortest failing inputs reported")


class LengthRow(BaseModel):
    length: int
    mode: Literal["exhaustive", "sampled"]
    beyond: bool = Field(description="past max_length")
    inputs: int = Field(description="inputs checked (those on which the task program fails left out)")
    agree: int = Field(description="inputs whose every position agrees")
    tokens: int
    tokens_agree: int
    task_failed: int = Field(description="inputs on which the task program itself fails (no expected value)")
    learned_failed: int = Field(description="inputs on which the learned program fails (counted as disagreeing)")
    input_agreement: Optional[float]
    token_agreement: Optional[float]


class FailingInput(BaseModel):
    input: list[Token]
    length: int
    beyond: bool
    expected: list[Any] = Field(description="the task program's output")
    got: Optional[list[Any]] = Field(description="the learned program's output on the input's positions "
                                                 "(null when it failed: see error)")
    differs: list[int] = Field(description="the positions that differ")
    error: Optional[str]


class SelectorRow(BaseModel):
    name: str
    label: str
    line: Optional[int] = Field(description="its line in the learned program (null: from the library)")
    equals: list[str] = Field(description="the task's selectors it equals on every input checked (BOS/EOS rows "
                                          "and columns dropped)")
    closest: Optional[dict[str, Any]] = Field(description="the task selector it equals on the most inputs, and "
                                                          "that fraction of the inputs")


class LearnedCheckReport(BaseModel):
    task_output: str
    learned_output: str
    bos: Optional[str]
    eos: Optional[str]
    compared_as: Literal["value", "text"] = Field(description="text: a string output beside a number one, "
                                                              "compared by their text (\"3\" agrees with 3)")
    all_agree: bool
    lengths: list[LengthRow]
    total: dict[str, Any]
    failing: list[FailingInput] = Field(description="the shortest failing inputs, shortest first")
    selectors: list[SelectorRow] = Field(description="the learned program's heads")
    task_selectors: list[str]
    seconds: float


class LearnedImportRequest(BaseModel):
    program: str = Field(description="a TransformerPrograms decompiled program (Python text, never run)")
    weights: str = Field(description="its classifier weights (the CSV file's text)")
    title: str = Field("", max_length=200, description="a title for the program's header")


class LearnedImportResult(BaseModel):
    source: str = Field(description="the program in rasplay's RASP")
