# rasplay: `make serve` installs and runs the playground; `make test` installs what the tests need
# (Debian's Chromium for the browser tests, the test and train extras) and runs them.
PYTHON ?= python3

.PHONY: serve test test-deps

serve:
	$(PYTHON) -m pip install -e .
	rasplay serve

test-deps:
	@command -v chromium >/dev/null 2>&1 || (apt-get update && apt-get install -y chromium)
	$(PYTHON) -m pip install -e '.[test,train]'

test: test-deps
	$(PYTHON) -m pytest
