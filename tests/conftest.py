"""Shared fixtures: every test run keeps the sidecar's state database in a private directory."""

from __future__ import annotations

import os
import tempfile

# Set before any server is spawned: children inherit it, so no test touches the user's state dir.
os.environ.setdefault("S_CODE_STATE_DIR", tempfile.mkdtemp(prefix="s-code-test-state-"))

# Shared fixtures: ``strategy`` (openat2 vs the component-wise fallback), ``folders_of``;
# ``secret_service`` (a real keyring on a private D-Bus) and ``no_bus``.
pytest_plugins = ["tests.strategies", "tests.trees", "tests.keyring_support"]
