# rasplay: `make serve` installs and runs the playground; `make test` installs what the tests need
# (Debian's Chromium for the browser tests, the test, train and notebook extras) and runs them.
PYTHON ?= python3

.PHONY: serve test test-deps test-tl

serve:
	$(PYTHON) -m pip install -e .
	rasplay serve

test-deps:
	@command -v chromium >/dev/null 2>&1 || (apt-get update && apt-get install -y chromium)
	$(PYTHON) -m pip install -e '.[test,train,notebook]'

test: test-deps
	$(PYTHON) -m pytest

# The TransformerLens export test needs the `tl` extra (about 540 MB more, several minutes to install),
# so `make test` skips it; this target installs it and runs that test.
test-tl: test-deps
	$(PYTHON) -m pip install -e '.[test,train,notebook,tl]'
	$(PYTHON) -m pytest tests/test_export_tl.py
