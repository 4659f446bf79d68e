"""Binding the tools and the control methods to LSP methods. Each handler is a few lines.

Tool methods are bound from the static table in :mod:`s_code.protocol.methods`; the tool layer
(pydantic models, the edit engine) is imported on the first call, not at start-up. Control params
are small and validated here by hand.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from s_code.lsp.replies import guarded
from s_code.lsp.server import PERMISSION_MODES, SCodeServer
from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.protocol.unicode import all_encodable, field_path, unencodable
from s_code.tools.session import Session

log = logging.getLogger(__name__)


def control_params(
    raw: Any, fields: dict[str, type], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Check a control method's params: an object with exactly the known fields, typed, the
    required ones present; fields are checked in the order given."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise invalid_params(f"params must be an object, not {type(raw).__name__}", "<params>")
    for key in raw:
        if key not in fields:
            raise invalid_params(f"unknown field {key!r}", str(key))
    for key, kind in fields.items():
        if key in required:
            _required(raw, key)
        if key in raw and not isinstance(raw[key], kind):
            kind_name = "object" if kind is dict else "string" if kind is str else kind.__name__
            raise invalid_params(f"{key} must be a {kind_name}", key)
    if not all_encodable(raw):
        bad = field_path(unencodable(raw, ()) or ())
        raise invalid_params(f"{bad}: the text has an unpaired UTF-16 surrogate", bad)
    return raw


def _required(params: dict[str, Any], key: str) -> Any:
    if key not in params:
        raise invalid_params(f"{key} is required", key)
    value = params[key]
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise invalid_params(f"{key} is not valid Unicode", key) from None
    return value


def _session(server: SCodeServer) -> Session:
    if server.session is None:
        raise SCodeError(
            ErrorKind.NOT_FOUND,
            "no workspace is open: initialize with a file:// workspace folder or rootUri",
        )
    return server.session


async def call_tool(server: SCodeServer, name: str, raw: Any, prefix: str = "") -> Any:
    """Validate ``raw`` against the tool's model and run it; the one path for both faces."""
    from s_code.protocol.models import parse_params

    session = _session(server)
    tool = server.registry.get(name)
    try:
        args = parse_params(tool.args, raw)
    except SCodeError as err:
        if prefix and "field" in err.data:
            err.data["field"] = f"{prefix}.{err.data['field']}"
        raise
    result = await tool.handler(session, args)
    return result.to_wire()


def _journal(session: Session) -> Any:
    from s_code.edits.engine import journal_of

    return journal_of(session)


async def _tools_list(server: SCodeServer, params: Any) -> Any:
    control_params(params, {})
    return {"tools": [t.describe() for t in server.registry.core()]}


async def _tools_call(server: SCodeServer, params: Any) -> Any:
    p = control_params(params, {"name": str, "arguments": dict}, ("name",))
    name = _required(p, "name")
    return await call_tool(server, name, p.get("arguments", {}), "arguments")


async def _mode_get(server: SCodeServer, params: Any) -> Any:
    control_params(params, {})
    return {"mode": _session(server).permission_mode, "modes": list(PERMISSION_MODES)}


async def _mode_set(server: SCodeServer, params: Any) -> Any:
    mode = _required(control_params(params, {"mode": str}), "mode")
    if mode not in PERMISSION_MODES:
        raise invalid_params(f"unknown mode {mode!r}; one of {', '.join(PERMISSION_MODES)}", "mode")
    _session(server).permission_mode = mode
    return {"mode": mode}


async def _turn_begin(server: SCodeServer, params: Any) -> Any:
    from s_code.edits.engine import TURN_KEY

    control_params(params, {})
    session = _session(server)
    turn = await asyncio.to_thread(_journal(session).begin_turn)
    session.state[TURN_KEY] = turn
    return {"turnId": turn}


async def _turn_end(server: SCodeServer, params: Any) -> Any:
    from s_code.edits.engine import TURN_KEY

    turn = _required(control_params(params, {"turnId": str}), "turnId")
    session = _session(server)
    journal = _journal(session)
    if not await asyncio.to_thread(journal.turn_exists, turn):
        raise invalid_params(f"no turn {turn!r}", "turnId")
    await asyncio.to_thread(journal.end_turn, turn)
    if session.state.get(TURN_KEY) == turn:
        del session.state[TURN_KEY]
    return {"turnId": turn}


async def _turn_undo(server: SCodeServer, params: Any) -> Any:
    from s_code.edits.undo import undo_turn

    turn = _required(control_params(params, {"turnId": str}), "turnId")
    session = _session(server)
    return await undo_turn(session, _journal(session), turn)


async def _sandbox_preview(server: SCodeServer, params: Any) -> Any:
    from s_code.tools.command_tools import preview

    p = control_params(params, {"command": list, "cwd": str, "network": bool}, ("command",))
    command = p["command"]
    if not command or not all(isinstance(a, str) for a in command):
        raise invalid_params("command must be a non-empty array of strings", "command")
    return await asyncio.to_thread(
        preview, _session(server), command, p.get("cwd"), bool(p.get("network", False))
    )


async def _approval_details(server: SCodeServer, params: Any) -> Any:
    card_id = _required(control_params(params, {"id": str}, ("id",)), "id")
    details = getattr(_session(server).approver, "details", None)
    found = details(card_id) if details is not None else None
    if found is None:
        raise SCodeError(ErrorKind.NOT_FOUND, f"no approval {card_id!r} is being asked about")
    return found


CONTROL = {
    methods.TOOLS_LIST: _tools_list,
    methods.TOOLS_CALL: _tools_call,
    methods.PERMISSION_MODE_GET: _mode_get,
    methods.PERMISSION_MODE_SET: _mode_set,
    methods.TURN_BEGIN: _turn_begin,
    methods.TURN_END: _turn_end,
    methods.TURN_UNDO: _turn_undo,
    methods.SANDBOX_PREVIEW: _sandbox_preview,
    methods.APPROVAL_DETAILS: _approval_details,
}


def _bind(server: SCodeServer, method: str, run: Any) -> None:
    async def handler(params: Any) -> Any:
        return await guarded(method, lambda: run(server, params))

    handler.__name__ = "handle_" + method.replace("/", "_").replace("-", "_")
    server.feature(method)(handler)


def _tool_runner(name: str) -> Any:
    async def run(server: SCodeServer, params: Any) -> Any:
        return await call_tool(server, name, params)

    return run


def register(server: SCodeServer) -> None:
    for method, run in CONTROL.items():
        _bind(server, method, run)
    for name, method in methods.TOOL_METHODS.items():
        _bind(server, method, _tool_runner(name))

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


def _default_registry() -> Any:
    from s_code.tools.builtin import default_registry

    return default_registry()


def create_server() -> SCodeServer:
    from s_code.tools.registry import LazyRegistry

    server = SCodeServer(LazyRegistry(_default_registry))
    register(server)
    return server
