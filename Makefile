# The two commands of the README: `make run` and `make test`. Everything else is a helper.
# The interpreter: PYTHON=... when given, else the first Python 3.11 or newer on PATH.
PYTHON_OK := import sys; sys.exit(sys.version_info < (3, 11))
PYTHON ?= $(shell for p in python3.11 python3.12 python3.13 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c '$(PYTHON_OK)' 2>/dev/null && { echo $$p; break; }; done)
VENV ?= .venv
BIN := $(VENV)/bin
# pipefail: a failing pip fails the target even though its output goes through sed.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
export AUTOPORT_TEST_POSTGRES_URL ?= postgresql://postgres@127.0.0.1:5432/test

.PHONY: run test coverage install install-dev lint typecheck bench clean check-python ts-install

run: check-python
	@$(MAKE) --no-print-directory install
	@echo "==> starting autoport (Ctrl-C stops it)"
	$(BIN)/autoport serve

# The whole suite, in parallel worker processes (`-n auto` in pyproject.toml's addopts);
# PYTEST_ARGS adds options, e.g. `make test PYTEST_ARGS="-n 0"` for a serial run.
PYTEST_ARGS ?=
test: check-python
	@$(MAKE) --no-print-directory install-dev
	$(BIN)/pytest $(PYTEST_ARGS)

# The suite with coverage of autoport/ (branches; [tool.coverage] in pyproject.toml), the
# uncovered lines listed per file. Not yet part of `make test` (no floor measured).
coverage: check-python
	@$(MAKE) --no-print-directory install-dev
	$(BIN)/pytest --cov --cov-report=term-missing:skip-covered $(PYTEST_ARGS)

# No usable Python: one clear line, whether none was found or PYTHON=... names one that is
# missing or too old (pip would otherwise fail later, deep in its output). A .venv whose
# Python is gone or too old (built by another interpreter, since upgraded or removed) is
# rebuilt rather than failing later.
check-python:
	@if [ -z "$(PYTHON)" ]; then \
		echo "autoport needs Python 3.11 or newer; none found on PATH (python3.11, python3.12, python3.13, python3). Install one, or run: make PYTHON=/path/to/python3.x" >&2; \
		exit 2; fi
	@version=$$("$(PYTHON)" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null); \
	if [ -z "$$version" ]; then \
		echo "PYTHON=$(PYTHON) does not run. autoport needs Python 3.11 or newer: make PYTHON=/path/to/python3.x" >&2; \
		exit 2; fi; \
	if ! "$(PYTHON)" -c '$(PYTHON_OK)' 2>/dev/null; then \
		echo "PYTHON=$(PYTHON) is Python $$version; autoport needs 3.11 or newer: make PYTHON=/path/to/python3.x (or leave PYTHON out: the first one on PATH)" >&2; \
		exit 2; fi
	@if [ -e $(VENV) ] && ! $(BIN)/python -c '$(PYTHON_OK)' 2>/dev/null; then \
		echo "==> $(VENV) was built with a Python that is gone or older than 3.11: rebuilding it with $(PYTHON)"; \
		rm -rf $(VENV); fi

$(BIN)/python:
	@echo "==> creating the virtual environment $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	@echo "==> upgrading pip"
	$(BIN)/pip install --quiet --upgrade pip

# pip's lines naming each package it fetches are shown (its other output is noise): the
# first install takes about a minute, and a silent minute looks like a hang.
$(VENV)/.installed: $(BIN)/python pyproject.toml
	@echo "==> installing autoport and its dependencies into $(VENV) (about a minute the first time)"
	$(BIN)/pip install --disable-pip-version-check --progress-bar off -e . | sed -nE 's/^(Collecting|Successfully installed)/  \1/p'
	touch $@

# The client library (clients/python) is its own distribution; installed beside autoport
# so `import autoport_client` works in the venv (the suite itself imports it from
# clients/python/src, see pythonpath in pyproject.toml).
$(VENV)/.installed-dev: $(BIN)/python pyproject.toml clients/python/pyproject.toml
	@echo "==> installing autoport with its development tools into $(VENV) (about a minute the first time)"
	$(BIN)/pip install --disable-pip-version-check --progress-bar off -e '.[dev]' -e './clients/python[mqtt,jwt,examples]' | sed -nE 's/^(Collecting|Successfully installed)/  \1/p'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

# The TypeScript client (clients/typescript): its tools exactly as the committed lockfile
# pins them (`npm ci`, which also builds dist/), again whenever the lockfile changes. Its
# tests run inside `make test` (tests/clients/test_typescript.py runs `npm test`).
TS := clients/typescript
$(TS)/node_modules/.installed: $(TS)/package-lock.json $(TS)/package.json
	@command -v npm >/dev/null || { echo "the TypeScript client needs Node.js 20 or newer with npm on PATH" >&2; exit 2; }
	@echo "==> installing the TypeScript client's tools (npm ci in $(TS))"
	cd $(TS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

ts-install: $(TS)/node_modules/.installed

lint: install-dev ts-install
	$(BIN)/ruff check autoport tests bench scripts clients/python
	$(BIN)/ruff format --check autoport tests bench scripts clients/python
	$(BIN)/mypy autoport tests bench
	$(BIN)/mypy --strict clients/python/src clients/python/examples clients/python/tests/typecheck_models.py
	$(BIN)/python clients/python/scripts/generate_models.py --check
	cd $(TS) && npm run --silent typecheck && npm run --silent lint && npm run --silent check-models

bench: install-dev
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache $(TS)/node_modules $(TS)/dist $(TS)/build
