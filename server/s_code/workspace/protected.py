"""The protected set, in one place: paths the agent never writes, whatever the mode.

The check runs on the resolved workspace-relative path, component by component, case-folded after
NFC normalization, so ``.GIT/hooks/x`` and ``sub/.git/config`` are caught like ``.git/config``.
The user may add gitignore-style patterns (``initializationOptions.protectedPaths``); nothing the
agent sends can remove a rule.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Iterable

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.workspace.root import WorkspaceRoot

# A component with one of these names protects everything below it.
PROTECTED_DIRS = frozenset({".git", ".vscode", ".idea", ".s-code"})
# A final component with one of these names is protected wherever it is.
PROTECTED_FILES = frozenset({".nvim.lua", ".exrc", ".nvimrc", ".envrc", ".gitmodules", ".mcp.json"})


def fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


class ProtectedPaths:
    def __init__(self, extra_patterns: Iterable[str] = ()) -> None:
        self.extra = tuple(extra_patterns)
        self._spec = None
        if self.extra:
            from pathspec import GitIgnoreSpec

            self._spec = GitIgnoreSpec.from_lines(self.extra)

    def reason(self, parts: tuple[str, ...]) -> str | None:
        """Why ``parts`` is protected, or None."""
        folded = [fold(p) for p in parts]
        for i, name in enumerate(folded):
            if name in PROTECTED_DIRS:
                return f"{'/'.join(parts[: i + 1])}/ is protected"
        if folded and folded[-1] in PROTECTED_FILES:
            return f"{parts[-1]} is editor or tool auto-run configuration"
        if self._spec is not None:
            rel = "/".join(parts)
            if self._spec.match_file(rel) or self._spec.match_file("/".join(folded)):
                return "it matches the user's protectedPaths"
        return None

    def user_matches(self, rel: str, is_dir: bool) -> bool:
        """Does a workspace-relative path match one of the user's own patterns?"""
        if self._spec is None:
            return False
        path = rel + "/" if is_dir else rel
        return bool(self._spec.match_file(path) or self._spec.match_file(fold(path)))

    def check(self, parts: tuple[str, ...], display: str) -> None:
        why = self.reason(parts)
        if why is not None:
            raise SCodeError(
                ErrorKind.PROTECTED_PATH, f"{display!r} is protected: {why}", path=display
            )


def protected_in(workspace: str) -> tuple[str, ...]:
    """The protected names at the workspace root (existing or not) as absolute paths."""
    names = sorted(PROTECTED_DIRS | PROTECTED_FILES)
    return tuple(os.path.join(workspace, n) for n in names)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
GIT_LAYOUT = ("HEAD", "objects", "refs")


class GitLayouts:
    """Within one batch of edits: is a path inside a git directory, or would the batch make a
    directory into one? Git opens a directory holding ``HEAD``, ``objects/`` and ``refs/`` as a
    repository (a ``gitdir:`` target, a bare layout, a nested repository's ``.git``), config and
    hooks included, so none is written by the agent, and none may be assembled by it."""

    def __init__(self) -> None:
        self._members: dict[tuple[int, tuple[str, ...]], frozenset[str]] = {}

    def members(self, root: WorkspaceRoot, parts: tuple[str, ...]) -> frozenset[str]:
        """Which of HEAD (a file or link), objects/ and refs/ (directories) ``parts`` holds."""
        key = (id(root), parts)
        found = self._members.get(key)
        if found is not None:
            return found
        have: set[str] = set()
        try:
            with root.opened(parts, _DIR_FLAGS) as fd:
                for name in GIT_LAYOUT:
                    try:
                        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except OSError:
                        continue
                    if (name == "HEAD") != stat.S_ISDIR(st.st_mode):
                        have.add(name)
        except SCodeError:
            pass  # not a directory (yet): it holds nothing
        self._members[key] = found = frozenset(have)
        return found

    def inside(self, root: WorkspaceRoot, parts: tuple[str, ...]) -> str | None:
        """The git directory ``parts`` lies in, if any (the folder itself included)."""
        for i in range(len(parts)):
            if len(self.members(root, parts[:i])) == len(GIT_LAYOUT):
                return "/".join(parts[:i]) or "."
        return None

    def completed(self, root: WorkspaceRoot, created: list[tuple[str, ...]]) -> str | None:
        """A directory that new files would lay out as a git directory, if any."""
        candidates: dict[tuple[str, ...], set[str]] = {}
        for parts in created:
            for i in range(len(parts)):
                name = parts[i]
                last = i == len(parts) - 1
                if (name in ("objects", "refs") and not last) or (name == "HEAD" and last):
                    candidates.setdefault(parts[:i], set()).add(name)
        for directory, adding in candidates.items():
            if adding | self.members(root, directory) >= set(GIT_LAYOUT):
                return "/".join(directory) or "."
        return None
