"""Protected paths at the workspace root, snapshotted before a command and checked after.

Tier 1 re-binds them read-only, so nothing changes. Tier 2 (Landlock cannot deny a path below an
allowed directory) relies on this: whatever a command changed under ``.git/config``, ``.git/hooks``,
``.vscode`` and the other protected names is reported and put back as it was.

Nothing here follows a symbolic link: the walk uses ``lstat`` and never descends into a link, files
are read with ``O_NOFOLLOW``, every change is made only below parents checked to be real
directories, and a link is removed, never written through. A replaced ``.git`` directory cannot be
rebuilt from the watched subset, so the replacement is removed and reported, and ``.git`` is left
absent (no repository, so nothing for git to run).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Iterator

from s_code.sandbox.profile import protected_in

# Below .git only what can make git run code; objects and refs are data and can be huge.
_GIT_WATCHED = (
    "config",
    "config.worktree",
    "hooks",
    "info",
    "commondir",
    "modules",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
)
_MAX_BYTES = 4 << 20  # files larger than this are compared by digest and cannot be put back

# ("dir", mode) | ("file", mode, content or None, sha256) | ("link", target) | ("other", mode)
Entry = tuple[object, ...]
Snapshot = dict[str, Entry]  # workspace-relative path -> entry


def _entry(path: str) -> Entry | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISDIR(st.st_mode):
        return ("dir", mode)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    if not stat.S_ISREG(st.st_mode):
        return ("other", mode)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ("other", mode)
    with os.fdopen(fd, "rb") as fh:
        digest = hashlib.sha256()
        kept: bytes | None = b""
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            if kept is not None:
                kept = kept + chunk if len(kept) + len(chunk) <= _MAX_BYTES else None
    return ("file", mode, kept, digest.hexdigest())


def _walk(workspace: str, rel: str) -> Iterator[tuple[str, Entry]]:
    entry = _entry(os.path.join(workspace, rel))
    if entry is None:
        return
    yield rel, entry
    if entry[0] != "dir":
        return
    try:
        names = sorted(os.listdir(os.path.join(workspace, rel)))
    except OSError:
        return
    for name in names:
        yield from _walk(workspace, f"{rel}/{name}")


# Directories not searched for nested repositories: dependencies and build output.
_SKIP = frozenset(
    {"node_modules", ".venv", "venv", "target", "build", "dist", "__pycache__", ".tox", ".git"}
)
NESTED_DEPTH = 3
_NESTED_BUDGET = 5000


def nested_git_dirs(workspace: str) -> list[str]:
    """Repositories below the workspace root (``vendor/lib/.git``), to ``NESTED_DEPTH`` levels and
    a bounded number of directories: a command must not plant a hook or fsmonitor in them either."""
    found: list[str] = []
    frontier, seen = [""], 0
    for _ in range(NESTED_DEPTH):
        deeper: list[str] = []
        for rel in frontier:
            try:
                entries = list(os.scandir(os.path.join(workspace, rel) if rel else workspace))
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > _NESTED_BUDGET or not entry.is_dir(follow_symlinks=False):
                    continue
                child = f"{rel}/{entry.name}" if rel else entry.name
                if entry.name == ".git" and rel:
                    found.append(child)
                elif entry.name not in _SKIP:
                    deeper.append(child)
        frontier = deeper
    return sorted(found)


def _git_subset(workspace: str, rel: str, snap: Snapshot) -> None:
    entry = _entry(os.path.join(workspace, rel))
    if entry is None:
        return
    snap[rel] = entry
    if entry[0] == "dir":
        for name in _GIT_WATCHED:
            snap.update(_walk(workspace, f"{rel}/{name}"))


def snapshot(workspace: str) -> Snapshot:
    snap: Snapshot = {}
    for nested in nested_git_dirs(workspace):
        _git_subset(workspace, nested, snap)
    for top in protected_in(workspace):
        rel = os.path.basename(top)
        if rel == ".git":
            _git_subset(workspace, rel, snap)
        else:
            snap.update(_walk(workspace, rel))
    return snap


def _same(a: Entry | None, b: Entry | None) -> bool:
    if a is None or b is None:
        return a is b
    if a[0] == "file" and b[0] == "file":
        return a[1] == b[1] and a[3] == b[3]
    return a == b


def _parents_are_dirs(workspace: str, rel: str) -> bool:
    parts = rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        entry = _entry(os.path.join(workspace, *parts[:i]))
        if entry is None or entry[0] != "dir":
            return False
    return True


def _remove(workspace: str, rel: str) -> None:
    if not _parents_are_dirs(workspace, rel):
        return
    path = os.path.join(workspace, rel)
    entry = _entry(path)
    if entry is None:
        return
    if entry[0] == "dir":
        shutil.rmtree(path)  # fd-based on Linux: never follows links inside
    else:
        os.unlink(path)


def _create(workspace: str, rel: str, entry: Entry) -> bool:
    if not _parents_are_dirs(workspace, rel):
        return False
    path = os.path.join(workspace, rel)
    if entry[0] == "dir":
        os.mkdir(path, int(entry[1]))  # type: ignore[call-overload]
    elif entry[0] == "link":
        os.symlink(str(entry[1]), path)
    elif entry[0] == "file" and entry[2] is not None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags, int(entry[1]))  # type: ignore[call-overload]
        with os.fdopen(fd, "wb") as fh:
            fh.write(entry[2])  # type: ignore[arg-type]
        os.chmod(path, int(entry[1]), follow_symlinks=False)  # type: ignore[call-overload]
    else:
        return False
    return True


def changed_and_restore(workspace: str, before: Snapshot) -> list[str]:
    """The protected paths a command changed, each put back as it was (or removed)."""
    after = snapshot(workspace)
    changed = sorted(p for p in set(before) | set(after) if not _same(before.get(p), after.get(p)))
    if not changed:
        return []
    # a replaced repository directory cannot be rebuilt from the watched subset: left absent
    replaced = [
        rel
        for rel, was in before.items()
        if os.path.basename(rel) == ".git"
        and was[0] == "dir"
        and (after.get(rel) or ("",))[0] != "dir"
    ]
    # 1. deepest first: remove what is new, or of another kind, or different
    for rel in sorted(changed, key=lambda p: p.count("/"), reverse=True):
        now = after.get(rel)
        if now is None:
            continue
        was = before.get(rel)
        if was is not None and was[0] == "dir" and now[0] == "dir":
            continue  # a directory that is still one: only its children differ
        if was is not None and was[0] == "file" and was[2] is None and now[0] == "file":
            continue  # too large to put back: reported, not removed
        try:
            _remove(workspace, rel)
        except OSError:
            continue
    # 2. shallowest first: put back what was there
    for rel in sorted(changed, key=lambda p: p.count("/")):
        was = before.get(rel)
        if was is None or any(rel == r or rel.startswith(r + "/") for r in replaced):
            continue
        if _same(_entry(os.path.join(workspace, rel)), was):
            continue
        try:
            _create(workspace, rel, was)
        except OSError:
            continue
    return changed
