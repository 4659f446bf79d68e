"""Attached: ``s-code mcp`` hands the agent's MCP stream to the editor's sidecar, byte for byte.

:func:`attach` finds the link of the editor serving the workspace (:func:`link.find`), checks
that the socket and its token are this user's and private, connects and presents the token;
then :func:`relay` copies stdin to the socket and the socket to stdout until either ends. The
MCP server runs in the sidecar, in the editor's session (:mod:`s_code.lsp.agents`): this process
parses nothing and imports no MCP code, so it starts at once and adds one copy per message.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading

from s_code.mcp_face import link
from s_code.protocol.framing import frame

CONNECT_TIMEOUT_S = 5.0
MAX_REPLY = 1 << 20


def _read_framed(sock: socket.socket) -> dict[str, object] | None:
    """One Content-Length framed reply (nothing past it is read: the MCP stream follows)."""
    header = b""
    while b"\r\n\r\n" not in header:
        byte = sock.recv(1)
        if not byte or len(header) > 8192:
            return None
        header += byte
    length = next(
        (
            int(line.split(b":")[1])
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        -1,
    )
    if not 0 <= length <= MAX_REPLY:
        return None
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            return None
        body += chunk
    reply = json.loads(body)
    return reply if isinstance(reply, dict) else None


def attach(workspace: str) -> socket.socket | None:
    """A socket to the editor's session serving ``workspace``, attached; None when no editor
    serves it (or one left its link behind). :class:`link.Refused` (one line) when the link
    there must not be trusted, or refuses this agent."""
    found = link.find(workspace)
    if found is None:
        return None
    _root, where = found
    link.check_private(where.socket, "socket")
    if not os.path.lexists(where.token):
        raise link.Refused(f"{where.token} is missing: refused")
    link.check_private(where.token, "file")
    with open(where.token, encoding="utf-8") as f:
        token = f.read().strip()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT_S)
    try:
        sock.connect(where.socket)
    except OSError:
        sock.close()
        return None  # a link left by an editor that is gone: serve on our own
    try:
        hello = {"token": token, "workspace": workspace}
        sock.sendall(frame({"jsonrpc": "2.0", "id": 1, "method": link.ATTACH, "params": hello}))
        reply = _read_framed(sock)
    except (OSError, ValueError):
        reply = None
    if reply is None or "result" not in reply:
        sock.close()
        error = reply.get("error") if isinstance(reply, dict) else None
        why = error.get("message") if isinstance(error, dict) else "it closed the connection"
        raise link.Refused(f"the editor's s-code refused this agent: {why}")
    sock.settimeout(None)
    return sock


def relay(sock: socket.socket) -> int:
    """Copy stdin to ``sock`` and ``sock`` to stdout until the sidecar ends the stream (after
    stdin ended, or because its session ended); the exit status."""

    def upstream() -> None:
        try:
            while chunk := os.read(0, 65536):
                sock.sendall(chunk)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)  # the agent is gone: its calls are cancelled

    threading.Thread(target=upstream, daemon=True).start()
    try:
        while chunk := sock.recv(65536):
            view = memoryview(chunk)
            while view:
                view = view[os.write(1, view) :]
    except OSError:
        return 1
    finally:
        sock.close()
    return 0
