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
import contextlib
import json
import os
import stat
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
async def hardened_stdio(max_bytes: int = MAX_LINE_BYTES) -> AsyncIterator[Streams]:
    """The process's stdin and stdout, taken for the protocol while it serves."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    os.set_blocking(wire_out, False)

    async def write(data: bytes) -> None:
        await write_all(wire_out, data)

    try:
        async with hardened_streams(await fd_reader(wire_in), write, max_bytes) as streams:
            yield streams
    finally:
        with contextlib.suppress(OSError):
            os.close(wire_in)
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
        with contextlib.suppress(OSError):
            os.close(wire_out)


@contextlib.asynccontextmanager
async def hardened_streams(
    read: Callable[[], Awaitable[bytes]],
    write: Callable[[bytes], Awaitable[None]],
    max_bytes: int = MAX_LINE_BYTES,
) -> AsyncIterator[Streams]:
    """The transport over any byte stream: ``read`` a chunk (b"" at the end), ``write`` all of
    some bytes (stdio here; the agent link's socket in the editor's sidecar)."""
    # buffered: a message passes without waiting for its reader to be scheduled
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](64)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](64)
    answers = write_send.clone()  # the reader answers bad lines on the same write path

    async def error(rid: str | int | None, code: int, message: str) -> None:
        reply = JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=message))
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await answers.send(SessionMessage(reply))

    async def handle(line: bytes) -> None:
        if not line.strip():
            return
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # UnicodeDecodeError; nested deeper than we parse
            await error(None, PARSE_ERROR, "Parse error")
            return
        if isinstance(obj, list):
            await error(None, INVALID_REQUEST, "Batches are not supported")
            return
        if isinstance(obj, dict) and "method" in obj and "id" in obj and _request_id(obj) is None:
            # null, 1.5, true: not an MCP id, and the SDK would take the request for a
            # notification and never answer it
            await error(None, INVALID_REQUEST, "Invalid request: the id is a string or an integer")
            return
        try:
            message = jsonrpc_message_adapter.validate_python(obj, by_name=False)
        except (ValidationError, RecursionError):
            if isinstance(obj, dict) and "method" in obj and "id" in obj:
                await error(_request_id(obj), INVALID_REQUEST, "Invalid request")
            elif not (isinstance(obj, dict) and ({"method", "result", "error"} & set(obj))):
                await error(None, INVALID_REQUEST, "Invalid request")
            return  # a malformed notification or response: nothing to answer
        await read_send.send(SessionMessage(message))

    async def reader() -> None:
        """Lines as they arrive."""
        buf, skipping = bytearray(), False
        async with read_send:
            while chunk := await read():
                while chunk:
                    nl = chunk.find(b"\n")
                    part, chunk = (chunk, b"") if nl < 0 else (chunk[:nl], chunk[nl + 1 :])
                    if not skipping:
                        buf += part
                        if len(buf) > max_bytes:
                            buf.clear()
                            skipping = True
                            await error(None, INVALID_REQUEST, f"Message over {max_bytes} bytes")
                    if nl >= 0:
                        if not skipping:
                            await handle(bytes(buf))
                        buf.clear()
                        skipping = False

    written = anyio.Event()

    async def writer() -> None:
        """Each message in one write."""
        try:
            async with write_recv:
                async for item in write_recv:
                    await write(_encode(item) + b"\n")
        except OSError:
            pass  # the peer went away
        finally:
            written.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_recv, write_send
        finally:
            answers.close()  # the server closed write_send: the writer drains and ends
            with anyio.move_on_after(5, shield=True):
                await written.wait()
            tg.cancel_scope.cancel()  # the reader, when its stream is still open


async def fd_reader(fd: int) -> Callable[[], Awaitable[bytes]]:
    """A reader of ``fd``: the event loop's own for a pipe or a socket (no thread hop per
    message), a worker thread's for anything else (a file, /dev/null: no epoll for those)."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        os.set_blocking(fd, False)
        loop = asyncio.get_running_loop()

        async def from_loop() -> bytes:
            while True:
                try:
                    return os.read(fd, 65536)
                except BlockingIOError:
                    ready = loop.create_future()
                    loop.add_reader(fd, ready.set_result, None)
                    try:
                        await ready
                    finally:
                        loop.remove_reader(fd)

        return from_loop

    async def from_thread() -> bytes:
        return await anyio.to_thread.run_sync(os.read, fd, 65536, abandon_on_cancel=True)

    return from_thread


async def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            ready = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().add_writer(fd, ready.set_result, None)
            try:
                await ready
            finally:
                asyncio.get_running_loop().remove_writer(fd)
