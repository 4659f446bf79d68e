"""Running commands through the real sandbox path (projection, exec helper, bubblewrap) in-process,
at a chosen tier, and running the same command unconfined as the positive control."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from s_code.commands.projection import project
from s_code.commands.run import execute
from s_code.sandbox import process, tiers
from s_code.session.session import Session
from s_code.tools.builtin import default_registry
from s_code.workspace.folders import Folders

PY = sys.executable


@dataclass
class Box:
    """A workspace and a place outside it, and a way to run commands at one tier."""

    tier: int
    workspace: Path
    outside: (
        Path  # on a path tier 1 leaves visible (read-only), so Landlock and the mounts both act
    )
    session: Session

    def run(self, argv: list[str], timeout_s: float = 30) -> tuple[process.Outcome, list[str]]:
        chunks: list[tuple[str, str]] = []
        proj = project(self.session, argv, None, False)
        assert proj.profile.tier == self.tier
        outcome, changed = asyncio.run(
            execute(self.session, proj, timeout_s, lambda s, t: chunks.append((s, t)))
        )
        return outcome, changed

    def sh(self, script: str) -> tuple[process.Outcome, list[str]]:
        return self.run(["sh", "-c", script])

    def py(self, code: str) -> process.Outcome:
        return self.run([PY, "-I", "-S", "-c", code])[0]

    def unconfined(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        """The positive control: the same command with no sandbox."""
        return subprocess.run(
            argv, cwd=self.workspace, capture_output=True, text=True, timeout=30, check=False
        )


def forced(tier: int) -> tiers.TierReport:
    return tiers.TierReport(tier, tiers.landlock_abi(), shutil.which("bwrap"), ["forced by test"])


def available_tiers() -> list[int]:
    best = tiers.current().tier
    return [t for t in (1, 2) if t >= best]


@pytest.fixture(params=available_tiers() or [0], ids=lambda t: f"tier{t}")
def box(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Box]:
    tier = request.param
    if tier == 0:
        pytest.skip("no sandbox tier is available on this machine")
    monkeypatch.setattr(tiers, "current", lambda refresh=False: forced(tier))
    monkeypatch.setenv("S_CODE_TOOL_CACHE_DIR", str(tmp_path / "caches"))
    workspace = tmp_path / "ws"
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n\tbare = false\n")
    outside = Path("/var/cache") / f"s-code-test-{uuid.uuid4().hex[:10]}"
    outside.mkdir()
    folders = Folders.open([(str(workspace), None)])
    session = Session(folders=folders, registry=default_registry(), mode="workspace")
    try:
        yield Box(tier, workspace, outside, session)
    finally:
        folders.close()
        shutil.rmtree(outside, ignore_errors=True)


def alive(marker: str) -> list[int]:
    """Processes whose command line holds ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and int(pid) != os.getpid():
            found.append(int(pid))
    return found


def lowered(monkeypatch: pytest.MonkeyPatch, **change: object) -> None:
    """Every command of the test gets the shipped limits with ``change`` applied."""
    from s_code.sandbox import limits

    original = limits.for_command

    def patched(workspace: str, cache_root: str) -> limits.Limits:
        base = original(workspace, cache_root)
        return limits.Limits(**{**base.__dict__, **change})  # type: ignore[arg-type]

    monkeypatch.setattr(limits, "for_command", patched)
