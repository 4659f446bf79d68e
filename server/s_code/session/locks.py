"""The session's one lock between commands and git: commands exclusive, git calls shared.

A sandboxed command may write anything in the workspace, git's configuration included (tier 2
puts it back after the run); a git call that overlaps it could read a filter or a hook the
command planted for a moment. So a git call waits until no command runs, and a command waits
until every git call ended; git calls among themselves, and reads, never wait.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class CommandGitLock:
    """A readers-writer lock on the event loop: ``git()`` shared, ``command()`` exclusive,
    first come first served (a waiting command holds off new git calls, so it is not starved)."""

    def __init__(self) -> None:
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

    @contextlib.asynccontextmanager
    async def git(self) -> AsyncIterator[None]:
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
            yield
        finally:
            async with cond:
                self._writer = False
                cond.notify_all()
