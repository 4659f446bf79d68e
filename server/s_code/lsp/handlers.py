"""Binding the registry and the control methods to LSP methods. Each handler is a few lines."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types
from pydantic import Field

from s_code.edits.engine import TURN_KEY, journal_of
from s_code.edits.undo import undo_turn
from s_code.lsp.replies import guarded
from s_code.lsp.server import PERMISSION_MODES, SCodeServer
from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.protocol.models import Args, parse_params
from s_code.tools.registry import ToolDef
from s_code.tools.session import Session

log = logging.getLogger(__name__)


class ToolsListParams(Args):
    pass


class ToolsCallParams(Args):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class PermissionModeSetParams(Args):
    mode: str


class TurnParams(Args):
    turnId: str


def _session(server: SCodeServer) -> Session:
    if server.session is None:
        raise SCodeError(
            ErrorKind.NOT_FOUND,
            "no workspace is open: initialize with a file:// workspace folder or rootUri",
        )
    return server.session


async def call_tool(server: SCodeServer, tool: ToolDef, raw: Any, prefix: str = "") -> Any:
    """Validate ``raw`` against the tool's model and run it; the one path for both faces."""
    session = _session(server)
    try:
        args = parse_params(tool.args, raw)
    except SCodeError as err:
        if prefix and "field" in err.data:
            err.data["field"] = f"{prefix}.{err.data['field']}"
        raise
    result = await tool.handler(session, args)
    return result.to_wire()


def register(server: SCodeServer) -> None:
    for tool in server.registry:
        _bind_tool(server, tool)

    @server.feature(methods.TOOLS_LIST)
    async def tools_list(params: Any) -> Any:
        async def run() -> Any:
            parse_params(ToolsListParams, params)
            return {"tools": [t.describe() for t in server.registry.core()]}

        return await guarded(methods.TOOLS_LIST, run)

    @server.feature(methods.TOOLS_CALL)
    async def tools_call(params: Any) -> Any:
        async def run() -> Any:
            call = parse_params(ToolsCallParams, params)
            return await call_tool(
                server, server.registry.get(call.name), call.arguments, "arguments"
            )

        return await guarded(methods.TOOLS_CALL, run)

    @server.feature(methods.PERMISSION_MODE_GET)
    async def mode_get(params: Any) -> Any:
        async def run() -> Any:
            parse_params(ToolsListParams, params)
            return {"mode": _session(server).permission_mode, "modes": list(PERMISSION_MODES)}

        return await guarded(methods.PERMISSION_MODE_GET, run)

    @server.feature(methods.PERMISSION_MODE_SET)
    async def mode_set(params: Any) -> Any:
        async def run() -> Any:
            mode = parse_params(PermissionModeSetParams, params).mode
            if mode not in PERMISSION_MODES:
                raise invalid_params(
                    f"unknown mode {mode!r}; one of {', '.join(PERMISSION_MODES)}", "mode"
                )
            _session(server).permission_mode = mode
            return {"mode": mode}

        return await guarded(methods.PERMISSION_MODE_SET, run)

    @server.feature(methods.TURN_BEGIN)
    async def turn_begin(params: Any) -> Any:
        async def run() -> Any:
            parse_params(ToolsListParams, params)
            session = _session(server)
            turn = await asyncio.to_thread(journal_of(session).begin_turn)
            session.state[TURN_KEY] = turn
            return {"turnId": turn}

        return await guarded(methods.TURN_BEGIN, run)

    @server.feature(methods.TURN_END)
    async def turn_end(params: Any) -> Any:
        async def run() -> Any:
            turn = parse_params(TurnParams, params).turnId
            session = _session(server)
            journal = journal_of(session)
            if not await asyncio.to_thread(journal.turn_exists, turn):
                raise invalid_params(f"no turn {turn!r}", "turnId")
            await asyncio.to_thread(journal.end_turn, turn)
            if session.state.get(TURN_KEY) == turn:
                del session.state[TURN_KEY]
            return {"turnId": turn}

        return await guarded(methods.TURN_END, run)

    @server.feature(methods.TURN_UNDO)
    async def turn_undo(params: Any) -> Any:
        async def run() -> Any:
            turn = parse_params(TurnParams, params).turnId
            session = _session(server)
            return await undo_turn(session, journal_of(session), turn)

        return await guarded(methods.TURN_UNDO, run)

    @server.feature(types.INITIALIZE)
    def on_initialize(params: types.InitializeParams) -> None:
        server.open_session(params)

    @server.feature(types.INITIALIZED)
    def on_initialized(params: types.InitializedParams) -> None:
        for warning in server.init_warnings:
            server.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=warning)
            )

    @server.feature(types.SHUTDOWN)
    def on_shutdown(params: Any) -> None:
        server.close_session()


def _bind_tool(server: SCodeServer, tool: ToolDef) -> None:
    async def handler(params: Any) -> Any:
        return await guarded(tool.method, lambda: call_tool(server, tool, params))

    handler.__name__ = f"tool_{tool.name}"
    server.feature(tool.method)(handler)


def create_server() -> SCodeServer:
    from s_code.tools.builtin import default_registry

    server = SCodeServer(default_registry())
    register(server)
    return server
