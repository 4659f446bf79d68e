"""The socket faces of ``s-code serve``: TCP guarded by a token, a unix socket for its own user.

Each serves one session, as stdio does: the first connection admitted drives the server, which
ends when that connection closes. A connection that is not admitted (no token or a wrong one, a
first message that is not ``initialize``, another user at the unix socket) is closed before
anything it sent is processed, a line is logged, and the server keeps listening for the right
client. Connections present themselves concurrently, each within ``ADMISSION_TIMEOUT``, so one
that connects and says nothing does not keep the right client out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys
from collections.abc import Awaitable, Callable

from pygls.lsp.server import LanguageServer

from s_code.lsp.admission import (
    ADMISSION_BODY_LIMIT,
    ADMISSION_TIMEOUT,
    admit_initialize,
    peer_uid,
)
from s_code.lsp.transport import MessageLoop, run_until_exit
from s_code.protocol.framing import read_message

log = logging.getLogger(__name__)


class Refused(Exception):
    """A connection that may not drive the server; the message says why (never a secret)."""


Admit = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bytes | None]]
"""Admits a connection or raises :class:`Refused`; returns the first message if it read one."""
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def token_admission(token: str) -> Admit:
    """The first message must be ``initialize`` carrying ``token``; it is passed on without it."""

    async def admit(reader: asyncio.StreamReader, _writer: asyncio.StreamWriter) -> bytes:
        try:
            body = await asyncio.wait_for(
                read_message(reader, ADMISSION_BODY_LIMIT), ADMISSION_TIMEOUT
            )
        except TimeoutError:
            raise Refused(f"no initialize within {ADMISSION_TIMEOUT:g}s") from None
        if body is None:
            raise Refused("closed or too large before initialize")
        admitted = admit_initialize(body, token)
        if admitted is None:
            raise Refused("the first message was not initialize with the right token")
        return admitted

    return admit


async def same_user(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """The peer of a unix socket must run as the server's own uid."""
    uid = peer_uid(writer.get_extra_info("socket"))
    if uid != os.getuid():
        raise Refused(f"the peer runs as uid {uid}, not {os.getuid()}")


async def admit_anyone(_reader: asyncio.StreamReader, _writer: asyncio.StreamWriter) -> None:
    """No check: the unguarded server, for tests' positive controls only."""


def _serve_one(
    server: LanguageServer,
    start: Callable[[Handler], Awaitable[asyncio.Server]],
    admit: Admit,
    where: str,
) -> int:
    """Listen with ``start`` and serve the first connection ``admit`` lets in."""
    loop = MessageLoop(server)

    async def main() -> None:
        taken = False

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal taken
            if taken:
                writer.close()
                return
            try:
                first = await admit(reader, writer)
            except (Refused, OSError) as exc:  # OSError: the peer reset the connection
                peer = writer.get_extra_info("peername") or "the socket"
                log.warning("refused a connection from %s: %s", peer, exc)
                writer.close()
                return
            if taken:  # another client was admitted while this one presented itself
                writer.close()
                return
            taken = True
            server.protocol.set_writer(writer)
            try:
                await loop.run(reader, first)
            finally:
                listener.close()

        try:
            listener = await start(on_connect)
        except OSError as exc:
            sys.stderr.write(f"s-code: cannot listen on {where}: {exc.strerror}\n")
            raise SystemExit(2) from None
        addrs = ", ".join(str(s.getsockname()) for s in listener.sockets)
        log.info("s-code listening on %s", addrs)
        sys.stderr.write(f"s-code: listening on {addrs}\n")
        sys.stderr.flush()
        async with listener:
            with contextlib.suppress(asyncio.CancelledError):
                await listener.serve_forever()

    return run_until_exit(main, server)


def serve_tcp(
    server: LanguageServer,
    host: str,
    port: int,
    *,
    admit: Admit,
    on_listening: Callable[[int], None] = lambda port: None,
) -> int:
    """Serve one admitted client on ``host:port`` (the CLI keeps it on loopback by default and
    admits with :func:`token_admission`). ``on_listening`` gets the bound port before the
    "listening on" line is written."""

    async def start(handler: Handler) -> asyncio.Server:
        listener = await asyncio.start_server(handler, host, port)
        on_listening(listener.sockets[0].getsockname()[1])
        return listener

    return _serve_one(server, start, admit, f"{host}:{port}")


def serve_unix(server: LanguageServer, sock: socket.socket, *, admit: Admit = same_user) -> int:
    """Serve one admitted client on a listening unix socket (made by the CLI, mode 0600)."""

    async def start(handler: Handler) -> asyncio.Server:
        return await asyncio.start_unix_server(handler, sock=sock)

    return _serve_one(server, start, admit, str(sock.getsockname()))
