"""Every git directory in a workspace, at any depth, kept current at the cost of a stat per folder.

Git picks up configuration (and so code to run) from more places than ``<root>/.git``: a nested
repository anywhere (``build/x/.git``, ``node_modules/p/.git``), the real git directory a
``.git`` *file* names (``gitdir: .gitdata``), the common directory a ``commondir`` names, and any
directory laid out as a git directory itself (``HEAD``, ``objects/``, ``refs/``: a bare repository
that git opens when run inside it). :class:`TreeIndex` knows every directory of the workspace and
which of those it holds, so the sandbox can keep each one read-only (tier 1) or put it back after
a command (tier 2), and the edit engine can refuse to write inside one.

The first :meth:`TreeIndex.refresh` walks the whole tree (no directory is skipped: ignored build
and dependency folders are exactly where a planted repository would hide). Later refreshes
``lstat`` each known directory and list again only those whose inode or change time moved: an
entry created, removed or renamed in a directory changes that directory's ctime, and a ctime
cannot be set back (``utime`` sets it to now). A directory whose ctime is within
``RECENT_NS`` of the refresh is listed again next time whatever it shows, so two changes inside
one tick of the file system's clock cannot hide the second. Nothing follows a symbolic link.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field

GIT_LAYOUT = frozenset({"HEAD", "objects", "refs"})
MAX_GITFILE_BYTES = 4096
MAX_INNER_DIRS = 10_000  # directories looked through below git directories for modules
RECENT_NS = 200_000_000  # 0.2 s: far beyond any file system's timestamp granularity
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class DirState:
    ino: int
    ctime_ns: int
    subdirs: tuple[str, ...]
    """Child directories walked into (not ``.git``, not a git layout's own internals)."""
    names: frozenset[str]
    """Every entry name (file, directory, link): for the user's protected patterns."""
    dot_git: str | None
    """The kind of a ``.git`` entry here: ``dir``, ``file``, ``link``, ``other``, or None."""
    has_head: bool
    """It holds a ``HEAD``: whether git takes it for a git directory is decided when asked
    (:func:`is_git_dir`, which follows links and ``commondir``: what they point to may change
    without this directory changing)."""


@dataclass
class GitDirs:
    """What a scan found: workspace-relative paths (``""`` is the root)."""

    dirs: set[str] = field(default_factory=set)
    """Git directories (``x/.git``, a ``gitdir:`` target, a common dir, a bare layout)."""
    gitfiles: set[str] = field(default_factory=set)
    """``.git`` entries that are not directories (files naming a gitdir, links, others)."""
    layouts: set[str] = field(default_factory=set)
    """Directories laid out as git directories (a subset of ``dirs``)."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "link"
    return "other"


def read_small(path: str, limit: int = MAX_GITFILE_BYTES, *, follow: bool = False) -> bytes | None:
    """A small regular file's bytes, or None: opened non-blocking (a FIFO or a device named
    ``.git`` or ``commondir`` cannot hold the caller), following a link only when ``follow``
    (as git does for ``commondir``)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags if follow else flags | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def is_git_dir(path: str) -> bool:
    """git's own test (``is_git_directory``): a ``HEAD`` file or link, and ``objects/`` and
    ``refs/`` in the common directory (``commondir`` names it; else the directory itself), links
    followed as git follows them. Any HEAD counts (git also checks its content: a superset is the
    safe side)."""
    try:
        head = os.lstat(os.path.join(path, "HEAD"))
    except OSError:
        return False
    if not (stat.S_ISREG(head.st_mode) or stat.S_ISLNK(head.st_mode)):
        return False
    common = common_dir(path) or path
    return os.path.isdir(os.path.join(common, "objects")) and os.path.isdir(
        os.path.join(common, "refs")
    )


def common_dir(path: str) -> str | None:
    """Where ``path/commondir`` points (followed as git follows it), or None."""
    raw = read_small(os.path.join(path, "commondir"), follow=True)
    if raw is None:
        return None
    return os.path.normpath(os.path.join(path, raw.decode("utf-8", "replace").strip()))


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


