"""Running one command: spawn, stream, keep head and tail, time out, cancel, kill the tree, reap.

Subprocesses run with ``Popen`` and reader threads (asyncio's thread-based child watcher lost exit
statuses on Python 3.11 here). The command starts in a new session. Killing it: the exec helper
(tiers 2 and 3) supervises as a child subreaper and kills every descendant on SIGTERM; in tier 1
bubblewrap's PID namespace dies with it. Either way the session's process group is then SIGKILLed
and the process reaped, so nothing outlives the command.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from s_code.redaction import Redactor, StreamRedactor

OnOutput = Callable[[str, str], None]
HEAD_CHARS = 12_000
TAIL_CHARS = 12_000
_KILL_GRACE_S = 2.0


@dataclass
class Outcome:
    exit_code: int | None
    duration_ms: int
    output: str
    truncated: bool
    timed_out: bool = False
    cancelled: bool = False


class Kept:
    """The first and last characters of a stream (redacted already), with how much was left out
    between. What it renders ends its head before a piece that starts a known value and starts its
    tail after one that ends a value (one the redactor learned after the stream showed it): the
    known-value pass over the result would not recognise such a piece."""

    def __init__(self, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> None:
        self.head_limit, self.tail_limit = head, tail
        self.head = ""
        self.tail = ""
        self.total = 0

    def add(self, text: str) -> None:
        self.total += len(text)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-self.tail_limit :]

    def render(self, redactor: Redactor) -> tuple[str, bool]:
        head, tail = self.head, self.tail
        if self.total - len(head) - len(tail) <= 0:
            return head + tail, False
        head, tail = head[: redactor.cut_end(head)], tail[redactor.cut_start(tail) :]
        omitted = self.total - len(head) - len(tail)
        return f"{head}\n[... {omitted} characters omitted ...]\n{tail}", True


def _pump(
    fd: int,
    name: str,
    loop: asyncio.AbstractEventLoop,
    queue: asyncio.Queue[tuple[str, bytes | None]],
) -> None:
    try:
        while chunk := os.read(fd, 65536):
            loop.call_soon_threadsafe(queue.put_nowait, (name, chunk))
    except (OSError, RuntimeError):  # RuntimeError: the loop closed (nobody reads any more)
        pass
    finally:
        os.close(fd)
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(queue.put_nowait, (name, None))


def kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the helper (it kills and reaps every descendant); if it has not ended after the
    grace, SIGKILL its group and the groups of its children (the command has one of its own)."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=_KILL_GRACE_S)
    groups = {proc.pid, *(_child_groups(proc.pid) if proc.returncode is None else ())}
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    proc.wait()


def _child_groups(parent: int) -> set[int]:
    """The process groups of ``parent``'s children, from /proc."""
    groups: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[1]) == parent:
            groups.add(int(fields[2]))
    return groups


async def run(
    argv: list[str],
    env: dict[str, str],
    cwd: str,
    timeout_s: float,
    on_output: OnOutput,
    redactor: Redactor,
) -> Outcome:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, bytes | None]] = asyncio.Queue()
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
        close_fds=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    readers = []
    for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        fd = os.dup(pipe.fileno())
        pipe.close()
        t = threading.Thread(target=_pump, args=(fd, name, loop, queue), daemon=True)
        t.start()
        readers.append(t)
    decoders = {n: codecs.getincrementaldecoder("utf-8")("replace") for n in ("stdout", "stderr")}
    redactors = {n: StreamRedactor(redactor) for n in ("stdout", "stderr")}
    kept = Kept()

    def emit(name: str, text: str) -> None:
        if text:
            kept.add(text)
            on_output(name, text)

    timed_out = False
    open_streams = 2
    try:
        while open_streams:
            remaining = start + timeout_s - time.monotonic()
            try:
                name, chunk = await asyncio.wait_for(queue.get(), max(remaining, 0))
            except TimeoutError:
                if timed_out:
                    break  # the tree is dead; a pipe still open belongs to nothing we wait for
                timed_out = True
                await asyncio.to_thread(kill_tree, proc)
                timeout_s = time.monotonic() - start + _KILL_GRACE_S  # drain what is left
                continue
            if chunk is None:
                open_streams -= 1
                tail = decoders[name].decode(b"", final=True)
                emit(name, redactors[name].feed(tail) + redactors[name].flush())
            else:
                emit(name, redactors[name].feed(decoders[name].decode(chunk)))
        code = await asyncio.to_thread(proc.wait)
    except asyncio.CancelledError:
        await asyncio.to_thread(kill_tree, proc)
        raise
    finally:
        if proc.returncode is None:
            kill_tree(proc)
    output, truncated = kept.render(redactor)
    return Outcome(
        exit_code=None if timed_out else _status(code),
        duration_ms=int((time.monotonic() - start) * 1000),
        output=output,
        truncated=truncated,
        timed_out=timed_out,
    )


def _status(code: int) -> int:
    return 128 - code if code < 0 else code
