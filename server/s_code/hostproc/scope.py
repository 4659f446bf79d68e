"""An approved host process's code scope: the files whose change changes what it runs.

Trust bound to the one file an entry names is not enough: a server's script imports its sibling
modules, a program in a project's ``.venv`` runs the packages beside it, a Node script requires
what ``node_modules`` holds, ``PYTHONPATH`` or ``--require=./x.js`` name more code. The scope of
an entry is

- its program and every script its arguments name;
- the folder each script lives in, recursively, and every file or folder its arguments or its
  environment name (``PYTHONPATH=lib``, ``NODE_OPTIONS=--require ./x.js``);
- where any of these lies in a place the agent can write (a workspace folder, the tool caches):
  the interpreter environment around it: the Python virtual environment (the folder holding
  ``pyvenv.cfg``, with the folders its ``.pth`` files and editable-install finders add), every
  ``node_modules`` folder Node resolves from up to the workspace folder, and the places on that
  way where a new ``node_modules`` would be used (making one there changes the scope).

Code that lives at the top of a workspace folder makes the whole folder its scope (every edit of
the project asks): the card says so. The digest covers every entry below the scope's folders:
path, type, mode and identity (inode, size, modification and change times; any write changes the
change time, which no program can set back), and a link's target; a link that leads into another
agent-writable place binds where it leads. ``__pycache__`` folders are left out: a host
process's Python neither reads nor writes them (``PYTHONPYCACHEPREFIX`` points it at a cache of
its own, where no command writes). The digest is part of the entry's trust hash
(:mod:`s_code.hostproc.entry`), so any change makes the entry pending; the walk stats each file
once and reads no content, and :meth:`CodeScope.unchanged` skips it while nothing s-code knows of
wrote anywhere since the last one (for :data:`RECHECK_S`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass

MAX_FILES = 200_000
"""Entries in one scope at most; a larger one cannot be bound (the entry cannot run)."""
MAX_OUTSIDE = 5_000
"""A script's folder outside every agent-writable place larger than this (a script in ``~``) is
bound by the script alone, with a note: the agent cannot write there anyway."""
SKIPPED = frozenset({"__pycache__", ".git"})
"""Never part of a scope: bytecode caches (a host process's Python reads and writes its own
elsewhere: :func:`s_code.hostproc.entry.python_env`) and git's metadata, which run nothing."""
_FINDER_PATH = re.compile(r"""['"](/[^'"\n]+)['"]""")


@dataclass(frozen=True)
class Sources:
    """What a scope is made from: the program as found, the scripts, the paths the entry's
    arguments and environment name, and the places the agent can write."""

    program: str | None
    scripts: tuple[str, ...]
    mentioned: tuple[str, ...]
    writable: tuple[str, ...]


@dataclass(frozen=True)
class CodeScope:
    folders: tuple[str, ...]
    """Bound recursively (real paths)."""
    files: tuple[str, ...]
    """Bound one by one (the program, the scripts)."""
    watched: tuple[str, ...]
    """Places where an interpreter environment would be found if one appeared (a
    ``node_modules`` nearer a script than the one in use): creating one changes the scope."""
    digest: str
    count: int
    notes: tuple[str, ...] = ()
    sources: Sources | None = None

    def unchanged(self, stamp: object = None) -> bool:
        """Is the scope, made again from the same sources (an environment that appeared since
        is found), still what the digest covers? ``stamp``: what tells the caller that nothing
        it knows of wrote anywhere (commands ended, edits of scoped code): while it is the one
        of the last full check, and that check is younger than :data:`RECHECK_S`, no walk."""
        if self.sources is None:
            return True
        now = time.monotonic()
        seen = _verified.get(self.digest)
        if (
            stamp is not None
            and seen is not None
            and seen[0] == stamp
            and now - seen[1] < RECHECK_S
        ):
            return True
        try:
            again = code_scope(
                self.sources.program,
                self.sources.scripts,
                self.sources.writable,
                self.sources.mentioned,
            )
        except ScopeTooLarge:
            return False
        same = again.digest == self.digest
        if same and stamp is not None:
            _verified[self.digest] = (stamp, now)
        return same

    def folders_in(self, places: tuple[str, ...]) -> tuple[str, ...]:
        """The folders of the scope that lie in ``places`` (where a sandboxed command may
        write): a command there must not run while the entry checks and starts."""
        found = [
            *self.folders,
            *(os.path.dirname(f) for f in self.files),
            *(os.path.dirname(w) for w in self.watched),
        ]
        return tuple(dict.fromkeys(f for f in found if _inside(f, places) is not None))

    def holds(self, path: str) -> bool:
        """Does a change of ``path`` (a real path) change what the entry runs?"""
        if path in self.files:
            return True
        return any(path == f or path.startswith(f + "/") for f in (*self.folders, *self.watched))

    def shown(self) -> tuple[str, ...]:
        """What the card shows: each folder and file, and how many entries the digest covers."""
        out = [f"{f}/ (everything below it)" for f in self.folders]
        out += list(self.files)
        out += [f"{w}/ (not there now; one made there would be used)" for w in self.watched]
        return (*out, f"{self.count} entries, digest {self.digest[:16]}")


