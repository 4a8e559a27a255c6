"""Each extra on its own, as an operator installs it: the wheel built once, then for each extra a fresh venv
WITHOUT system site packages, the wheel installed with that one extra (pip resolves the dependencies from the
index, pinned by tests/constraints.txt), and that extra's entry point run from an unrelated folder:

* no extra: `rasplay serve` answers /health, /ready and /metrics, and imports none of the extras;
* course: `rasplay worker --queues heavy` against a real Redis, `rasplay serve --broker`, and a compile that
  goes through them (the worker died at start when the extra named `celery` rather than `celery[redis]`);
* train: `rasplay train` trains a tiny model (torch, the CPU wheel);
* tl and notebook: their modules import and make what they make.

Installing needs the package index (PyPI); RASPLAY_TORCH_INDEX names PyTorch's CPU wheels where pip's own index
would give torch with CUDA (support/installed.py; the test checks the CPU wheel). It takes minutes (measured in
docs/testing.md); pip's cache makes later runs faster."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest

from support.installed import Process, built_wheel, clean_env, python, venv_with
from support.live_server import free_port

pytestmark = pytest.mark.timeout(1800)   # installs from the index: minutes each on a slow link
EXTRA_MODULES = {"course": ["celery", "redis", "psycopg", "kombu"], "train": ["torch"],
                 "tl": ["transformer_lens"], "notebook": ["anywidget"]}


@pytest.fixture(scope="module")
def wheel() -> Path:
    return built_wheel()


def serve(bin_dir: Path, home: Path, *flags: str) -> tuple[Process, str]:
    port = free_port()
    server = Process([str(bin_dir / "rasplay"), "serve", "--port", str(port), "--data-dir", str(home / "data"),
                      "--workers", "1", "--heavy-workers", "1", "--train-warm", "0", *flags], home, "serve")
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300   # (a loaded CI machine: the server starts its worker processes first)
    while True:
        server.alive()
        try:
            if httpx.get(url + "/api/v1/health", timeout=2).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "the installed server did not start:\n" + server.output()
        time.sleep(0.2)


@pytest.fixture
def home(tmp_path) -> Path:
    (tmp_path / "elsewhere").mkdir()
    return tmp_path / "elsewhere"


def test_no_extra_serves_and_imports_no_extra(wheel, tmp_path, home):
    bin_dir = venv_with(wheel, None, tmp_path)
    missing = python(bin_dir, "import importlib.util as u; print([m for m in %r if u.find_spec(m)])"
                     % sorted(m for ms in EXTRA_MODULES.values() for m in ms), home)
    assert missing.strip() == "[]"
    server, url = serve(bin_dir, home)
    try:
        with httpx.Client(base_url=url, timeout=30) as c:
            assert c.get("/api/v1/health").json()["status"] == "ok"
            ready = c.get("/api/v1/ready")
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"]["training"]["ok"] is False   # no torch, no broker: said, not hidden
            doc = c.post("/api/v1/evaluate", json={"source": "r = tokens;", "inputs": ["ab"]}).json()
            assert doc["results"]["r"]["values"] == [["a", "b"]]
            metrics = c.get("/metrics")
            assert metrics.status_code == 200 and "rasplay_http_requests_total" in metrics.text
    finally:
        server.stop()


def test_course_runs_a_worker_and_a_compile_goes_through_it(wheel, tmp_path, home):
    from support.redis_server import RedisServer

    bin_dir = venv_with(wheel, "course", tmp_path)
    redis = RedisServer()
    worker = server = None
    try:
        worker = Process([str(bin_dir / "rasplay"), "worker", "--broker", redis.url, "--queues", "heavy",
                          "--heavy-workers", "1", "--data-dir", str(home / "worker")], home, "worker")
        server, url = serve(bin_dir, home, "--broker", redis.url)
        with httpx.Client(base_url=url, timeout=60) as c:
            deadline = time.monotonic() + 300
            while c.get("/api/v1/ready").json()["checks"]["workers"].get("heavy", 0) < 1:   # the worker's beat
                worker.alive()
                assert time.monotonic() < deadline, worker.output()
                time.sleep(0.2)
            r = c.post("/api/v1/compile", json={"source": "copy = tokens;", "vocab": "ab", "max_len": 2})
            assert r.status_code == 200, (r.text, worker.output()[-4000:])
            assert r.json()["id"] and r.json()["summary"]
        worker.alive()
    finally:
        for p in (server, worker):
            if p is not None:
                p.stop()
        redis.close()


def test_train_trains_a_tiny_model(wheel, tmp_path, home):
    bin_dir = venv_with(wheel, "train", tmp_path)
    assert python(bin_dir, "import torch; print(torch.__version__)", home).strip() == "2.13.0+cpu"
    (home / "copy.rasp").write_text("copy = tokens;\n")
    done = subprocess.run([str(bin_dir / "rasplay"), "train", "copy.rasp", "--vocab", "ab", "--max-len", "3",
                           "--steps", "20", "--d-model", "16", "--json", "--seed", "0"], cwd=home,
                          capture_output=True, text=True, timeout=600, env=clean_env())
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    import json

    result = json.loads(done.stdout)
    assert result["steps"] == 20 and result["stopped"] == "steps" and 0 <= result["final"]["test_acc"] <= 1


def test_tl_exports_to_transformer_lens(wheel, tmp_path, home):
    bin_dir = venv_with(wheel, "tl", tmp_path)
    out = python(bin_dir, "import torch\n"
                          "from transformer_lens import TransformerBridge\n"
                          "import transformer_lens.model_bridge.sources.native\n"
                          "from rasplay.interop.export_tl import export_transformer_lens, load_transformer_bridge\n"
                          "print(torch.__version__, TransformerBridge.__name__, hasattr(TransformerBridge, 'boot_native'))",
                 home)
    assert out.split() == ["2.13.0+cpu", "TransformerBridge", "True"]


def test_notebook_makes_a_widget(wheel, tmp_path, home):
    bin_dir = venv_with(wheel, "notebook", tmp_path)
    out = python(bin_dir, "import anywidget\nfrom rasplay.interop.notebook import show\n"
                          "w = show('r = tokens;', ['ab'])\n"
                          "print(isinstance(w, anywidget.AnyWidget), sorted(w.data)[:1])", home)
    assert out.split() == ["True", "['doc']"], out
