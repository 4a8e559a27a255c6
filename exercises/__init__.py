"""The shipped exercises (package data: loaded with importlib.resources); docs/exercises.md describes the format."""
