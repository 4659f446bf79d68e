"""Protected paths: never written by the agent, whatever the permission mode.

The check runs on the resolved workspace-relative path, component by component, case-folded after
NFC normalization, so ``.GIT/hooks/x`` and ``sub/.git/config`` are caught like ``.git/config``.
The user may add gitignore-style patterns (``initializationOptions.protectedPaths``); nothing the
agent sends can remove a rule.
"""

from __future__ import annotations

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
