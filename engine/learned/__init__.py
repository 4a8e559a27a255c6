"""Learned programs: RASP programs read back from trained models (TransformerPrograms' decompiled
programs, or rasplay's own "program" training mode), and the check that compares one with the task's
program on every input up to a length (check.py)."""
