# Two entry points: `make run` (set up, then run the pipeline) and `make test` (set up, then test).
# Both create .venv when missing and are idempotent; dependency versions are pinned by constraints.txt.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.deps-installed
PYTEST_ARGS ?=

.PHONY: run test setup lint bench clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

run: setup
	$(BIN)/nous run

test: setup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check nous_assets resolver tests benchmarks

bench: setup
	$(BIN)/python benchmarks/bench_store.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
