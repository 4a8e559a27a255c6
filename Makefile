# rasplay: `make serve` installs and runs the playground; `make test` installs what the tests need
# (Debian's Chromium for the browser tests, axe-core from npm in tests/node for the accessibility audit,
# Debian's PostgreSQL and Redis for the course tests, the test, train, notebook, tl, onnx, course and verify extras,
# the test toolchain pinned in tests/constraints.txt) and runs them.
PYTHON ?= python3
# apt-get waits up to 10 minutes for a lock held by another apt (unattended upgrades), rather than
# failing; sudo only when not root. Nothing here needs root when Chromium is already installed.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_GET := $(SUDO) apt-get -o DPkg::Lock::Timeout=600

.PHONY: serve test test-deps mutation

serve:
	$(PYTHON) -m pip install -e .
	rasplay serve

test-deps:
	@command -v chromium >/dev/null 2>&1 || { $(APT_GET) update && $(APT_GET) install -y chromium; }
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { $(APT_GET) update && $(APT_GET) install -y postgresql; }
	@command -v redis-server >/dev/null 2>&1 || { $(APT_GET) update && $(APT_GET) install -y redis-server; }
	@command -v nginx >/dev/null 2>&1 || test -x /usr/sbin/nginx || { $(APT_GET) update && $(APT_GET) install -y nginx; }   # docs/deploy.md's recipe
	$(PYTHON) -m pip install -c tests/constraints.txt -e '.[test,train,notebook,tl,onnx,course,verify]'
	@command -v npm >/dev/null 2>&1 || { $(APT_GET) update && $(APT_GET) install -y npm; }
	cd tests/node && npm ci --no-audit --no-fund   # axe-core for the accessibility audit (test_browser_a11y.py)

test: test-deps
	$(PYTHON) -m ruff check .
	$(PYTHON) -m pytest -n auto --dist loadfile   # one process per core, a test file's tests together (its shared servers)

# Mutation testing with cosmic-ray, module by module against their fast tests (docs/testing.md); slow
# (hours on 2 cores), so not part of `make test` or CI. MODULES=engine/header.py limits it.
mutation:
	$(PYTHON) -m pip install -e '.[mutation]'
	$(PYTHON) bench/mutation.py $(MODULES)
