"""openat2(2) with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS``, via ctypes.

:func:`open_beneath` opens ``parts`` below ``dirfd`` and never leaves it: it uses openat2 where the
kernel has it and falls back to a component-by-component walk with ``O_NOFOLLOW`` otherwise. Both
raise :class:`OSError`; ``ELOOP``/``EXDEV`` mean a symlink or an escape was met.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys

SYS_OPENAT2 = 437  # the same number on every Linux architecture (unified syscall table)
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
RESOLVE_FLAGS = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
_EAGAIN_RETRIES = 16


class _OpenHow(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    ]


_syscall = None
if sys.platform == "linux":
    _libc = ctypes.CDLL(None, use_errno=True)
    _syscall = _libc["syscall"]  # a function pointer of our own, with fixed argument types
    _syscall.restype = ctypes.c_long
    _syscall.argtypes = [
        ctypes.c_long,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_void_p,
        ctypes.c_size_t,
    ]
_HOW_SIZE = ctypes.sizeof(_OpenHow)

# Flipped to False the first time the kernel answers ENOSYS; tests flip it to exercise the fallback.
use_openat2 = _syscall is not None


def _openat2(dirfd: int, path: str, flags: int, mode: int) -> int:
    assert _syscall is not None
    how = _OpenHow(flags | os.O_CLOEXEC, mode, RESOLVE_FLAGS)
    raw = os.fsencode(path)
    for _ in range(_EAGAIN_RETRIES):
        fd = _syscall(SYS_OPENAT2, dirfd, raw, ctypes.addressof(how), _HOW_SIZE)
        if fd >= 0:
            return int(fd)
        err = ctypes.get_errno()
        if err not in (errno.EAGAIN, errno.EINTR):
            raise OSError(err, os.strerror(err), path)
    raise OSError(errno.EAGAIN, "openat2 kept answering EAGAIN (concurrent renames)", path)


def _open_nofollow(name: str, flags: int, mode: int, dir_fd: int) -> int:
    try:
        return os.open(name, flags, mode, dir_fd=dir_fd)
    except NotADirectoryError:
        # O_NOFOLLOW|O_DIRECTORY on a symlink says ENOTDIR: tell the two apart.
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if (st.st_mode & 0o170000) == 0o120000:
            raise OSError(errno.ELOOP, "symlink in path", name) from None
        raise


def _walk_open(dirfd: int, parts: tuple[str, ...], flags: int, mode: int) -> int:
    """Component-wise fallback: every directory opened with ``O_NOFOLLOW | O_DIRECTORY``."""
    dir_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    current = dirfd
    try:
        for name in parts[:-1]:
            nxt = _open_nofollow(name, dir_flags, 0, current)
            if current != dirfd:
                os.close(current)
            current = nxt
        return _open_nofollow(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, current)
    finally:
        if current != dirfd:
            os.close(current)


def open_beneath(dirfd: int, parts: tuple[str, ...], flags: int, mode: int = 0) -> int:
    """Open ``parts`` (non-empty, pre-validated components) strictly beneath ``dirfd``."""
    global use_openat2
    if use_openat2:
        try:
            return _openat2(dirfd, "/".join(parts), flags, mode)
        except OSError as exc:
            if exc.errno != errno.ENOSYS:
                raise
            use_openat2 = False
    return _walk_open(dirfd, parts, flags, mode)
