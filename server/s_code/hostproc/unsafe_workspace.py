"""Workspaces the agent cannot work in: they hold what runs with the user's full authority.

A workspace folder that contains the user's home directory (its shell startup files, ``.ssh/``,
``.config/autostart/``), s-code's state (the trust store, the state database) or its configuration
(``hooks.json``, ``mcp.json``), the sandbox's exec helper or dependency caches, the s-code package
or the Python environment it runs in is refused for commands (everything writable in it would
include what the sandbox relies on) and for edits (the agent would write what runs unsandboxed),
in the same words: :func:`refuse_unsafe_workspace` is the one check. So is a folder inside
s-code's state, its configuration, the exec helper's directory or the s-code package.

The home's startup files and its key and code folders count where they really are
(:mod:`.dotfiles`): a dotfiles repository that ``~/.bashrc`` or ``~/.ssh`` links into is refused
like the home, and so is a workspace that is, or lies inside, ``~/.ssh``, ``~/.local/bin``,
``~/.config/autostart`` and the like (``~/.config/nvim`` is not).

Below an accepted folder, :class:`WriteGuard` also refuses a write whose way passes through one of
those places, known by identity (device and inode, not by name; a file by its folder's identity
and its name too, which outlives an editor's atomic save): a bind mount of ``~/.config/s-code`` or
of a dotfiles repository inside a project is what it is all the same. Everything that writes
through the workspace layer calls it first: the edit preflight and undo.

What :func:`held` finds is cached: resolving every place costs about a millisecond, checking that
none of the folders that decide where they are has changed since (their device, inode and mtime) a
few dozen microseconds. A folder changed in the last two seconds is not trusted to show a later
change in its mtime (coarse file system clocks): the result is then not kept.
"""

from __future__ import annotations

import functools
import os
import pwd
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, NoReturn

from s_code.hostproc.config import user_dir
from s_code.hostproc.dotfiles import Dot, dot_places
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
_SETTLED_NS = 2_000_000_000  # a folder's mtime this recent may hide a later change

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | NEVER_BLOCK

Identity = tuple[int, int]


@dataclass(frozen=True)
class Held:
    """A place no workspace may hold."""

    what: str  # as the refusal names it
    path: str  # its real path
    inside: bool  # a workspace inside it is refused too (s-code's own, a key or code folder)
    detail: str = ""  # said after the path in the refusal


