"""list_files: a bounded, deterministic, gitignore-aware walk that never follows symlinks.

Entries come in depth-first order with names sorted at each level, which is the order of the
paths' component tuples. ``cursor`` is the last path of the previous page; the walk skips every
subtree that lies wholly before it.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from dataclasses import dataclass

from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.workspace.folders import Folders
from s_code.workspace.ignore import ALWAYS_SKIPPED, IgnoreStack
from s_code.workspace.root import Entry, WorkspaceRoot


@dataclass(frozen=True)
class Listed:
    path: str
    kind: str
    size: int | None


@dataclass(frozen=True)
class Listing:
    entries: list[Listed]
    truncated: bool
    next_cursor: str | None


def _iter(
    root: WorkspaceRoot,
    dir_parts: tuple[str, ...],
    stack: IgnoreStack | None,
    recursive: bool,
    after: tuple[str, ...] | None,
) -> Iterator[tuple[tuple[str, ...], Entry]]:
    entries = root.list_dir(dir_parts)
    if stack is not None:
        stack = stack.enter(dir_parts, has_gitignore=any(e.name == ".gitignore" for e in entries))
    for entry in entries:
        parts = (*dir_parts, entry.name)
        is_dir = entry.kind == "dir"
        if entry.name in ALWAYS_SKIPPED:
            continue
        if stack is not None and stack.ignored(parts, is_dir):
            continue
        inside_cursor = is_dir and after is not None and after[: len(parts)] == parts
        if after is not None and parts <= after and not inside_cursor:
            continue  # this entry, and its whole subtree, came before the cursor
        if after is None or parts > after:
            yield parts, entry
        if is_dir and recursive:
            yield from _iter(root, parts, stack, recursive, after)


def list_files(
    folders: Folders,
    path: str,
    *,
    recursive: bool,
    include_ignored: bool,
    max_results: int,
    cursor: str | None,
) -> Listing:
    loc = folders.locate(path)
    st = loc.root.lstat(loc.rel)
    if stat.S_ISLNK(st.st_mode):
        raise SCodeError(
            ErrorKind.PATH_ESCAPE, f"{loc.display!r} is a symbolic link", path=path, field="path"
        )
    if not stat.S_ISDIR(st.st_mode):
        raise SCodeError(ErrorKind.NOT_FOUND, f"{loc.display!r} is not a directory", path=path)
    after: tuple[str, ...] | None = None
    if cursor is not None:
        cur = folders.locate(cursor, "cursor")
        if cur.root is not loc.root or cur.parts[: len(loc.parts)] != loc.parts:
            raise invalid_params("cursor is not a path below 'path'", "cursor")
        after = cur.parts
    stack = None if include_ignored else IgnoreStack.for_root(loc.root)
    if stack is not None:
        # A listing below the root: each ancestor is checked with the rules in force at its
        # parent, as git does, so nothing inside an ignored directory can be re-included.
        for depth in range(len(loc.parts)):
            stack = stack.enter(loc.parts[:depth], has_gitignore=True)
            if stack.ignored(loc.parts[: depth + 1], True):
                return Listing([], False, None)
    out: list[Listed] = []
    for parts, entry in _iter(loc.root, loc.parts, stack, recursive, after):
        if len(out) == max_results:
            return Listing(out, True, out[-1].path)
        shown = folders.display(loc.root, parts)
        out.append(Listed(shown, entry.kind, entry.size if entry.kind == "file" else None))
    return Listing(out, False, None)
