"""docs/deploy.md's examples, read from the document itself (support/deploy_doc.py): the systemd units keep no
password in a file every user reads, the recipe makes the service user, its folders and the root-only
settings file, the Compose file restarts, checks health, runs the proxy with the trusted-proxy setting and
installs nothing at start, and every install of PyTorch names its CPU build. (Docker is not run here; the
recipe itself runs in tests/services/test_deploy_recipe.py.)"""
import ipaddress
import re

from support import deploy_doc

PASSWORD_URL = re.compile(r"\w+://[^/@\s:]+:[^/@\s]+@")   # scheme://user:password@host
CPU_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"


def test_the_units_read_their_urls_from_a_root_only_file_and_keep_no_password():
    units = deploy_doc.units()
    assert set(units) == {"rasplay@.service", "rasplay-worker.service"}
    for name, unit in units.items():
        for line in unit.get("Environment", []):
            assert not PASSWORD_URL.search(line), f"{name}: a password in a world-readable unit: {line}"
        assert unit["User"] == ["rasplay"], name
        assert unit["EnvironmentFile"] == ["/etc/rasplay/env"], name
        assert unit["KillMode"] == ["mixed"] and unit["Restart"] == ["always"], name
    assert PASSWORD_URL.search("Environment=RASPLAY_STORE=postgresql://rasplay:secret@db/rasplay")   # the check bites


def test_the_recipe_makes_the_user_its_folders_and_the_settings_file_mode_600():
    texts = [c.text for c in deploy_doc.recipe()]
    assert any(re.fullmatch(r"sudo useradd --system .* rasplay", t) for t in texts)
    assert any(re.fullmatch(r"sudo install -d -o rasplay -g rasplay -m 750 /var/lib/rasplay", t) for t in texts)
    (settings,) = [t for t in texts if "/etc/rasplay/env" in t and t.startswith("sudo install ")]
    assert settings.startswith("sudo install -m 600 /dev/stdin /etc/rasplay/env <<'EOF'\n")
    written = dict(line.split("=", 1) for line in settings.splitlines()[1:-1])
    assert {"RASPLAY_STORE", "RASPLAY_REDIS", "RASPLAY_BROKER", "RASPLAY_TRUSTED_PROXY"} <= set(written)
    assert PASSWORD_URL.search(written["RASPLAY_STORE"])   # the password lives there, and only there
    starts = [t for t in texts if t.startswith("sudo systemctl enable --now")]
    assert starts == ["sudo systemctl enable --now rasplay-worker rasplay@8001 rasplay@8002"]   # broker from the start


def test_the_compose_file_restarts_checks_health_and_proxies():
    services = deploy_doc.compose()["services"]
    assert {"postgres", "redis", "replica", "worker", "proxy"} <= set(services)
    for name, service in services.items():
        assert service.get("restart") in ("always", "unless-stopped"), name
        assert "healthcheck" in service, name
        command = service.get("command", "")
        assert "pip install" not in (command if isinstance(command, str) else " ".join(command)), name
    assert "/api/v1/ready" in " ".join(services["replica"]["healthcheck"]["test"])
    worker_check = " ".join(services["worker"]["healthcheck"]["test"])
    assert "rasplay:worker:" in worker_check or "inspect ping" in worker_check
    for name in ("replica", "worker"):
        assert services[name]["build"] == ".", name   # the image of the Dockerfile: installed once
    assert services["proxy"]["image"].startswith("nginx")
    assert services["replica"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["proxy"]["depends_on"]["replica"]["condition"] == "service_healthy"


def test_the_compose_replicas_trust_the_proxy_on_their_network():
    doc = deploy_doc.compose()
    trusted = ipaddress.ip_network(doc["services"]["replica"]["environment"]["RASPLAY_TRUSTED_PROXY"])
    (subnet,) = [ipaddress.ip_network(c["subnet"]) for c in doc["networks"]["default"]["ipam"]["config"]]
    assert subnet.subnet_of(trusted)   # the proxy's address, whichever Docker gives it, is trusted


def test_every_install_of_pytorch_names_its_cpu_build():
    installs = [line for b in deploy_doc.blocks() if b.lang in ("sh", "dockerfile")
                for line in b.body.splitlines() if re.search(r"pip install .*\[[^\]]*\b(train|tl)\b", line)]
    assert len(installs) >= 3
    for line in installs:
        assert CPU_INDEX in line, line
    assert "'rasplay[course,train]'" in deploy_doc.dockerfile() and CPU_INDEX in deploy_doc.dockerfile()


def test_the_recipe_commands_are_read_as_the_shell_reads_them():
    cmds = deploy_doc.commands("# 1. a step\nfoo 'a # b' \\\n  --x   # out\ncat <<'EOF'\nA=1\nEOF\n# 2. next\nbar\n")
    assert [(c.text, c.comment, c.step) for c in cmds] == [
        ("foo 'a # b' --x", "out", "1. a step"), ("cat <<'EOF'\nA=1\nEOF", "", "1. a step"), ("bar", "", "2. next")]
