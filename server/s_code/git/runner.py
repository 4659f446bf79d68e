"""Spawning git: fixed global options, ``-c`` overrides, a clean environment, bounded output.

Every git child gets ``--no-pager --literal-pathspecs --no-optional-locks --git-dir=G
--work-tree=W`` and the overrides below (command-line config beats the repository's), stdin
``/dev/null``, no controlling terminal (a new session), the environment of :mod:`s_code.git.env`,
a byte bound on stdout (the rest is cut and marked) and a timeout (the process group is killed).
``subprocess.Popen`` runs in a worker thread (asyncio's child watcher lost exit codes here); one
``poll`` waits on stdout, stderr and the child's pidfd, against one deadline.
"""

from __future__ import annotations

import asyncio
import errno
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

from s_code.git.binary import CHOICE
from s_code.git.env import build_env
from s_code.protocol.errors import ErrorKind, SCodeError

OVERRIDES: tuple[str, ...] = (
    "core.fsmonitor=",
    "core.hooksPath=/dev/null",
    "diff.external=",
    "gc.auto=0",
    "maintenance.auto=false",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "log.showSignature=false",
    "protocol.allow=never",
    *(f"protocol.{p}.allow=never" for p in ("file", "ext", "git", "ssh", "http", "https", "fd")),
    "safe.bareRepository=explicit",
    "core.pager=cat",
    "core.editor=false",
    "sequence.editor=false",
    "core.askPass=",
    "credential.helper=",
    "core.attributesFile=/dev/null",
    "core.alternateRefsCommand=",
    "interactive.diffFilter=",
    "core.untrackedCache=false",
    "blame.ignoreRevsFile=",
    "diff.orderFile=/dev/null",
    # Output shapes the parsers rely on.
    "color.ui=false",
    "core.quotePath=true",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "diff.colorMoved=no",
    "log.decorate=false",
    "log.abbrevCommit=false",
    "log.follow=false",
    "i18n.logOutputEncoding=UTF-8",
)
"""``-c`` overrides on every git operation (SECURITY.md §2)."""

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_BYTES = 8 << 20
MAX_STDERR = 64 << 10


@dataclass(frozen=True)
class GitOutput:
    argv: tuple[str, ...]
    stdout: bytes
    stderr: str
    returncode: int
    truncated: bool
    duration_ms: int


@dataclass
class Handle:
    """One git process, stoppable from the event loop while a worker thread reads it."""

    proc: subprocess.Popen[bytes] | None = None
    stopped: bool = False
    timed_out: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            # Never reap here (no poll()): only the worker reaps, after its own kill, so the
            # pid and the group id stay ours until then.
            if self.proc is not None and self.proc.returncode is None:
                _kill_group(self.proc)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()


def global_argv(git: str, git_dir: str, work_tree: str, *, overrides: bool = True) -> list[str]:
    argv = [
        git,
        "--no-pager",
        "--literal-pathspecs",
        "--no-optional-locks",
        f"--git-dir={git_dir}",
        f"--work-tree={work_tree}",
    ]
    for item in OVERRIDES if overrides else ("safe.bareRepository=explicit",):
        argv += ["-c", item]
    return argv


def _spawn_sync(
    argv: list[str],
    env: dict[str, str],
    cwd: str,
    max_bytes: int,
    timeout: float,
    handle: Handle,
) -> GitOutput:
    started = time.monotonic()
    with handle.lock:
        if handle.stopped:
            raise asyncio.CancelledError
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
        )
        handle.proc = proc
    exited: int | None = None
    finished = False
    try:
        exited = _pidfd(proc.pid)  # nothing reaps the child before the worker does
        out, err, truncated = _collect(proc, exited, max_bytes, started + timeout, handle)
        finished = not (truncated or handle.stopped or handle.timed_out)
    finally:
        if exited is not None:
            os.close(exited)
        if not finished:  # the leader is not reaped yet, so the group id is still ours
            _kill_group(proc)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        proc.stderr.close()
        code = proc.wait()
    if handle.timed_out:
        raise SCodeError(
            ErrorKind.TIMEOUT,
            f"git {_subcommand(argv)} took longer than {timeout:g}s",
            limit=timeout,
        )
    if handle.stopped:
        raise asyncio.CancelledError
    return GitOutput(
        tuple(argv),
        out,
        err.decode("utf-8", "replace"),
        code,
        truncated,
        int((time.monotonic() - started) * 1000),
    )


def _pidfd(pid: int) -> int | None:
    """A pidfd for the child (readable once it exits), or None where the kernel (before 5.3) or
    a seccomp profile refuses one: then its exit is polled for."""
    try:
        return os.pidfd_open(pid)
    except OSError as exc:
        if exc.errno in (errno.ENOSYS, errno.EPERM, errno.EACCES):
            return None
        raise


EXIT_POLL = 0.005
"""Without a pidfd: how often the exit is checked once both pipes are closed."""


def _collect(
    proc: subprocess.Popen[bytes],
    exited: int | None,
    max_bytes: int,
    deadline: float,
    handle: Handle,
) -> tuple[bytes, bytes, bool]:
    """Read stdout (up to ``max_bytes``) and stderr (up to MAX_STDERR, the rest discarded) until
    both are closed and the process has exited, stdout overflows, the deadline passes, or the
    handle is stopped and the process is gone. One ``poll`` waits for the pipes and the exit
    (``exited``, a pidfd; without one the exit is checked every EXIT_POLL), so neither a child
    that left the group holding a pipe nor one that closed its pipes and lingers can hold the
    call past its deadline or past a stop."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.fileno(), proc.stderr.fileno()
    chunks: dict[int, list[bytes]] = {out: [], err: []}
    room = {out: max_bytes, err: MAX_STDERR}
    pipes = {out, err}
    poller = select.poll()
    for fd in (out, err) if exited is None else (out, err, exited):
        poller.register(fd, select.POLLIN)
    gone = False
    while not (gone and (not pipes or handle.stopped)):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            handle.timed_out = True
            handle.stop()
            break
        wait = remaining if exited is not None else min(remaining, EXIT_POLL)
        for fd, _ in poller.poll(wait * 1000 + 1):
            if fd == exited:
                gone = True
                poller.unregister(fd)
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                poller.unregister(fd)
                pipes.discard(fd)
                continue
            kept = chunk[: room[fd]]
            chunks[fd].append(kept)
            room[fd] -= len(kept)
            if fd == out and len(kept) < len(chunk):
                return b"".join(chunks[out]), b"".join(chunks[err]), True
        if exited is None:
            gone = proc.poll() is not None
    return b"".join(chunks[out]), b"".join(chunks[err]), False


def _subcommand(argv: list[str]) -> str:
    skip = False
    for a in argv[1:]:
        if skip:
            skip = False
            continue
        if a == "-c":
            skip = True
            continue
        if not a.startswith("-"):
            return a
    return "?"


def spawn_sync(
    git_dir: str,
    work_tree: str,
    tail: list[str],
    *,
    roots: tuple[str, ...],
    handle: Handle,
    overrides: bool = True,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout: float = DEFAULT_TIMEOUT,
) -> GitOutput:
    """Run ``git <global options> <tail>`` with the top of the work tree as cwd (in a worker
    thread; ``handle`` lets the event loop stop it, and every later spawn through it)."""
    binary = CHOICE.get(roots)  # re-stat'ed here, immediately before the spawn
    argv = [*global_argv(binary.path, git_dir, work_tree, overrides=overrides), *tail]
    env = build_env(binary.directory, roots)
    return _spawn_sync(argv, env, work_tree, max_bytes, timeout, handle)
