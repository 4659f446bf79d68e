"""An attached agent's own stdin and stdout, handed to the sidecar over the agent link.

``s-code mcp`` asks for it in its attach request (``"handoff": true``) when its stdin and stdout
are pipes or sockets; the sidecar stops reading the connection before it replies, so the one
byte that carries the two descriptors (``SCM_RIGHTS``) is read here, with its descriptors, and
nothing of it by the connection's transport. What is taken: exactly two descriptors, the first
readable and the second writable, each a pipe or a socket (a file or a device would block the
event loop, or be no stream at all); anything else is closed and the agent refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import socket
import stat
from typing import Any

from s_code.lsp.admission import ADMISSION_TIMEOUT


def _stream(fd: int, access: tuple[int, ...]) -> bool:
    mode = os.fstat(fd).st_mode
    return (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) and (
        (fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE) in access
    )


async def received(writer: asyncio.StreamWriter) -> tuple[int, int] | None:
    """The agent's stdin and stdout from the connection behind ``writer`` (its transport paused
    before the attach reply went out), set non-blocking; None when what came is not that."""
    raw: Any = writer.get_extra_info("socket")
    sock = socket.socket(fileno=os.dup(raw.fileno()))
    fds: list[int] = []
    try:
        sock.setblocking(False)
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def woken() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(sock.fileno(), woken)
        try:
            await asyncio.wait_for(ready, ADMISSION_TIMEOUT)
        finally:
            loop.remove_reader(sock.fileno())
        data, fds, flags, _ = socket.recv_fds(sock, 1, 2, socket.MSG_CMSG_CLOEXEC)
        if data != b"\0" or len(fds) != 2 or flags & socket.MSG_CTRUNC:
            return None
        readable = _stream(fds[0], (os.O_RDONLY, os.O_RDWR))
        if not (readable and _stream(fds[1], (os.O_WRONLY, os.O_RDWR))):
            return None
        for fd in fds:
            os.set_blocking(fd, False)
        taken, fds = (fds[0], fds[1]), []
        return taken
    except (OSError, TimeoutError):
        return None
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        sock.close()
