"""The attached backend: calls run in the editor's session, over the agent link.

:func:`attach` finds the link of the editor serving the workspace (:func:`link.find`), checks
that the socket and token are this user's and private, connects and presents the token; then
every ``tools/list`` and ``tools/call`` of the agent goes to the sidecar, which runs it through
its one dispatch with this agent as the caller, and only the editor approves. A cancel of the
agent's call is passed on (``$/cancelRequest``) and its answer awaited.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
from typing import Any

from s_code.approvals.caller import Caller
from s_code.mcp_face import link
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.protocol.framing import frame, read_message

log = logging.getLogger(__name__)
CONNECT_TIMEOUT_S = 5.0


class LinkClosed(Exception):
    pass


class AttachedBackend:
    mode = "attached"

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._sinks: dict[int, Caller] = {}
        self._pump: asyncio.Task[None] | None = None
        self.folders: list[str] = []
        self.editor_mode = ""

    async def _run(self) -> None:
        try:
            while (body := await read_message(self.reader)) is not None:
                self._dispatch(body)
        finally:
            for fut in self._waiting.values():
                if not fut.done():
                    fut.set_exception(LinkClosed())

    def _dispatch(self, body: bytes) -> None:
        try:
            msg = json.loads(body)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        if msg.get("method") == link.OUTPUT:
            params = msg.get("params") or {}
            caller = self._sinks.get(_int(params.get("id")))
            if caller is not None:
                caller.notify(str(params.get("method")), params.get("params") or {})
            return
        fut = self._waiting.pop(_int(msg.get("id")), None)
        if fut is not None and not fut.done():
            fut.set_result(msg)

    async def request(
        self, method: str, params: dict[str, Any], caller: Caller | None = None
    ) -> Any:
        msg_id = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = fut
        if caller is not None:
            self._sinks[msg_id] = caller
        self.writer.write(
            frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        )
        try:
            try:
                reply = await asyncio.shield(fut)
            except asyncio.CancelledError:
                # the agent cancelled: the editor's session cancels the call, and its answer
                # (after the call's cleanup) is awaited before the cancellation goes on
                self.writer.write(
                    frame({"jsonrpc": "2.0", "method": link.CANCEL, "params": {"id": msg_id}})
                )
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(fut), 60)
                raise
        except LinkClosed:
            raise SCodeError(
                ErrorKind.HOST_PROCESS_FAILED,
                "the editor's s-code session went away; restart the agent to reattach",
            ) from None
        finally:
            self._sinks.pop(msg_id, None)
            self._waiting.pop(msg_id, None)
        if "error" in reply:
            error = reply["error"] if isinstance(reply["error"], dict) else {}
            data = dict(error.get("data") or {})
            kind = data.pop("kind", "internal")
            try:
                code = ErrorKind(kind)
            except ValueError:
                code = ErrorKind.INTERNAL
            raise SCodeError(code, str(error.get("message", "failed")), **data)
        return reply.get("result")

    async def tools(self, loaded: set[str]) -> list[dict[str, Any]]:
        result = await self.request(link.TOOLS, {"loaded": sorted(loaded)})
        tools = result.get("tools", []) if isinstance(result, dict) else []
        return [t for t in tools if isinstance(t, dict)]

    async def call(self, name: str, arguments: Any, caller: Caller) -> Any:
        params = {"name": name, "arguments": arguments, "agent": caller.name}
        return await self.request(link.CALL, params, caller)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()
        if self._pump is not None:
            self._pump.cancel()


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


async def attach(workspace: str) -> AttachedBackend | None:
    """The editor's session serving ``workspace``, attached; None when no editor serves it.
    :class:`link.Refused` (one line) when the link there must not be trusted, or refuses."""
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
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_unix_connection(where.socket), CONNECT_TIMEOUT_S
        )
    except (OSError, TimeoutError):
        return None  # a link left by an editor that is gone: serve on our own
    backend = AttachedBackend(reader, writer)
    backend._pump = asyncio.get_running_loop().create_task(backend._run())
    try:
        result = await asyncio.wait_for(
            backend.request(link.ATTACH, {"token": token, "workspace": workspace}),
            CONNECT_TIMEOUT_S,
        )
    except SCodeError as err:
        await backend.close()
        raise link.Refused(f"the editor's s-code refused this agent: {err.message}") from None
    except TimeoutError:
        await backend.close()
        raise link.Refused("the editor's s-code did not answer the attach") from None
    backend.folders = list(result.get("folders", [])) if isinstance(result, dict) else []
    backend.editor_mode = str(result.get("mode", "")) if isinstance(result, dict) else ""
    return backend
