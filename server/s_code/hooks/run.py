"""Running one hook: a supervised host process, JSON on stdin, bounded output, a time limit.

The hook runs on a worker thread (never the event loop) under the exec helper in host mode
(``s-code-launch --host --reap``, its own session and process group), so its whole tree ends with
it. Its stdout and stderr are read to at most
``MAX_OUTPUT`` bytes each (the rest is drained and dropped, so a flood cannot hold the sidecar)
and pass the session's redactor before anything keeps or shows them (a tail cut at the limit that
could be the start of a secret is dropped). At the time limit the helper is told to stop (it kills
the whole tree), then killed with its group.

What an outcome means (:func:`verdict`): exit 0 allows, unless stdout carries a JSON decision
(``{"decision": "allow"|"deny"|"ask", "reason"}``, or Claude Code's
``hookSpecificOutput.permissionDecision``); exit 2 blocks with stderr as the reason; any other
exit, a crash, a time-out, a decision that cannot be read is a *failure*. So is a stdout larger
than ``MAX_OUTPUT`` on exit 0: the decision in it (often its last line) was cut off. A stderr cut
at the limit changes nothing: on exit 2 it is only the reason (shown cut), on exit 0 it is not
read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from s_code.hostproc.spawn import host_argv
from s_code.redaction import Redactor, StreamRedactor

MAX_OUTPUT = 64 * 1024
# Hooks wait in threads of their own: a slow hook never takes the threads every other tool's
# blocking work runs on (asyncio's default executor has few).
POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="s-code-hook")
MAX_REASON = 2000
CHANGED = "its program or a script it names changed since it was approved"
CUT = (
    f"its output was larger than {MAX_OUTPUT // 1024} KiB and was cut; a decision in what was "
    "dropped cannot be read"
)
Decision = Literal["allow", "ask", "deny", "failed", "changed"]
RANK = {"allow": 0, "ask": 1, "deny": 2, "failed": 3, "changed": 4}


@dataclass(frozen=True)
class Outcome:
    code: int | None  # None: it did not exit by itself (timed out, or could not start)
    stdout: str  # redacted, bounded
    stderr: str
    timed_out: bool = False
    error: str | None = None  # could not start
    stdout_cut: bool = False  # it wrote more than MAX_OUTPUT bytes there (the rest was dropped)
    stderr_cut: bool = False


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    reason: str


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Tell the helper to end the tree; kill its group when it does not go at once."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@dataclass(frozen=True)
class _Said:
    """What a hook wrote: at most MAX_OUTPUT bytes of each stream, and whether there was more."""

    stdout: bytes
    stderr: bytes
    stdout_cut: bool
    stderr_cut: bool


def _talk(
    proc: subprocess.Popen[bytes], stdin: bytes, until: float, cancel: threading.Event
) -> _Said | None:
    """Feed stdin, drain stdout and stderr (keeping at most MAX_OUTPUT of each), until both
    close; None at the deadline or when cancelled."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    kept = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    cut: set[int] = set()
    sel = selectors.DefaultSelector()
    for fd in kept:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    wfd, pending = proc.stdin.fileno(), memoryview(stdin)
    os.set_blocking(wfd, False)
    with contextlib.suppress(OSError):  # most payloads fit the pipe at once (else: below)
        pending = pending[os.write(wfd, pending) :]
    if pending:
        sel.register(wfd, selectors.EVENT_WRITE)
    else:
        proc.stdin.close()
    try:
        while len(sel.get_map()):
            left = until - time.monotonic()
            if left <= 0 or cancel.is_set():
                return None
            for key, _ in sel.select(min(left, 0.1)):
                fd = int(key.fd)
                if fd == wfd:
                    try:
                        pending = pending[os.write(wfd, pending[:65536]) :]
                    except BlockingIOError:
                        continue
                    except OSError:
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(wfd)
                        with contextlib.suppress(OSError):
                            proc.stdin.close()
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(fd)
                    continue
                buf = kept[fd]
                if len(buf) + len(chunk) > MAX_OUTPUT:
                    cut.add(fd)
                if len(buf) < MAX_OUTPUT:
                    buf += chunk[: MAX_OUTPUT - len(buf)]
    finally:
        sel.close()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()
    (out_fd, out), (err_fd, err) = kept.items()
    return _Said(bytes(out), bytes(err), out_fd in cut, err_fd in cut)


