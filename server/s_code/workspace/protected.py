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
from s_code.workspace.gitdirs import is_git_dir
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
        self.held: frozenset[str] = frozenset()
        """Files s-code runs with the user's authority (the scripts a hook names), relative to
        a workspace folder: protected like the user's patterns (see :meth:`hold`)."""

    def hold(self, rel_paths: Iterable[str]) -> None:
        """Protect exactly these workspace-relative files, and everything below the ones that end
        with ``/`` (directories), replacing what was held before."""
        self.held = frozenset(fold(p) for p in rel_paths)

    def _held(self, folded: list[str]) -> bool:
        if "/".join(folded) in self.held:
            return True
        return any("/".join(folded[:i]) + "/" in self.held for i in range(1, len(folded) + 1))

    @property
    def any_files(self) -> bool:
        """Are there file rules beyond the fixed names (the user's patterns, held files)?"""
        return bool(self.extra or self.held)

    def reason(self, parts: tuple[str, ...]) -> str | None:
        """Why ``parts`` is protected, or None."""
        folded = [fold(p) for p in parts]
        for i, name in enumerate(folded):
            if name in PROTECTED_DIRS:
                return f"{'/'.join(parts[: i + 1])}/ is protected"
        if folded and folded[-1] in PROTECTED_FILES:
            return f"{parts[-1]} is editor or tool auto-run configuration"
        if self.held and self._held(folded):
            return "a hook runs it, or it lies beside a hook's script: the agent cannot change it"
        if self._spec is not None:
            rel = "/".join(parts)
            if self._spec.match_file(rel) or self._spec.match_file("/".join(folded)):
                return "it matches the user's protectedPaths"
        return None

    def user_matches(self, rel: str, is_dir: bool) -> bool:
        """Does a workspace-relative path match one of the user's own patterns?"""
        if self.held and self._held([fold(p) for p in rel.split("/")]):
            return True
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


GIT_LAYOUT = ("HEAD", "objects", "refs")


class GitLayouts:
    """Within one batch of edits: is a path inside a git directory, or would the batch make a
    directory into one? Git takes a directory holding ``HEAD`` and, in it or in the directory its
    ``commondir`` names, ``objects/`` and ``refs/`` (links followed) for a repository, config and
    hooks included, so none is written by the agent, and none may be assembled by it."""

    def __init__(self) -> None:
        self._known: dict[str, bool] = {}

    def _is_git_dir(self, path: str) -> bool:
        found = self._known.get(path)
        if found is None:
            found = self._known[path] = is_git_dir(path)
        return found

    def inside(self, root: WorkspaceRoot, parts: tuple[str, ...]) -> str | None:
        """The git directory ``parts`` lies in, if any (the folder itself included)."""
        for i in range(len(parts)):
            if self._is_git_dir(os.path.join(root.real_path, *parts[:i])):
                return "/".join(parts[:i]) or "."
        return None

    def completed(self, root: WorkspaceRoot, created: list[tuple[str, ...]]) -> str | None:
        """A directory that new files would make a git directory, if any: one that would hold a
        ``HEAD`` and either a ``commondir`` or ``objects/`` and ``refs/`` (new or already
        there)."""
        adding: dict[tuple[str, ...], set[str]] = {}
        for parts in created:
            for i, name in enumerate(parts):
                last = i == len(parts) - 1
                if (name in ("objects", "refs") and not last) or (
                    name in ("HEAD", "commondir") and last
                ):
                    adding.setdefault(parts[:i], set()).add(name)
        for directory, names in adding.items():
            path = os.path.join(root.real_path, *directory)
            have = {n for n in GIT_LAYOUT if os.path.lexists(os.path.join(path, n))}
            if os.path.lexists(os.path.join(path, "commondir")):
                have.add("commondir")
            after = names | have
            if "HEAD" in after and ("commondir" in after or {"objects", "refs"} <= after):
                return "/".join(directory) or "."
        return None
