"""Binding the tools and the control methods to LSP methods. Each handler is a few lines.

Tool methods are bound from the static table in :mod:`s_code.protocol.methods`; the tool layer
(pydantic models, the edit engine) is imported on the first call, not at start-up. Control params
are small and validated here by hand.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from s_code.lsp.replies import guarded
from s_code.lsp.server import PERMISSION_MODES, SCodeServer
from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.protocol.unicode import all_encodable, field_path, unencodable

if TYPE_CHECKING:
    from s_code.session.session import Session

log = logging.getLogger(__name__)


def control_params(
    raw: Any, fields: dict[str, type | tuple[type, ...]], required: tuple[str, ...] = ()
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
            kind_name = _KIND_NAMES.get(kind, getattr(kind, "__name__", "value"))
            raise invalid_params(f"{key} must be a {kind_name}", key)
    if not all_encodable(raw):
        bad = field_path(unencodable(raw, ()) or ())
        raise invalid_params(f"{bad}: the text has an unpaired UTF-16 surrogate", bad)
    return raw


_KIND_NAMES: dict[Any, str] = {
    dict: "object",
    str: "string",
    list: "array",
    bool: "boolean",
    (str, type(None)): "string or null",
}


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
    session = server.session
    if session is None:
        raise SCodeError(
            ErrorKind.NOT_FOUND,
            "no workspace is open: initialize with a file:// workspace folder or rootUri",
        )
    return session


async def _call(server: SCodeServer, name: str, raw: Any, prefix: str = "") -> Any:
    """The one dispatch (imported on the first call, so ``initialize`` never waits for it)."""
    from s_code.tools.dispatch import call

    return await call(_session(server), name, raw, field_prefix=prefix)


async def _tools_list(server: SCodeServer, params: Any) -> Any:
    from s_code.tools.catalog import tools_list

    control_params(params, {})
    return tools_list(_session(server))


async def _tools_call(server: SCodeServer, params: Any) -> Any:
    p = control_params(params, {"name": str, "arguments": dict}, ("name",))
    name = _required(p, "name")
    return await _call(server, name, p.get("arguments", {}), "arguments")


async def _mode_get(server: SCodeServer, params: Any) -> Any:
    control_params(params, {})
    return {"mode": _session(server).mode, "modes": list(PERMISSION_MODES)}


async def _mode_set(server: SCodeServer, params: Any) -> Any:
    mode = _required(control_params(params, {"mode": str}), "mode")
    if mode not in PERMISSION_MODES:
        raise invalid_params(f"unknown mode {mode!r}; one of {', '.join(PERMISSION_MODES)}", "mode")
    _session(server).mode = mode
    return {"mode": mode}


async def _edit_format_get(server: SCodeServer, params: Any) -> Any:
    from s_code.session.session import EDIT_FORMATS

    control_params(params, {})
    return {"format": _session(server).edit_format, "formats": list(EDIT_FORMATS)}


async def _edit_format_set(server: SCodeServer, params: Any) -> Any:
    from s_code.session.session import EDIT_FORMATS

    p = control_params(params, {"format": (str, type(None))}, ("format",))
    fmt = p["format"]
    if fmt is not None and fmt not in EDIT_FORMATS:
        raise invalid_params(
            f"unknown format {fmt!r}; one of {', '.join(EDIT_FORMATS)}, or null", "format"
        )
    _session(server).edit_format = fmt
    return {"format": fmt}


async def _turn_begin(server: SCodeServer, params: Any) -> Any:
    from s_code.edits.turns import begin_turn

    control_params(params, {})
    return {"turnId": await begin_turn(_session(server))}


async def _turn_end(server: SCodeServer, params: Any) -> Any:
    from s_code.edits.turns import end_turn

    turn = _required(control_params(params, {"turnId": str}), "turnId")
    await end_turn(_session(server), turn)
    return {"turnId": turn}


async def _turn_undo(server: SCodeServer, params: Any) -> Any:
    from s_code.edits.turns import undo

    turn = _required(control_params(params, {"turnId": str}), "turnId")
    return await undo(_session(server), turn)


async def _sandbox_preview(server: SCodeServer, params: Any) -> Any:
    from s_code.commands.run import preview

    p = control_params(params, {"command": list, "cwd": str, "network": bool}, ("command",))
    command = p["command"]
    if not command or not all(isinstance(a, str) for a in command):
        raise invalid_params("command must be a non-empty array of strings", "command")
    return await asyncio.to_thread(
        preview, _session(server), command, p.get("cwd"), bool(p.get("network", False))
    )


def _hosts(server: SCodeServer) -> Any:
    _session(server)
    return server.host_processes()


async def _hosts_list(server: SCodeServer, params: Any) -> Any:
    control_params(params, {})
    hosts = _hosts(server)
    await hosts.refresh()
    return hosts.view()


_HOST_FIELDS: dict[str, type | tuple[type, ...]] = {"kind": str, "name": str, "layer": str}


async def _hosts_approve(server: SCodeServer, params: Any) -> Any:
    p = control_params(params, _HOST_FIELDS, ("kind", "name"))
    return await _hosts(server).approve(p["kind"], p["name"], p.get("layer"))


async def _hosts_revoke(server: SCodeServer, params: Any) -> Any:
    p = control_params(params, _HOST_FIELDS, ("kind", "name"))
    return await _hosts(server).revoke(p["kind"], p["name"], p.get("layer"))


async def _turn_list(server: SCodeServer, params: Any) -> Any:
    from s_code.edits.turns import recent

    p = control_params(params, {"limit": int})
    limit = p.get("limit", 20)
    if isinstance(limit, bool) or not 1 <= limit <= 200:
        raise invalid_params("limit is 1 to 200", "limit")
    return {"turns": await recent(_session(server), limit)}


async def _plan_get(server: SCodeServer, params: Any) -> Any:
    control_params(params, {})
    plan = _session(server).plan
    return plan if plan is not None else {"plan": [], "completed": 0, "total": 0}


async def _approval_details(server: SCodeServer, params: Any) -> Any:
    card_id = _required(control_params(params, {"id": str}, ("id",)), "id")
    details = getattr(_session(server).approver, "details", None)
    found = details(card_id) if details is not None else None
    if found is None:
        raise SCodeError(ErrorKind.NOT_FOUND, f"no approval {card_id!r} is being asked about")
    return found


async def _agents_list(server: SCodeServer, params: Any) -> Any:
    control_params(params, {})
    _session(server)
    hub = server.agents
    if hub is None:  # not listening (yet, or any more)
        return {"socket": None, "folders": [], "agents": [], "problems": []}
    return hub.view()


CONTROL = {
    methods.TOOLS_LIST: _tools_list,
    methods.TOOLS_CALL: _tools_call,
    methods.PERMISSION_MODE_GET: _mode_get,
    methods.PERMISSION_MODE_SET: _mode_set,
    methods.TURN_BEGIN: _turn_begin,
    methods.TURN_END: _turn_end,
    methods.TURN_UNDO: _turn_undo,
    methods.TURN_LIST: _turn_list,
    methods.PLAN_GET: _plan_get,
    methods.SANDBOX_PREVIEW: _sandbox_preview,
    methods.EDIT_FORMAT_GET: _edit_format_get,
    methods.EDIT_FORMAT_SET: _edit_format_set,
    methods.HOST_PROCESSES_LIST: _hosts_list,
    methods.HOST_PROCESSES_APPROVE: _hosts_approve,
    methods.HOST_PROCESSES_REVOKE: _hosts_revoke,
    methods.APPROVAL_DETAILS: _approval_details,
    methods.AGENTS_LIST: _agents_list,
}


def _bind(server: SCodeServer, method: str, run: Any) -> None:
    async def handler(params: Any) -> Any:
        return await guarded(method, lambda: run(server, params))

    handler.__name__ = "handle_" + method.replace("/", "_").replace("-", "_")
    server.feature(method)(handler)


def _tool_runner(name: str) -> Any:
    async def run(server: SCodeServer, params: Any) -> Any:
        return await _call(server, name, params)

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
        server.session  # opened now, after the initialize reply  # noqa: B018
        server.start_hosts()
        server.start_agents()
        for warning in server.init_warnings:
            server.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=warning)
            )

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(params: Any) -> None:
        await server.stop_agents()
        await server.stop_hosts()
        server.close_session()


def _default_registry() -> Any:
    from s_code.tools.builtin import default_registry

    return default_registry()


def create_server() -> SCodeServer:
    from s_code.tools.registry import LazyRegistry

    server = SCodeServer(LazyRegistry(_default_registry))
    register(server)
    return server
