"""The browser app (package data: loaded with importlib.resources)."""
