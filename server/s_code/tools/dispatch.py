"""The one call path: every face calls a tool through :func:`call`.

LSP's typed methods and ``s-code/tools/call``, the CLI and the demo (and next: hooks, code mode's
child calls, an MCP face) all come here: find the tool, validate the raw arguments against its
model or JSON Schema (errors name the field path), run it (a tool that changes anything goes
through the approval gate inside its handler, with a card projected by the server), and return
its result as plain JSON, passed through the session's redactor when the tool is a host
process's.
"""

from __future__ import annotations

from typing import Any

from s_code.protocol.errors import SCodeError
from s_code.session.session import Session
from s_code.tools.registry import ToolDef


async def call(session: Session, name: str, raw_args: Any, *, field_prefix: str = "") -> Any:
    """Run tool ``name`` with ``raw_args`` (JSON data from the client); its wire result."""
    tool: ToolDef = session.registry.get(name)
    try:
        args = tool.parse(raw_args)
    except SCodeError as err:
        if field_prefix and "field" in err.data:
            err.data["field"] = f"{field_prefix}.{err.data['field']}".rstrip(".")
        raise
    result = await tool.handler(session, args)
    wire = result if isinstance(result, dict) else result.to_wire()
    if tool.redact_result:
        wire = session.redactor.redact_json(wire)
    return wire
