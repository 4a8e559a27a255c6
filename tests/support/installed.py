"""rasplay as an operator installs it: the wheel built once per test process from the files a commit holds, a
venv WITHOUT system site packages holding it with an extra (pip resolves the dependencies from the index,
pinned by tests/constraints.txt), and the venv's commands run in sessions of their own with their output in
a file. Used by tests/services/test_ops_extras.py (each extra alone) and test_deploy_recipe.py (the course
recipe of docs/deploy.md, as written).

Installing needs the package index. Where pip's own index would give torch with CUDA, point
RASPLAY_TORCH_INDEX at PyTorch's CPU wheels (https://download.pytorch.org/whl/cpu, added as an extra index);
unset, pip's configured indexes are used as they are."""
from __future__ import annotations

import atexit
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "tests" / "constraints.txt"
TORCH_INDEX = os.environ.get("RASPLAY_TORCH_INDEX", "")


def source_files() -> list[str]:
    """The files a commit holds (tracked, plus new files not ignored): the wheel is built from those only."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [f for f in out.splitlines() if (ROOT / f).is_file()]


def clean_env(**extra) -> dict:
    """The environment without this test run's Python paths (the venv must stand on its own)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "PYTHONNOUSERSITE": "1", **extra}


@functools.cache
def built_wheel() -> Path:
    """rasplay's wheel, built once per test process (every module that installs it shares it)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.fail("rasplay is installed from a wheel built from the git checkout: git is needed")
    tmp = Path(tempfile.mkdtemp(prefix="rasplay-wheel-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    src = tmp / "clone"
    for name in source_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-w", str(tmp / "dist"),
                            "-q"], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (found,) = (tmp / "dist").glob("rasplay-*.whl")
    return found


def pip_install(pip: list[str], target: str, torch: bool) -> None:
    """`pip install` (the command `pip`: a venv's pip) of `target` pinned by tests/constraints.txt."""
    cmd = [*pip, "install", "-q", "-c", str(CONSTRAINTS), target]
    if torch and TORCH_INDEX:
        cmd += ["--extra-index-url", TORCH_INDEX]
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1700, env=clean_env())
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    print(f"installed {target} in {time.monotonic() - started:.1f} s")


def venv_with(wheel: Path, extra: str | None, where: Path) -> Path:
    """A venv without system site packages holding the wheel with `extra`: its bin folder."""
    venv = where / f"venv-{extra or 'core'}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    target = f"{wheel}[{extra}]" if extra else str(wheel)
    pip_install([str(venv / "bin" / "python"), "-m", "pip"], target, torch=extra in ("train", "tl"))
    return venv / "bin"


def python(bin_dir: Path, code: str, cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run([str(bin_dir / "python"), "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=clean_env())
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done.stdout


class Process:
    """A command of the venv (`rasplay serve`, `rasplay worker`, nginx) in its own session, its output in a file."""

    def __init__(self, argv: list[str], cwd: Path, name: str, env: dict | None = None):
        self.log = cwd / f"{name}.log"
        self.process = subprocess.Popen(argv, cwd=cwd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT,
                                        start_new_session=True, env=env or clean_env())

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
