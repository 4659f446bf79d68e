"""Attached: ``s-code mcp`` hands the agent's MCP stream to the editor's sidecar, byte for byte.

:func:`attach` finds the link of the editor serving the workspace (:func:`link.find`), checks
that the socket and its token are this user's and private, connects and presents the token;
then, when stdin and stdout are pipes or sockets (as an agent starts an MCP server), it hands
both to the sidecar (:func:`hand_off`, ``SCM_RIGHTS``): the sidecar reads and writes the agent's
own pipes, and this process only waits, so that the agent sees its server's life as a process's
(it ends when the sidecar ends the stream; the stream ends when this process is killed). Else
(a terminal, a file) :func:`relay` copies stdin to the socket and the socket to stdout. The MCP
server runs in the sidecar, in the editor's session (:mod:`s_code.lsp.agents`): this process
parses nothing and imports no MCP code, so it starts at once.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import threading

from s_code.mcp_face import link
from s_code.protocol.framing import frame, read_framed

CONNECT_TIMEOUT_S = 5.0


def attach(workspace: str) -> Attached | None:
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
    except (ConnectionRefusedError, FileNotFoundError):
        sock.close()
        return None  # a link left by an editor that is gone: serve on our own
    except OSError as exc:  # busy, or too slow: never fall back to approving without it
        sock.close()
        raise link.Refused(
            f"the editor's s-code at {where.socket} did not take this agent ({exc}); try again, "
            "or run with --standalone to serve without the editor"
        ) from None
    try:
        hello = {"token": token, "workspace": workspace, "handoff": can_hand_off()}
        sock.sendall(frame({"jsonrpc": "2.0", "id": 1, "method": link.ATTACH, "params": hello}))
        reply = read_framed(sock)
    except OSError:
        reply = None
    if not isinstance(reply, dict) or "result" not in reply:
        sock.close()
        error = reply.get("error") if isinstance(reply, dict) else None
        why = error.get("message") if isinstance(error, dict) else "it closed the connection"
        raise link.Refused(f"the editor's s-code refused this agent: {why}")
    sock.settimeout(None)
    return Attached(sock, reply["result"].get("handoff") is True)


class Attached:
    """A connection the sidecar took, and whether it takes this process's stdin and stdout."""

    def __init__(self, sock: socket.socket, handoff: bool) -> None:
        self.sock, self.handoff = sock, handoff

    def serve(self) -> int:
        """The agent's stream served by the sidecar until it ends; the exit status."""
        return hand_off(self.sock) if self.handoff else relay(self.sock)


def can_hand_off() -> bool:
    """Are stdin and stdout what the sidecar can serve directly (pipes or sockets, which its
    event loop can wait on)?"""
    try:
        return all(
            stat.S_ISFIFO(m) or stat.S_ISSOCK(m) for m in (os.fstat(0).st_mode, os.fstat(1).st_mode)
        )
    except OSError:
        return False


def hand_off(sock: socket.socket) -> int:
    """Give stdin and stdout to the sidecar, keep neither (so the agent sees the stream end when
    the sidecar ends it), and wait until the sidecar closes the connection."""
    try:
        socket.send_fds(sock, [b"\0"], [0, 1])
    except OSError:
        sock.close()
        return 1
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    try:
        while sock.recv(4096):
            pass
    except OSError:
        return 1
    finally:
        sock.close()
    return 0


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
