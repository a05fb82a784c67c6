# The two commands of the README: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
export AUTOPORT_TEST_POSTGRES_URL ?= postgresql://postgres@127.0.0.1:5432/test

.PHONY: run test install install-dev lint typecheck bench clean

run: install
	$(BIN)/autoport serve

test: install-dev
	$(BIN)/pytest

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e .
	touch $@

# The client library (clients/python) is its own distribution; installed beside autoport
# so `import autoport_client` works in the venv (the suite itself imports it from
# clients/python/src, see pythonpath in pyproject.toml).
$(VENV)/.installed-dev: $(BIN)/python pyproject.toml clients/python/pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev]' -e './clients/python[mqtt,jwt,examples]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

lint: install-dev
	$(BIN)/ruff check autoport tests bench scripts clients/python
	$(BIN)/ruff format --check autoport tests bench scripts clients/python
	$(BIN)/mypy autoport
	$(BIN)/mypy --strict clients/python/src clients/python/examples clients/python/tests/typecheck_models.py
	$(BIN)/python clients/python/scripts/generate_models.py --check

bench: install-dev
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
