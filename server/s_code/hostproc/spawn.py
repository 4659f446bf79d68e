"""Starting a host process: the exec helper's host mode, and a bounded redacted stderr log.

Every host process runs under the exec helper (``s-code-launch --host --reap``): the user's own
authority (no Landlock, no seccomp, privileges kept), but supervised as a child subreaper, so its
whole tree (setsid'ed grandchildren included) dies when it ends, when it is stopped, and when the
sidecar dies (the helper's parent-death signal). The helper also records its tree
(:mod:`s_code.hostproc.trees`: its own cgroup, or the tree's pids), so the next sidecar kills what
a helper that was itself killed left behind. What a host process writes to stderr passes the
session's redactor before it is kept (the last ``LOG_BYTES`` characters) or logged.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import os
import threading
from collections import deque
from typing import IO

from s_code.hostproc import trees
from s_code.redaction import Redactor, StreamRedactor
from s_code.sandbox.launcher import helper

log = logging.getLogger(__name__)
LOG_BYTES = 64 * 1024


def host_argv(argv: list[str], cwd: str) -> list[str]:
    """The argv that runs ``argv`` as a supervised host process."""
    return [str(helper()), "--host", "--reap", *trees.helper_args(), "--chdir", cwd, "--", *argv]


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
