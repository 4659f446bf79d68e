"""The lock between commands and git: commands exclusive, git calls shared.

A sandboxed command may write anything in the workspace, git's configuration included (tier 2
puts it back after the run); a git call that overlaps it could read a filter or a hook the
command planted for a moment. So a git call waits until no command runs, and a command waits
until every git call ended; git calls among themselves, and reads, never wait.

Within a session one readers-writer lock does it. Between sessions (two editors, the CLI) the lock
is a file per directory, named after its real path, in the user's state directory (where no
sandboxed command can reach it): a command holds its workspace's file exclusively; a git call
holds shared the file of every directory from its git directories up to ``/``. A git call whose
git directory lies inside a running command's workspace (the only place the command can write)
so meets that command's file on its way up and waits, whatever folder each session opened; a
command elsewhere does not hold it up. Files are taken in one order: no deadlock.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import AsyncIterator, Iterable

_POLL_S = 0.02


def lock_name(key: str) -> str:
    digest = hashlib.sha256(os.path.realpath(key).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:32] + ".lock"


class CommandGitLock:
    """``git(key)`` shared, ``command(keys)`` exclusive; first come first served in a session
    (a waiting command holds off new git calls, so it is not starved)."""

    def __init__(self, lock_dir: str | None = None) -> None:
        self._dir = lock_dir
        self._cond: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0
        self.ended = 0
        """Commands that may have written a workspace since the session began: this session's
        that ended, and another session's that a wait here met (:meth:`host_code`)."""

    def _condition(self) -> asyncio.Condition:
        loop = asyncio.get_running_loop()
        if self._cond is None or (self._loop is not loop and self._idle):
            self._cond, self._loop = asyncio.Condition(), loop  # bound to the loop using it
        return self._cond

    @property
    def _idle(self) -> bool:
        return not (self._writer or self._readers or self._writers_waiting)

    @property
    def command_running(self) -> bool:
        return self._writer

    async def _flock(self, keys: Iterable[str], mode: int) -> list[int]:
        """The files of ``keys`` locked (``LOCK_SH`` or ``LOCK_EX``), in sorted order, waiting
        without blocking the loop; on a cancel nothing stays locked. A wait (another session's
        command held one) counts in :attr:`ended`."""
        if self._dir is None:
            return []
        os.makedirs(self._dir, mode=0o700, exist_ok=True)
        held: list[int] = []
        waited = False
        try:
            for name in sorted({lock_name(k) for k in keys}):  # one order for every caller
                flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                fd = os.open(os.path.join(self._dir, name), flags, 0o600)
                held.append(fd)
                while True:
                    try:
                        fcntl.flock(fd, mode | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        waited = True
                        await asyncio.sleep(_POLL_S)
        except BaseException:
            _release(held)
            raise
        if waited:
            self.ended += 1
        return held

    @contextlib.asynccontextmanager
    async def git(self) -> AsyncIterator[None]:
        """A git call, within this session (see :meth:`git_dirs` for the others)."""
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: not self._writer and not self._writers_waiting)
            self._readers += 1
        try:
            yield
        finally:
            async with cond:
                self._readers -= 1
                cond.notify_all()

    @contextlib.asynccontextmanager
    async def git_dirs(self, *git_dirs: str) -> AsyncIterator[None]:
        """Between sessions: no command whose workspace holds one of ``git_dirs`` runs."""
        held = await self._flock(_ancestors(git_dirs), fcntl.LOCK_SH)
        try:
            yield
        finally:
            _release(held)

    @contextlib.asynccontextmanager
    async def host_code(self, folders: Iterable[str]) -> AsyncIterator[None]:
        """A host process whose code lies in ``folders`` checks and runs: no command of this
        session, nor of another whose workspace holds one of them, runs meanwhile (a command
        could change the code between the check and the read)."""
        async with self.git():
            held = await self._flock(_ancestors(folders), fcntl.LOCK_SH) if folders else []
            try:
                yield
            finally:
                _release(held)

    @contextlib.asynccontextmanager
    async def command(self, workspace: str | None = None) -> AsyncIterator[None]:
        """A command that can write ``workspace``."""
        cond = self._condition()
        async with cond:
            self._writers_waiting += 1
            try:
                await cond.wait_for(lambda: not self._writer and not self._readers)
            finally:
                self._writers_waiting -= 1
                cond.notify_all()  # a cancelled wait must not hold off the git calls
            self._writer = True
        held: list[int] = []
        try:
            held = await self._flock([workspace] if workspace else [], fcntl.LOCK_EX)
            yield
        finally:
            if workspace and self._dir is not None:  # for every session: a command ended here
                _touch(os.path.join(self._dir, lock_name(workspace) + ".ended"))
            _release(held)
            async with cond:
                self._writer = False
                self.ended += 1
                cond.notify_all()

    def ended_stamp(self, folders: Iterable[str]) -> tuple[object, ...]:
        """What changes when a command that could write one of ``folders`` ended, in any
        session: this session's count, and the time the last command of each workspace that
        holds one of them ended (a file per workspace, beside its lock)."""
        stamps: list[object] = [self.ended]
        if self._dir is not None:
            for key in sorted(_ancestors(folders)):
                try:
                    stamps.append(
                        os.stat(os.path.join(self._dir, lock_name(key) + ".ended")).st_mtime_ns
                    )
                except OSError:
                    stamps.append(None)
        return tuple(stamps)

    def close(self) -> None:
        return None


def _ancestors(paths: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for path in paths:
        current = os.path.realpath(path)
        while current not in found:
            found.add(current)
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    return found


def _touch(path: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        os.utime(fd, ns=(time.time_ns(), time.time_ns()))
    except OSError:
        pass
    finally:
        os.close(fd)


def _release(held: list[int]) -> None:
    for fd in held:
        with contextlib.suppress(OSError):
            os.close(fd)  # closing the file releases its lock
