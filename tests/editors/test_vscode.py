"""The VS Code extension (editors/vscode): its type check, its vitest unit tests (the vscode module
is never loaded: the logic sits behind small interfaces) and its protocol test against the real
Python server, run from pytest so they are part of the README's test command."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from s_code.protocol import methods

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "editors" / "vscode"
NPX = shutil.which("npx")
needs_node = pytest.mark.skipif(
    NPX is None or not (EXT / "node_modules").is_dir(),
    reason="Node and `npm ci` in editors/vscode are needed (make test runs it)",
)


def _npx(*args: str) -> subprocess.CompletedProcess[str]:
    assert NPX is not None
    env = {**os.environ, "S_CODE_PYTHON": sys.executable}
    return subprocess.run(
        [NPX, *args], cwd=EXT, env=env, capture_output=True, text=True, timeout=300
    )


@needs_node
def test_the_extension_type_checks() -> None:
    done = _npx("tsc", "--noEmit", "-p", ".")
    assert done.returncode == 0, done.stdout + done.stderr


@needs_node
def test_vitest_unit_and_protocol_tests_pass() -> None:
    done = _npx("vitest", "run", "--reporter=verbose")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "protocol.test.ts" in out and "logic.test.ts" in out and "server.test.ts" in out


@needs_node
def test_the_extension_bundles() -> None:
    done = _npx(
        "esbuild",
        "src/extension.ts",
        "--bundle",
        "--platform=node",
        "--format=cjs",
        "--external:vscode",
        "--outfile=dist/test-bundle.js",
    )
    assert done.returncode == 0, done.stderr
    assert (EXT / "dist" / "test-bundle.js").stat().st_size > 10_000


def test_extension_method_names_match_the_server() -> None:
    source = (EXT / "src" / "common" / "methods.ts").read_text()
    names = dict(re.findall(r"^export const (\w+) = '([^']+)';", source, re.M))
    assert names
    for constant, value in names.items():
        assert getattr(methods, constant) == value, constant
    from s_code.lsp.server import PERMISSION_MODES

    modes = re.search(r"MODES = \[([^\]]*)\]", source)
    assert modes is not None
    assert re.findall(r"'([^']+)'", modes.group(1)) == list(PERMISSION_MODES)
