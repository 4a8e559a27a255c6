"""The package as a user installs it: `pip wheel .`, the wheel installed (not editable) into a fresh
venv, `rasplay serve` run from an unrelated folder. The page, every asset it references, the 29
examples and an evaluation are served from the installed package, and the wheel installs nothing at
top level but `rasplay`."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import httpx
import pytest

from support.live_server import free_port

ROOT = Path(__file__).resolve().parents[2]
DEPENDENCIES = ["numpy", "lark", "fastapi", "uvicorn", "orjson", "pydantic", "starlette_compress", "brotli"]
# where the page's ES modules and the page itself name other files of the app (plotly.js: `new URL(...)`, loaded
# when a chart needs it)
REFERENCES = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\bsrc\s*=\s*|\bhref\s*=\s*|\.src\s*=\s*|\bnew URL\(\s*)["']([^"'#?]+)["']""")


ASSET = re.compile(r"(?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)*\.(?:js|css|svg|html|png|ico|json)")
VERSION = re.compile(r"^/v/[0-9a-f]{16}(?=/)")   # the app's files by their versioned URLs (server/assets.py)


def source_files() -> list[str]:
    """The files of a fresh clone (tracked, plus new files not ignored), so the wheel is built from
    exactly what a commit would hold and not from local build products."""
    if shutil.which("git") and (ROOT / ".git").exists():
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout
        return [f for f in out.splitlines() if (ROOT / f).is_file()]
    skip = {".venv", "build", "dist", "test-artifacts", "node_modules", "__pycache__"}
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(ROOT).parts) and ".egg-info" not in str(p)]


def site_packages(venv_python: Path) -> Path:
    out = subprocess.run([str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return Path(out)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "clone"
    for name in source_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    dist = tmp / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-w", str(dist), "-q"],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("rasplay-*.whl")

    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = site_packages(python)
    missing = subprocess.run([str(python), "-c", "import " + ", ".join(DEPENDENCIES)], capture_output=True)
    if missing.returncode != 0:
        # the dependencies live in this test's own venv, not the system's: let the fresh venv see them
        # (a plain path entry: the test venv's own .pth files, e.g. an editable rasplay, are not run)
        paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
        (site / "test-dependencies.pth").write_text("\n".join(sorted(paths)) + "\n")
    before = set(os.listdir(site))
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    return {"venv": venv, "python": python, "site": site, "added": set(os.listdir(site)) - before,
            "wheel": wheel, "home": tmp / "elsewhere"}


def test_nothing_but_rasplay_is_installed_at_top_level(installed):
    assert installed["added"] == {"rasplay", f"{installed['wheel'].name.split('-py3')[0]}.dist-info"}
    dist_info = installed["site"] / f"{installed['wheel'].name.split('-py3')[0]}.dist-info"
    record = (dist_info / "RECORD").read_text().splitlines()
    tops = {line.split(",")[0].split("/")[0] for line in record}
    assert tops == {"rasplay", dist_info.name, ".."}          # "..": the `rasplay` console script in bin/
    assert (dist_info / "licenses" / "LICENSE").is_file() or (dist_info / "LICENSE").is_file()
    assert (installed["venv"] / "bin" / "rasplay").is_file()


def test_the_installed_package_is_the_one_imported(installed):
    home = installed["home"]
    home.mkdir(exist_ok=True)
    out = subprocess.run([str(installed["python"]), "-c", "import rasplay, rasplay.cli.main; print(rasplay.__file__)"],
                         cwd=home, capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()).parent == installed["site"] / "rasplay"


def test_messages_never_ask_for_an_editable_install(installed):
    package = installed["site"] / "rasplay"
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in package.rglob("*")
             if p.is_file() and p.suffix in (".py", ".js", ".html")]
    assert not [t for t in texts if "pip install -e" in t]
    assert any("pip install 'rasplay[train]'" in t for t in texts)


@pytest.fixture(scope="module")
def served(installed):
    """`rasplay serve` of the installed package, started from an unrelated folder."""
    home = installed["home"]
    home.mkdir(exist_ok=True)
    port = free_port()
    log = open(home / "server.log", "w")
    process = subprocess.Popen([str(installed["venv"] / "bin" / "rasplay"), "serve", "--port", str(port),
                                "--data-dir", str(home / "data"), "--workers", "2"], cwd=home, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, (home / "server.log").read_text()
            try:
                if httpx.get(url + "/api/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the installed server did not start"
            time.sleep(0.2)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        log.close()


def test_the_pages_and_every_asset_they_reference_are_served(served):
    seen, queue = {}, ["/", "/embed", "/docs"]
    with httpx.Client(base_url=served, timeout=30) as c:
        while queue:
            path = queue.pop()
            if path in seen:
                continue
            r = c.get(path)
            assert r.status_code == 200 and r.content, path
            seen[path] = r.content
            if path in ("/", "/embed", "/docs") or path.endswith((".js", ".html")) and \
                    not VERSION.sub("", path).startswith("/vendor/"):
                base = path.rsplit("/", 1)[0] + "/"
                for ref in REFERENCES.findall(r.text):
                    if not ASSET.fullmatch(ref):
                        continue
                    queue.append(ref if ref.startswith("/") else "/" + os.path.normpath(base.lstrip("/") + ref))
    files = {VERSION.sub("", p) for p in seen}
    assert {"/style.css", "/favicon.svg", "/js/main.js", "/vendor/codemirror.bundle.js",
            "/vendor/plotly.min.js"} <= files
    assert any(p.startswith("/vendor/swagger-ui/") for p in files)          # the API reference, offline
    assert len([p for p in files if p.startswith("/js/")]) >= 10
    # every file of the app is served as it is in the repository
    app_files = [p for p in (ROOT / "web").rglob("*") if p.is_file() and "codemirror-build" not in p.parts
                 and "node_modules" not in p.parts
                 and p.suffix in (".html", ".css", ".svg", ".js")]
    with httpx.Client(base_url=served, timeout=30) as c:
        for p in app_files:
            path = "/" + str(p.relative_to(ROOT / "web"))
            body = c.get(path).content
            if p.suffix == ".html":   # pages: files named by versioned URLs, their modules preloaded
                body = re.sub(rb'<link rel="modulepreload" href="[^"]+">\n', b"", body)
                body = re.sub(rb"/v/[0-9a-f]{16}/", b"/", body)
            assert body == p.read_bytes(), path


def test_the_examples_and_an_evaluation_are_served(served):
    with httpx.Client(base_url=served, timeout=30) as c:
        examples = c.get("/api/v1/examples").json()
        assert len(examples) == 29 == len(list((ROOT / "examples").glob("*.rasp")))
        for e in examples:
            one = c.get(f"/api/v1/examples/{e['id']}").json()
            assert one["source"] == (ROOT / "examples" / f"{e['id']}.rasp").read_text(encoding="utf-8")
        reverse = c.get("/api/v1/examples/reverse").json()["source"]
        doc = c.post("/api/v1/evaluate", json={"source": reverse, "inputs": ["hello"]}).json()
        assert doc["results"]["reverse"]["values"] == [list("olleh")] and doc["output"] == "reverse"
        # a program that loads a library file shipped with the engine
        doc = c.post("/api/v1/evaluate", json={"source": "s = sort(tokens, tokens);", "inputs": ["cab"]}).json()
        assert doc["results"]["s"]["values"] == [list("abc")], json.dumps(doc["diagnostics"])
