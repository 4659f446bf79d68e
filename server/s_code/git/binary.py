"""Choosing the git binary: once, from an absolute PATH entry outside every workspace root.

A candidate is refused when its directory or the file itself is world-writable, when it is not a
regular executable file, when it lies inside a workspace folder, or when it is owned by someone
other than root or us. The first acceptable candidate is the git; older than 2.39.4 is refused
with a clear message (2.39.4 fixes CVE-2024-32002/32004/32465, clone- and hook-time execution).
Before every spawn the chosen file is stat'ed again: a changed inode, mode, owner or size means
the choice is made again from scratch.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from s_code.git.env import build_env
from s_code.protocol.errors import ErrorKind, SCodeError

MIN_VERSION = (2, 39, 4)
_VERSION = re.compile(r"^git version (\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class GitBinary:
    """The chosen git: its real path, version, and the identity it had when chosen."""

    path: str
    version: tuple[int, int, int]
    version_text: str
    identity: tuple[int, int, int, int, int, int]

    @property
    def directory(self) -> str:
        return os.path.dirname(self.path)


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_mode, st.st_uid, st.st_size, st.st_mtime_ns)


def _inside(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _world_writable(st: os.stat_result) -> bool:
    return bool(st.st_mode & stat.S_IWOTH)


def candidate_problem(path: str, roots: Iterable[str]) -> str | None:
    """Why ``path`` (an absolute ``<PATH entry>/git``) may not be used, or None when it may."""
    roots = tuple(roots)
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
        dst = os.stat(os.path.dirname(real))
        entry = os.stat(os.path.dirname(path))
    except OSError:
        return "missing"
    if _inside(real, roots) or _inside(os.path.realpath(os.path.dirname(path)), roots):
        return "inside a workspace folder"
    if not stat.S_ISREG(st.st_mode) or not os.access(real, os.X_OK):
        return "not an executable file"
    if _world_writable(st):
        return "world-writable file"
    if _world_writable(dst) or _world_writable(entry):
        return "world-writable directory"
    if st.st_uid not in (0, os.geteuid()):
        return f"owned by uid {st.st_uid}"
    return None


def _query_version(path: str) -> str:
    try:
        done = subprocess.run(
            [path, "--version"],
            env=build_env(os.path.dirname(path)),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SCodeError(
            ErrorKind.NOT_FOUND, f"git at {path} did not run: {exc}", reason="git_unusable"
        ) from None
    return done.stdout.decode("utf-8", "replace").strip()


def parse_version(text: str) -> tuple[int, int, int] | None:
    m = _VERSION.match(text)
    if m is None:
        return None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


def resolve(path_env: str | None, roots: Iterable[str]) -> GitBinary:
    """Choose git from ``path_env`` (a PATH value), refusing entries that are unsafe to trust."""
    roots = tuple(os.path.realpath(r) for r in roots)
    refused: list[str] = []
    for entry in (path_env or "").split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue  # relative entries ("", ".", "bin") are resolved against the cwd: never
        candidate = os.path.join(entry, "git")
        if not os.path.lexists(candidate):
            continue
        problem = candidate_problem(candidate, roots)
        if problem is not None:
            refused.append(f"{candidate} ({problem})")
            continue
        real = os.path.realpath(candidate)
        identity = _identity(os.stat(real))
        text = _query_version(real)
        version = parse_version(text)
        if version is None:
            raise SCodeError(
                ErrorKind.NOT_FOUND,
                f"{real} does not answer like git ({text[:80]!r})",
                reason="git_unusable",
                path=real,
            )
        if version < MIN_VERSION:
            need = ".".join(map(str, MIN_VERSION))
            raise SCodeError(
                ErrorKind.NOT_FOUND,
                f"{text} at {real} is too old: s-code needs git {need} or newer (it fixes "
                "CVE-2024-32002, -32004 and -32465); upgrade git",
                reason="git_too_old",
                path=real,
                version=".".join(map(str, version)),
            )
        return GitBinary(real, version, text, identity)
    detail = f"; refused: {', '.join(refused)}" if refused else ""
    raise SCodeError(
        ErrorKind.NOT_FOUND,
        f"no usable git on PATH (absolute entries outside the workspace only){detail}",
        reason="git_missing",
    )


class BinaryChoice:
    """The process-wide choice of git, re-checked before every spawn."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chosen: GitBinary | None = None

    def get(self, roots: Iterable[str]) -> GitBinary:
        roots = tuple(os.path.realpath(r) for r in roots)
        with self._lock:
            chosen = self._chosen
            if chosen is not None and self._still_good(chosen, roots):
                return chosen
            self._chosen = resolve(os.environ.get("PATH"), roots)
            return self._chosen

    @staticmethod
    def _still_good(chosen: GitBinary, roots: tuple[str, ...]) -> bool:
        try:
            st = os.stat(chosen.path)
        except OSError:
            return False
        if _identity(st) != chosen.identity:
            return False
        return candidate_problem(chosen.path, roots) is None

    def reset(self) -> None:
        with self._lock:
            self._chosen = None


CHOICE = BinaryChoice()
