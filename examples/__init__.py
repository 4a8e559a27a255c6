"""The example gallery's RASP programs (package data: loaded with importlib.resources)."""
