"""Each extra on its own, as an operator installs it: the wheel built once, then for each extra a fresh venv
WITHOUT system site packages, the wheel installed with that one extra (pip resolves the dependencies from the
index, pinned by tests/constraints.txt), and that extra's entry point run from an unrelated folder:

* no extra: `rasplay serve` answers /health, /ready and /metrics, and imports none of the extras;
* course: `rasplay worker --queues heavy` against a real Redis, `rasplay serve --broker`, and a compile that
  goes through them (the worker died at start when the extra named `celery` rather than `celery[redis]`);
* train: `rasplay train` trains a tiny model (torch, the CPU wheel);
* tl and notebook: their modules import and make what they make.

Installing needs the package index (PyPI). Where pip's own index would give torch with CUDA, point
RASPLAY_TORCH_INDEX at PyTorch's CPU wheels (https://download.pytorch.org/whl/cpu, added as an extra index);
unset, pip's configured indexes are used as they are (here they give the CPU wheel, which the test checks). It takes minutes (measured in docs/testing.md); pip's cache makes later runs faster."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from support.live_server import free_port

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "tests" / "constraints.txt"
TORCH_INDEX = os.environ.get("RASPLAY_TORCH_INDEX", "")
pytestmark = pytest.mark.timeout(1800)   # installs from the index: minutes each on a slow link
EXTRA_MODULES = {"course": ["celery", "redis", "psycopg", "kombu"], "train": ["torch"],
                 "tl": ["transformer_lens"], "notebook": ["anywidget"]}


def source_files() -> list[str]:
    """The files a commit holds (tracked, plus new files not ignored): the wheel is built from those only."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [f for f in out.splitlines() if (ROOT / f).is_file()]


def clean_env(**extra) -> dict:
    """The environment without this test run's Python paths (the venv must stand on its own)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "PYTHONNOUSERSITE": "1", **extra}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.fail("the extras are installed from a wheel built from the git checkout: git is needed")
    tmp = tmp_path_factory.mktemp("extras")
    src = tmp / "clone"
    for name in source_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-w", str(tmp / "dist"),
                            "-q"], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (found,) = (tmp / "dist").glob("rasplay-*.whl")
    return found


def venv_with(wheel: Path, extra: str | None, where: Path) -> Path:
    """A venv without system site packages holding the wheel with `extra`: its bin folder."""
    venv = where / f"venv-{extra or 'core'}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    target = f"{wheel}[{extra}]" if extra else str(wheel)
    cmd = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-c", str(CONSTRAINTS), target]
    if extra in ("train", "tl") and TORCH_INDEX:
        cmd += ["--extra-index-url", TORCH_INDEX]
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1700, env=clean_env())
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    print(f"installed rasplay[{extra or ''}] in {time.monotonic() - started:.1f} s")
    return venv / "bin"


def python(bin_dir: Path, code: str, cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run([str(bin_dir / "python"), "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=clean_env())
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done.stdout


class Process:
    """A command of the venv (`rasplay serve`, `rasplay worker`) in its own session, its output in a file."""

    def __init__(self, argv: list[str], cwd: Path, name: str):
        self.log = cwd / f"{name}.log"
        self.process = subprocess.Popen(argv, cwd=cwd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT,
                                        start_new_session=True, env=clean_env())

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def alive(self) -> None:
        assert self.process.poll() is None, f"exited {self.process.returncode}:\n{self.output()[-4000:]}"

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


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
