"""The workspace folders of a session, and how tool paths address them.

A single-folder workspace takes paths relative to its root. A multi-root workspace takes
``<folder name>/<relative path>``; folder names are made unique by suffixing ``-2``, ``-3``...
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.workspace.paths import join, split_relative
from s_code.workspace.root import WorkspaceRoot


@dataclass(frozen=True)
class Located:
    """A validated tool path: which root, the components below it, and how to display it."""

    root: WorkspaceRoot
    parts: tuple[str, ...]
    display: str

    @property
    def rel(self) -> str:
        return join(self.parts)

    def abs_paths(self) -> tuple[str, ...]:
        """The absolute spellings of this path (as given, and through the root's realpath)."""
        tail = self.parts
        a = os.path.join(self.root.path, *tail)
        b = os.path.join(self.root.real_path, *tail)
        return (a,) if a == b else (a, b)


class Folders:
    def __init__(self, roots: list[WorkspaceRoot]) -> None:
        if not roots:
            raise ValueError("a workspace needs at least one folder")
        self.roots = roots
        self.by_name = {r.name: r for r in roots}
        if len(roots) > 1:
            for r in roots:
                r.prefix = (r.name,)

    @classmethod
    def open(cls, folders: list[tuple[str, str | None]]) -> Folders:
        """Open ``(absolute path, name)`` pairs, uniquifying names."""
        roots: list[WorkspaceRoot] = []
        seen: set[str] = set()
        for path, name in folders:
            base = name or os.path.basename(os.path.normpath(path)) or "root"
            unique, n = base, 1
            while unique in seen:
                n += 1
                unique = f"{base}-{n}"
            seen.add(unique)
            roots.append(WorkspaceRoot(path, unique))
        return cls(roots)

    @property
    def primary(self) -> WorkspaceRoot:
        return self.roots[0]

    @property
    def multi_root(self) -> bool:
        return len(self.roots) > 1

    def locate(self, path: str, field: str = "path") -> Located:
        parts = split_relative(path, field)
        if not self.multi_root:
            return Located(self.primary, parts, join(parts))
        if not parts:
            raise SCodeError(
                ErrorKind.NOT_FOUND,
                "this is a multi-root workspace: start paths with a folder name "
                f"({', '.join(sorted(self.by_name))})",
                path=path,
            )
        root = self.by_name.get(parts[0])
        if root is None:
            raise SCodeError(
                ErrorKind.NOT_FOUND,
                f"no workspace folder named {parts[0]!r}; "
                f"folders: {', '.join(sorted(self.by_name))}",
                path=path,
            )
        return Located(root, parts[1:], join(parts))

    def display(self, root: WorkspaceRoot, parts: tuple[str, ...]) -> str:
        return join((root.name, *parts)) if self.multi_root else join(parts)

    def close(self) -> None:
        for r in self.roots:
            r.close()
