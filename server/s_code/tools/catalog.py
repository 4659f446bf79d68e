"""``s-code/tools/list``: the compact core profile, shaped by the session's edit format."""

from __future__ import annotations

from typing import Any

from s_code.edits.formats import input_schema, instructions
from s_code.session.session import Session


def tools_list(session: Session) -> dict[str, Any]:
    """Core tools with apply_patch's schema for the edit format, and that format's system
    instructions (``instructions``) for the model."""
    tools = []
    for tool in session.registry:
        if tool.profile != "core":
            continue
        entry = tool.describe()
        if tool.name == "apply_patch":
            schema = input_schema(session.edit_format)
            if schema is not None:
                entry = {**entry, "inputSchema": schema}
        tools.append(entry)
    return {
        "tools": tools,
        "editFormat": session.edit_format,
        "instructions": instructions(session.edit_format),
    }
