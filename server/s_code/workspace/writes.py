"""Durable writes beneath a WorkspaceRoot: temp file, fsync, final check, rename, directory fsync.

Every step uses directory fds reached through :meth:`WorkspaceRoot.open_parts`, so no path string
is re-resolved between the check and the write. Creation renames with
``renameat2(RENAME_NOREPLACE)`` so a file that appeared meanwhile is never clobbered.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.workspace.paths import join
from s_code.workspace.root import NEVER_BLOCK, WorkspaceRoot, read_upto

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
TEMP_MARK = ".s-code-tmp-"
RENAME_NOREPLACE = 1
_libc = ctypes.CDLL(None, use_errno=True)


def temp_name(name: str) -> str:
    return f".{name[:180]}{TEMP_MARK}{secrets.token_hex(6)}"


def is_temp_name(name: str) -> bool:
    return TEMP_MARK in name and name.startswith(".")


def fsync_dir(fd: int) -> None:
    """fsync a directory fd (a seam the durability tests replace)."""
    os.fsync(fd)


def renameat2_noreplace(dir_fd: int, src: str, dst: str) -> None:
    res = _libc.renameat2(
        ctypes.c_int(dir_fd),
        os.fsencode(src),
        ctypes.c_int(dir_fd),
        os.fsencode(dst),
        ctypes.c_uint(RENAME_NOREPLACE),
    )
    if res != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), dst)


@dataclass(frozen=True)
class Written:
    durable: bool  # False: the directory fsync failed after the rename


def open_parent(root: WorkspaceRoot, parts: tuple[str, ...], *, create: bool) -> int:
    """The directory fd of ``parts``' parent, creating missing directories (never through links)."""
    parent = parts[:-1]
    try:
        return root.open_parts(parent, _DIR_FLAGS)
    except SCodeError as exc:
        if exc.kind is not ErrorKind.NOT_FOUND or not create:
            raise
    current = root.open_parts((), _DIR_FLAGS)
    try:
        for name in parent:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=current)
            nxt = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=current)
            os.close(current)
            current = nxt
        return current
    except OSError as exc:
        os.close(current)
        raise root._error(exc, join(parts), "path") from None


def read_current(dir_fd: int, name: str) -> bytes | None:
    """The bytes of ``name`` in ``dir_fd`` now (None when absent); a symlink or non-file refuses."""
    found = read_regular(dir_fd, name)
    return None if found is None else found[0]


COMPARE_LIMIT = 64 << 20
"""What :func:`read_regular` reads at most (plus one byte): more than any content the engine
writes or expects (16 MiB), so a cut read can never compare equal to what was expected."""


def read_regular(dir_fd: int, name: str, limit: int = COMPARE_LIMIT) -> tuple[bytes, int] | None:
    """(bytes, st_mode) of the regular file ``name`` in ``dir_fd`` now, None when absent; a
    symlink or non-file refuses. A file larger than ``limit`` comes back cut at ``limit + 1``
    bytes (it is being compared, never written back)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | NEVER_BLOCK, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SCodeError(
                ErrorKind.PATH_ESCAPE, f"{name!r} became a symbolic link", path=name
            ) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SCodeError(
                ErrorKind.STALE_REVISION, f"{name!r} is no longer a regular file", path=name
            )
        return read_upto(fd, st.st_size, limit), st.st_mode
    finally:
        os.close(fd)


@dataclass
class Staged:
    """A temp file written and fsynced beside its target, not yet renamed over it.

    ``dir_fd`` is the parent directory, held open from staging to commit so the rename happens
    in the directory the temp file was written to; :func:`commit` or :func:`discard` closes it.
    """

    root: WorkspaceRoot
    parts: tuple[str, ...]
    dir_fd: int
    tmp: str
    create: bool


def _without_set_id(mode: int) -> int:
    """The mode for new content: set-user-ID dropped, and set-group-ID on a group-executable
    file, as the kernel drops them when a writer without CAP_FSETID changes a file (a sidecar
    running as root must not turn the agent's text into a set-ID program)."""
    mode &= ~stat.S_ISUID
    if mode & stat.S_IXGRP:
        mode &= ~stat.S_ISGID
    return mode


def stage(
    root: WorkspaceRoot,
    parts: tuple[str, ...],
    data: bytes,
    *,
    create: bool,
    tmp: str | None = None,
    dir_fd: int | None = None,
    mode: int | None = None,
) -> Staged:
    """Write ``data`` to a temp file beside ``parts`` and fsync it.

    ``tmp`` is the temp file's name when the caller recorded it first (so a crash can be cleaned
    up on the next start). ``dir_fd``, when given, is the parent directory already opened (the
    staged file takes it over); ``mode`` is the target's mode when the caller has just read it
    (else it is read here; a new file gets the umask's default), kept but for set-ID bits
    (:func:`_without_set_id`). On failure nothing is left behind.
    """
    name = parts[-1]
    if dir_fd is None:
        dir_fd = open_parent(root, parts, create=create)
    tmp = tmp or temp_name(name)
    try:
        if mode is None:
            mode = 0o666 & ~_UMASK
            if not create:
                with contextlib.suppress(FileNotFoundError):
                    mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        mode = _without_set_id(stat.S_IMODE(mode))
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode,
            dir_fd=dir_fd,
        )
    except BaseException:
        os.close(dir_fd)
        raise
    try:
        try:
            if mode & _UMASK:  # bits the umask stripped at creation
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _unlink_quietly(dir_fd, tmp)
        os.close(dir_fd)
        raise
    return Staged(root, parts, dir_fd, tmp, create)