def _run_blocking(
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    stdin: bytes,
    timeout_s: float,
    cancel: threading.Event,
    verify: Callable[[], bool],
) -> tuple[int | None, _Said | None, str | None]:
    until = time.monotonic() + timeout_s
    if not verify():
        return None, None, CHANGED
    try:
        proc = subprocess.Popen(
            host_argv(argv, cwd),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        return None, None, f"could not start: {exc.strerror or exc}"
    talked = _talk(proc, stdin, until, cancel)
    if talked is not None:
        try:
            proc.wait(max(0.0, until - time.monotonic()))
        except subprocess.TimeoutExpired:
            talked = None
    if talked is None:
        _stop(proc)
        return None, None, None
    return proc.returncode, talked, None


async def run_hook(
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    stdin: bytes,
    timeout_s: float,
    redactor: Redactor,
    verify: Callable[[], bool] = lambda: True,
) -> Outcome:
    """Run ``argv`` as a hook, on a worker thread; never raises for what the hook does. A
    cancelled call ends the hook's tree. ``verify`` runs first, on that thread: when it says
    no, nothing runs and the outcome's error is :data:`CHANGED`."""
    cancel = threading.Event()
    try:
        code, said, error = await asyncio.get_running_loop().run_in_executor(
            POOL, _run_blocking, argv, cwd, env, stdin, timeout_s, cancel, verify
        )
    except asyncio.CancelledError:
        cancel.set()
        raise
    if error is not None:
        return Outcome(None, "", "", error=error)
    if code is None or said is None:
        return Outcome(None, "", "", timed_out=True)
    return Outcome(
        code,
        _shown(said.stdout, said.stdout_cut, redactor),
        _shown(said.stderr, said.stderr_cut, redactor),
        stdout_cut=said.stdout_cut,
        stderr_cut=said.stderr_cut,
    )


def _shown(data: bytes, cut: bool, redactor: Redactor) -> str:
    """``data`` redacted. When it was cut at ``MAX_OUTPUT``, what could still be part of a secret
    at the cut (in any of its encodings) is dropped, never shown half: what a stream paused there
    would show (:meth:`StreamRedactor.flush_idle`)."""
    text = data.decode("utf-8", "replace")
    if not cut:
        return redactor.redact(text)
    stream = StreamRedactor(redactor)
    return stream.feed(text) + stream.flush_idle() + " […]"


def _reason(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


_WORDS = {"allow": "allow", "approve": "allow", "deny": "deny", "block": "deny", "ask": "ask"}


def verdict(outcome: Outcome, timeout_s: float) -> Verdict:
    """What the hook decided (or that it failed, or did not run because it changed)."""
    if outcome.error == CHANGED:
        return Verdict("changed", CHANGED)
    if outcome.error is not None:
        return Verdict("failed", outcome.error)
    if outcome.timed_out:
        return Verdict("failed", f"it did not finish within {timeout_s:g} s")
    if outcome.code == 2:  # a deny, whatever its output: a cut stderr is only a cut reason
        return Verdict("deny", _reason(outcome.stderr) or "the hook exited with status 2")
    if outcome.code != 0:
        tail = _reason(outcome.stderr.strip()[-MAX_REASON:])
        return Verdict(
            "failed", f"it exited with status {outcome.code}" + (f": {tail}" if tail else "")
        )
    if outcome.stdout_cut:  # the decision (often its last line) may be in what was dropped
        return Verdict("failed", CUT)
    text = outcome.stdout.lstrip("\ufeff").strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # the decision: the whole output, or its last line (after lines a script logged first)
    candidate = text if text.startswith("{") else (lines[-1] if lines else "")
    if not candidate.startswith("{"):
        if '"decision"' in text or '"permissionDecision"' in text or '"continue"' in text:
            return Verdict("failed", "its stdout holds a decision that could not be read")
        return Verdict("allow", "")
    try:
        doc = json.loads(candidate)
    except ValueError:
        return Verdict("failed", "its stdout starts like JSON but is not valid JSON")
    if not isinstance(doc, dict):
        return Verdict("failed", "its stdout is JSON but not an object")
    specific = doc.get("hookSpecificOutput")
    said: list[tuple[object, object]] = [(doc.get("decision"), doc.get("reason"))]
    if isinstance(specific, dict):
        said.append((specific.get("permissionDecision"), specific.get("permissionDecisionReason")))
    if doc.get("continue") is False:  # Claude's "stop": nothing goes on
        said.append(("deny", doc.get("stopReason") or "the hook said continue: false"))
    found: Verdict | None = None
    for word, reason in said:
        if word is None:
            continue
        decided = _WORDS.get(word) if isinstance(word, str) else None
        if decided is None:
            return Verdict("failed", f"its decision {str(word)[:40]!r} is not allow, deny or ask")
        here = Verdict(decided, _reason(reason) if isinstance(reason, str) else "")  # type: ignore[arg-type]
        if found is None or RANK[here.decision] > RANK[found.decision]:
            found = here  # the most restrictive of what it said
    return found or Verdict("allow", "")
