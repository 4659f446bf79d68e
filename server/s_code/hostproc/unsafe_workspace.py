"""Workspaces the agent cannot work in: they hold what runs with the user's full authority.

A workspace folder that contains the user's home directory (its shell startup files, ``.ssh/``,
``.config/autostart/``), s-code's state (the trust store, the state database) or its configuration
(``hooks.json``, ``mcp.json``), the sandbox's exec helper or dependency caches, the s-code package
or the Python environment it runs in is refused for commands (everything writable in it would
include what the sandbox relies on) and for edits (the agent would write what runs unsandboxed),
in the same words: :func:`refuse_unsafe_workspace` is the one check. So is a folder inside
s-code's state, its configuration, the exec helper's directory or the s-code package.

Below an accepted folder, :class:`WriteGuard` also refuses a write whose way passes through one of
those directories, known by identity (device and inode, not by name): a bind mount of
``~/.config/s-code`` inside a project is s-code's configuration all the same. Everything that
writes through the workspace layer calls it first: the edit preflight and undo.
"""

from __future__ import annotations

import functools
import os
import pwd
import sys
from dataclasses import dataclass
from typing import Literal

from s_code.hostproc.config import user_dir
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.sandbox.caches import cache_base
from s_code.sandbox.launcher import cache_dir
from s_code.state.store import state_dir
from s_code.workspace.root import NEVER_BLOCK, WorkspaceRoot

REASON = "workspace_holds_sandbox_state"
"""``data.reason`` of both refusals (commands: ``sandbox_unavailable``, edits:
``protected_path``)."""

HOME = "your home directory"
# What a home directory holds that runs with the user's authority or opens their accounts: the
# refusal names the ones it finds.
DOTFILES = (".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".ssh", ".gnupg")
DOTDIRS = (".config", ".local")
_SHOWN = 4  # names at most

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | NEVER_BLOCK


@dataclass(frozen=True)
class Held:
    """A directory no workspace may hold."""

    what: str  # as the refusal names it
    path: str  # its real path
    own: bool  # s-code's own: a workspace inside it is refused too


@functools.cache
def _passwd_home() -> str | None:
    """The home the password database names (login shells read their startup files there, whatever
    ``HOME`` this process was given)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return None


def held() -> list[Held]:
    """Every directory a workspace must not hold, as the environment names it now."""
    homes = {os.path.realpath(os.path.expanduser("~"))}
    passwd = _passwd_home()
    if passwd:
        homes.add(os.path.realpath(passwd))
    real = os.path.realpath
    return [
        *(Held(HOME, home, own=False) for home in sorted(homes)),
        # approvals, trust, the snapshots a restart puts back: nothing may forge them
        Held("s-code's state", real(state_dir()), own=True),
        Held("s-code's configuration (host processes)", real(user_dir()), own=True),
        Held("the sandbox's exec helper", real(cache_dir()), own=True),
        *_caches(),
        # nothing may rewrite the code the sidecar runs the next time it starts
        Held("s-code itself", real(os.path.dirname(os.path.dirname(__file__))), own=True),
        Held("the Python environment s-code runs in", real(sys.prefix), own=False),
    ]


def _caches() -> list[Held]:
    try:
        return [Held("the dependency caches", os.path.realpath(cache_base()), own=False)]
    except SCodeError:  # a relative S_CODE_TOOL_CACHE_DIR: commands refuse it, edits need none
        return []


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _holding(home: str) -> str:
    """``, which holds .bashrc, .ssh/`` for the dotfiles found in ``home`` (or nothing)."""
    found = [n for n in DOTFILES if os.path.lexists(os.path.join(home, n))]
    found += [n for n in DOTDIRS if os.path.isdir(os.path.join(home, n))]
    shown = [n + "/" if os.path.isdir(os.path.join(home, n)) else n for n in found[:_SHOWN]]
    return f", which holds {', '.join(shown)}" if shown else ""


def unsafe_reason(workspace: str, dirs: list[Held] | None = None) -> tuple[Held, str] | None:
    """What the real path ``workspace`` holds (or lies in) of ``dirs`` (:func:`held` when not
    given), in the words of the refusal (``contains your home directory (/home/u, which holds
    .bashrc, .ssh/)``)."""
    for h in held() if dirs is None else dirs:
        if _inside(h.path, workspace):
            extra = _holding(h.path) if h.what == HOME else ""
            return h, f"contains {h.what} ({h.path}{extra})"
        if h.own and _inside(workspace, h.path):
            return h, f"lies inside {h.what} ({h.path})"
    return None


def refuse_unsafe_workspace(
    workspace: str,
    work: Literal["commands", "edits"],
    *,
    path: str | None = None,
    dirs: list[Held] | None = None,
) -> None:
    """Refuse ``work`` in the real path ``workspace`` when it holds what :func:`held` names:
    ``sandbox_unavailable`` for commands, ``protected_path`` (with the edit's ``path``) for
    edits, both with ``reason`` :data:`REASON` and the directory in ``held``."""
    found = unsafe_reason(workspace, dirs)
    if found is None:
        return
    h, why = found
    if work == "commands":
        raise SCodeError(
            ErrorKind.SANDBOX_UNAVAILABLE,
            f"the workspace {workspace!r} {why}; commands cannot be sandboxed there: open a "
            "project folder instead",
            reason=REASON,
            held=h.path,
        )
    raise SCodeError(
        ErrorKind.PROTECTED_PATH,
        f"the workspace {workspace!r} {why}; the agent cannot write files there: open a project "
        "folder instead",
        reason=REASON,
        held=h.path,
        **({"path": path} if path is not None else {}),
    )


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class WriteGuard:
    """:func:`held` read once for a batch of writes (it resolves every directory's real path:
    about a millisecond), with the identities of those that exist."""

    def __init__(self) -> None:
        self.dirs = held()
        self._ids = {i: h for h in self.dirs if (i := _identity(h.path)) is not None}

    def check(self, root: WorkspaceRoot, parts: tuple[str, ...], display: str) -> None:
        """Refuse a write of ``parts`` below ``root``: the folder is refused for edits
        (:func:`refuse_unsafe_workspace`), or the folder or a directory on the way to the file
        is one :func:`held` names (``protected_path``). A directory that does not exist yet is
        none of them; a link on the way ends the walk (the write itself refuses it)."""
        refuse_unsafe_workspace(root.real_path, "edits", path=display, dirs=self.dirs)
        fd = root.open_parts((), os.O_RDONLY | os.O_DIRECTORY)
        try:
            for depth in range(len(parts)):  # the folder itself, then each directory on the way
                st = os.fstat(fd)
                h = self._ids.get((st.st_dev, st.st_ino))
                if h is not None:
                    where = root.shown(parts[:depth]) or "."
                    raise SCodeError(
                        ErrorKind.PROTECTED_PATH,
                        f"{display!r} is protected: {where}/ is {h.what} ({h.path})",
                        path=display,
                        reason=REASON,
                        held=h.path,
                    )
                if depth == len(parts) - 1:
                    break
                try:
                    nxt = os.open(parts[depth], _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    break
                os.close(fd)
                fd = nxt
        finally:
            os.close(fd)
