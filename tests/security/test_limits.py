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
from s_code.commands.run import preview
from s_code.sandbox import limits

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


FILLER = (  # a file of 8 MiB after another: no file reaches the bound on one file's size
    "import itertools, time\n"
    "try:\n"
    "    for n in itertools.count():\n"
    "        with open(f'fill-{n}.bin', 'wb') as f:\n"
    "            for _ in range(8):\n"
    "                f.write(b'x' * (1 << 20)); f.flush(); time.sleep(0.01)\n"
    "except OSError as exc:\n"
    "    print('disk full:', exc)\n"
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
        for written in small.glob("fill-*.bin"):
            written.unlink()
        lowered(monkeypatch, disks=())  # positive control: unwatched, it fills the disk
        outcome = _run_writable(box, small, ["sh", "-c", script, "sh", FILLER])
        assert "disk full" in outcome.output
        assert start_free > 0
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


# One write(2) of more than the disk has free: no look of the guard can come in between, so only
# a bound the kernel enforces can stop it short of a full disk.
ONE_WRITE = (
    "import os, resource\n"
    "v = os.statvfs('.')\n"
    "print('limit', resource.getrlimit(resource.RLIMIT_FSIZE)[0], flush=True)\n"
    "fd = os.open('fill.bin', os.O_WRONLY | os.O_CREAT)\n"
    "try:\n"
    "    print('wrote', os.write(fd, b'x' * (v.f_bavail * v.f_frsize + (16 << 20))), flush=True)\n"
    "    os.write(fd, b'x' * (1 << 20))\n"
    "except OSError as exc:\n"
    "    print('refused:', exc.strerror, flush=True)\n"
)


def test_s21_one_fast_writer_cannot_fill_a_small_disk(
    box: Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 10 of issue 29: the disk guard looks every few milliseconds, and a writer at
    gigabytes a second fills a small disk in between. RLIMIT_FSIZE is a hard bound: no file may
    be larger than the space above the floor the guard keeps."""
    if os.geteuid() != 0 or not _small_filesystem(tmp_path / "small"):
        pytest.skip("a small file system to fill needs root and a tmpfs mount")
    small = tmp_path / "small"
    try:
        lowered(monkeypatch, disks=(str(small),))
        free = os.statvfs(small).f_bavail * os.statvfs(small).f_frsize
        bound = limits.file_bound(str(small))
        assert bound < free - free // 10  # what the card shows for this disk
        script = f'cd {small} && exec {sys.executable} -I -S -c "$1"'
        outcome = _run_writable(box, small, ["sh", "-c", script, "sh", ONE_WRITE])
        output = outcome.output
        assert f"limit {bound}\n" in output, output  # the helper's bound is the card's
        assert f"wrote {bound}\n" in output and "refused: File too large" in output
        assert (small / "fill.bin").stat().st_size == bound
        left = os.statvfs(small).f_bavail * os.statvfs(small).f_frsize
        assert left >= free // 10  # the floor was never passed
        os.unlink(small / "fill.bin")
        # positive control: without the bound the same single write fills the disk
        lowered(monkeypatch, disks=())
        outcome = _run_writable(box, small, ["sh", "-c", script, "sh", ONE_WRITE])
        assert "refused: No space left on device" in outcome.output
        assert os.statvfs(small).f_bavail == 0
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


def test_s21_the_card_says_a_fast_writer_can_fill_the_disk(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the number is the workspace disk's bound, 8 GiB at most
    shipped = limits.for_command(str(box.workspace), str(box.workspace)).file_size
    assert shipped == min(limits.MAX_FILE_SIZE, limits.file_bound(str(box.workspace)))
    lowered(monkeypatch, file_size=96 * MIB)  # as on a disk with about 108 MiB free
    text = document(project(box.session, ["true"], None, False).card(box.session.redactor))
    assert "a fast writer of several files can fill the disk before the guard stops it" in text
    assert "each file at most 96 MiB" in text and "Limit on file size: 96 MiB per file" in text
    shown = preview(box.session, ["true"], None, False)["sandbox"]  # s-code/sandbox/preview
    assert "can fill the disk before the guard stops it" in shown["limits"]["disk"]


SHM_WRITE = (
    "import os\n"
    "try:\n"
    "    with open('/dev/shm/s-code-test-{tag}', 'wb') as f:\n"
    "        f.write(b'x' * (16 << 20))\n"
    "    print('wrote 16 MiB')\n"
    "except OSError as exc:\n"
    "    print('refused:', exc.strerror)\n"
    "finally:\n"
    "    if os.path.exists('/dev/shm/s-code-test-{tag}'):\n"
    "        os.unlink('/dev/shm/s-code-test-{tag}')\n"
)


def test_s21_in_memory_folders_are_bounded(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tier 1's /dev/shm is a tmpfs of the card's size: a write past it fails (no space), not
    just the memory guard later. Tier 2 has no private tmpfs: /dev/shm is not writable at all."""
    code = SHM_WRITE.replace("{tag}", uuid.uuid4().hex[:8])
    lowered(monkeypatch, tmpfs=8 * MIB)
    outcome = box.py(code)
    if box.tier == 1:
        assert "refused: No space left on device" in outcome.output, outcome.output
        lowered(monkeypatch, tmpfs=64 * MIB)  # positive control: room enough, it is written
        assert "wrote 16 MiB" in box.py(code).output
    else:
        assert "refused: Permission denied" in outcome.output, outcome.output
        # positive control: unconfined, the same write goes into the real /dev/shm
        assert "wrote 16 MiB" in box.unconfined([PY, "-I", "-S", "-c", code]).stdout


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
