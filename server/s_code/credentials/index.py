"""The names of the keyring secrets s-code stored, for ``s-code secret list``: names, never values.

A keyring cannot be listed portably, so ``s-code secret set`` records ``service/account`` in
``secrets.json`` of the user state directory (``S_CODE_STATE_DIR``, else
``$XDG_STATE_HOME/s-code``): a 0600 file in a 0700 directory, replaced whole by rename, changed
under an exclusive lock (``secrets.lock``) so two commands at once lose no name. The values stay
in the keyring; a name whose value was deleted elsewhere is still listed until
``s-code secret delete`` drops it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
from collections.abc import Iterator

from s_code.state.store import state_dir

INDEX_NAME = "secrets.json"
_VERSION = 1


def index_path() -> str:
    return os.path.join(state_dir(), INDEX_NAME)


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    directory = state_dir()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd = os.open(
        os.path.join(directory, "secrets.lock"),
        os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o600,
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def names() -> list[str]:
    """The ``service/account`` names recorded, sorted; none when there is no index yet."""
    try:
        with open(index_path(), encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise OSError(
            f"{index_path()} is unreadable ({exc}): delete it to start a new list"
        ) from exc
    found = data.get("keyring", []) if isinstance(data, dict) else []
    return sorted({n for n in found if isinstance(n, str)})


def _write(found: list[str]) -> None:
    path = index_path()
    temp = f"{path}.{secrets.token_hex(4)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, json.dumps({"version": _VERSION, "keyring": sorted(found)}).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.replace(temp, path)
    except OSError:
        os.unlink(temp)
        raise


def add(name: str) -> None:
    """Record ``service/account`` (idempotent)."""
    with _locked():
        found = names()
        if name not in found:
            _write([*found, name])


def remove(name: str) -> bool:
    """Forget ``service/account``; False when it was not recorded."""
    with _locked():
        found = names()
        if name not in found:
            return False
        _write([n for n in found if n != name])
        return True
