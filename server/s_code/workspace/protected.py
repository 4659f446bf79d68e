"""The protected set, in one place: paths the agent never writes, whatever the mode.

The check runs on the resolved workspace-relative path, component by component, case-folded after
NFC normalization, so ``.GIT/hooks/x`` and ``sub/.git/config`` are caught like ``.git/config``.
The user may add gitignore-style patterns (``initializationOptions.protectedPaths``); nothing the
agent sends can remove a rule.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable

from s_code.protocol.errors import ErrorKind, SCodeError

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


# Directories not searched for nested repositories: dependencies and build output.
_SKIP = frozenset(
    {"node_modules", ".venv", "venv", "target", "build", "dist", "__pycache__", ".tox", ".git"}
)
NESTED_DEPTH = 3
_NESTED_BUDGET = 20000


def nested_git_dirs(workspace: str) -> list[str]:
    """Repositories below the workspace root (``vendor/lib/.git``, a directory or a ``gitdir:``
    file), and directories laid out as a git directory themselves (``HEAD``, ``objects``,
    ``refs``: git would open them as a bare repository), the root included, to ``NESTED_DEPTH``
    levels and a bounded number of directories."""
    found: list[str] = []
    frontier, seen = [""], 0
    for _ in range(NESTED_DEPTH + 1):
        deeper: list[str] = []
        for rel in frontier:
            try:
                entries = list(os.scandir(os.path.join(workspace, rel) if rel else workspace))
            except OSError:
                continue
            names = {e.name for e in entries}
            if {"HEAD", "objects", "refs"} <= names:
                found.append(f"{rel}/HEAD" if rel else "HEAD")  # a bare layout: its HEAD
            for entry in entries:
                seen += 1
                if seen > _NESTED_BUDGET:
                    break
                child = f"{rel}/{entry.name}" if rel else entry.name
                if entry.name == ".git" and rel:
                    found.append(child)
                elif entry.is_dir(follow_symlinks=False) and entry.name not in _SKIP:
                    deeper.append(child)
        frontier = deeper
    return sorted(found)
