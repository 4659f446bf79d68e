"""An approved host process's code scope: the files whose change changes what it runs.

Trust bound to the one file an entry names is not enough: a server's script imports its sibling
modules, a program in a project's ``.venv`` runs the packages beside it, a Node script requires
what ``node_modules`` holds. The scope of an entry is

- its program and every script its arguments name;
- the folder each script lives in, recursively;
- where the program or a script lies in a place the agent can write (a workspace folder, the
  tool caches): the interpreter environment around it: the Python virtual environment (the folder
  holding ``pyvenv.cfg``, with the folders its ``.pth`` files and editable-install finders add),
  and the ``node_modules`` folders Node resolves from, up to the workspace folder.

A folder that *is* a workspace folder is bound by its top-level files only (binding it whole would
make every edit of the project an edit of the server): the card says so. The scope's digest covers
every entry below its folders: path, type, mode and identity (inode, size, modification and change
times; any write changes the change time, which no program can set back), and a link's target.
``__pycache__`` folders are left out: a host process's Python neither reads nor writes them
(``PYTHONPYCACHEPREFIX`` points it at a cache of its own, where no command writes), so a test run
that compiles the workspace does not unsettle a server. It is part of the entry's trust hash
(:mod:`s_code.hostproc.entry`), so any change makes the entry pending; the walk stats each file
once and hashes no content, so checking a ``.venv`` of a few thousand files at every start is
cheap.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import stat
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
class CodeScope:
    folders: tuple[str, ...]
    """Bound recursively (real paths)."""
    shallow: tuple[str, ...]
    """Bound by their top-level entries only (a workspace folder a script lives in)."""
    files: tuple[str, ...]
    """Bound one by one (the program, the scripts)."""
    digest: str
    count: int
    notes: tuple[str, ...] = ()
    sources: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]] = (
        (),
        (),
        (),
        (),
    )
    """What it was walked from (files, folders, shallow folders, the writable places)."""

    def unchanged(self) -> bool:
        """Walked again from the same places: is every entry what the digest covers?"""
        files, folders, shallow, writable = self.sources
        try:
            again = _bound(list(files), list(folders), list(shallow), writable, [])
        except ScopeTooLarge:
            return False
        return again.digest == self.digest

    def folders_in(self, places: tuple[str, ...]) -> tuple[str, ...]:
        """The folders of the scope that lie in ``places`` (where a sandboxed command may
        write): a command there must not run while the entry checks and starts."""
        found = [*self.folders, *self.shallow, *(os.path.dirname(f) for f in self.files)]
        return tuple(dict.fromkeys(f for f in found if _inside(f, places) is not None))

    def holds(self, path: str) -> bool:
        """Does a change of ``path`` (a real path) change what the entry runs?"""
        if path in self.files:
            return True
        if any(path == f or path.startswith(f + "/") for f in self.folders):
            return True
        return os.path.dirname(path) in self.shallow or path in self.shallow

    def shown(self) -> tuple[str, ...]:
        """What the card shows: each folder and file, and how many entries the digest covers."""
        out = [f"{f}/ (everything below it)" for f in self.folders]
        out += [f"{f}/ (its files, not the folders below)" for f in self.shallow]
        out += list(self.files)
        return (*out, f"{self.count} entries, digest {self.digest[:16]}")


class ScopeTooLarge(ValueError):
    pass


def _inside(path: str, roots: tuple[str, ...]) -> str | None:
    """The root of ``roots`` that holds ``path`` (itself included), or None."""
    for root in roots:
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return root
    return None


def _environment(path: str, top: str) -> list[str]:
    """The interpreter environment around ``path`` (a file inside ``top``): the ancestor that
    holds ``pyvenv.cfg``, and every ``node_modules`` folder on the way up to ``top``."""
    found: list[str] = []
    folder = os.path.dirname(path)
    while True:
        if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
            found.append(folder)
        modules = os.path.join(folder, "node_modules")
        if os.path.isdir(modules) and not os.path.islink(modules):
            found.append(modules)
        if os.path.basename(folder) == "node_modules":
            found.append(folder)
        if folder == top or not folder.startswith(top.rstrip("/") + "/"):
            break
        folder = os.path.dirname(folder)
    return found


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


def code_scope(program: str | None, scripts: Iterable[str], writable: tuple[str, ...]) -> CodeScope:
    """The scope of an entry whose program was found at ``program`` (as found: a venv's python
    stays the venv's) and whose arguments name ``scripts`` (real paths). ScopeTooLarge when it
    cannot be bound."""
    files: list[str] = []
    folders: list[str] = []
    shallow: list[str] = []
    notes: list[str] = []
    named = [p for p in (program, *scripts) if p]
    for spelled in named:
        real = os.path.realpath(spelled)
        for path in dict.fromkeys((real, os.path.abspath(spelled))):
            files.append(path)
            top = _inside(path, writable)
            if top is not None:
                for env in _environment(path, top):
                    folders.append(os.path.realpath(env))
    for script in scripts:
        folder = os.path.dirname(os.path.realpath(script))
        if folder in writable:
            shallow.append(folder)
            notes.append(
                f"{script} lies at the top of {folder}: the files beside it are bound, not the "
                "folders below (keep a server's code in a folder of its own to bind all of it)"
            )
        else:
            folders.append(folder)
    for venv in [f for f in folders if os.path.isfile(os.path.join(f, "pyvenv.cfg"))]:
        for added in _venv_additions(venv):
            if _inside(added, writable) is None:
                continue
            (shallow if added in writable else folders).append(added)
    sources = (tuple(files), tuple(folders), tuple(shallow), writable)
    found = _bound(files, folders, shallow, writable, notes)
    return dataclasses.replace(found, sources=sources)


def _bound(
    files: list[str],
    folders: list[str],
    shallow: list[str],
    writable: tuple[str, ...],
    notes: list[str],
) -> CodeScope:
    """Walk the scope (following links that lead to other agent-writable places, once) and
    digest it."""
    lines = [_file_line(f) for f in dict.fromkeys(files)]
    done: list[str] = []
    whole: list[str] = []  # the folders walked recursively: nothing below them is walked again
    queue = [(f, True) for f in folders] + [(f, False) for f in shallow]
    while queue:
        folder, recursive = queue.pop(0)
        if folder in done or any(folder.startswith(d + "/") for d in whole):
            continue
        if not os.path.isdir(folder):
            continue
        inside = _inside(folder, writable) is not None
        limit = MAX_FILES if inside else MAX_OUTSIDE
        found: list[str] = []
        links: list[str] = []
        try:
            _entries(folder, recursive, limit - len(lines), found, links)
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
            if folder in folders:
                folders.remove(folder)
            continue
        done.append(folder)
        if recursive:
            whole.append(folder)
        lines += found
        for target in links:  # a link into another agent-writable place: bind where it leads
            top = _inside(target, writable)
            if top is None or target in writable:
                continue
            if os.path.isdir(target):
                folders.append(target)
                queue.append((target, True))
            else:
                files.append(target)
                lines.append(_file_line(target))
    body = "\n".join(sorted(lines)).encode("utf-8", "surrogateescape")
    return CodeScope(
        folders=tuple(dict.fromkeys(f for f in folders if f in done)),
        shallow=tuple(dict.fromkeys(f for f in shallow if f in done)),
        files=tuple(dict.fromkeys(files)),
        digest=hashlib.sha256(body).hexdigest(),
        count=len(lines),
        notes=tuple(notes),
    )
