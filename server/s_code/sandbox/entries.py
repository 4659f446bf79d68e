"""The file-system side of the protected-path watch: entries, bounded walks, safe removal.

Nothing here follows a symbolic link: entries come from ``lstat``, files are read with
``O_NOFOLLOW | O_NONBLOCK`` (a FIFO cannot hold the check), a walk never descends into a link,
changes are made only below parents checked to be real directories, and a link is removed, never
written through. A directory tree of any depth is removed with two fds and no recursion.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
import uuid
from collections.abc import Iterator

_MAX_BYTES = 4 << 20  # files larger than this are compared by digest and cannot be put back

# ("dir", mode) | ("file", mode, content or None, sha256) | ("link", target) | ("other", mode)
Entry = tuple[object, ...]


def entry_of(path: str, budget: list[int] | None = None) -> Entry | None:
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
    if st.st_size > _MAX_BYTES:  # too large to keep or hash each time: its identity instead
        identity = f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
        return ("file", mode, None, identity)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return ("other", mode)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since the lstat
            return ("other", mode)
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


MAX_ENTRIES = 20000  # per protected name: more is treated as an attack, and removed
KEPT_BYTES = 64 << 20  # content kept for restoring, per snapshot
OVERFLOW: Entry = ("overflow",)


def walk(workspace: str, rel: str, budget: list[int]) -> Iterator[tuple[str, Entry]]:
    """``rel`` and everything below it, without recursion (a directory nested thousands deep is
    fine); past ``MAX_ENTRIES`` it yields ``rel`` as OVERFLOW and stops."""
    stack, count = [rel], 0
    while stack:
        current = stack.pop()
        entry = entry_of(os.path.join(workspace, current), budget)
        if entry is None:
            continue
        count += 1
        if count > MAX_ENTRIES:
            yield rel, OVERFLOW
            return
        yield current, entry
        if entry[0] == "dir":
            try:
                names = os.listdir(os.path.join(workspace, current))
            except OSError:
                continue
            stack.extend(f"{current}/{name}" for name in sorted(names, reverse=True))


def same(a: Entry | None, b: Entry | None) -> bool:
    if a is None or b is None:
        return a is b
    if a[0] == "file" and b[0] == "file":
        return a[1] == b[1] and a[3] == b[3]
    return a == b


def parents_are_dirs(workspace: str, rel: str) -> bool:
    parts = rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        entry = entry_of(os.path.join(workspace, *parts[:i]))
        if entry is None or entry[0] != "dir":
            return False
    return True


def remove(workspace: str, rel: str) -> None:
    if not parents_are_dirs(workspace, rel):
        return
    path = os.path.join(workspace, rel)
    entry = entry_of(path)
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


def create(workspace: str, rel: str, was: Entry) -> bool:
    """Put back what ``was`` there (a directory, a link, or a file whose content was kept)."""
    if not parents_are_dirs(workspace, rel):
        return False
    path = os.path.join(workspace, rel)
    if was[0] == "dir":
        os.mkdir(path, int(was[1]))  # type: ignore[call-overload]
    elif was[0] == "link":
        os.symlink(str(was[1]), path)
    elif was[0] == "file" and was[2] is not None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags, int(was[1]))  # type: ignore[call-overload]
        with os.fdopen(fd, "wb") as fh:
            fh.write(was[2])  # type: ignore[arg-type]
        os.chmod(path, int(was[1]), follow_symlinks=False)  # type: ignore[call-overload]
    else:
        return False
    return True


QUARANTINE = ".s-code-quarantined"


def quarantine(workspace: str, rel: str) -> str | None:
    """Set ``rel`` aside (renamed ``<name>.s-code-quarantined-<time>`` in the same directory,
    never followed, never deleted): git no longer finds it, and nothing the user may want back
    is lost. The new name, or None when there was nothing to move."""
    if not parents_are_dirs(workspace, rel) or entry_of(os.path.join(workspace, rel)) is None:
        return None
    parent, name = os.path.split(rel)
    pfd = os.open(os.path.join(workspace, parent) if parent else workspace, _DIR_OPEN)
    try:
        aside = f"{name}{QUARANTINE}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        os.rename(name, aside, src_dir_fd=pfd, dst_dir_fd=pfd)
    finally:
        os.close(pfd)
    return f"{parent}/{aside}" if parent else aside