def commit(staged: Staged, final_check: Callable[[bytes | None], None]) -> Written:
    """Rename a staged temp file over its target, then fsync the directory.

    The parent must still be the directory the temp file was written to, and ``final_check``
    sees the target's bytes (None when absent) immediately before the rename and raises to stop
    it. Creations use ``renameat2(RENAME_NOREPLACE)``. On any failure the temp file is removed.
    """
    dir_fd, tmp, name, path = staged.dir_fd, staged.tmp, staged.parts[-1], join(staged.parts)
    try:
        try:
            _same_parent(staged)
            final_check(read_current(dir_fd, name))
            if staged.create:
                try:
                    renameat2_noreplace(dir_fd, tmp, name)
                except FileExistsError:
                    raise SCodeError(
                        ErrorKind.STALE_REVISION,
                        f"{path!r} was created by someone else meanwhile",
                        path=path,
                        expected=None,
                    ) from None
            else:
                os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            _unlink_quietly(dir_fd, tmp)
            raise
        try:
            fsync_dir(dir_fd)
        except OSError:
            return Written(durable=False)
        return Written(durable=True)
    finally:
        os.close(dir_fd)


def discard(staged: Staged) -> None:
    """Remove a staged temp file that will not be committed."""
    try:
        _unlink_quietly(staged.dir_fd, staged.tmp)
    finally:
        os.close(staged.dir_fd)


def _same_parent(staged: Staged) -> None:
    """Refuse when the target's parent was moved or replaced since the temp file was staged."""
    held = os.fstat(staged.dir_fd)
    try:
        now_fd = staged.root.open_parts(staged.parts[:-1], _DIR_FLAGS)
    except SCodeError as exc:
        if exc.kind is not ErrorKind.NOT_FOUND:  # e.g. it became a symbolic link
            raise
        now = None
    else:
        try:
            now = os.fstat(now_fd)
        finally:
            os.close(now_fd)
    if now is None or (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
        path = join(staged.parts)
        raise SCodeError(
            ErrorKind.STALE_REVISION,
            f"the directory of {path!r} was moved or replaced while the batch was written",
            path=path,
        )


def write_atomic(
    root: WorkspaceRoot,
    parts: tuple[str, ...],
    data: bytes,
    *,
    create: bool,
    final_check: Callable[[bytes | None], None],
    tmp: str | None = None,
) -> Written:
    """Write ``data`` to ``parts`` durably, or not at all: :func:`stage`, then :func:`commit`."""
    return commit(stage(root, parts, data, create=create, tmp=tmp), final_check)


def remove_file(
    root: WorkspaceRoot, parts: tuple[str, ...], final_check: Callable[[bytes | None], None]
) -> Written:
    """Unlink a regular file after ``final_check`` accepts its current bytes."""
    dir_fd = root.open_parts(parts[:-1], _DIR_FLAGS)
    try:
        final_check(read_current(dir_fd, parts[-1]))
        os.unlink(parts[-1], dir_fd=dir_fd)
        try:
            fsync_dir(dir_fd)
        except OSError:
            return Written(durable=False)
        return Written(durable=True)
    finally:
        os.close(dir_fd)


def remove_temp(root: WorkspaceRoot, dir_parts: tuple[str, ...], name: str) -> bool:
    """Remove a temp file a crashed write left behind; True when one was there."""
    if not is_temp_name(name):
        return False
    try:
        dir_fd = root.open_parts(dir_parts, _DIR_FLAGS)
    except SCodeError:
        return False
    try:
        os.unlink(name, dir_fd=dir_fd)
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(dir_fd)


def _unlink_quietly(dir_fd: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)


def _read_umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


_UMASK = _read_umask()  # read once, at import: os.umask is process-wide
