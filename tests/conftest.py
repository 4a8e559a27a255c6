"""The suite's fixtures (one server and one Chromium a session) and hooks. Tests are laid out by kind
(docs/testing.md): tests/unit, tests/cli, tests/properties, tests/training, tests/api, tests/browser,
tests/services (support.kinds), each marked by its folder; their helpers are the package tests/support, and no
test module imports another."""
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from rasplay import engine
from support.kinds import KINDS   # the folders of tests/, each its pytest marker (pyproject.toml)
from support.needs import IN_CI

# No wall-clock thresholds in tests (timings live in bench/): hypothesis' per-example deadline and its
# "too slow" health check fail on a busy machine, whatever the code does.
settings.register_profile("rasplay", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("rasplay")

TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    """Every test is marked by the folder it is in: `pytest -m unit` is tests/unit."""
    for item in items:
        parts = Path(str(item.path)).resolve().relative_to(TESTS).parts
        if len(parts) > 1 and parts[0] in KINDS:
            item.add_marker(parts[0])


# In CI (CI=true) nothing may skip: `make test` installs every extra (torch, anywidget, transformer-lens,
# Chromium), so a test that would skip there is a missing install, and it fails with the skip's reason.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, where every test must run: {reason}"


@pytest.fixture
def ev():
    return engine.evaluate


@pytest.fixture(scope="session")
def live_server(tmp_path_factory):
    """One rasplay server for the session, on a free loopback port, with small limits."""
    from support.live_server import LiveServer

    server = LiveServer(tmp_path_factory.mktemp("data"), "--workers", "3", "--eval-seconds", "3",
                        "--max-input-length", "64", "--max-inputs", "8", "--max-body-bytes", "200000",
                        "--max-source-chars", "50000",
                        "--train-seconds", "120", "--train-queue", "2", "--train-warm", "0")
    yield server
    server.stop()


@pytest.fixture
def api(live_server):
    with live_server.client() as client:
        yield client


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium through Playwright, one for the session (Playwright's sync API cannot run two at once,
    so every browser test module uses this one)."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is needed for the browser tests: `make test-deps` installs it"
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def guarded(browser):
    """A browser context guarded to 127.0.0.1 (support.browser_kit.Guarded), closed after the test, failing it if the
    page asked for anything outside or logged an error."""
    from support.browser_kit import Guarded

    g = Guarded(browser)
    yield g
    g.close()








