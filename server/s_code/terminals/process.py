"""One background terminal: a supervised host process, its output redacted into a buffer.

The process runs under the exec helper in host mode (``s-code-launch --host --reap``), in a
session of its own: on a pseudo-terminal (``ptyprocess``) when ``tty`` is asked for, on pipes
(stdout and stderr merged) otherwise. A reader thread — never the event loop — reads what it
prints, decodes it, passes it through a stream redactor (a secret split across reads is still
caught; when the output pauses, what cannot be the start of a secret is let out, so a prompt
shows) and appends it to a head-and-tail buffer, then hands each piece to ``emit`` (which the
session turns into ``s-code/terminalOutput``). :meth:`Terminal.kill` asks the helper to end the
whole tree (grandchildren that called ``setsid`` or ignore SIGTERM included) and returns only when
the helper has exited, which it does only once no process of the tree is left.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from s_code.approvals.caller import Caller
from s_code.hostproc import trees
from s_code.hostproc.spawn import host_argv
from s_code.redaction import Redactor, StreamRedactor
from s_code.terminals.buffer import HeadTail

IDLE_S = 0.05  # output paused this long: let out what cannot be the start of a secret
READ_BYTES = 1 << 20
IN_FLIGHT_BYTES = 8 << 20
PIPE_BYTES = 1 << 20
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
# On a pty the helper is the session leader, and the command runs in a process group of its own:
# make that group the terminal's foreground group, or reading the terminal stops it (SIGTTIN).
_FOREGROUND = (
    "import os,signal,sys;signal.signal(signal.SIGTTOU,signal.SIG_IGN);"
    "os.tcsetpgrp(0,os.getpgrp());signal.signal(signal.SIGTTOU,signal.SIG_DFL);"
    "os.execv(sys.argv[1],sys.argv[1:])"
)


@dataclass
class Exit:
    code: int | None
    signal: str | None

    def to_wire(self) -> dict[str, Any]:
        return {"code": self.code, "signal": self.signal}


def _exit_of(status: int | None) -> Exit:
    """The helper's status: the command's exit code, or ``128 + signal`` when it was killed."""
    if status is None:
        return Exit(None, None)
    if status < 0:
        return Exit(None, signal.Signals(-status).name)
    if 128 < status <= 128 + 64:
        with contextlib.suppress(ValueError):
            return Exit(None, signal.Signals(status - 128).name)
    return Exit(status, None)


@dataclass
class Terminal:
    id: str
    argv: tuple[str, ...]  # as the user approved it (handles, not values)
    cwd: str
    tty: bool
    redactor: Redactor
    emit: Callable[[Terminal, str], None]  # called on the reader thread
    on_exit: Callable[[Terminal], None]  # called on the reader thread
    started_at: float = field(default_factory=time.time)
    owner: Caller | None = None
    """The attached agent that started it (None: the editor's own agent): only it sees it."""
    buffer: HeadTail = field(default_factory=HeadTail)
    pid: int = 0  # the helper's
    exit: Exit | None = None
    killed: bool = False
    _write_fd: int = -1
    _read_fd: int = -1
    _proc: Any = None
    _done: threading.Event = field(default_factory=threading.Event)
    _write_lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0  # characters emitted and not yet sent (see Terminals._emit)
    _drained: threading.Event = field(default_factory=threading.Event)

    _flight_lock: threading.Lock = field(default_factory=threading.Lock)

    def emitted(self, size: int) -> None:
        """``size`` characters of output were handed to the event loop to send."""
        with self._flight_lock:
            self.in_flight += size

    def sent(self, size: int) -> None:
        """The event loop sent ``size`` characters of this terminal's output."""
        with self._flight_lock:
            self.in_flight -= size
        self._drained.set()

    @property
    def state(self) -> str:
        if self.exit is None:
            return "running"
        return "killed" if self.killed else "exited"

    def spawn(self, argv: list[str], env: dict[str, str], rows: int = 24, cols: int = 120) -> None:
        """Start the process (blocking for the fork: call on a worker thread)."""
        if self.tty:
            from ptyprocess import PtyProcess  # type: ignore[import-untyped]

            wrapped = [sys.executable, "-I", "-S", "-c", _FOREGROUND, *argv]
            proc = PtyProcess.spawn(
                host_argv(wrapped, self.cwd), cwd=self.cwd, env=env, dimensions=(rows, cols)
            )
            self._read_fd = self._write_fd = proc.fd
        else:
            proc = subprocess.Popen(
                host_argv(argv, self.cwd),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.cwd,
                start_new_session=True,
                bufsize=0,
            )
            assert proc.stdout is not None and proc.stdin is not None
            self._read_fd, self._write_fd = proc.stdout.fileno(), proc.stdin.fileno()
            with contextlib.suppress(OSError):  # bigger reads: fewer passes of the redactor
                fcntl.fcntl(self._read_fd, F_SETPIPE_SZ, PIPE_BYTES)
        os.set_blocking(self._write_fd, False)
        self._proc = proc
        self.pid = int(proc.pid)
        threading.Thread(target=self._pump, name=f"terminal-{self.id}", daemon=True).start()

    # -- the reader thread --------------------------------------------------------------------

    def _out(self, text: str) -> None:
        if text:
            self.buffer.append(text.encode("utf-8", "surrogatepass"))
            self.emit(self, text)
            # backpressure: while the event loop has not sent what was emitted, stop reading
            # (the program then blocks on its own writes); never more than ~8 MB in flight
            while self.in_flight > IN_FLIGHT_BYTES and not self.killed:
                self._drained.wait(0.05)
                self._drained.clear()

    def _pump(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        redact = StreamRedactor(self.redactor)
        fd = self._read_fd
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], IDLE_S)
                if not ready:
                    self._out(redact.flush_idle())
                    continue
                try:
                    chunk = os.read(fd, READ_BYTES)
                except BlockingIOError:
                    continue
                except OSError:  # EIO: the pty's other side is gone
                    break
                if not chunk:
                    break
                self._out(redact.feed(decoder.decode(chunk)))
        finally:
            with contextlib.suppress(Exception):  # the session is closing: nothing to send to
                self._out(redact.feed(decoder.decode(b"", final=True)) + redact.flush())
            self.exit = _exit_of(self._wait())
            self._close()
            self._done.set()
            self.on_exit(self)

    def _wait(self) -> int | None:
        proc = self._proc
        if self.tty:
            with contextlib.suppress(Exception):
                proc.wait()
            if proc.signalstatus is not None:
                return -int(proc.signalstatus)
            return int(proc.exitstatus) if proc.exitstatus is not None else None
        return int(proc.wait())

    def _close(self) -> None:
        with self._write_lock:
            if self.tty:
                with contextlib.suppress(Exception):
                    self._proc.close(force=True)
            else:
                for stream in (self._proc.stdin, self._proc.stdout):
                    with contextlib.suppress(OSError):
                        stream.close()
            self._write_fd = -1

    # -- what tool calls do (on worker threads) ----------------------------------------------

    def write(self, data: bytes, deadline_s: float = 5.0) -> int:
        """Write all of ``data`` to the terminal's input within ``deadline_s``; bytes written."""
        written = 0
        until = time.monotonic() + deadline_s
        with self._write_lock:
            fd = self._write_fd
            if fd < 0:
                return 0
            while written < len(data):
                left = until - time.monotonic()
                if left <= 0:
                    break
                _, ready, _ = select.select([], [fd], [], min(left, 0.5))
                if not ready:
                    continue
                try:
                    written += os.write(fd, data[written : written + 65536])
                except BlockingIOError:
                    continue
                except OSError:
                    break
        return written

    def wait(self, timeout_s: float) -> bool:
        """Block until the process has ended and its output was read; whether it has."""
        return self._done.wait(timeout_s)

    def kill(self, timeout_s: float = 15.0) -> bool:
        """End the whole process tree; True once the helper — the last of it — is gone."""
        if self._done.is_set():
            return True
        self.killed = True
        since = trees.starttime(self.pid)
        for sig in (signal.SIGTERM, signal.SIGCONT):  # the helper kills and reaps its whole tree
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)  # (SIGCONT: a helper its command stopped still hears it)
        if self._done.wait(timeout_s):
            return True
        # the helper did not: kill it, and what is left of its tree (its cgroup or the pids it
        # recorded, its session)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        if since is not None:
            trees.reap_helper(self.pid, since)
        return self._done.wait(5.0)
