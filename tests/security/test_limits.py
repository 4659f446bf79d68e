"""S21: a fork bomb, a memory hog and a disk filler are stopped by limits, and the limits are
shown in the card; S22: attribute changes outside the workspace are prevented (tier 1) or, where
the tier cannot prevent them (tier 2), the card and ``s-code doctor`` say so.

Each limit is lowered for the test (the shipped ones are sized for real builds: 1,024
processes, half the memory, a tenth of the free disk kept) and the same command is also run with
that limit lifted: the positive control shows it would have gone past it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from tests.security.sandbox_support import PY, Box, alive, box, lowered

from s_code.approvals.render import document
from s_code.commands.projection import project

__all__ = ["box"]
MIB = 1 << 20


def test_s21_the_limits_are_in_the_card(box: Box) -> None:
    card = project(box.session, ["true"], None, False).card(box.session.redactor)
    text = document(card)
    for name in ("processes", "memory", "file size", "disk", "time"):
        assert f"Limit on {name}:" in text, name
    assert "4096 processes and threads at once" in text


def test_s21_a_fork_bomb_is_stopped(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    tag = f"{200 + (uuid.uuid4().int % 1000) / 1000:.3f}"
    bomb = f"i=0; while [ $i -lt 400 ]; do sleep {tag} & i=$((i+1)); done; wait"
    lowered(monkeypatch, processes=100)
    outcome, _ = box.sh(bomb)
    assert outcome.exit_code == 137
    assert "s-code-launch: stopped: more than 100 processes" in outcome.output
    assert alive(tag) == []  # every process of the tree is gone
    # positive control: with the limit lifted the same command goes past 100 processes
    lowered(monkeypatch, processes=10_000)
    counted: list[int] = []

    def count() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(counted) < 1:
            if len(alive(tag)) > 300:
                counted.append(len(alive(tag)))
            time.sleep(0.05)
        for pid in alive(tag):
            with contextlib.suppress(ProcessLookupError):  # gone since it was listed
                os.kill(pid, 9)

    import threading

    watcher = threading.Thread(target=count)
    watcher.start()
    box.run(["sh", "-c", bomb], timeout_s=30)
    watcher.join()
    assert counted and counted[0] > 300


def test_s21_a_memory_hog_is_stopped(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    hog = "import time; x = bytearray(400 * 1024 * 1024); time.sleep(2); print('survived')"
    lowered(monkeypatch, memory=150 * MIB)
    outcome = box.py(hog)
    assert outcome.exit_code == 137
    assert "stopped: more than 150 MiB of memory" in outcome.output
    assert "survived" not in outcome.output
    lowered(monkeypatch, memory=4096 * MIB)  # positive control
    assert "survived" in box.py(hog).output


def test_s21_a_huge_file_is_refused(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = "open('big.bin', 'wb').write(b'x' * (64 * 1024 * 1024)); print('wrote it all')"
    lowered(monkeypatch, file_size=8 * MIB)
    outcome = box.py(writer)
    assert "wrote it all" not in outcome.output
    assert (box.workspace / "big.bin").stat().st_size <= 8 * MIB
    lowered(monkeypatch, file_size=1 << 33)  # positive control
    assert "wrote it all" in box.py(writer).output


def _small_filesystem(where: Path) -> bool:
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


FILLER = (
    "import time\n"
    "with open('fill.bin', 'wb') as f:\n"
    "    try:\n"
    "        while True:\n"
    "            f.write(b'x' * (1 << 20)); f.flush(); time.sleep(0.01)\n"
    "    except OSError as exc:\n"
    "        print('disk full:', exc)\n"
)


def test_s21_a_disk_filler_is_stopped_before_the_disk_is_full(
    box: Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.geteuid() != 0 or not _small_filesystem(tmp_path / "small"):
        pytest.skip("a small file system to fill needs root and a tmpfs mount")
    small = tmp_path / "small"
    try:
        lowered(monkeypatch, disks=(str(small),))
        start_free = os.statvfs(small).f_bavail * os.statvfs(small).f_frsize
        script = f'cd {small} && exec {sys.executable} -I -S -c "$1"'
        # the small file system stands in for the workspace's: writable, and watched
        outcome = _run_writable(box, small, ["sh", "-c", script, "sh", FILLER])
        assert outcome.exit_code == 137, outcome.output
        assert "disk of" in outcome.output and "nearly full" in outcome.output
        left = os.statvfs(small).f_bavail * os.statvfs(small).f_frsize
        assert left > 0  # stopped before the disk was full
        assert "disk full" not in outcome.output
        os.unlink(small / "fill.bin")
        lowered(monkeypatch, disks=())  # positive control: unwatched, it fills the disk
        outcome = _run_writable(box, small, ["sh", "-c", script, "sh", FILLER])
        assert "disk full" in outcome.output
        assert start_free > 0
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


def _run_writable(box: Box, extra: Path, argv: list[str]) -> object:
    """Run with one more writable directory (the small file system)."""
    import asyncio
    from dataclasses import replace

    from s_code.commands.run import execute

    proj = project(box.session, argv, None, False)
    profile = replace(proj.profile, writable=(*proj.profile.writable, str(extra)))
    proj = replace(proj, profile=profile)
    outcome, _ = asyncio.run(execute(box.session, proj, 60, lambda s, t: None))
    return outcome


def test_s22_attributes_outside_the_workspace(box: Box) -> None:
    victim = box.outside / "private-key"
    victim.write_text("secret\n")
    victim.chmod(0o600)
    os.utime(victim, (1_000_000, 1_000_000))
    script = f"chmod 644 {victim}; touch {victim}; exit 0"
    card = project(box.session, ["sh", "-c", script], None, False).card(box.session.redactor)
    text = document(card)
    box.sh(script)
    mode, mtime = victim.stat().st_mode & 0o777, victim.stat().st_mtime
    if box.tier == 1:
        assert (mode, mtime) == (0o600, 1_000_000)  # prevented: read-only outside
        assert "Not prevented in this tier" not in text
    else:
        assert "Not prevented in this tier: changing the permissions, owner or times" in text
    victim.chmod(0o600)
    box.unconfined(["sh", "-c", script])  # positive control: unconfined it works
    assert victim.stat().st_mode & 0o777 == 0o644


def test_s22_doctor_says_what_tier_2_cannot_prevent(tmp_path: Path) -> None:
    env = dict(os.environ, S_CODE_SANDBOX_DISABLE="bwrap")
    done = subprocess.run(
        [PY, "-m", "s_code", "doctor"], env=env, capture_output=True, text=True, timeout=120
    )
    out = done.stdout + done.stderr
    assert "tier 2" in out
    assert "not prevented" in out.lower() and "permissions, owner or times" in out
