"""Content-Length framing of JSON-RPC over a stream, as LSP has it: one reader for every face
that reads it (the editor's stdio, its sockets, the agent link), with the same limits."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 8192
_CONTENT_LENGTH = re.compile(rb"^content-length:\s*(\d+)\s*$", re.IGNORECASE)


def read_framed(sock: Any, limit: int = 1 << 20) -> Any:
    """One framed message read from the blocking socket ``sock`` (nothing past it is read: a
    stream of another kind may follow), parsed; None at the end, or for a bad frame."""
    header = b""
    while b"\r\n\r\n" not in header:
        byte = sock.recv(1)
        if not byte or len(header) > MAX_HEADER_BYTES:
            return None
        header += byte
    lengths = [
        int(m.group(1)) for line in header.split(b"\r\n") if (m := _CONTENT_LENGTH.match(line))
    ]
    if not lengths or not 0 <= lengths[0] <= limit:
        return None
    body = b""
    while len(body) < lengths[0]:
        chunk = sock.recv(lengths[0] - len(body))
        if not chunk:
            return None
        body += chunk
    try:
        return json.loads(body)
    except ValueError:
        return None


def frame(payload: dict[str, Any]) -> bytes:
    """``payload`` as one framed message (a lone surrogate a peer sent, echoed back, goes out
    as a JSON escape: it has no UTF-8)."""
    try:
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        body = json.dumps(payload, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(reader: Any, limit: int = MAX_BODY_BYTES) -> bytes | None:
    """The next framed body, or None at EOF or when the connection must close (logged).

    ``reader`` has async ``readline`` and ``readexactly``; a header block without
    Content-Length is skipped; a body over ``limit`` bytes closes the connection."""
    while True:
        length: int | None = None
        header_bytes = 0
        while True:
            try:
                line = await reader.readline()
            except (ValueError, asyncio.LimitOverrunError):
                log.error("header line too long; closing the connection")
                return None
            if not line:
                return None
            header_bytes += len(line)
            if header_bytes > MAX_HEADER_BYTES:
                log.error("header block too large; closing the connection")
                return None
            if line in (b"\r\n", b"\n"):
                break
            match = _CONTENT_LENGTH.match(line.strip())
            if match:
                length = int(match.group(1))
        if length is None:
            log.warning("message without Content-Length; skipped")
            continue
        if length > limit:
            log.error("message of %d bytes is over the %d limit; closing", length, limit)
            return None
        try:
            return await reader.readexactly(length) if length else b""
        except asyncio.IncompleteReadError:
            return None
