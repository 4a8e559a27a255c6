"""A real PostgreSQL (Debian's `postgresql` package) for tests: a fresh cluster in a temporary directory on
a free loopback port, started and stopped with initdb and pg_ctl. PostgreSQL refuses to run as root, so as
root the cluster belongs to the `postgres` user the package creates. Where PostgreSQL is not installed the
tests that need it skip with a message (under CI=true, conftest turns that skip into a failure)."""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from .live_server import free_port
from .needs import unavailable


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


class PostgresServer:
    def __init__(self, fsync: bool = False, superuser: str = "rasplay", host_auth: str = "trust"):
        """`fsync`: tests need no durability across a power cut (bench/ does). `superuser`: the cluster's
        superuser (Debian's clusters have `postgres`). `host_auth`: how TCP connections authenticate (Debian's
        `scram-sha-256` asks for the role's password; the socket in the cluster's folder always trusts)."""
        self.fsync = fsync
        self.superuser = superuser
        bindir = _bin_dir()
        if bindir is None:
            unavailable("PostgreSQL is not installed: `apt-get install -y postgresql` (make test-deps does it)")
        try:
            import psycopg  # noqa: F401
        except ImportError:
            unavailable("psycopg is not installed: pip install -e '.[course]' (make test-deps does it)")
        self.bindir = bindir
        self.user = None
        if os.geteuid() == 0:
            try:
                self.user = pwd.getpwnam("postgres")
            except KeyError:
                unavailable("running as root and there is no `postgres` user to run PostgreSQL as")
        self.dir = Path(tempfile.mkdtemp(prefix="rasplay-pg-"))
        if self.user:
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        self.data = self.dir / "data"
        self.port = free_port()
        self._as_owner([bindir / "initdb", "-D", self.data, "-U", superuser, "--auth-local=trust",
                        f"--auth-host={host_auth}", "-E", "UTF8", "--no-sync", "--no-instructions"])
        self.start()

    @property
    def admin_url(self) -> str:
        return f"postgresql://{self.superuser}@127.0.0.1:{self.port}/postgres"

    def _as_owner(self, cmd, **kw):
        def drop():
            if self.user:
                os.setgid(self.user.pw_gid)
                os.setuid(self.user.pw_uid)
        p = subprocess.run([str(c) for c in cmd], preexec_fn=drop, capture_output=True, text=True, cwd=self.dir,
                           timeout=120, **kw)
        if p.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed: {p.stdout}{p.stderr}")
        return p

    def start(self) -> None:
        """Start the cluster; pg_ctl -w returns once it accepts connections."""
        self._as_owner([self.bindir / "pg_ctl", "-D", self.data, "-l", self.dir / "server.log", "-w", "-t", "60",
                        "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                              f"-c fsync={'on' if self.fsync else 'off'}", "start"])

    def stop(self, mode: str = "fast") -> None:
        """Stop the cluster: fast (open connections are closed), as an operator would, or immediate (every
        process quits at once, with no shutdown checkpoint: recovery at the next start), as a crash would."""
        self._as_owner([self.bindir / "pg_ctl", "-D", self.data, "-w", "-t", "60", "-m", mode, "stop"])

    def freeze(self, frozen: bool = True) -> None:
        """Stop (SIGSTOP) or continue (SIGCONT) every process of the cluster: its connections stay open and
        nothing answers on them, and new ones are accepted by the kernel and never answered, as when its host
        vanishes without a word."""
        import signal

        import psutil

        postmaster = psutil.Process(int((self.data / "postmaster.pid").read_text().split()[0]))
        for p in [postmaster, *postmaster.children(recursive=True)]:
            os.kill(p.pid, signal.SIGSTOP if frozen else signal.SIGCONT)

    def new_database(self) -> str:
        """A fresh empty database; its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return f"postgresql://{self.superuser}@127.0.0.1:{self.port}/{name}"

    def close(self) -> None:
        try:
            self.stop()
        except RuntimeError:
            pass   # already stopped
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server():
    server = PostgresServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def postgres_url(postgres_server):
    """The URL of a fresh database on the session's PostgreSQL."""
    return postgres_server.new_database()
