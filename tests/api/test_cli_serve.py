"""`rasplay serve`: its flags are documented, and it says where it serves only once the port is bound."""
from __future__ import annotations

import re
import socket
import subprocess
import sys


def test_the_serve_command_documents_its_port_and_announces_only_a_bound_port(tmp_path):
    out = subprocess.run([sys.executable, "-m", "rasplay.cli", "serve", "--help"], capture_output=True, text=True)
    assert re.search(r"--port PORT\s+TCP port", out.stdout)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run([sys.executable, "-m", "rasplay.cli", "serve", "--port", str(port), "--workers", "1",
                              "--train-warm", "0", "--data-dir", str(tmp_path)], capture_output=True, text=True,
                             timeout=120)
    assert run.returncode != 0 and "serving at" not in run.stdout, run.stdout


def test_the_serve_command_announces_a_bound_port(tmp_path):
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "rasplay.cli", "serve", "--port", str(port), "--workers", "1",
                             "--train-warm", "0", "--data-dir", str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()   # blocks until the banner (or the end of output)
        assert line.startswith(f"rasplay is serving at http://127.0.0.1:{port}/")
        # by the time it says so, the port answers
        assert httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=10).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
