"""The environment every git child gets: built from scratch, nothing inherited.

SECURITY.md §2: system and user configuration are ignored, prompts and optional locks are off,
no transport protocol is allowed (so a lazy fetch or a submodule fetch cannot reach anything),
the pager is ``cat``, messages are in the C locale. ``HOME`` and ``XDG_CONFIG_HOME`` point at an
empty directory private to this process, so ``~/.gitconfig``, ``$XDG_CONFIG_HOME/git/attributes``
and friends do not exist for git. Since nothing is copied from the sidecar's own environment,
every inherited ``GIT_*`` (``GIT_CONFIG_PARAMETERS`` beats ``GIT_CONFIG_COUNT``, ``GIT_DIR``,
``GIT_EXTERNAL_DIFF``, ``GIT_EXEC_PATH``...), ``LD_*``, ``PAGER``, ``LESSOPEN``, ``EDITOR`` and
``VISUAL`` is dropped by construction.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import stat
import tempfile
import threading
from collections.abc import Iterable, Mapping

FIXED: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_ALLOW_PROTOCOL": "",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_ADVICE": "0",
    "LC_ALL": "C",
    "TZ": "UTC",
}
"""Set in every git child (``HOME``, ``XDG_CONFIG_HOME`` and ``PATH`` are added per process)."""

DROPPED_PREFIXES = ("GIT_", "LD_")
DROPPED_NAMES = ("PAGER", "LESSOPEN", "LESSCLOSE", "EDITOR", "VISUAL", "SSH_ASKPASS")
"""What an inherited environment must never pass to git (documentation and tests; the builder
copies nothing, so these are dropped by construction)."""

_SYSTEM_DIRS = ("/usr/bin", "/bin")

_home_lock = threading.Lock()
_home: str | None = None


def _usable_home(path: str) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.geteuid()
        and stat.S_IMODE(st.st_mode) & 0o077 == 0
        and not os.listdir(path)
    )


def private_home() -> str:
    """An empty 0700 directory of this process: git's ``HOME`` and ``XDG_CONFIG_HOME``.

    Checked on every call; if anything appeared in it (or it vanished) a fresh one is made.
    """
    global _home
    with _home_lock:
        if _home is None or not _usable_home(_home):
            _home = tempfile.mkdtemp(prefix="s-code-git-home-")
            atexit.register(_remove_home, _home)
        return _home


def _remove_home(path: str) -> None:
    """Remove this process's empty git home at exit (rmdir: never anything that appeared in it)."""
    with contextlib.suppress(OSError):
        os.rmdir(path)


def child_path(git_directory: str, roots: Iterable[str] = ()) -> str:
    """PATH for git's own helpers: the chosen git's directory and the system directories, when
    they are not world-writable and not inside a workspace folder."""
    roots = tuple(os.path.realpath(r).rstrip("/") + "/" for r in roots)
    entries: list[str] = []
    for d in (git_directory, *_SYSTEM_DIRS):
        real = os.path.realpath(d)
        try:
            st = os.stat(real)
        except OSError:
            continue
        if st.st_mode & stat.S_IWOTH or any((real + "/").startswith(r) for r in roots):
            continue
        if real not in entries:
            entries.append(real)
    return os.pathsep.join(entries)


def build_env(git_directory: str, roots: Iterable[str] = ()) -> dict[str, str]:
    """The complete environment of a git child (a new dict; nothing is inherited)."""
    home = private_home()
    return {
        **FIXED,
        "HOME": home,
        "XDG_CONFIG_HOME": home,
        "PATH": child_path(git_directory, roots),
    }


def leaked(env: Mapping[str, str]) -> list[str]:
    """Names in ``env`` that must never reach git (empty for whatever :func:`build_env` made,
    apart from the variables it sets itself)."""
    return sorted(
        k
        for k in env
        if (k.startswith(DROPPED_PREFIXES) or k in DROPPED_NAMES)
        and not (k in FIXED and env[k] == FIXED[k])
    )
