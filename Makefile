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

$(VENV)/.installed-dev: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

lint: install-dev
	$(BIN)/ruff check autoport tests bench scripts
	$(BIN)/ruff format --check autoport tests bench scripts
	$(BIN)/mypy autoport

bench: install-dev
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