class TreeIndex:
    """The directories of one workspace, refreshed incrementally (see the module docstring)."""

    def __init__(self, workspace: str) -> None:
        self.workspace = os.path.realpath(workspace)
        self.dirs: dict[str, DirState] = {}
        self._recent: set[str] = set()
        self.listed = 0  # directories listed by the last refresh (for the benchmark)

    def _abs(self, rel: str) -> str:
        return os.path.join(self.workspace, rel) if rel else self.workspace

    def _list(self, rel: str, now_ns: int) -> DirState | None:
        try:
            fd = os.open(self._abs(rel), _DIR_FLAGS)
        except OSError:
            return None
        try:  # every entry is looked at while the fd is open (DirEntry stats through it)
            st = os.fstat(fd)
            names: set[str] = set()
            dirs_here: set[str] = set()
            dot_git = None
            for e in os.scandir(fd):
                names.add(e.name)
                try:
                    if e.name == ".git":
                        dot_git = _kind(e.stat(follow_symlinks=False).st_mode)
                    elif e.is_dir(follow_symlinks=False):
                        dirs_here.add(e.name)
                except OSError:
                    continue
        except OSError:
            return None
        finally:
            os.close(fd)
        self.listed += 1
        has_head = "HEAD" in names
        if has_head and {"objects", "refs"} <= dirs_here:  # objects and refs: data, huge
            dirs_here -= {"objects", "refs"}
        if st.st_ctime_ns >= now_ns - RECENT_NS:
            self._recent.add(rel)
        return DirState(
            st.st_ino, st.st_ctime_ns, tuple(sorted(dirs_here)), frozenset(names), dot_git, has_head
        )

    def _walk(self, start: str, now_ns: int) -> None:
        stack = [start]
        while stack:
            rel = stack.pop()
            state = self._list(rel, now_ns)
            if state is None:
                continue
            self.dirs[rel] = state
            stack.extend(f"{rel}/{s}" if rel else s for s in state.subdirs)

    def _drop(self, rel: str) -> None:
        """Forget ``rel`` and what the index holds below it: a walk of that subtree alone (the
        cost of a removal is the size of what was removed, never of the whole index)."""
        stack = [rel]
        while stack:
            key = stack.pop()
            state = self.dirs.pop(key, None)
            self._recent.discard(key)
            if state is not None:
                stack.extend(f"{key}/{s}" if key else s for s in state.subdirs)

    def refresh(self) -> None:
        """Bring the index up to date with the tree (a full walk the first time)."""
        now_ns = time.time_ns()
        self.listed = 0
        if not self.dirs:
            self._recent.clear()
            self._walk("", now_ns)
            return
        recent, self._recent = self._recent, set()
        for rel in sorted(self.dirs):
            old = self.dirs.get(rel)
            if old is None:  # dropped with a parent that changed
                continue
            try:
                st = os.lstat(self._abs(rel))
            except OSError:
                self._drop(rel)
                continue
            if not stat.S_ISDIR(st.st_mode):
                self._drop(rel)
                continue
            if st.st_ino != old.ino:  # another directory under the same name: a new subtree
                self._drop(rel)
                self._walk(rel, now_ns)
                continue
            if st.st_ctime_ns == old.ctime_ns and rel not in recent:
                continue
            new = self._list(rel, now_ns)
            if new is None:
                self._drop(rel)
                continue
            self.dirs[rel] = new
            for gone in set(old.subdirs) - set(new.subdirs):
                self._drop(f"{rel}/{gone}" if rel else gone)
            for name in new.subdirs:
                child = f"{rel}/{name}" if rel else name
                kept = self.dirs.get(child)
                if kept is None:
                    self._walk(child, now_ns)
        if "" not in self.dirs:  # the root itself moved: start again
            self._walk("", now_ns)

    def git_dirs(self) -> GitDirs:
        """Every git directory and ``.git`` entry the index holds, with the targets of ``.git``
        files and ``commondir`` links that lie inside the workspace."""
        found = GitDirs()
        budget = [MAX_INNER_DIRS]
        for rel, state in self.dirs.items():
            if state.has_head and is_git_dir(self._abs(rel)):
                found.dirs.add(rel)
                found.layouts.add(rel)
                self._add_common(rel, found)
            if state.dot_git is None:
                continue
            dot = f"{rel}/.git" if rel else ".git"
            if state.dot_git == "dir":
                found.dirs.add(dot)
                self._add_common(dot, found)
                continue
            found.gitfiles.add(dot)
            if state.dot_git == "file":
                target = self._gitfile_target(rel, dot)
                if target is not None:
                    found.dirs.add(target)
                    self._add_common(target, found)
        for gitdir in list(found.dirs):
            self._inner(gitdir, found, budget)
        return found

    def matching(self, match: Callable[[str, bool], bool]) -> list[str]:
        """The topmost entries (files or directories) for which ``match(rel, is_dir)`` holds:
        the files of the user's protected patterns, wherever they are."""
        found: set[str] = set()
        for rel in sorted(self.dirs):
            parts = rel.split("/") if rel else []
            if any("/".join(parts[: i + 1]) in found for i in range(len(parts))):
                continue  # inside a matched directory: matched with it
            state = self.dirs[rel]
            subdirs = set(state.subdirs)
            for name in state.names:
                path = f"{rel}/{name}" if rel else name
                if match(path, name in subdirs):
                    found.add(path)
        return sorted(found)

    def _inner(self, gitdir: str, found: GitDirs, budget: list[int]) -> None:
        """The git directories inside one: submodules (``modules/**``) and linked worktrees
        (``worktrees/*``), each watched as its own (their objects are never walked)."""
        stack = [f"{gitdir}/{name}" for name in ("modules", "worktrees")]
        while stack and budget[0] > 0:
            rel = stack.pop()
            budget[0] -= 1
            path = self._abs(rel)
            try:
                names = os.listdir(path)
            except OSError:
                continue
            if rel.rsplit("/", 1)[-1] not in ("modules", "worktrees") and is_git_dir(path):
                found.dirs.add(rel)
                stack += [f"{rel}/modules"]
                continue
            for name in names:
                child = f"{rel}/{name}"
                if os.path.isdir(self._abs(child)) and not os.path.islink(self._abs(child)):
                    stack.append(child)

    def _rel(self, path: str) -> str | None:
        real = os.path.realpath(path)
        if not _inside(real, self.workspace):
            return None  # outside: a command cannot write there
        rel = os.path.relpath(real, self.workspace).replace(os.sep, "/")
        return "" if rel == "." else rel

    def _gitfile_target(self, rel: str, dot: str) -> str | None:
        raw = read_small(self._abs(dot))
        if raw is None:
            return None
        text = raw.decode("utf-8", "replace").strip()
        if not text.startswith("gitdir:"):
            return None
        return self._rel(os.path.join(self._abs(rel), text[len("gitdir:") :].strip()))

    def _add_common(self, gitdir: str, found: GitDirs) -> None:
        target = common_dir(self._abs(gitdir))
        common = self._rel(target) if target is not None else None
        if common is not None and common not in found.dirs:
            found.dirs.add(common)
