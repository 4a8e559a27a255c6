"""Helpers of the test suite (docs/testing.md): test modules import these, never each other."""
