"""Shared fixtures: every test run keeps the sidecar's state database in a private directory."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# Set before any server is spawned: children inherit it, so no test touches the user's state dir.
os.environ.setdefault("S_CODE_STATE_DIR", tempfile.mkdtemp(prefix="s-code-test-state-"))

# Shared fixtures: ``strategy`` (openat2 vs the component-wise fallback), ``folders_of``;
# ``secret_service`` (a real keyring on a private D-Bus) and ``no_bus``.
pytest_plugins = ["tests.strategies", "tests.trees", "tests.keyring_support"]

# What a test needs beyond this machine's Python, marked by where it lives: `make check` runs
# lint and every test that needs none of these; `make test` (CI) runs them all.
NEEDS = {
    "tests/editors/": ("editor",),  # a real editor: VS Code's extension host, Neovim, Emacs
    "tests/editors/test_vscode_e2e.py": ("editor", "browser"),  # code-server and Chromium
    "tests/agents/": ("network",),  # real agent CLIs against scripted model servers over HTTP
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "editor: drives a real editor")
    config.addinivalue_line("markers", "browser: drives a real browser")
    config.addinivalue_line("markers", "network: needs a network-shaped fixture (HTTP servers)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    root = Path(__file__).resolve().parent.parent
    for item in items:
        where = Path(str(item.fspath)).resolve().relative_to(root).as_posix()
        for prefix, marks in NEEDS.items():
            if where.startswith(prefix):
                for mark in marks:
                    item.add_marker(mark)
