"""WorkspaceRoot: a capability for one workspace folder, in the manner of Go's ``os.Root``.

It holds a directory fd opened once, remembers the directory's (st_dev, st_ino), and performs every
operation relative to that fd with :func:`open_beneath`. Paths are validated before any system call
with effects. An escape is an :class:`SCodeError` of kind ``path_escape``, never a boolean.

Every open through it is non-blocking (``O_NONBLOCK | O_NOCTTY``, SECURITY.md T1): a FIFO, a
device or a socket in the workspace never blocks the opener (on the event loop, that would freeze
the server), and a terminal never becomes the server's controlling terminal. Whoever reads checks
``S_ISREG`` first (:meth:`WorkspaceRoot.read_parts`, :func:`read_head`).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.workspace.openat2 import open_beneath
from s_code.workspace.paths import join, split_relative

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
NEVER_BLOCK = os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
"""Added to every open of workspace or repository content."""


@dataclass(frozen=True)
class Entry:
    """One directory entry, never followed: ``kind`` is file, dir, symlink or other."""

    name: str
    kind: str
    size: int


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


class WorkspaceRoot:
    """One workspace folder. ``name`` addresses it in multi-root workspaces."""

    def __init__(self, path: str, name: str | None = None) -> None:
        if not os.path.isabs(path):
            raise ValueError(f"workspace root must be absolute: {path!r}")
        self.path = os.path.normpath(path)
        self.real_path = os.path.realpath(self.path)
        self.name = name or os.path.basename(self.path) or "root"
        # How error messages spell a path below this root: with the folder's name in front in a
        # multi-root workspace (set by Folders), as the agent spells it.
        self.prefix: tuple[str, ...] = ()
        self._fd = os.open(self.path, _DIR_FLAGS)
        st = os.fstat(self._fd)
        self._identity = (st.st_dev, st.st_ino)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    @property
    def fd(self) -> int:
        """The held directory fd (for spawning helpers with this directory as their cwd)."""
        self.ensure_intact()
        return self._fd

    def ensure_intact(self) -> None:
        """Refuse to work on if the root path no longer names the directory opened at start."""
        try:
            st = os.stat(self.path)
        except OSError:
            st = None
        if st is None or (st.st_dev, st.st_ino) != self._identity:
            raise SCodeError(
                ErrorKind.PATH_ESCAPE,
                f"the workspace root {self.path} was moved or replaced; restart the session",
                path=".",
            )

    def shown(self, parts: tuple[str, ...]) -> str:
        """``parts`` as the agent spells it (the folder's name first in a multi-root workspace)."""
        return join((*self.prefix, *parts))

    # -- resolution ---------------------------------------------------------------------------

    def _error(self, exc: OSError, rel: str, field: str) -> SCodeError:
        code = exc.errno
        if code in (errno.ELOOP, errno.EXDEV):
            return SCodeError(
                ErrorKind.PATH_ESCAPE,
                f"{rel!r} goes through a symbolic link or leaves the workspace",
                path=rel,
                field=field,
            )
        if code in (errno.ENOENT, errno.ENOTDIR):
            return SCodeError(ErrorKind.NOT_FOUND, f"{rel!r} does not exist", path=rel)
        if code in (errno.EACCES, errno.EPERM):
            return SCodeError(
                ErrorKind.NOT_FOUND,
                f"{rel!r} is not readable (permission denied)",
                path=rel,
                reason="permission_denied",
            )
        if code == errno.ENAMETOOLONG:
            return invalid_params(f"{rel!r} is too long", field)
        if code == errno.ENXIO:  # a unix socket (or a device with no driver)
            return invalid_params(f"{rel!r} is not a regular file (a socket?)", field, path=rel)
        return SCodeError(
            ErrorKind.NOT_FOUND, f"{rel!r} could not be opened: {exc.strerror}", path=rel
        )

    def open(
        self, path: str, flags: int = os.O_RDONLY, mode: int = 0, *, field: str = "path"
    ) -> int:
        """Open ``path`` beneath the root and return a new fd (the caller closes it), never
        blocking (``O_NONBLOCK`` is always added)."""
        parts = split_relative(path, field)
        return self.open_parts(parts, flags, mode, field=field)

    def open_parts(
        self,
        parts: tuple[str, ...],
        flags: int = os.O_RDONLY,
        mode: int = 0,
        *,
        field: str = "path",
    ) -> int:
        self.ensure_intact()
        flags |= NEVER_BLOCK
        if not parts:
            return (
                os.dup(self._fd) if flags & os.O_DIRECTORY else os.open(".", flags, dir_fd=self._fd)
            )
        try:
            return open_beneath(self._fd, parts, flags, mode)
        except OSError as exc:
            raise self._error(exc, self.shown(parts), field) from None

    @contextmanager
    def opened(
        self, path: str | tuple[str, ...], flags: int = os.O_RDONLY, *, field: str = "path"
    ) -> Iterator[int]:
        parts = split_relative(path, field) if isinstance(path, str) else path
        fd = self.open_parts(parts, flags, field=field)
        try:
            yield fd
        finally:
            os.close(fd)

    def lstat(self, path: str, *, field: str = "path") -> os.stat_result:
        """Stat ``path`` without following a final symlink (its parents are never followed)."""
        return self.lstat_parts(split_relative(path, field), field=field)

    def lstat_parts(self, parts: tuple[str, ...], *, field: str = "path") -> os.stat_result:
        """:meth:`lstat` of validated components."""
        if not parts:
            self.ensure_intact()
            return os.fstat(self._fd)
        with self.opened(parts[:-1], _DIR_FLAGS, field=field) as parent:
            try:
                return os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
            except OSError as exc:
                raise self._error(exc, self.shown(parts), field) from None

    def regular_file(self, parts: tuple[str, ...], *, field: str = "path") -> os.stat_result:
        """The lstat of ``parts`` when it is a regular file, without opening it: a symbolic link
        is ``path_escape``, anything else (a directory, a FIFO, a device, a socket) is
        ``invalid_params``, and a missing file ``not_found``."""
        st = self.lstat_parts(parts, field=field)
        shown = self.shown(parts)
        if stat.S_ISLNK(st.st_mode):
            raise SCodeError(
                ErrorKind.PATH_ESCAPE, f"{shown!r} is a symbolic link", path=shown, field=field
            )
        if not stat.S_ISREG(st.st_mode):
            what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise invalid_params(f"{shown!r} is {what}", field, path=shown)
        return st

    # -- reads --------------------------------------------------------------------------------

    def read_bytes(self, path: str, max_bytes: int, *, field: str = "path") -> bytes:
        """Read a regular file whole; larger than ``max_bytes`` is ``limit_exceeded``."""
        return self.read_parts(split_relative(path, field), max_bytes, field=field)

    def read_parts(self, parts: tuple[str, ...], max_bytes: int, *, field: str = "path") -> bytes:
        """:meth:`read_bytes` of validated components. Anything but a regular file is refused;
        ``O_NONBLOCK`` keeps a FIFO from blocking the open, and a pseudo-file that calls itself
        regular (``/proc/kmsg`` bound into the workspace) from blocking the read: it is refused
        as unreadable, like a file whose read fails."""
        fd = self.open_parts(parts, os.O_RDONLY, field=field)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
                shown = self.shown(parts)
                raise invalid_params(f"{shown!r} is {what}", field, path=shown)
            if st.st_size > max_bytes:
                raise SCodeError(
                    ErrorKind.LIMIT_EXCEEDED,
                    f"{self.shown(parts)!r} is {st.st_size} bytes; the limit is {max_bytes}",
                    limit="file_size",
                    max=max_bytes,
                    actual=st.st_size,
                    path=self.shown(parts),
                )
            try:
                data = read_upto(fd, st.st_size, max_bytes)
            except OSError as exc:  # a pseudo-file that would block (EAGAIN), EIO...
                why = "its read would block" if isinstance(exc, BlockingIOError) else exc.strerror
                raise SCodeError(
                    ErrorKind.NOT_FOUND,
                    f"{self.shown(parts)!r} could not be read: {why}",
                    path=self.shown(parts),
                    reason="unreadable",
                ) from None
            if len(data) > max_bytes:  # grew while we read
                raise SCodeError(
                    ErrorKind.LIMIT_EXCEEDED,
                    f"{self.shown(parts)!r} is over {max_bytes} bytes",
                    limit="file_size",
                    max=max_bytes,
                    path=self.shown(parts),
                )
            return data
        finally:
            os.close(fd)

    def list_dir(self, parts: tuple[str, ...], *, field: str = "path") -> list[Entry]:
        """The entries of a directory, sorted by name, none followed."""
        with self.opened(parts, _DIR_FLAGS, field=field) as fd:
            entries = []
            with os.scandir(fd) as it:
                for de in it:
                    try:
                        st = de.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    entries.append(Entry(de.name, _kind(st.st_mode), st.st_size))
        entries.sort(key=lambda e: e.name)
        return entries

    def __repr__(self) -> str:
        return f"WorkspaceRoot({self.path!r}, name={self.name!r})"


def read_head(path: str, limit: int) -> bytes | None:
    """At most ``limit`` bytes from the start of the regular file at the absolute ``path``, for a
    repository's own files that lie beyond a WorkspaceRoot (a parent directory's ``.git`` file,
    a ``commondir``), opened as WorkspaceRoot opens: non-blocking, never following a final
    symbolic link. None when it is anything but a regular file, or its read would block; OSError
    when it cannot be opened (FileNotFoundError when absent, ELOOP for a symbolic link)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | NEVER_BLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        try:
            return os.read(fd, limit)
        except BlockingIOError:
            return None
    finally:
        os.close(fd)


def read_upto(fd: int, size: int, limit: int) -> bytes:
    """The bytes of an open regular file that fstat called ``size`` long, at most ``limit + 1``
    of them (more than ``limit`` means it is too large). One read when the size held (a file
    system that cut that read exactly at the old size while the file grew would go unnoticed:
    local ones do not cut reads), else on to the end."""
    data = os.read(fd, min(size, limit) + 1)
    if len(data) == size:
        return data
    chunks, total = [data], len(data)  # it grew or shrank, or the read was short
    while total <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - total))):
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)
