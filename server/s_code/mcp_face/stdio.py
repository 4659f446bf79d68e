"""The MCP face's stdio transport: newline-delimited JSON-RPC that answers bad input.

The SDK's ``stdio_server`` (mcp 2.3) reads whole lines with no size limit, and turns a line it
cannot parse into an item its dispatcher drops: a request with a broken envelope
(``"params": "str"``) is never answered and its client waits forever. This transport bounds a
line at :data:`MAX_LINE_BYTES` (the LSP face's limit; the rest of a longer line is skipped and
answered -32600), answers unparsable JSON (deeper than the parser goes, too) -32700 and an
invalid request -32600 with its id when one can be read (a request whose id is no MCP id, null
or 1.5, with id null), refuses batches, and drops invalid notifications and responses (nothing
to answer). A reply that echoes a lone surrogate the client sent goes out with U+FFFD in its
place. While it serves, fds 0 and 1 are moved away (stdin to /dev/null, stdout to stderr), so
nothing else in the process can write into the protocol stream.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from s_code.mcp_face.fdio import Stream, blocking_io

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The largest message taken (the LSP face's ``MAX_BODY_BYTES``)."""

Streams = tuple[
    anyio.abc.ObjectReceiveStream[SessionMessage | Exception],
    anyio.abc.ObjectSendStream[SessionMessage],
]


def _request_id(obj: Any) -> str | int | None:
    rid = obj.get("id") if isinstance(obj, dict) else None
    return rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None


def _encode(item: SessionMessage) -> bytes:
    """One message as a line of UTF-8 JSON. A string the client sent can come back in it (an
    id, a tool name, a progress token) holding a lone surrogate, which a JSON escape can say and
    UTF-8 cannot: it goes out as U+FFFD rather than ending the server."""
    try:
        return item.message.model_dump_json(by_alias=True, exclude_unset=True).encode()
    except ValueError:  # pydantic's PydanticSerializationError
        data = item.message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode()


@contextlib.asynccontextmanager
async def hardened_stdio(
    max_bytes: int = MAX_LINE_BYTES, on_end: Callable[[], None] | None = None
) -> AsyncIterator[Streams]:
    """The process's stdin and stdout, taken for the protocol while it serves."""
    stdin = Stream.take(0, write=False) or blocking_io(0)
    stdout = Stream.take(1, write=True) or blocking_io(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    try:
        async with hardened_streams(stdin.read, stdout.write, max_bytes, on_end) as streams:
            yield streams
    finally:
        stdin.close()
        stdout.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


@contextlib.asynccontextmanager
async def hardened_streams(
    read: Callable[[], Awaitable[bytes]],
    write: Callable[[bytes], Awaitable[None]],
    max_bytes: int = MAX_LINE_BYTES,
    on_end: Callable[[], None] | None = None,
) -> AsyncIterator[Streams]:
    """The transport over any byte stream: ``read`` a chunk (b"" at the end), ``write`` all of
    some bytes (stdio here; the agent's own pipes or the agent link in the editor's sidecar).

    No task of its own: the server's receive loop reads through :class:`Lines` and each reply
    is written by the task that sends it (:class:`Replies`), so a message passes through no
    queue and waits for no other task to be scheduled. ``on_end``: called when the input ends
    (or its reading is cancelled, or the stream closed)."""
    replies = Replies(write)
    lines = Lines(read, replies, max_bytes, on_end)
    try:
        yield lines, replies
    finally:
        await lines.aclose()
        await replies.aclose()


class Replies(anyio.abc.ObjectSendStream[SessionMessage]):
    """Messages written as lines, each in one piece (a lock keeps concurrent replies whole)."""

    def __init__(self, write: Callable[[bytes], Awaitable[None]]) -> None:
        self._write = write
        self._lock = asyncio.Lock()
        self._closed = False
        self._broken = False

    async def send(self, item: SessionMessage) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._broken:
            raise anyio.BrokenResourceError
        data = _encode(item) + b"\n"
        async with self._lock:
            try:
                await self._write(data)
            except OSError:  # the peer went away
                self._broken = True
                raise anyio.BrokenResourceError from None

    async def aclose(self) -> None:
        self._closed = True


class Lines(anyio.abc.ObjectReceiveStream[SessionMessage | Exception]):
    """The messages of newline-delimited JSON, read as the server asks for them; a bad line is
    answered here (on ``replies``) and never reaches the server."""

    def __init__(
        self,
        read: Callable[[], Awaitable[bytes]],
        replies: Replies,
        max_bytes: int,
        on_end: Callable[[], None] | None = None,
    ) -> None:
        self._read, self._replies, self._max = read, replies, max_bytes
        self._on_end = on_end
        self._lines: collections.deque[bytes | None] = collections.deque()  # None: too long
        self._buf = bytearray()
        self._skipping = False
        self._ended = False
        self._closed = False

    async def receive(self) -> SessionMessage | Exception:
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._lines:
                message = await self._handle(self._lines.popleft())
                if message is not None:
                    return message
                continue
            if self._ended:
                self._end()
                raise anyio.EndOfStream
            try:
                chunk = await self._read()
            except BaseException:
                self._end()
                raise
            if chunk:
                self._take(chunk)
            else:
                self._ended = True  # a last line without its newline is no message

    async def aclose(self) -> None:
        self._closed = True
        self._end()

    def _end(self) -> None:
        if self._on_end is not None:
            self._on_end()

    def _take(self, chunk: bytes) -> None:
        """Complete lines out of ``chunk`` (a line over the limit: None, the rest skipped)."""
        start = 0
        while start < len(chunk):
            nl = chunk.find(b"\n", start)
            end = len(chunk) if nl < 0 else nl
            if not self._skipping:
                self._buf += chunk[start:end]
                if len(self._buf) > self._max:
                    self._buf.clear()
                    self._skipping = True
                    self._lines.append(None)
            if nl < 0:
                return
            if not self._skipping:
                self._lines.append(bytes(self._buf))
            self._buf.clear()
            self._skipping = False
            start = nl + 1

    async def _error(self, rid: str | int | None, code: int, message: str) -> None:
        reply = JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=message))
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._replies.send(SessionMessage(reply))

    async def _handle(self, line: bytes | None) -> SessionMessage | None:
        """The message of ``line``, or None when there is none (a bad one is answered)."""
        if line is None:
            await self._error(None, INVALID_REQUEST, f"Message over {self._max} bytes")
            return None
        if not line.strip():
            return None
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # UnicodeDecodeError; nested deeper than we parse
            await self._error(None, PARSE_ERROR, "Parse error")
            return None
        if isinstance(obj, list):
            await self._error(None, INVALID_REQUEST, "Batches are not supported")
            return None
        if isinstance(obj, dict) and "method" in obj and "id" in obj and _request_id(obj) is None:
            # null, 1.5, true: not an MCP id, and the SDK would take the request for a
            # notification and never answer it
            await self._error(
                None, INVALID_REQUEST, "Invalid request: the id is a string or an integer"
            )
            return None
        try:
            message = jsonrpc_message_adapter.validate_python(obj, by_name=False)
        except (ValidationError, RecursionError):
            if isinstance(obj, dict) and "method" in obj and "id" in obj:
                await self._error(_request_id(obj), INVALID_REQUEST, "Invalid request")
            elif not (isinstance(obj, dict) and ({"method", "result", "error"} & set(obj))):
                await self._error(None, INVALID_REQUEST, "Invalid request")
            return None  # a malformed notification or response: nothing to answer
        return SessionMessage(message)
