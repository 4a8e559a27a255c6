"""The kinds of test, one folder of tests/ each, and each its pytest marker (tests/conftest.py sets it from the
folder; pyproject.toml declares it; docs/testing.md says what goes where). In the order of what they need,
least first: tests/unit is the fast folder (`pytest tests/unit`); cli, properties and training are in-process
or one-command tests kept out of it for their time."""
KINDS = ("unit", "cli", "properties", "training", "api", "browser", "services")
