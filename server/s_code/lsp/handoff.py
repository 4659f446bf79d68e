"""An attached agent's own stdin and stdout, handed to the sidecar over the agent link.

``s-code mcp`` asks for it in its attach request (``"handoff": true``) when its stdin and stdout
are pipes or sockets; the sidecar stops reading the connection before it replies, so the one
byte that carries the two descriptors (``SCM_RIGHTS``) is read here, with its descriptors, and
nothing of it by the connection's transport. What is taken: exactly two descriptors, the first
readable and the second writable, each a pipe, a FIFO or a connected unix stream socket (a file
or a device would block the event loop, or be no stream at all), read and written through
descriptions of the sidecar's own (:mod:`s_code.mcp_face.fdio`: the agent cannot make them
block); anything else is closed and the agent refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from typing import Any

from s_code.lsp.admission import ADMISSION_TIMEOUT
from s_code.mcp_face.fdio import Stream, until_ready


async def received(writer: asyncio.StreamWriter) -> tuple[Stream, Stream] | None:
    """The agent's stdin and stdout from the connection behind ``writer`` (its transport paused
    before the attach reply went out), as streams of the sidecar's own; None when what came is
    not that."""
    raw: Any = writer.get_extra_info("socket")
    sock = socket.socket(fileno=os.dup(raw.fileno()))
    fds: list[int] = []
    try:
        sock.setblocking(False)
        await asyncio.wait_for(until_ready(sock.fileno()), ADMISSION_TIMEOUT)
        data, fds, flags, _ = socket.recv_fds(sock, 1, 2, socket.MSG_CMSG_CLOEXEC)
        if data != b"\0" or len(fds) != 2 or flags & socket.MSG_CTRUNC:
            return None
        stdin, stdout = Stream.take(fds[0], write=False), Stream.take(fds[1], write=True)
        if stdin is None or stdout is None:
            for taken in (stdin, stdout):
                if taken is not None:
                    taken.close()
            return None
        return stdin, stdout
    except (OSError, TimeoutError):
        return None
    finally:
        for fd in fds:  # each stream has a descriptor of its own
            with contextlib.suppress(OSError):
                os.close(fd)
        sock.close()
