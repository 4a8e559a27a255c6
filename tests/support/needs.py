"""What a test needs from the machine: skipped on a developer's machine when missing, a failure in CI
(CI=true), where `make test` installs everything the tests use."""
import os

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str):
    """Something a test needs is not on this machine: skipped on a developer's machine, a failure in CI
    (CI=true), where `make test` installs everything the tests use."""
    pytest.fail(f"{reason} (under CI=true every test must run)") if IN_CI else pytest.skip(reason)


def need(module: str):
    """`module` imported; where it is missing, the test is skipped on a developer's machine and fails in CI
    (CI=true), where `make test` installs every extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        unavailable(f"needs {module} ({e}); `make test` installs it (the project's extras)")
