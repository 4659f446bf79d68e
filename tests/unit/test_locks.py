"""The command/git lock: git calls share it, a command has it alone, in one sidecar and across
sidecars (lock files on every ancestor of a git directory), and a cancelled wait takes nothing."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from s_code.session.locks import CommandGitLock


async def _events(
    lock: CommandGitLock, log: list[str], name: str, kind: str, where: str | None = None
) -> None:
    if kind == "command":
        ctx = lock.command(where)
    elif where is not None:
        ctx = lock.git_dirs(where)
    else:
        ctx = lock.git()
    async with ctx:
        log.append(f"{name} in")
        await asyncio.sleep(0.05)
        log.append(f"{name} out")


async def test_git_calls_share_and_a_command_is_alone(tmp_path: Path) -> None:
    lock = CommandGitLock(str(tmp_path / "locks"))
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


async def test_another_sidecars_git_call_inside_the_commands_workspace_waits(
    tmp_path: Path,
) -> None:
    locks = str(tmp_path / "locks")
    workspace = tmp_path / "ws"
    git_dir = workspace / "sub" / "repo" / ".git"
    git_dir.mkdir(parents=True)
    first, second = CommandGitLock(locks), CommandGitLock(locks)
    log: list[str] = []

    async def git_soon(where: Path, name: str) -> None:
        await asyncio.sleep(0.01)
        await _events(second, log, name, "git", str(where))

    # the other sidecar opened a folder deep inside the workspace: its git dir is still covered
    await asyncio.gather(
        _events(first, log, "command", "command", str(workspace)), git_soon(git_dir, "inside")
    )
    assert log == ["command in", "command out", "inside in", "inside out"]
    # a repository outside the command's workspace does not wait
    elsewhere = tmp_path / "other" / ".git"
    elsewhere.mkdir(parents=True)
    log.clear()
    await asyncio.gather(
        _events(first, log, "command", "command", str(workspace)), git_soon(elsewhere, "outside")
    )
    assert log.index("outside in") < log.index("command out")
    # positive control: without lock files the two sidecars overlap inside the workspace too
    a, b = CommandGitLock(), CommandGitLock()
    log.clear()

    async def unlocked_git() -> None:
        await asyncio.sleep(0.01)
        await _events(b, log, "g", "git", str(git_dir))

    await asyncio.gather(_events(a, log, "c", "command", str(workspace)), unlocked_git())
    assert log.index("g in") < log.index("c out")


async def test_a_cancelled_wait_takes_nothing(tmp_path: Path) -> None:
    locks = str(tmp_path / "locks")
    workspace = str(tmp_path)
    holder, waiter = CommandGitLock(locks), CommandGitLock(locks)
    async with holder.command(workspace):
        task = asyncio.ensure_future(_events(waiter, [], "w", "git", workspace))
        await asyncio.sleep(0.05)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    async with waiter.command(workspace):  # neither in-process state nor a file lock is held
        pass
    async with holder.git_dirs(workspace):
        pass
