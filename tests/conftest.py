import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from rasplay import engine

# No wall-clock thresholds in tests (timings live in bench/): hypothesis' per-example deadline and its
# "too slow" health check fail on a busy machine, whatever the code does.
settings.register_profile("rasplay", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("rasplay")

# In CI (CI=true) nothing may skip: `make test` installs every extra (torch, anywidget, transformer-lens,
# Chromium), so a test that would skip there is a missing install, and it fails with the skip's reason.
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, where every test must run: {reason}"


def values(source: str, inputs, name: str, **kw):
    """The values of `name` on each input (asserting it evaluated without errors)."""
    doc = engine.evaluate(source, inputs, **kw)
    res = doc["results"][name]
    assert res["errors"] == [None] * len(res["errors"]), res["errors"]
    return res["values"]


def value(source: str, inp, name: str, **kw):
    return values(source, [inp], name, **kw)[0]


def errors(source: str, inputs, name: str, **kw):
    return engine.evaluate(source, inputs, **kw)["results"][name]["errors"]


def diagnostics(source: str, inputs=("ab",), **kw):
    return [d for d in engine.evaluate(source, list(inputs), **kw)["diagnostics"] if d["severity"] == "error"]


@pytest.fixture
def ev():
    return engine.evaluate


@pytest.fixture(scope="session")
def live_server(tmp_path_factory):
    """One rasplay server for the session, on a free loopback port, with small limits."""
    from live_server import LiveServer

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
    """A browser context guarded to 127.0.0.1 (test_browser.Guarded), closed after the test, failing it if the
    page asked for anything outside or logged an error."""
    from test_browser import Guarded

    g = Guarded(browser)
    yield g
    g.close()


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


def run_async(coro):
    """Run a coroutine to its end in a thread of its own, as asyncio.run would: a browser test earlier in the
    same process (Playwright's sync API) may hold this thread's event loop, where asyncio.run refuses."""
    import asyncio
    import threading

    result, errors = [], []

    def target():
        try:
            result.append(asyncio.run(coro))
        except BaseException as e:  # noqa: BLE001 (raised again below, in the test's thread)
            errors.append(e)

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return result[0]


def wait_for(check, timeout=120.0, what="the condition", every=0.05):
    """Poll `check()` until it returns something true, and return that; fail after `timeout` seconds (a
    generous limit: a busy machine is slow, not wrong). Tests wait for the event itself, never a fixed time."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(every)
