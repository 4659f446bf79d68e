"""The message loop: Content-Length framing, and the stdio face (the socket faces: listen.py).

pygls' own loop decodes with ``json.loads(object_hook=...)``, which structures *nested* dicts
that carry a ``jsonrpc`` key, and drops without a reply any message it cannot structure or that
arrives after ``shutdown``: the client then waits forever. This loop decodes plain JSON, checks
the envelope, structures only the top-level message, and answers every request it cannot handle
with an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import select
import sys
import threading
from typing import Any

from lsprotocol.types import EXIT
from pygls.lsp.server import LanguageServer

from s_code.protocol.framing import MAX_HEADER_BYTES, read_message
from s_code.protocol.incoming import INCOMING, measure

log = logging.getLogger(__name__)


PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def _error(msg_id: Any, code: int, message: str, kind: str = "invalid_params") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "error": {"code": code, "message": message, "data": {"kind": kind}},
    }


LARGE_BODY = 64 * 1024


def _decode(body: bytes) -> tuple[Any, bool]:
    """The message's JSON, and whether its strings are known to be valid Unicode.

    A large body (an edit batch) is parsed by pydantic-core's parser, about twice as fast
    (imported on the first one: pydantic loads lazily); it refuses lone surrogates, so what it
    parses needs no scan for them. Whenever it refuses, ``json.loads`` parses the body: it is the
    reference, reading what the fast parser rejects (lone surrogate escapes, which are then
    refused by field, and UTF-16 or UTF-32 bodies) and raising the errors this loop answers."""
    if len(body) >= LARGE_BODY:
        from pydantic_core import from_json

        try:
            # Only keys are worth its string cache: values (new text) are new with each batch.
            return from_json(body, cache_strings="keys"), True
        except ValueError:
            pass
    return json.loads(body), False


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class MessageLoop:
    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.protocol = server.protocol

    def _reply(self, payload: dict[str, Any]) -> None:
        self.protocol._send_data(payload)

    def dispatch(self, body: bytes) -> None:
        try:
            data, unicode_checked = _decode(body)
        except (ValueError, RecursionError):
            self._reply(_error(None, PARSE_ERROR, "the message is not valid JSON"))
            return
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            msg_id = data.get("id") if isinstance(data, dict) else None
            self._reply(
                _error(
                    msg_id if _valid_id(msg_id) else None,
                    INVALID_REQUEST,
                    "not a JSON-RPC 2.0 message object",
                )
            )
            return
        is_request = "method" in data and "id" in data
        if "id" in data and not _valid_id(data["id"]) and data["id"] is not None:
            self._reply(_error(None, INVALID_REQUEST, "id must be a string or an integer"))
            return
        if "method" in data and not isinstance(data["method"], str):
            if is_request:
                self._reply(_error(data["id"], INVALID_REQUEST, "method must be a string"))
            return
        if self.protocol._shutdown and data.get("method") != EXIT:
            if is_request:
                self._reply(_error(data["id"], INVALID_REQUEST, "the server is shutting down"))
            return
        try:
            message = self.protocol.structure_message(data)
        except Exception:
            log.warning("could not decode %s", str(data.get("method", "a response"))[:100])
            if is_request:
                self._reply(
                    _error(data["id"], INVALID_PARAMS, f"params do not fit {data['method']!r}")
                )
            return
        token = INCOMING.set(measure(body, unicode_checked=unicode_checked))
        try:
            self.protocol.handle_message(message)
        except Exception:
            log.exception("failed to handle a message")
            if is_request:
                self._reply(_error(data["id"], -32603, "internal error", "internal"))
        finally:
            INCOMING.reset(token)

    async def run(self, reader: Any, first: bytes | None = None) -> None:
        """Dispatch ``first`` (a body already read), then every framed message until EOF."""
        if first is not None:
            self.dispatch(first)
        while (body := await read_message(reader)) is not None:
            self.dispatch(body)


class FdWriter:
    """pygls' writer interface over a raw fd.

    What the event loop writes during one turn of it (a code-mode child call's two
    notifications, a reply and the notification before it) goes out in one write(2) when the
    task yields: one wake-up of the editor, not one per message. Messages are never reordered:
    another thread's write sends what is waiting first. Once closed, or once the editor is gone,
    what is written is dropped: the fd number may by then name another file."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pending: list[bytes] = []
        self._lock = threading.Lock()
        self._done = False  # closed, or the editor is gone: nothing more is written
        self._closed = False

    def write(self, data: bytes) -> None:
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            if self._done:
                return
            self._pending.append(data)
            if loop is None:  # another thread, or no loop yet: now, after what waits
                self._flush_locked()
                return
            if len(self._pending) > 1:  # a flush is already scheduled
                return
        loop.call_soon(self.flush)

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        data, self._pending = b"".join(self._pending), []
        view = memoryview(data)
        try:
            while view and not self._done:
                try:
                    view = view[os.write(self.fd, view) :]
                except BlockingIOError:  # an editor that gave a non-blocking pipe: wait for it
                    select.select([], [self.fd], [])
        except OSError as exc:  # the editor is gone: its stdin's end stops the loop
            log.error("could not write to the editor: %s", exc)
            self._done = True

    def close(self) -> None:
        with self._lock:
            self._flush_locked()
            self._done, closed, self._closed = True, self._closed, True
        if not closed:
            with contextlib.suppress(OSError):
                os.close(self.fd)


def take_stdio() -> tuple[int, int]:
    """Keep the protocol streams for ourselves and point fds 0 and 1 elsewhere.

    Anything that later writes to fd 1 (a stray print, a C library, a child process that inherits
    stdout) lands on stderr instead of corrupting the protocol; nothing else reads our stdin.
    """
    proto_in = os.dup(0)
    os.set_inheritable(proto_in, False)
    proto_out = os.dup(1)
    os.set_inheritable(proto_out, False)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto_in, proto_out


def _pump(fd: int, loop: asyncio.AbstractEventLoop, stream: asyncio.StreamReader) -> None:
    """Read ``fd`` in a daemon thread (which never holds up exit) and feed the event loop."""
    try:
        while chunk := os.read(fd, 1 << 16):
            loop.call_soon_threadsafe(stream.feed_data, chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            loop.call_soon_threadsafe(stream.feed_eof)


GC_THRESHOLDS = (20_000, 10, 10)


def tune_gc() -> None:
    """Freeze what start-up allocated (the cyclic collector never scans it again) and collect
    young objects less often. An edit batch allocates tens of thousands of containers that
    reference counting frees; at the default threshold (700) the collector still ran about 13
    times per 32-file batch, about 1.5 ms of it."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def run_until_exit(main: Any, server: LanguageServer) -> int:
    """Run the loop; the exit code is the one ``exit`` chose (0 after ``shutdown``, else 1)."""
    tune_gc()
    code = 0
    try:
        asyncio.run(main())
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except (KeyboardInterrupt, BrokenPipeError):
        code = 1
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
    return code


def serve_stdio(server: LanguageServer) -> int:
    proto_in, proto_out = take_stdio()
    writer = FdWriter(proto_out)
    server.protocol.set_writer(writer)
    loop = MessageLoop(server)

    async def main() -> None:
        stream = asyncio.StreamReader(limit=MAX_HEADER_BYTES)
        threading.Thread(
            target=_pump,
            args=(proto_in, asyncio.get_running_loop(), stream),
            name="s-code-stdin",
            daemon=True,
        ).start()
        await loop.run(stream)

    try:
        return run_until_exit(main, server)
    finally:
        writer.flush()
