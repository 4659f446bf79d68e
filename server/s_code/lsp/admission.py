"""Who may drive a server listening on a socket: a TCP client that presents the token, a unix
socket peer of the server's own uid.

A TCP client presents the token in its first message, which must be the ``initialize`` request
with ``initializationOptions.token``. :func:`admit_initialize` checks it in constant time and
returns the message without the token, so nothing past the admission (pygls' logs, the session's
options, any reply) ever holds it.
"""

from __future__ import annotations

import hmac
import json
import os
import socket
import struct
from typing import Any

TOKEN_OPTION = "token"
"""The key of ``initializationOptions`` that carries the token."""

ADMISSION_BODY_LIMIT = 1 << 20
"""The largest first message read before the client is admitted (an editor's initialize is tens
of KiB); a larger one closes the connection."""

ADMISSION_TIMEOUT = 10.0
"""Seconds a connection has to present its first message before it is closed."""


def admit_initialize(body: bytes, token: str) -> bytes | None:
    """``body`` re-encoded without the token if it is an ``initialize`` request whose
    ``initializationOptions.token`` is ``token``; None for anything else."""
    try:
        data: Any = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("method") != "initialize" or "id" not in data:
        return None
    params = data.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    if not isinstance(options, dict):
        return None
    given = options.pop(TOKEN_OPTION, None)
    if not isinstance(given, str):
        return None
    if not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), token.encode()):
        return None
    # What the session reads is this re-encoding of what was checked, not the client's bytes.
    return json.dumps(data).encode()


_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected unix socket (``SO_PEERCRED``:
    the credentials it had when it connected, set by the kernel)."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    _pid, uid, _gid = _UCRED.unpack(raw)
    return int(uid)


SO_PEERPIDFD = getattr(socket, "SO_PEERPIDFD", 77)  # Linux 6.5; Python 3.11 has no name for it


def peer_pidfd(sock: socket.socket) -> int | None:
    """A pidfd of the process at the other end of a connected unix socket (readable once it
    has ended): ``SO_PEERPIDFD`` where the kernel has it, else one opened on ``SO_PEERCRED``'s
    pid (that process is connected now, so the pid is still its own); None when neither."""
    try:
        return int(sock.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD))
    except OSError:
        pass
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    pid, _uid, _gid = _UCRED.unpack(raw)
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None
