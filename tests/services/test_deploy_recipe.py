"""docs/deploy.md's course recipe, as written: its shell block, its two systemd units and its nginx server block
are read from the document (support/deploy_doc.py) and run, step by step, in a temporary directory: a fresh
venv WITHOUT system site packages holding the wheel with the course and train extras, a real PostgreSQL
(password authentication over TCP, as Debian's) and a real Redis with its append-only file, one `rasplay
worker` and two `rasplay serve` replicas started from the units with the root-only settings file (the broker
from their first start), and nginx with the document's server block (`nginx -t`, then run). The recipe's
own checks are run as written (curl) and what their comments say is checked: each replica ready with the
worker counted, a link made through nginx opening on both replicas, a compile through nginx done by the
worker, a classroom store copied in. Every line of the recipe must be one the test knows (RULES): a new
or changed line fails the test until the test runs it too. The substitutions are the document's list
("How this recipe is tested"); nothing else is changed."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from support import deploy_doc
from support.installed import Process, built_wheel, clean_env, pip_install
from support.live_server import free_port
from support.postgres_server import PostgresServer
from support.redis_server import RedisServer

pytestmark = pytest.mark.timeout(1800)   # the install resolves torch and celery from the index: minutes
PATHS = re.compile(r"(?<![\w/.])(/opt/rasplay|/var/lib/rasplay|/etc/rasplay|/etc/nginx|/etc/redis|/home/teacher)")
SMALL_MACHINE = {"RASPLAY_WORKERS": "1", "RASPLAY_HEAVY_WORKERS": "1", "RASPLAY_TRAIN_JOBS": "1",
                 "RASPLAY_TRAIN_WARM": "0"}
DOC_LINK_ID = "m52onmdj5ymq"   # the id the recipe's example shows


def nginx_binary() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if found is None:
        pytest.fail("nginx is not installed: `apt-get install -y nginx` (make test-deps does it)")
    return found


class Recipe:
    """The recipe's machine: its absolute paths under `root`, its services and processes, what it made."""

    def __init__(self, root: Path):
        self.root = root
        self.wheel = built_wheel()
        self.pg: PostgresServer | None = None
        self.redis: RedisServer | None = None
        self.ports = {"8001": str(free_port()), "8002": str(free_port())}
        self.nginx_port = free_port()
        self.processes: dict[str, Process] = {}
        self.link_id: str | None = None
        self.classroom_ids: list[str] = []
        self.done: list[str] = []   # the steps run, in order
        self.current: deploy_doc.Command | None = None   # the command being run (its comment: what to expect)

    # -- substitutions (docs/deploy.md, "How this recipe is tested") --
    def local(self, text: str) -> str:
        """The document's paths under root, its ports the test's, the proxy's URL nginx's loopback port."""
        text = PATHS.sub(lambda m: f"{self.root}{m.group(1)}", text)
        for port, mine in self.ports.items():
            text = text.replace(f"127.0.0.1:{port}", f"127.0.0.1:{mine}")
        text = text.replace("https://rasplay.example.edu", f"http://127.0.0.1:{self.nginx_port}")
        return text.replace(DOC_LINK_ID, self.link_id or DOC_LINK_ID)

    @staticmethod
    def unprivileged(text: str) -> str:
        return re.sub(r"(^|&& )sudo ", r"\1", text)

    def shell(self, text: str, timeout: float = 300) -> str:
        done = subprocess.run(["bash", "-c", self.unprivileged(self.local(text))], cwd=self.root, capture_output=True,
                              text=True, timeout=timeout, env=clean_env(HOME=str(self.root / "home" / "teacher")))
        assert done.returncode == 0, f"{text}\n-> {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        return done.stdout

    def env_file(self) -> dict[str, str]:
        path = self.root / "etc" / "rasplay" / "env"
        return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)

    def logs(self) -> str:
        return "\n".join(f"--- {name}:\n{p.output()[-3000:]}" for name, p in self.processes.items())

    def close(self) -> None:
        for p in reversed(list(self.processes.values())):
            p.stop()
        for service in (self.redis, self.pg):
            if service is not None:
                service.close()


