"""``s-code/tools/list``: the compact core profile, shaped by the session's edit format, and the
tools tool_search has loaded for the session (an MCP tool's definition with the known secret
values hidden, like every tool result)."""

from __future__ import annotations

from typing import Any

from s_code.edits.formats import input_schema, instructions
from s_code.session.session import Session


def tools_list(session: Session) -> dict[str, Any]:
    """Core tools with apply_patch's schema for the edit format, then the loaded tools that are
    still registered (each part in registry order: loading tools never moves a core tool), and
    the edit format's system instructions (``instructions``) for the model."""
    registry = list(session.registry)
    core = [t for t in registry if t.profile == "core"]
    loaded = [t for t in registry if t.profile != "core" and t.name in session.loaded_tools]
    tools = []
    for tool in [*core, *loaded]:
        entry = tool.describe()
        if tool.name == "apply_patch":
            schema = input_schema(session.edit_format)
            if schema is not None:
                entry = {**entry, "inputSchema": schema}
        elif not tool.builtin:  # an MCP server's words: a value resolved since it was added
            entry = session.redactor.redact_known_json(entry)
        tools.append(entry)
    return {
        "tools": tools,
        "editFormat": session.edit_format,
        "instructions": instructions(session.edit_format),
    }