RECHECK_S = 10.0
"""How long a full check of a scope stands while nothing s-code knows of wrote anywhere (an
outside change, the user's own, is seen at the next full check)."""
_verified: dict[str, tuple[object, float]] = {}


class ScopeTooLarge(ValueError):
    pass


def _inside(path: str, roots: tuple[str, ...]) -> str | None:
    """The root of ``roots`` that holds ``path`` (itself included), or None."""
    for root in roots:
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return root
    return None


def _environment(path: str, top: str) -> tuple[list[str], list[str]]:
    """The interpreter environment around ``path`` (inside ``top``): the ancestor that holds
    ``pyvenv.cfg`` and every ``node_modules`` folder on the way up to ``top``; and the places on
    that way where a ``node_modules`` would be used if one were made."""
    found: list[str] = []
    watched: list[str] = []
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    while True:
        if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
            found.append(folder)
        modules = os.path.join(folder, "node_modules")
        if os.path.isdir(modules) and not os.path.islink(modules):
            found.append(modules)
        elif os.path.basename(folder) != "node_modules":
            watched.append(modules)
        if os.path.basename(folder) == "node_modules":
            found.append(folder)
        if folder == top or not folder.startswith(top.rstrip("/") + "/"):
            break
        folder = os.path.dirname(folder)
    return found, watched


def _venv_additions(venv: str) -> list[str]:
    """Folders a virtual environment's ``.pth`` files and editable-install finders put on the
    import path (``pip install -e .`` of the workspace's own project)."""
    found: list[str] = []
    lib = os.path.join(venv, "lib")
    try:
        pythons = [os.path.join(lib, d, "site-packages") for d in os.listdir(lib)]
    except OSError:
        return found
    for site in pythons:
        try:
            names = sorted(os.listdir(site))
        except OSError:
            continue
        for name in names:
            path = os.path.join(site, name)
            try:
                if name.endswith(".pth"):
                    text = _small(path)
                    for line in text.splitlines():
                        line = line.strip()
                        if line and not line.startswith(("#", "import ", "import\t")):
                            found.append(os.path.join(site, line))
                elif name.startswith("__editable__") and name.endswith("_finder.py"):
                    found += _FINDER_PATH.findall(_small(path))
            except (OSError, UnicodeDecodeError):
                continue
    return [os.path.realpath(p) for p in found if os.path.isdir(p)]


def _small(path: str) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, 1 << 20).decode("utf-8")
    finally:
        os.close(fd)


def _entries(folder: str, recursive: bool, limit: int, out: list[str], links: list[str]) -> None:
    """Append one line per entry below ``folder`` (sorted, links not followed) to ``out``;
    targets of links, as real paths, to ``links``."""
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            out.append(f"{current}\0unreadable\0{exc.errno}")
            continue
        for item in items:
            if item.name in SKIPPED:
                continue
            if len(out) > limit:
                raise ScopeTooLarge(f"{folder} holds more than {limit} entries")
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                try:
                    target = os.readlink(item.path)
                except OSError:
                    target = "?"
                out.append(f"{item.path}\0l\0{target}")
                links.append(os.path.realpath(item.path))
            elif stat.S_ISDIR(st.st_mode):
                out.append(f"{item.path}\0d\0{st.st_mode:o}")
                if recursive:
                    stack.append(item.path)
            else:
                out.append(
                    f"{item.path}\0f\0{st.st_mode:o}\0{st.st_dev}:{st.st_ino}\0{st.st_size}\0"
                    f"{st.st_mtime_ns}\0{st.st_ctime_ns}"
                )


