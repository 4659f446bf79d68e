"""Git-style ignore rules for discovery: nested ``.gitignore`` files and ``.git/info/exclude``.

Rules are read through the WorkspaceRoot (never following symlinks). A deeper ``.gitignore`` wins
over a shallower one, as in git; within one file the last matching pattern wins (pathspec).
"""

from __future__ import annotations

from dataclasses import dataclass

from pathspec import GitIgnoreSpec

from s_code.protocol.errors import SCodeError
from s_code.workspace.root import WorkspaceRoot

MAX_IGNORE_FILE = 1024 * 1024
ALWAYS_SKIPPED = frozenset({".git"})


@dataclass(frozen=True)
class _Rules:
    base: tuple[str, ...]  # directory the rules are relative to
    spec: GitIgnoreSpec


def _load(root: WorkspaceRoot, parts: tuple[str, ...]) -> GitIgnoreSpec | None:
    try:
        data = root.read_parts(parts, MAX_IGNORE_FILE)
    except (SCodeError, OSError):
        return None
    lines = data.decode("utf-8", "replace").splitlines()
    spec = GitIgnoreSpec.from_lines(lines)
    return spec if len(spec) else None


class IgnoreStack:
    """The ignore rules in force for one directory; :meth:`enter` derives a child's."""

    def __init__(self, root: WorkspaceRoot, rules: tuple[_Rules, ...] = ()) -> None:
        self.root = root
        self.rules = rules

    @classmethod
    def for_root(cls, root: WorkspaceRoot) -> IgnoreStack:
        rules: list[_Rules] = []
        exclude = _load(root, (".git", "info", "exclude"))
        if exclude is not None:
            rules.append(_Rules((), exclude))
        return cls(root, tuple(rules))

    def enter(self, dir_parts: tuple[str, ...], *, has_gitignore: bool) -> IgnoreStack:
        if not has_gitignore:
            return self
        spec = _load(self.root, (*dir_parts, ".gitignore"))
        if spec is None:
            return self
        return IgnoreStack(self.root, (*self.rules, _Rules(dir_parts, spec)))

    def ignored(self, parts: tuple[str, ...], is_dir: bool) -> bool:
        if parts and parts[-1] in ALWAYS_SKIPPED:
            return True
        for rules in reversed(self.rules):
            rel = "/".join(parts[len(rules.base) :])
            if is_dir:
                rel += "/"
            result = rules.spec.check_file(rel)
            if result.include is not None:
                return bool(result.include)
        return False
