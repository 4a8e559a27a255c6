"""Learned programs (docs/learned_programs.md): the intermediate form (ir.py) and its RASP text
(write_rasp.py)."""
from .ir import CATEGORICAL, NUMERICAL, Classifier, Head, LearnedProgram, LearnedProgramError, Table, Variable
from .write_rasp import write_rasp

__all__ = ["CATEGORICAL", "NUMERICAL", "Classifier", "Head", "LearnedProgram", "LearnedProgramError", "Table",
           "Variable", "write_rasp"]
