# Two entry points: `make run` (set up, then run the pipeline) and `make test` (set up, then test).
# Both create .venv when missing and are idempotent; dependency versions are pinned by constraints.txt.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.deps-installed
# two workers: CI is a two-core machine and make test must stay under 15 minutes there (serially it would not).
# A third worker was faster only where the venv's modules were already byte-compiled (748-763 s against 810-832 s);
# on a fresh clone, as CI runs, the workers compile the same modules side by side (816 s against 812 s, 2 minutes
# more CPU). loadgroup as tests/conftest.py implements it: tests sharing an expensive fixture on one worker, largest
# first
PYTEST_ARGS ?= -n 2 --dist loadgroup
# The real Claude Code CLI for the hook end-to-end test (tests/resolver/test_claude_code_e2e.py); optional:
# without npm or the registry the test is skipped with that reason.
CLAUDE_CODE_VERSION := 2.1.330
E2E_STAMP := .e2e/.claude-code-$(CLAUDE_CODE_VERSION)

.PHONY: run test setup lint bench clean

# Set, it made every process compile torch, transformers and dagster from source again (12 s more CPU for each one
# that imports them; a fresh clone's make test took 1,500 s of CPU instead of 1,000): the venv is ours to cache in.
unexport PYTHONDONTWRITEBYTECODE

# --no-compile: byte-compiling all 18,000 modules of the venv costs ~90 s of CPU at install; Python compiles the
# quarter a run imports on first use instead, and keeps it: PYTHONDONTWRITEBYTECODE (set on some machines, this
# one among them) is not passed on (above)
$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check --no-compile -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

$(E2E_STAMP):
	@mkdir -p .e2e
	@if command -v npm >/dev/null && npm install --prefix .e2e --no-audit --no-fund --no-save --loglevel=error \
		@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION) >.e2e/npm.log 2>&1; then touch $@; \
	else echo "note: Claude Code CLI not installed (see .e2e/npm.log); its end-to-end test will be skipped"; fi

# pip (its progress shown) and npm (quiet, into .e2e/npm.log) side by side: on a fresh clone both wait mostly on
# downloads, so the CLI comes at no extra wall time
setup:
	@$(MAKE) --no-print-directory -q $(STAMP) $(E2E_STAMP) || $(MAKE) --no-print-directory -j2 $(STAMP) $(E2E_STAMP)

run: setup
	$(BIN)/nous run

test: setup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check nous_assets resolver tests benchmarks

bench: setup
	$(BIN)/python benchmarks/bench_store.py

clean:
	rm -rf $(VENV) .e2e .pytest_cache .ruff_cache .hypothesis
