# The two commands of the README: `make demo` and `make test`. Each sets up its own virtualenv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

VSCODE := editors/vscode
VSCODE_STAMP := $(VSCODE)/node_modules/.installed

.PHONY: demo test lint format bench docs clean vsix

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

# The VS Code extension's dependencies (npm ci from the lock file): its type check, unit and
# protocol tests run inside pytest (tests/editors/test_vscode.py).
$(VSCODE_STAMP): $(VSCODE)/package-lock.json
	cd $(VSCODE) && npm ci --no-audit --no-fund
	touch $(VSCODE_STAMP)

test: lint $(VSCODE_STAMP)
	$(VENV)/bin/pytest -q

vsix: $(VSCODE_STAMP)
	cd $(VSCODE) && npm run -s package

format: $(STAMP)
	$(VENV)/bin/ruff format server tests
	$(VENV)/bin/ruff check --fix server tests

bench: $(STAMP)
	$(PY) tests/benchmarks/run.py

docs: $(STAMP)
	$(PY) -m s_code.docs_gen

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache $(VSCODE)/node_modules $(VSCODE)/dist
