"""Exercises: a task in words, starter code, a hidden reference solution, an input generator and
layer/head budgets, in one plain file (docs/exercises.md); a checker that runs a student's program
against the reference on hundreds of generated inputs.

    format.py    the file format: text -> Exercise (clear errors with file and line)
    generate.py  the inputs an exercise is checked on (explicit cases, every short input, random ones)
    grading.py   student program x exercise -> pass/fail, first counterexample, budget use
    catalog.py   folders of exercise files (the shipped set and a teacher's), validated by self-check
"""
from .catalog import SHIPPED_DIR, Catalog, load_catalog, load_directory, validate
from .grading import CHECK_LIMITS, CheckLimits, check, check_text
from .format import Budget, Exercise, ExerciseError, parse_exercise, read_exercise
from .generate import generate_inputs

__all__ = ["Exercise", "ExerciseError", "Budget", "parse_exercise", "read_exercise", "generate_inputs", "check", "check_text",
           "CheckLimits", "CHECK_LIMITS", "Catalog", "load_catalog", "load_directory", "validate", "SHIPPED_DIR"]
