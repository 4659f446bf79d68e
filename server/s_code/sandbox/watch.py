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

import contextlib
import hashlib
import logging
import os
import stat
import uuid
from collections.abc import Iterable, Iterator

from s_code.workspace.protected import nested_git_dirs, protected_in
from s_code.workspace.root import NEVER_BLOCK

log = logging.getLogger(__name__)

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


def _entry(path: str, budget: list[int] | None = None) -> Entry | None:
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
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | NEVER_BLOCK)
    except OSError:
        return ("other", mode)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since the lstat (/dev/zero never ends)
        os.close(fd)
        return ("other", mode)
    with os.fdopen(fd, "rb") as fh:
        digest = hashlib.sha256()
        kept: bytes | None = b""
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            if kept is not None:
                kept = kept + chunk if len(kept) + len(chunk) <= _MAX_BYTES else None
    if kept is not None and budget is not None:
        budget[0] -= len(kept)
        if budget[0] < 0:
            kept = None  # the snapshot keeps no more content: compared by digest only
    return ("file", mode, kept, digest.hexdigest())


_MAX_ENTRIES = 20000  # per protected name: more is treated as an attack, and removed
_KEPT_BYTES = 64 << 20  # content kept for restoring, per snapshot
OVERFLOW: Entry = ("overflow",)


def _walk(workspace: str, rel: str, budget: list[int]) -> Iterator[tuple[str, Entry]]:
    """``rel`` and everything below it, without recursion (a directory nested thousands deep is
    fine); past ``_MAX_ENTRIES`` it yields ``rel`` as OVERFLOW and stops."""
    stack, count = [rel], 0
    while stack:
        current = stack.pop()
        entry = _entry(os.path.join(workspace, current), budget)
        if entry is None:
            continue
        count += 1
        if count > _MAX_ENTRIES:
            yield rel, OVERFLOW
            return
        yield current, entry
        if entry[0] == "dir":
            try:
                names = os.listdir(os.path.join(workspace, current))
            except OSError:
                continue
            stack.extend(f"{current}/{name}" for name in sorted(names, reverse=True))


def _git_subset(workspace: str, rel: str, snap: Snapshot, budget: list[int]) -> None:
    entry = _entry(os.path.join(workspace, rel), budget)
    if entry is None:
        return
    snap[rel] = entry
    if entry[0] == "dir":
        for name in _GIT_WATCHED:
            snap.update(_walk(workspace, f"{rel}/{name}", budget))


def snapshot(workspace: str, known: Iterable[str] = ()) -> Snapshot:
    """The protected entries; ``known``: repositories seen before (kept even when the bounded
    search for nested ones would not reach them now)."""
    snap: Snapshot = {}
    budget = [_KEPT_BYTES]
    for nested in sorted({*nested_git_dirs(workspace), *known}):
        if os.path.basename(nested) == "HEAD":
            entry = _entry(os.path.join(workspace, nested), budget)
            if entry is not None:
                snap[nested] = entry
        else:
            _git_subset(workspace, nested, snap, budget)
    for top in protected_in(workspace):
        rel = os.path.basename(top)
        if rel == ".git":
            _git_subset(workspace, rel, snap, budget)
        else:
            snap.update(_walk(workspace, rel, budget))
    return snap


def repositories(snap: Snapshot) -> set[str]:
    """The nested repositories and bare layouts a snapshot holds (for the next one's ``known``)."""
    found = set()
    for rel in snap:
        name = os.path.basename(rel)
        if rel.startswith(".git/"):
            continue
        if (name == ".git" and "/" in rel) or (name == "HEAD" and "/.git/" not in f"/{rel}"):
            found.add(rel)
    return found


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
        _rmtree(path)
    else:
        os.unlink(path)


_DIR_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _rmtree(path: str) -> None:
    """Remove a directory tree of any depth with two fds and no recursion, never following a
    link: the tree is renamed aside, then each subdirectory's entries are moved up into its top
    and the emptied subdirectory removed, until the top is empty."""
    parent, name = os.path.split(path)
    pfd = os.open(parent, _DIR_OPEN)
    try:
        aside = f".s-code-removing-{uuid.uuid4().hex}"
        os.rename(name, aside, src_dir_fd=pfd, dst_dir_fd=pfd)
        top = os.open(aside, _DIR_OPEN, dir_fd=pfd)
        moved = 0
        try:
            while names := os.listdir(top):
                for entry in names:
                    if not stat.S_ISDIR(os.lstat(entry, dir_fd=top).st_mode):
                        os.unlink(entry, dir_fd=top)
                        continue
                    child = os.open(entry, _DIR_OPEN, dir_fd=top)
                    try:
                        for inner in os.listdir(child):
                            moved += 1
                            os.rename(inner, f"{aside}.{moved}", src_dir_fd=child, dst_dir_fd=top)
                    finally:
                        os.close(child)
                    os.rmdir(entry, dir_fd=top)
        finally:
            os.close(top)
        os.rmdir(aside, dir_fd=pfd)
    finally:
        os.close(pfd)


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
    """The protected paths a command changed, each put back as it was (or removed). A failure
    of the check itself fails closed: whatever protected entry did not exist before is removed."""
    try:
        return _restore(workspace, before)
    except Exception as exc:
        log.error("the protected-path check failed (%s): removing what is new", exc)
        removed = []
        after_tops = [os.path.basename(t) for t in protected_in(workspace)]
        for rel in [*after_tops, *repositories(before)]:
            if rel not in before and os.path.lexists(os.path.join(workspace, rel)):
                with contextlib.suppress(OSError):
                    _remove(workspace, rel)
                    removed.append(rel)
        return [*removed, f"(the check failed: {type(exc).__name__}; new entries removed)"]


def _under(rel: str, root: str) -> bool:
    return rel == root or rel.startswith(root + "/")


def _restore(workspace: str, before: Snapshot) -> list[str]:
    after = snapshot(workspace, known=repositories(before))
    notes: list[str] = []
    # A protected tree that overflowed the walk: removed whole, then rebuilt from ``before``
    # (unless it was already too large before: then it cannot be verified, and is reported).
    for rel in [r for r, e in after.items() if e == OVERFLOW]:
        if before.get(rel) == OVERFLOW:
            notes.append(f"{rel} (too many entries to verify)")
            continue
        _remove(workspace, rel)
        after = {k: v for k, v in after.items() if not _under(k, rel)}
    changed = sorted(p for p in set(before) | set(after) if not _same(before.get(p), after.get(p)))
    unverifiable = [r for r, e in before.items() if e == OVERFLOW]
    changed = [p for p in changed if not any(_under(p, r) for r in unverifiable)]
    # Below an entry that is new (or replaced by another kind), the removal of that entry covers
    # everything: keep only the topmost of such paths (a tree 1,000 levels deep is one removal).
    covering: list[str] = []
    kept: list[str] = []
    for rel in changed:  # sorted: a parent comes before its children
        if any(_under(rel, c) for c in covering[-1:]) or any(_under(rel, c) for c in covering):
            continue
        kept.append(rel)
        was, now = before.get(rel), after.get(rel)
        if now is not None and (was is None or was[0] != now[0]):
            covering.append(rel)
    changed = kept
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
        with contextlib.suppress(OSError):
            _remove(workspace, rel)
    # 2. shallowest first: put back what was there
    for rel in sorted(changed, key=lambda p: p.count("/")):
        was = before.get(rel)
        if was is None or any(_under(rel, r) for r in replaced):
            continue
        if _same(_entry(os.path.join(workspace, rel)), was):
            continue
        with contextlib.suppress(OSError):
            _create(workspace, rel, was)
    return [*changed, *notes]
