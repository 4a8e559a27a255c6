"""Start rasplay on a free loopback port in a subprocess, for tests over real HTTP."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """`rasplay serve` (or, with `settings`, the app factory with those Settings) on loopback."""

    def __init__(self, data_dir: Path, *args: str, settings: str | None = None, port: int | None = None,
                 preexec_fn=None, program: list[str] | None = None):
        """`program`: the command that stands for `rasplay` (e.g. a next release's, support/newer_rasplay.py)."""
        self.data_dir = data_dir
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        if settings is None:
            # no warm training process unless a test asks for one ("--train-warm", "1" in args: the last
            # flag wins): importing PyTorch at every test server's start would slow the whole suite
            cmd = [*(program or [sys.executable, "-m", "rasplay.cli"]), "serve", "--port", str(self.port),
                   "--data-dir", str(data_dir), "--train-warm", "0", *args]
        else:
            code = ("import uvicorn; from pathlib import Path; from rasplay.server.app import create_app; "
                    "from rasplay.server.settings import Settings; "
                    f"uvicorn.run(create_app(Settings(data_dir=Path({str(data_dir)!r}), {settings})), "
                    f"host='127.0.0.1', port={self.port}, log_level='warning')")
            cmd = [sys.executable, "-c", code]
        self.log_path = data_dir / "server.log"
        self.process = subprocess.Popen(cmd, cwd=ROOT, stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT,
                                        text=True, start_new_session=True, preexec_fn=preexec_fn)
        self._wait_ready()

    def _wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()}")
            try:
                if httpx.get(self.url + "/api/v1/health", timeout=1).status_code == 200:
                    if not self._listens_itself():
                        raise RuntimeError(f"port {self.port} answers, but not from this test's server "
                                           f"(pid {self.process.pid}): another process holds it")
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("server did not start")

    def _listens_itself(self) -> bool:
        """Whether the answer came from this server: its process (or one of its children) listens on the port."""
        import psutil

        proc = psutil.Process(self.process.pid)
        for p in [proc, *proc.children(recursive=True)]:
            try:
                conns = p.net_connections(kind="tcp")
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            if any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == self.port for c in conns):
                return True
        return False

    def client(self, **kw) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=kw.pop("timeout", 30), **kw)

    def kill(self) -> None:
        """kill -9 the server and its worker processes."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
