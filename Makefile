# The two commands of the README. Both create .venv from nothing but Python 3.11+.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint typecheck guard pytest audit bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.installed

## run: replay every domain and every workflow scenario keyless on the embedded SQLite default
run: $(VENV)/.installed
	$(BIN)/agentic-eval run
	$(BIN)/agentic-eval scenarios

## test: ruff lint + format check, pyright strict on src/, the real-data guard, pip-audit, pytest (network blocked; last, so its summary closes the output)
test: lint typecheck guard audit pytest

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: $(VENV)/.installed-dev
	$(BIN)/pyright src

# guard: fail when git tracks real data (files under EVAL_FIXTURE_DIR, or marked as derived from it)
guard: $(VENV)/.installed-dev
	$(BIN)/agentic-eval guard

pytest: $(VENV)/.installed-dev
	$(BIN)/pytest

# pip-audit asks PyPI's vulnerability API; .ci/audit.py says how many packages it actually audited
# (where the API cannot be reached it audits none, and pip-audit alone would still say "No known
# vulnerabilities found").
audit: $(VENV)/.installed-dev
	$(BIN)/python .ci/audit.py

bench: $(VENV)/.installed
	$(BIN)/python bench/replay_bench.py

clean:
	rm -rf $(VENV) .agentic-eval
