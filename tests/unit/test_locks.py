"""The command/git lock: git calls share it, a command has it alone, in one sidecar and across
sidecars (a lock file), and a cancelled wait takes nothing."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from s_code.session.locks import CommandGitLock


async def _events(lock: CommandGitLock, log: list[str], name: str, kind: str) -> None:
    ctx = lock.command() if kind == "command" else lock.git()
    async with ctx:
        log.append(f"{name} in")
        await asyncio.sleep(0.05)
        log.append(f"{name} out")


async def test_git_calls_share_and_a_command_is_alone(tmp_path: Path) -> None:
    lock = CommandGitLock(str(tmp_path / "l.lock"))
    log: list[str] = []
    await asyncio.gather(
        _events(lock, log, "g1", "git"),
        _events(lock, log, "g2", "git"),
        _events(lock, log, "c", "command"),
        _events(lock, log, "g3", "git"),
    )
    assert log[:2] == ["g1 in", "g2 in"]  # shared
    c = log.index("c in")
    assert log[c + 1] == "c out"  # alone
    assert log.index("g3 in") > c  # a waiting command holds off later git calls


async def test_two_sidecars_never_overlap_a_command_and_a_git_call(tmp_path: Path) -> None:
    path = str(tmp_path / "ws.lock")
    first, second = CommandGitLock(path), CommandGitLock(path)
    log: list[str] = []

    async def git_soon() -> None:
        await asyncio.sleep(0.01)
        await _events(second, log, "other sidecar's git", "git")

    await asyncio.gather(_events(first, log, "command", "command"), git_soon())
    assert log == ["command in", "command out", "other sidecar's git in", "other sidecar's git out"]
    # positive control: without the lock file the two sidecars do overlap
    a, b = CommandGitLock(), CommandGitLock()
    log.clear()

    async def git_soon_unlocked() -> None:
        await asyncio.sleep(0.01)
        await _events(b, log, "g", "git")

    await asyncio.gather(_events(a, log, "c", "command"), git_soon_unlocked())
    assert log.index("g in") < log.index("c out")


async def test_a_cancelled_wait_takes_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "ws.lock")
    holder, waiter = CommandGitLock(path), CommandGitLock(path)
    async with holder.command():
        task = asyncio.ensure_future(_events(waiter, [], "w", "git"))
        await asyncio.sleep(0.05)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    async with waiter.command():  # neither in-process state nor the file lock is left held
        pass
    async with holder.git():
        pass