@functools.cache
def _passwd_home() -> str | None:
    """The home the password database names (login shells read their startup files there, whatever
    ``HOME`` this process was given)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return None


def _cache_base() -> str | None:
    try:
        return str(cache_base())
    except SCodeError:  # a relative S_CODE_TOOL_CACHE_DIR: commands refuse it, edits need none
        return None


@dataclass
class _Known:
    """:func:`held` as resolved from ``inputs``, the identities :class:`WriteGuard` looks up, and
    what to check before using it again."""

    inputs: tuple[str | None, ...]
    dirs: list[Held] = field(default_factory=list)
    ids: dict[Identity, Held] = field(default_factory=dict)  # each place that exists
    named: dict[tuple[int, int, str], Held] = field(default_factory=dict)  # its folder, its name
    watched: tuple[str, ...] = ()
    signature: tuple[tuple[int, int, int] | None, ...] = ()


_last: _Known | None = None


def _inputs() -> tuple[str | None, ...]:
    """Every name :func:`held` resolves, as the environment gives it now (cheap: no file system)."""
    return (
        os.path.expanduser("~"),
        _passwd_home(),
        state_dir(),
        user_dir(),
        str(cache_dir()),
        _cache_base(),
        os.path.dirname(os.path.dirname(__file__)),
        sys.prefix,
        os.environ.get("XDG_CONFIG_HOME"),
        os.environ.get("XDG_DATA_HOME"),
    )


def _signature(watched: tuple[str, ...]) -> tuple[tuple[int, int, int] | None, ...]:
    out: list[tuple[int, int, int] | None] = []
    for path in watched:
        try:
            st = os.stat(path)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_dev, st.st_ino, st.st_mtime_ns))
    return tuple(out)


def _dot_held(dot: Dot) -> Held:
    if dot.linked:
        what = f"the {'file' if dot.kind == 'file' else 'folder'} {dot.link} links to"
    else:
        what = f"your {dot.name}" + ("" if dot.kind == "file" else " folder")
    return Held(what, dot.real, inside=dot.kind == "folder", detail=f"; {dot.why}")


def _on_the_way(dots: list[Dot]) -> list[Held]:
    """Each link on the way to a place: a workspace that holds one can make the place anything
    (a sandboxed command replaces the link)."""
    out: dict[str, Held] = {}
    for dot in dots:
        for link in dot.links:
            what = f"a link {dot.link} goes through"
            out.setdefault(link, Held(what, link, inside=False, detail=f"; {dot.why}"))
    return list(out.values())


def _resolve(inputs: tuple[str | None, ...]) -> _Known:
    home, passwd, state, config, helper, caches, package, prefix = inputs[:8]
    watched: set[str] = set()

    def real(path: str) -> str:
        out = os.path.realpath(path)
        watched.update((os.path.dirname(path), os.path.dirname(out)))
        return out

    homes = sorted({real(h) for h in (home, passwd) if h})
    dots, dot_watched = dot_places(homes)
    watched |= dot_watched
    known = _Known(inputs)
    known.dirs = [
        *(Held(HOME, h, inside=False) for h in homes),
        # approvals, trust, the snapshots a restart puts back: nothing may forge them
        Held("s-code's state", real(str(state)), inside=True),
        Held("s-code's configuration (host processes)", real(str(config)), inside=True),
        Held("the sandbox's exec helper", real(str(helper)), inside=True),
        *([Held("the dependency caches", real(caches), inside=False)] if caches else []),
        # nothing may rewrite the code the sidecar runs the next time it starts
        Held("s-code itself", real(str(package)), inside=True),
        Held("the Python environment s-code runs in", real(str(prefix)), inside=False),
        # the home's startup files, key and code folders, where they really are
        *(_dot_held(d) for d in dots),
        *_on_the_way(dots),
    ]
    for h in known.dirs:
        parent, name = os.path.split(h.path)
        if (i := _identity(h.path, follow=False)) is not None:
            known.ids.setdefault(i, h)
        if name and (p := _identity(parent, follow=True)) is not None:
            known.named.setdefault((*p, name), h)
    known.watched = tuple(sorted(watched))
    known.signature = _signature(known.watched)
    return known


def _known() -> _Known:
    """:func:`held` with its identities: the last result while the environment names the same
    places and no folder that decides where they are has changed."""
    global _last
    inputs = _inputs()
    last = _last
    if last is not None and last.inputs == inputs and _signature(last.watched) == last.signature:
        return last
    known = _resolve(inputs)
    recent = time.time_ns() - _SETTLED_NS
    settled = all(s is None or s[2] < recent for s in known.signature)
    _last = known if settled else None
    return known


def held() -> list[Held]:
    """Every place a workspace must not hold, as the environment names it now."""
    return _known().dirs


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _holding(home: str) -> str:
    """``, which holds .bashrc, .ssh/`` for the dotfiles found in ``home`` (or nothing)."""
    found = [n for n in DOTFILES if os.path.lexists(os.path.join(home, n))]
    found += [n for n in DOTDIRS if os.path.isdir(os.path.join(home, n))]
    shown = [n + "/" if os.path.isdir(os.path.join(home, n)) else n for n in found[:_SHOWN]]
    return f", which holds {', '.join(shown)}" if shown else ""


def unsafe_reason(workspace: str, dirs: Sequence[Held] | None = None) -> tuple[Held, str] | None:
    """What the real path ``workspace`` holds (or lies in) of ``dirs`` (:func:`held` when not
    given), in the words of the refusal (``contains your home directory (/home/u, which holds
    .bashrc, .ssh/)``, ``contains the file /home/u/.bashrc links to (/home/u/dotfiles/bashrc;
    your shell runs it)``, ``is your .ssh folder (...)``)."""
    for h in held() if dirs is None else dirs:
        if _inside(h.path, workspace):
            if h.what == HOME:
                return h, f"contains {h.what} ({h.path}{_holding(h.path)})"
            verb = "is" if h.path == workspace else "contains"
            return h, f"{verb} {h.what} ({h.path}{h.detail})"
        if h.inside and _inside(workspace, h.path):
            return h, f"lies inside {h.what} ({h.path}{h.detail})"
    return None


def refuse_unsafe_workspace(
    workspace: str,
    work: Literal["commands", "edits"],
    *,
    path: str | None = None,
    dirs: Sequence[Held] | None = None,
) -> None:
    """Refuse ``work`` in the real path ``workspace`` when it holds what :func:`held` names:
    ``sandbox_unavailable`` for commands, ``protected_path`` (with the edit's ``path``) for
    edits, both with ``reason`` :data:`REASON` and the place in ``held``."""
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


def _identity(path: str, *, follow: bool) -> Identity | None:
    try:
        st = os.stat(path, follow_symlinks=follow)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class WriteGuard:
    """:func:`held` read once for a batch of writes, with the identities of its places."""

    def __init__(self) -> None:
        known = _known()
        self.dirs = known.dirs
        self._ids = known.ids
        self._named = known.named

    @staticmethod
    def _refuse(display: str, where: str, h: Held) -> NoReturn:
        raise SCodeError(
            ErrorKind.PROTECTED_PATH,
            f"{display!r} is protected: {where} is {h.what} ({h.path}{h.detail})",
            path=display,
            reason=REASON,
            held=h.path,
        )

    def check(self, root: WorkspaceRoot, parts: tuple[str, ...], display: str) -> None:
        """Refuse a write of ``parts`` below ``root``: the folder is refused for edits
        (:func:`refuse_unsafe_workspace`), or the folder, a directory on the way or the file
        itself is a place :func:`held` names (``protected_path``). A directory that does not
        exist yet is none of them but by its name; a link on the way ends the walk (the write
        itself refuses it)."""
        refuse_unsafe_workspace(root.real_path, "edits", path=display, dirs=self.dirs)
        fd = root.open_parts((), os.O_RDONLY | os.O_DIRECTORY)
        try:
            for depth in range(len(parts)):  # the folder itself, then each directory on the way
                st = os.fstat(fd)
                h = self._ids.get((st.st_dev, st.st_ino))
                if h is not None:
                    self._refuse(display, (root.shown(parts[:depth]) or ".") + "/", h)
                last = depth == len(parts) - 1
                h = self._named.get((st.st_dev, st.st_ino, parts[depth]))
                if h is None and last:
                    h = self._file(fd, parts[depth])
                if h is not None:
                    self._refuse(display, root.shown(parts[: depth + 1]) + ("" if last else "/"), h)
                if last:
                    break
                try:
                    nxt = os.open(parts[depth], _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    break
                os.close(fd)
                fd = nxt
        finally:
            os.close(fd)

    def _file(self, fd: int, name: str) -> Held | None:
        """The place the file ``name`` in ``fd`` is (a bind-mounted startup file), if any."""
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return None
        return self._ids.get((st.st_dev, st.st_ino))