# -- step 1: PostgreSQL, Redis, nginx --
def packages(r: Recipe, m) -> None:
    assert m.group(1).split() == ["postgresql", "redis-server", "nginx"]
    nginx_binary()   # (PostgreSQL and Redis: their fixtures look for them as they start)


def redis_append_only(r: Recipe, m) -> None:
    conf = r.root / "etc" / "redis" / "redis.conf"
    conf.parent.mkdir(parents=True)
    debian = Path("/etc/redis/redis.conf")
    conf.write_text(debian.read_text() if debian.exists() else "appendonly no\n")
    r.shell(m.group(1))
    assert re.search(r"^appendonly yes$", conf.read_text(), re.M), "the sed does not turn the append-only file on"
    r.redis = RedisServer(persistent=True)   # ... which the recipe's Redis then has (systemctl restart)


def postgres_admin(r: Recipe, m) -> None:
    if r.pg is None:
        r.pg = PostgresServer(superuser="postgres", host_auth="scram-sha-256")
    tool = shutil.which(m.group(1)) or str(r.pg.bindir / m.group(1))
    done = subprocess.run([tool, "-h", str(r.pg.dir), "-p", str(r.pg.port), "-U", "postgres", *shlex.split(m.group(2))],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


# -- step 2: the user, its folders, the venv --
def no_user(r: Recipe, m) -> None:
    assert m.group(1) == "rasplay"   # the tests run as their own user: no system user is made


def folder(r: Recipe, m) -> None:
    path = Path(r.local(m.group(2)))
    r.shell(f"install -d -m {m.group(1)} {m.group(2)}")   # (the owner left out: no rasplay user here)
    assert path.is_dir() and stat.S_IMODE(path.stat().st_mode) == int(m.group(1), 8)


def venv(r: Recipe, m) -> None:
    subprocess.run([sys.executable, "-m", "venv", r.local(m.group(1))], check=True, timeout=300, env=clean_env())


def install(r: Recipe, m) -> None:
    pip = r.local(m.group(1))
    pip_install([pip], f"{r.wheel}[{m.group(2)}]", torch="train" in m.group(2).split(","))
    cfg = (Path(pip).parent.parent / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg


# -- step 3: the settings file --
def settings_file(r: Recipe, m) -> None:
    text = m.group(0)
    text = text.replace("@127.0.0.1/rasplay", f"@127.0.0.1:{r.pg.port}/rasplay")
    text = text.replace("127.0.0.1:6379/", f"127.0.0.1:{r.redis.port}/")
    text = text.replace("\nEOF", "".join(f"\n{k}={v}" for k, v in SMALL_MACHINE.items()) + "\nEOF")
    r.shell(text)
    path = Path(r.local(m.group(1)))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, oct(path.stat().st_mode)
    assert "change-me" in r.env_file()["RASPLAY_STORE"]


# -- step 4: the units started, then ready --
def daemon_reload(r: Recipe, m) -> None:
    assert set(deploy_doc.units()) == {"rasplay@.service", "rasplay-worker.service"}


def start_units(r: Recipe, m) -> None:
    for name in m.group(1).split():
        template, _, instance = name.partition("@")
        unit = deploy_doc.unit(f"{template}@.service" if instance else f"{name}.service")
        env = clean_env(**{k: v for f in unit.get("EnvironmentFile", []) for k, v in
                           dict(line.split("=", 1) for line in Path(r.local(f)).read_text().splitlines()
                                if "=" in line).items()})
        env.update(dict(e.split("=", 1) for e in unit.get("Environment", [])))
        (command,) = unit["ExecStart"]
        command = command.replace("--port %i", f"--port {r.ports.get(instance, '')}").replace("%i", instance)
        argv = shlex.split(r.local(command))
        assert "RASPLAY_STORE" not in command and "://" not in command   # no URL in `ps`
        r.processes[name] = Process(argv, r.root, name, env=env)


def replica_ready(r: Recipe, m) -> None:
    instance = m.group(1)
    url = f"http://127.0.0.1:{r.ports[instance]}/api/v1/ready"
    deadline = time.monotonic() + 600
    while True:   # the replica starts, then counts the worker's heartbeats
        for p in r.processes.values():
            p.alive()
        try:
            answer = httpx.get(url, timeout=10)
            if answer.status_code == 200 and answer.json()["checks"]["training"]["ok"]:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"replica {instance} never ready:\n{r.logs()}"
        time.sleep(0.5)
    doc = json.loads(r.shell(m.group(0)))   # the recipe's own curl
    assert doc["status"] == "ready", doc
    assert doc["checks"]["workers"] == {"ok": True, "train": 1, "heavy": 1}, doc
    assert doc["checks"]["broker"]["ok"] and doc["checks"]["store"]["ok"] and doc["checks"]["redis"]["ok"], doc


# -- step 5: nginx --
def nginx(r: Recipe, m) -> None:
    prefix = r.root / "nginx"
    (prefix / "tmp").mkdir(parents=True)
    block = deploy_doc.nginx_server_block()
    assert block.count("listen 443 ssl;") == 1
    block = r.local(block.replace("listen 443 ssl;", f"listen 127.0.0.1:{r.nginx_port};"))
    conf_d = Path(r.local("/etc/nginx/conf.d"))
    conf_d.mkdir(parents=True)
    (conf_d / "rasplay.conf").write_text(block)
    temp = "".join(f"    {kind}_temp_path {prefix}/tmp/{kind};\n" for kind in ("client_body", "proxy", "fastcgi",
                                                                                 "uwsgi", "scgi"))
    (prefix / "nginx.conf").write_text(
        ("user root;\n" if os.geteuid() == 0 else "") +
        f"daemon off;\nworker_processes 1;\npid {prefix}/nginx.pid;\nerror_log {prefix}/error.log;\n"
        f"events {{ worker_connections 256; }}\nhttp {{\n    access_log {prefix}/access.log;\n{temp}"
        f"    include {conf_d}/rasplay.conf;\n}}\n")
    base = [nginx_binary(), "-p", str(prefix), "-e", str(prefix / "error.log"), "-c", str(prefix / "nginx.conf")]
    checked = subprocess.run([*base, "-t"], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and "test is successful" in checked.stderr, checked.stderr
    r.processes["nginx"] = Process(base, prefix, "nginx")
    deadline = time.monotonic() + 60
    while True:
        r.processes["nginx"].alive()
        try:
            if httpx.get(f"http://127.0.0.1:{r.nginx_port}/api/v1/live", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, r.processes["nginx"].output() + (prefix / "error.log").read_text()
        time.sleep(0.2)


# -- step 6: the checks through the proxy --
def results_received(r: Recipe) -> int:
    """Compiles answered from the queue (the worker's results), over both replicas."""
    return sum(httpx.get(f"http://127.0.0.1:{p}/api/v1/health", timeout=10).json()["pools"]["heavy"]["results"]["ok"]
               for p in r.ports.values())


def curl(r: Recipe, m) -> None:
    command, expected = m.group(0), r.current.comment
    before = results_received(r) if "/api/v1/compile" in command else None
    out = r.shell(command)
    if re.fullmatch(r"\d{3}", expected):
        assert out.strip() == expected, (command, out)
    elif "/api/v1/share" in command:
        r.link_id = json.loads(out)["id"]
        assert expected.startswith('{"id":"') and re.fullmatch(r"[a-z0-9]+", r.link_id), out
    elif "/api/v1/compile" in command:
        doc = json.loads(out)
        assert doc["id"] and doc["summary"], out
        assert results_received(r) == before + 1, "the compile was not answered from the worker's queue"
    else:
        pytest.fail(f"a check the test does not know: {command}  # {expected}")


# -- step 7: a classroom store copied in --
def store_copy(r: Recipe, m) -> None:
    data = Path(r.local(m.group(1)))
    data.mkdir(parents=True)
    venv_python = r.local("/opt/rasplay/venv/bin/python")
    made = subprocess.run([venv_python, "-c", "import sys, json; from pathlib import Path; "
                           "from rasplay.server.store import SQLiteStore; s = SQLiteStore(Path(sys.argv[1]) / 'links.sqlite3'); "
                           "print(json.dumps([s.put_link({'source': f'c{i} = indices;'}) for i in range(3)])); s.close()",
                           str(data)], cwd=r.root, capture_output=True, text=True, timeout=120, env=clean_env())
    assert made.returncode == 0, made.stderr
    r.classroom_ids = json.loads(made.stdout)
    out = r.shell(m.group(0))
    assert "links: 3 in the source" in out and "every link and model of the source is in the target" in out, out
    for link in r.classroom_ids:
        for port in r.ports.values():
            assert httpx.get(f"http://127.0.0.1:{port}/s/{link}", timeout=10).status_code == 302, link


def compose_health_checks(r: Recipe) -> None:
    """The Compose file's health checks of a replica and of a worker, run against the recipe's own processes
    (the same commands; the replica's port is the test's)."""
    services = deploy_doc.compose()["services"]
    for name, port in (("replica", r.ports["8001"]), ("worker", None)):
        test = services[name]["healthcheck"]["test"]
        assert test[:2] == ["CMD", "python"], test
        argv = [r.local("/opt/rasplay/venv/bin/python"), *[a.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
                                                           for a in test[2:]]]
        done = subprocess.run(argv, cwd=r.root, capture_output=True, text=True, timeout=60,
                              env=clean_env(RASPLAY_BROKER=r.env_file()["RASPLAY_BROKER"]))
        assert done.returncode == 0, f"the Compose health check of the {name}: {done.stderr[-3000:]}"


RULES = [
    (r"sudo apt-get install -y (.+)", packages),
    (r"sudo (sed -i 's/\^appendonly no/appendonly yes/' /etc/redis/redis\.conf) && sudo systemctl restart redis-server",
     redis_append_only),
    (r"sudo -u postgres (psql|createdb) (.+)", postgres_admin),
    (r"sudo useradd --system --home-dir /var/lib/rasplay --shell \S+ (\w+)", no_user),
    (r"sudo install -d (?:-o rasplay -g rasplay )?-m (\d+) (/\S+)", folder),
    (r"sudo python3 -m venv (/\S+)", venv),
    (r"sudo (/\S+/bin/pip) install 'rasplay\[([\w,]+)\]' --extra-index-url https://download\.pytorch\.org/whl/cpu",
     install),
    (r"sudo install -m 600 /dev/stdin (/\S+) <<'EOF'\n(?:RASPLAY_\w+=\S+\n)+EOF", settings_file),
    (r"sudo systemctl daemon-reload", daemon_reload),
    (r"sudo systemctl enable --now ((?:rasplay[\w@-]*\s*)+)", start_units),
    (r"curl -s http://127\.0\.0\.1:(\d+)/api/v1/ready", replica_ready),
    (r"sudo nginx -t && sudo systemctl reload nginx", nginx),
    (r"curl -s .+", curl),
    (r"sudo sh -c '\. /etc/rasplay/env && /opt/rasplay/venv/bin/rasplay store copy --from (\S+) --to \"\$RASPLAY_STORE\"'",
     store_copy),
]


def test_the_course_recipe_runs_as_written(tmp_path):
    commands = deploy_doc.recipe()
    unknown = [c.text for c in commands if not any(re.fullmatch(p, c.text, re.S) for p, _ in RULES)]
    assert not unknown, f"lines of docs/deploy.md's recipe this test does not run: {unknown}"
    r = Recipe(tmp_path / "root")
    r.root.mkdir()
    try:
        for command in commands:
            pattern, run = next((p, f) for p, f in RULES if re.fullmatch(p, command.text, re.S))
            r.current, started = command, time.monotonic()
            run(r, re.fullmatch(pattern, command.text, re.S))
            r.done.append(f"{time.monotonic() - started:6.1f} s  {command.text.splitlines()[0]}")
        compose_health_checks(r)
        for name, p in r.processes.items():
            p.alive()
            assert "Traceback" not in p.output(), f"{name}:\n{p.output()[-4000:]}"
    finally:
        print("\n".join(r.done))   # each step's time (shown with -s)
        r.close()
    assert r.link_id and len(r.classroom_ids) == 3
