"""Starting a host process: the exec helper's host mode, a bounded redacted stderr log, reaping.

Every host process runs under the exec helper (``s-code-launch --host --reap``): the user's own
authority (no Landlock, no seccomp, privileges kept), but supervised as a child subreaper, so its
whole tree (setsid'ed grandchildren included) dies when it ends, when it is stopped, and when the
sidecar dies (the helper's parent-death signal). The helper's pid is also recorded in the state
database; the next sidecar kills what a helper that was itself killed left behind (its session).
What a host process writes to stderr passes the session's redactor before it is kept (the last
``LOG_BYTES`` characters) or logged.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import os
import signal
import threading
from collections import deque
from typing import IO

from s_code.redaction import Redactor, StreamRedactor
from s_code.sandbox.launcher import helper
from s_code.state.store import Store

log = logging.getLogger(__name__)
LOG_BYTES = 64 * 1024


def host_argv(argv: list[str], cwd: str) -> list[str]:
    """The argv that runs ``argv`` as a supervised host process."""
    return [str(helper()), "--host", "--reap", "--chdir", cwd, "--", *argv]


class StderrLog:
    """A pipe whose reading end is drained by a thread through the redactor into a bounded
    tail; ``writer`` is the end to give the process."""

    def __init__(self, redactor: Redactor, label: str) -> None:
        read_fd, write_fd = os.pipe()
        self.writer: IO[str] = os.fdopen(write_fd, "w")
        self._tail: deque[str] = deque()
        self._size = 0
        self._lock = threading.Lock()
        self.label = label
        self._thread = threading.Thread(
            target=self._drain, args=(read_fd, StreamRedactor(redactor)), daemon=True
        )
        self._thread.start()

    def _keep(self, text: str) -> None:
        if not text:
            return
        with self._lock:
            self._tail.append(text)
            self._size += len(text)
            while self._size > LOG_BYTES and len(self._tail) > 1:
                self._size -= len(self._tail.popleft())
        log.debug("%s stderr: %s", self.label, text.rstrip())

    def _drain(self, fd: int, redactor: StreamRedactor) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            while chunk := os.read(fd, 65536):
                self._keep(redactor.feed(decoder.decode(chunk)))
        except OSError:
            pass
        finally:
            os.close(fd)
            self._keep(redactor.feed(decoder.decode(b"", final=True)) + redactor.flush())

    def text(self) -> str:
        with self._lock:
            return "".join(self._tail)[-LOG_BYTES:]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.writer.close()


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()


def starttime(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[19]) if fields is not None and len(fields) > 19 else None


def _boot() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def record(store: Store | None, pid: int, label: str) -> None:
    """Remember a started helper, for :func:`reap_orphans` after a crash."""
    start = starttime(pid)
    if store is None or start is None:
        return
    store.execute(
        "INSERT OR REPLACE INTO host_pids (pid, starttime, boot, owner, label) "
        "VALUES (?, ?, ?, ?, ?)",
        (pid, start, _boot(), os.getpid(), label),
    )


def forget(store: Store | None, pid: int) -> None:
    if store is not None:
        store.execute("DELETE FROM host_pids WHERE pid = ? AND boot = ?", (pid, _boot()))


def _owner_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_session(sid: int, since: int) -> list[int]:
    """SIGKILL every process of session ``sid`` started at or after ``since`` (clock ticks since
    boot): what is left of a helper's tree when the helper itself could not end it."""
    killed: list[int] = []
    for other in os.listdir("/proc"):
        if not other.isdigit():
            continue
        fields = _stat_fields(int(other))
        if fields is None or len(fields) <= 19:
            continue
        if int(fields[3]) == sid and int(fields[19]) >= since:
            with contextlib.suppress(OSError):
                os.kill(int(other), signal.SIGKILL)
                killed.append(int(other))
    return killed


def reap_orphans(store: Store | None) -> list[int]:
    """Kill what host processes of dead sidecars left: every process still in the session of
    a recorded helper (started after it: a reused pid is not mistaken for it); the pids killed."""
    if store is None:
        return []
    boot = _boot()
    killed: list[int] = []
    for pid, start, row_boot, owner in store.execute(
        "SELECT pid, starttime, boot, owner FROM host_pids"
    ):
        if row_boot == boot and _owner_alive(int(owner)) and int(owner) != os.getpid():
            continue  # another live sidecar's process
        # the kernel never gives a pid to a new process while it is still a session's id: a
        # recorded helper whose pid now leads another process (another start time) left no one
        now = starttime(int(pid))
        if row_boot == boot and (now is None or now == int(start)):
            killed += kill_session(int(pid), int(start))
        store.execute(
            "DELETE FROM host_pids WHERE pid = ? AND starttime = ? AND boot = ?",
            (pid, start, row_boot),
        )
    return killed
