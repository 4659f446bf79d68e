"""Worker processes: started, handed out once, killed with their process group.

A worker is ``python -I -S worker.py <dir of _quickjs>``: isolated mode, no site packages, an
empty environment (no secret of the sidecar's), ``/`` as its directory, in a session and process
group of its own. It is started with ``subprocess.Popen`` on a worker thread (asyncio's child
watcher lost exit codes on this Python; see ``workspace/search.py``) and its pipes are then read
and written by the event loop, so a run never blocks the server.

Starting Python and QuickJS costs about 20 ms; the pool keeps one started spare per session, made
after each run, so the next run only hands its job to a waiting process. A spare that waits longer
than the worker's idle limit exits by itself, and is not handed out when close to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

from s_code.codemode import worker as worker_module

WORKER = os.path.abspath(worker_module.__file__)
SPARE_MAX_AGE_S = worker_module.IDLE_S - 30


def _quickjs_dir() -> str:
    spec = importlib.util.find_spec("_quickjs")
    if spec is None or spec.origin is None:
        raise RuntimeError("the quickjs package is not installed")
    return os.path.dirname(spec.origin)


@dataclass(eq=False)
class Worker:
    proc: subprocess.Popen[bytes]
    started: float = field(default_factory=time.monotonic)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def usable(self) -> bool:
        return self.proc.poll() is None and time.monotonic() - self.started < SPARE_MAX_AGE_S

    def kill(self) -> None:
        """SIGKILL to its process group (it made none other), then to itself."""
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(self.proc.pid, signal.SIGKILL)

    def end_soon(self, *, finished: bool = False) -> None:
        """Ended, and reaped on a worker thread so the reply does not wait for it. One still
        running is killed now; one that ``finished`` (sent its outcome, and waits on its stdin
        to be killed) is killed on that thread too: a process woken to die can hold the CPU of
        the thread that signalled it until it is gone."""
        if not finished:
            self.kill()
        task = asyncio.get_running_loop().create_task(self.end())
        _REAPING.add(task)
        task.add_done_callback(_REAPING.discard)

    async def end(self) -> int | None:
        """Killed and reaped; its exit status (negative: the signal)."""
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None and not pipe.closed:
                with contextlib.suppress(OSError):
                    pipe.close()
        return await asyncio.to_thread(self._kill_and_wait)

    def _kill_and_wait(self) -> int:
        self.kill()
        return self.proc.wait()


_REAPING: set[asyncio.Task[int | None]] = set()


def spawn() -> Worker:
    """Start a worker (blocking for the fork: call it on a thread)."""
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-B", WORKER, _quickjs_dir()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={"LC_ALL": "C.UTF-8"},
        cwd="/",
        close_fds=True,
        start_new_session=True,
    )
    return Worker(proc)


class Pool:
    """One warm spare worker, started in the background once a run has ended (so its start
    does not compete with the run for the CPU)."""

    REFILL_DELAY_S = 0.005
    """After the run's reply is sent."""

    MAX_RUNNING = 4
    """Runs at once per session; more wait for a slot (within their own deadline)."""

    def __init__(self, *, warm: bool = True) -> None:
        self.warm = warm
        self.slots = asyncio.Semaphore(self.MAX_RUNNING)
        self._spare: Worker | None = None
        self._making: asyncio.Task[Worker] | None = None
        self._later: asyncio.TimerHandle | None = None
        self._closed = False

    async def take(self) -> Worker:
        """A fresh worker for one run: the spare when there is a usable one."""
        if self._closed:
            raise RuntimeError("the code-mode pool is closed")
        if self._later is not None:
            self._later.cancel()
            self._later = None
        making, self._making = self._making, None
        if making is not None:
            self._spare = await _kept(making)
        found, self._spare = self._spare, None
        if found is not None and not found.usable():
            await found.end()
            found = None
        if found is None:
            found = await _kept(asyncio.get_running_loop().create_task(asyncio.to_thread(spawn)))
        return found

    def ended(self) -> None:
        """A run ended: start the next spare shortly."""
        if self.warm and not self._closed and self._later is None and self._making is None:
            loop = asyncio.get_running_loop()
            self._later = loop.call_later(self.REFILL_DELAY_S, self._refill)

    def _refill(self) -> None:
        self._later = None
        if not self._closed and self._making is None and self._spare is None:
            self._making = asyncio.get_running_loop().create_task(asyncio.to_thread(spawn))

    def close(self) -> None:
        """Kill the spare (the session is closing)."""
        self._closed = True
        if self._later is not None:
            self._later.cancel()
            self._later = None
        if self._spare is not None:
            self._spare.kill()
            self._spare.proc.wait()
            self._spare = None
        making, self._making = self._making, None
        if making is not None:
            if making.done():
                _kill_made(making)
            else:
                making.add_done_callback(_kill_made)


async def _kept(making: asyncio.Task[Worker]) -> Worker:
    """The worker ``making`` starts; killed once started if the run is cancelled meanwhile
    (the thread cannot be stopped, and the process would wait for a job that never comes)."""
    try:
        return await asyncio.shield(making)
    except asyncio.CancelledError:
        making.add_done_callback(_kill_made)
        raise


def _kill_made(task: asyncio.Task[Worker]) -> None:
    if not task.cancelled() and task.exception() is None:
        made = task.result()
        made.kill()
        made.proc.wait()
