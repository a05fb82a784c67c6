# The two commands of the README: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
# pipefail: a failing pip fails the target even though its output goes through sed.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
export AUTOPORT_TEST_POSTGRES_URL ?= postgresql://postgres@127.0.0.1:5432/test

.PHONY: run test install install-dev lint typecheck bench clean

run: install
	@echo "==> starting autoport (Ctrl-C stops it)"
	$(BIN)/autoport serve

test: install-dev
	$(BIN)/pytest

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

$(VENV)/.installed-dev: $(BIN)/python pyproject.toml
	@echo "==> installing autoport with its development tools into $(VENV) (about a minute the first time)"
	$(BIN)/pip install --disable-pip-version-check --progress-bar off -e '.[dev]' | sed -nE 's/^(Collecting|Successfully installed)/  \1/p'
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
