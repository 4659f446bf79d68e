"""The session's one lock between commands and git: commands exclusive, git calls shared.

A sandboxed command may write anything in the workspace, git's configuration included (tier 2
puts it back after the run); a git call that overlaps it could read a filter or a hook the
command planted for a moment. So a git call waits until no command runs, and a command waits
until every git call ended; git calls among themselves, and reads, never wait. With a lock file
(one per workspace, in the user's state directory, where no sandboxed command can reach), the
same holds between sidecars: two editors on one workspace never overlap a command and a git call.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator

_POLL_S = 0.02


class CommandGitLock:
    """A readers-writer lock on the event loop: ``git()`` shared, ``command()`` exclusive,
    first come first served (a waiting command holds off new git calls, so it is not starved)."""

    def __init__(self, lock_file: str | None = None) -> None:
        self._file = lock_file
        self._fd: int | None = None
        self._cond: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

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

    async def _flock(self, mode: int) -> None:
        """Take the cross-process lock (``LOCK_SH`` or ``LOCK_EX``), waiting without blocking
        the loop; a cancel while waiting takes nothing."""
        if self._file is None:
            return
        if self._fd is None:
            os.makedirs(os.path.dirname(self._file), mode=0o700, exist_ok=True)
            flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            self._fd = os.open(self._file, flags, 0o600)
        while True:
            try:
                fcntl.flock(self._fd, mode | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                await asyncio.sleep(_POLL_S)

    def _unflock(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    @contextlib.asynccontextmanager
    async def git(self) -> AsyncIterator[None]:
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: not self._writer and not self._writers_waiting)
            if self._readers == 0:  # the first reader takes the shared lock for all of them,
                await self._flock(fcntl.LOCK_SH)  # holding cond: the others wait until it is
            self._readers += 1
        try:
            yield
        finally:
            async with cond:
                self._readers -= 1
                if self._readers == 0:
                    self._unflock()
                cond.notify_all()

    @contextlib.asynccontextmanager
    async def command(self) -> AsyncIterator[None]:
        cond = self._condition()
        async with cond:
            self._writers_waiting += 1
            try:
                await cond.wait_for(lambda: not self._writer and not self._readers)
            finally:
                self._writers_waiting -= 1
                cond.notify_all()  # a cancelled wait must not hold off the git calls
            self._writer = True
        try:
            await self._flock(fcntl.LOCK_EX)
            yield
        finally:
            async with cond:
                self._unflock()
                self._writer = False
                cond.notify_all()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