def _file_line(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}\0missing"
    return (
        f"{path}\0f\0{st.st_mode:o}\0{st.st_dev}:{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}\0"
        f"{st.st_ctime_ns}"
    )


def code_scope(
    program: str | None,
    scripts: Iterable[str],
    writable: tuple[str, ...],
    mentioned: Iterable[str] = (),
) -> CodeScope:
    """The scope of an entry whose program was found at ``program`` (as found: a venv's python
    stays the venv's), whose arguments name ``scripts`` (real paths of files), and whose
    arguments and environment name ``mentioned`` (files or folders: ``PYTHONPATH``,
    ``--require=./x.js``). ScopeTooLarge when it cannot be bound."""
    scripts, mentioned = tuple(scripts), tuple(mentioned)
    sources = Sources(program, scripts, mentioned, writable)
    files: list[str] = []
    folders: list[str] = []
    watched: list[str] = []
    notes: list[str] = []
    for spelled in (p for p in (program, *scripts, *mentioned) if p):
        real = os.path.realpath(spelled)
        for path in dict.fromkeys((real, os.path.abspath(spelled))):
            if not os.path.isdir(path):
                files.append(path)
            top = _inside(path, writable)
            if top is not None:
                found, missing = _environment(path, top)
                folders += [os.path.realpath(f) for f in found]
                watched += missing
    places = [os.path.dirname(os.path.realpath(s)) for s in scripts]
    places += [os.path.realpath(m) for m in mentioned if os.path.isdir(m)]
    for venv in [f for f in folders if os.path.isfile(os.path.join(f, "pyvenv.cfg"))]:
        places += [a for a in _venv_additions(venv) if _inside(a, writable) is not None]
    for place in places:
        folders.append(place)
        if place in writable:
            notes.append(
                f"it runs code from the top of {place}: every file of that workspace folder is "
                "its code (each edit of one asks); keep its code in a folder of its own"
            )
    found_scope = _bound(files, folders, writable, notes, watched)
    return dataclasses.replace(found_scope, sources=sources)


def _bound(
    files: list[str],
    folders: list[str],
    writable: tuple[str, ...],
    notes: list[str],
    watched: list[str],
) -> CodeScope:
    """Walk the scope (following links that lead to other agent-writable places, once) and
    digest it."""
    lines = [_file_line(f) for f in dict.fromkeys(files)]
    lines += [_file_line(w) for w in dict.fromkeys(watched)]
    done: list[str] = []
    queue = list(dict.fromkeys(folders))
    while queue:
        folder = queue.pop(0)
        if any(folder == d or folder.startswith(d + "/") for d in done):
            continue
        if not os.path.isdir(folder):
            continue
        inside = _inside(folder, writable) is not None
        limit = MAX_FILES if inside else MAX_OUTSIDE
        found: list[str] = []
        links: list[str] = []
        try:
            _entries(folder, True, limit - len(lines), found, links)
        except ScopeTooLarge as exc:
            if inside:
                raise ScopeTooLarge(
                    f"its code scope is too large to bind ({exc}): keep what it runs in a "
                    "smaller folder"
                ) from None
            notes.append(
                f"{folder} is too large to bind ({exc}): only the files named are bound "
                "(the agent cannot write there)"
            )
            continue
        done.append(folder)
        lines += found
        for target in links:  # a link into another agent-writable place: bind where it leads
            if _inside(target, writable) is None:
                continue
            if os.path.isdir(target):
                queue.append(target)
            else:
                files.append(target)
                lines.append(_file_line(target))
    body = "\n".join(sorted(set(lines))).encode("utf-8", "surrogateescape")
    return CodeScope(
        folders=tuple(done),
        files=tuple(dict.fromkeys(files)),
        watched=tuple(dict.fromkeys(w for w in watched if not os.path.isdir(w))),
        digest=hashlib.sha256(body).hexdigest(),
        count=len(lines),
        notes=tuple(dict.fromkeys(notes)),
    )
