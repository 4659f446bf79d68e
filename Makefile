# The two commands of the README: `make demo` and `make test`. Each sets up its own virtualenv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint format bench docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/s-code demo

lint: $(STAMP)
	$(VENV)/bin/ruff check server tests
	$(VENV)/bin/ruff format --check server tests
	$(VENV)/bin/mypy

test: lint
	$(VENV)/bin/pytest -q

format: $(STAMP)
	$(VENV)/bin/ruff format server tests
	$(VENV)/bin/ruff check --fix server tests

bench: $(STAMP)
	$(PY) tests/benchmarks/run.py

docs: $(STAMP)
	$(PY) -m s_code.docs_gen

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
