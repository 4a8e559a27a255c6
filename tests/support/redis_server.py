"""A real Redis (Debian's `redis-server` package) for tests: started on a free loopback port in a temporary
directory, with no persistence (or, asked, the append-only file a course's Redis has), stopped after. Where it is not installed the tests that need it skip with a
message (under CI=true, conftest turns that skip into a failure)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from .live_server import free_port
from .needs import unavailable


class RedisServer:
    def __init__(self, persistent: bool = False):
        self.persistent = persistent   # the append-only file, fsync'ed every second (docs/deploy.md's recipe)
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            unavailable("Redis is not installed: `apt-get install -y redis-server` (make test-deps does it)")
        try:
            import redis
        except ImportError:
            unavailable("the redis client is not installed: pip install -e '.[course]' (make test-deps does it)")
        self._redis = redis
        self.dir = Path(tempfile.mkdtemp(prefix="rasplay-redis-"))
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = None
        self.start()

    def start(self) -> None:
        """Start Redis; returns once it answers PING."""
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir), "--save", "",
             "--appendonly", "yes" if self.persistent else "no", "--appendfsync", "everysec", "--daemonize", "no", "--logfile", str(self.dir / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = self._redis.Redis.from_url(self.url, socket_connect_timeout=1, socket_timeout=1)
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited: {(self.dir / 'redis.log').read_text()}")
            try:
                if client.ping():
                    return
            except self._redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not answer") from None
                time.sleep(0.05)

    def freeze(self, frozen: bool = True) -> None:
        """Stop (SIGSTOP) or continue (SIGCONT) redis-server: its connections stay open and nothing answers
        on them, as when its host vanishes without a word; its clock runs on (keys expire meanwhile)."""
        os.kill(self.process.pid, signal.SIGSTOP if frozen else signal.SIGCONT)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)   # (a frozen Redis would not stop)
            self.process.terminate()
            self.process.wait(timeout=30)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server():
    server = RedisServer()
    try:
        yield server
    finally:
        server.close()
