"""The files of the socket faces, private to the user who starts the server.

The token of ``serve --tcp``: given in ``S_CODE_TOKEN`` (taken out of the environment, so no
child inherits it) or made at start, and written to a file created 0600: ``--token-file PATH``,
else ``tcp-PORT.token`` in ``$XDG_RUNTIME_DIR/s-code/`` or, without a runtime directory, in
``run/`` of the state directory, each kept 0700 and the user's own. The file is removed at exit.

The unix socket of ``serve --socket PATH``: bound under a umask that makes it 0600 from its
creation, in a directory no other user can write, never over anything but a stale socket of ours.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import stat

from s_code.state.store import state_dir

TOKEN_ENV = "S_CODE_TOKEN"
MIN_TOKEN_CHARS = 16


class PrivateFileError(Exception):
    """A token or socket file that cannot be made private; the message says why."""


def take_token() -> tuple[str, bool]:
    """The token, and whether it was given in ``S_CODE_TOKEN`` rather than made here."""
    given = os.environ.pop(TOKEN_ENV, None)
    if given is None:
        return secrets.token_urlsafe(32), False
    if len(given) < MIN_TOKEN_CHARS:
        raise PrivateFileError(f"{TOKEN_ENV} must be at least {MIN_TOKEN_CHARS} characters")
    return given, True


def _private_dir(path: str) -> str:
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise PrivateFileError(f"{path} is not a directory of this user")
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def default_token_path(port: int) -> str:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = os.path.join(runtime, "s-code") if runtime else os.path.join(state_dir(), "run")
    return os.path.join(_private_dir(base), f"tcp-{port}.token")


def _check_parent(path: str) -> None:
    parent = os.path.dirname(os.path.abspath(path))
    info = os.stat(parent)
    if info.st_uid not in (os.getuid(), 0) or info.st_mode & 0o022:
        raise PrivateFileError(
            f"{parent} may be written by another user; choose a private directory"
        )


class OwnedPath:
    """A file this server made at ``path``; :meth:`remove` unlinks it only while it is still
    that file (same device and inode), never what another process put there since."""

    def __init__(self, path: str) -> None:
        self.path = path
        info = os.lstat(path)
        self._identity = (info.st_dev, info.st_ino)

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            info = os.lstat(self.path)
            if (info.st_dev, info.st_ino) == self._identity:
                os.unlink(self.path)


def write_token(path: str, token: str) -> OwnedPath:
    """``token`` in a new 0600 file (whatever the umask) renamed onto ``path``."""
    _check_parent(path)
    temp = f"{path}.{secrets.token_hex(4)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, f"{token}\n".encode())
    finally:
        os.close(fd)
    try:
        os.replace(temp, path)
    except OSError:
        os.unlink(temp)
        raise
    return OwnedPath(path)


def _is_live(path: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(path)
        except OSError:
            return False
        return True


def bind_unix(path: str) -> tuple[socket.socket, OwnedPath]:
    """A listening unix socket at ``path``, mode 0600 and ours, or :class:`PrivateFileError`."""
    _check_parent(path)
    with contextlib.suppress(FileNotFoundError):
        info = os.lstat(path)
        if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
            raise PrivateFileError(f"{path} exists and is not a socket of this user")
        if _is_live(path):
            raise PrivateFileError(f"{path} is in use by another server")
        os.unlink(path)  # a stale socket of ours
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        old = os.umask(0o177)
        try:
            sock.bind(path)  # fails if anything appeared at path meanwhile
        finally:
            os.umask(old)
        owned = OwnedPath(path)
        info = os.lstat(path)
        if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) != 0o600:
            owned.remove()
            raise PrivateFileError(f"{path} did not come out a 0600 socket of this user")
        sock.listen()
    except BaseException:
        sock.close()
        raise
    return sock, owned
