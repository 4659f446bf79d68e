"""What a sandboxed command may read: everything except the user's private places.

Landlock grants access by allowlist, so "all of ``/`` except ``$HOME``" is built by carving: a
directory that holds nothing excluded is granted whole; one that holds an excluded path is
replaced by its entries, each carved again. Excluded in every tier (SECURITY.md S10): the home
directory (``~/.ssh``, ``~/.aws``, every other project), every other home, ``/tmp`` and
``/var/tmp`` (other sessions' files), ``/run`` (user runtime directories, agent sockets),
``/dev`` (disks; the few devices a build needs are granted one by one), the user's runtime
directory wherever ``$XDG_RUNTIME_DIR`` puts it (the agent link's token) and s-code's own state
directory (every workspace's audit log and undo records). The runtimes under ``$HOME`` and the
launcher's directory are granted back by name.
"""

from __future__ import annotations

import os
import stat

_FIXED = ("/home", "/root", "/tmp", "/var/tmp", "/run", "/dev", "/var/run")
MAX_RULES = 160  # the exec helper takes up to 256 paths in all


def runtime_dir(workspace: str) -> tuple[str, ...]:
    """The user's runtime directory (``$XDG_RUNTIME_DIR``: sockets, the agent link's token),
    wherever it is (WSLg puts it under ``/mnt``), unless it holds the workspace."""
    value = os.environ.get("XDG_RUNTIME_DIR", "")
    if not os.path.isabs(value):
        return ()
    real = os.path.realpath(value)
    holds = workspace == real or workspace.startswith(real.rstrip("/") + "/")
    return () if holds or real == "/" else (real,)


def unreadable(home: str, state_dir: str, *more: str) -> tuple[str, ...]:
    """The excluded roots that exist, as real paths, outermost only."""
    found: list[str] = []
    for path in (home, state_dir, *more, *_FIXED):
        real = os.path.realpath(path)
        if real != "/" and os.path.isdir(real) and real not in found:
            found.append(real)
    outer = [p for p in found if not any(p.startswith(o + "/") for o in found if o != p)]
    return tuple(sorted(outer))


def _holds(top: str, excluded: tuple[str, ...]) -> bool:
    prefix = top.rstrip("/") + "/"
    return any(e.startswith(prefix) for e in excluded)


def carve(excluded: tuple[str, ...], top: str = "/") -> tuple[str, ...]:
    """Paths that together grant everything below ``top`` but the excluded subtrees. Links are
    left out (what they point to is granted, or not, by its own place)."""
    granted: list[str] = []
    stack = [top]
    while stack:
        current = stack.pop()
        if current in excluded:
            continue
        if not _holds(current, excluded):
            granted.append(current)
            continue
        try:
            names = sorted(os.listdir(current), reverse=True)
        except OSError:
            continue
        for name in names:
            child = os.path.join(current, name)
            try:
                mode = os.lstat(child).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                stack.append(child)
            elif stat.S_ISREG(mode) and child not in excluded:
                granted.append(child)
    return tuple(sorted(granted))
