"""Protected paths at the workspace root, snapshotted before a command and checked after.

Tier 1 re-binds them read-only, so nothing changes. Tier 2 (Landlock cannot deny a path below an
allowed directory) relies on this: whatever a command changed under ``.git/config``, ``.git/hooks``,
``.vscode`` and the other protected names is reported and put back as it was.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from s_code.sandbox.profile import protected_in

# Below .git only what can make git run code; objects and refs are data and can be huge.
_GIT_WATCHED = ("config", "config.worktree", "hooks", "info", "commondir", "modules")
_MAX_FILES = 2000
_MAX_BYTES = 1 << 20

Snapshot = dict[str, bytes | None]  # path -> content (None: a directory)


def _walk(path: str) -> Iterator[str]:
    if os.path.isdir(path) and not os.path.islink(path):
        yield path
        for base, dirs, files in os.walk(path):
            for d in dirs:
                yield os.path.join(base, d)
            for f in files:
                yield os.path.join(base, f)
    elif os.path.lexists(path):
        yield path


def _paths(workspace: str) -> Iterator[str]:
    for top in protected_in(workspace):
        if os.path.basename(top) == ".git" and os.path.isdir(top):
            yield top
            for name in _GIT_WATCHED:
                yield from _walk(os.path.join(top, name))
        else:
            yield from _walk(top)


def snapshot(workspace: str) -> Snapshot:
    snap: Snapshot = {}
    for path in _paths(workspace):
        if len(snap) >= _MAX_FILES:
            break
        if os.path.isdir(path) and not os.path.islink(path):
            snap[path] = None
            continue
        try:
            with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as fh:
                snap[path] = fh.read(_MAX_BYTES)
        except OSError:
            snap[path] = b"\0unreadable"
    return snap


def changed_and_restore(workspace: str, before: Snapshot) -> list[str]:
    """The protected paths a command changed, each put back as it was."""
    after = snapshot(workspace)
    changed = sorted(
        p for p in set(before) | set(after) if before.get(p, b"\0") != after.get(p, b"\0")
    )
    for path in sorted(changed, key=len, reverse=True):  # children before parents
        old = before.get(path, b"\0gone")
        try:
            if path not in before:
                if os.path.isdir(path) and not os.path.islink(path):
                    os.rmdir(path)
                else:
                    os.unlink(path)
            elif isinstance(old, bytes) and not old.startswith(b"\0"):
                if os.path.islink(path) or os.path.isdir(path):
                    continue
                with open(path, "wb") as fh:
                    fh.write(old)
        except OSError:
            continue
    return [os.path.relpath(p, workspace) for p in changed]
