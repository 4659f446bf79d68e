"""Codex's apply_patch as a test oracle: the native binary of ``@openai/codex`` (installed by
``make oracle``: npm ci in tests/oracle/codex/), run under the name ``apply_patch``.

The binary dispatches on its argv[0]: invoked as ``apply_patch`` it reads a patch from stdin and
applies it relative to its working directory. It is not atomic (files before a failing section
are already written), so a caller gives each case a directory of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "codex"
VERSION = json.loads((HERE / "package.json").read_text())["dependencies"]["@openai/codex"]


def binary() -> Path | None:
    """The platform binary npm installed (an optional dependency of @openai/codex), or None."""
    vendor = HERE / "node_modules" / "@openai"
    for meta in sorted(vendor.glob("codex-*/vendor/*/codex-package.json")):
        info = json.loads(meta.read_text())
        exe = meta.parent / info["entrypoint"]
        if info.get("version") == VERSION and os.access(exe, os.X_OK):
            return exe
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def require() -> Path:
    """The binary; without it the calling test skips, or fails under CI=true."""
    exe = binary()
    if exe is None:
        why = (
            f"Codex's apply_patch (@openai/codex {VERSION}) is not installed: run `make oracle` "
            "(npm ci in tests/oracle/codex)"
        )
        if in_ci():
            pytest.fail(why + "; CI must run the differential", pytrace=False)
        pytest.skip(why)
    return exe


@dataclass(frozen=True)
class Run:
    applied: bool  # exit status 0
    output: str  # stdout and stderr


# A fixed environment: nothing of the caller's (APPLY_PATCH_* settings, say) reaches the oracle,
# and no backtrace is captured for each failure (RUST_BACKTRACE=1 makes a failing run 3x slower).
ENV = {
    "PATH": "/usr/bin:/bin",
    "LC_ALL": "C.UTF-8",
    "RUST_BACKTRACE": "0",
    "RUST_LIB_BACKTRACE": "0",
}


def apply(exe: Path, cwd: Path, patch: str) -> Run:
    """Apply ``patch`` in ``cwd`` (paths in the patch are relative to it)."""
    done = subprocess.run(
        ["apply_patch"],
        executable=exe,
        input=patch.encode(),
        cwd=cwd,
        env=ENV,
        capture_output=True,
        timeout=60,
        check=False,
    )
    out = (done.stdout + done.stderr).decode(errors="replace")
    return Run(done.returncode == 0, out)
