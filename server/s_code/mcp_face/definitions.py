"""A tool as an MCP client sees it: the entry of ``tools/list``, from the tool's one definition.

Name, title, description, ``inputSchema``, ``outputSchema`` (built-in tools: the pydantic model
of the wire result) and annotations that tell the truth: ``readOnlyHint`` exactly for read-only
tools; ``destructiveHint`` for what may delete or overwrite (an edit, a command, a terminal);
``openWorldHint`` for network or host-process authority. An MCP tool of a server the user
installed keeps the hints its own server gave, as given, never stronger. Plain data: this module
never imports the MCP SDK (the editor's sidecar builds the same entries for attached agents).
"""

from __future__ import annotations

from typing import Any

from s_code.session.session import Session
from s_code.tools.registry import ToolDef

_RUNTIME_HINTS = {
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "open_world": "openWorldHint",
}


def hints_of(tool: ToolDef) -> dict[str, Any]:
    if not tool.builtin:  # the server's own words, as it gave them
        found = {
            _RUNTIME_HINTS[k]: v
            for k, v in tool.annotations.items()
            if k in _RUNTIME_HINTS and isinstance(v, bool)
        }
        found["readOnlyHint"] = tool.read_only
        return found
    hints: dict[str, Any] = {"readOnlyHint": tool.read_only, "openWorldHint": tool.open_world}
    if not tool.read_only:  # the spec gives the others meaning only for a tool that writes
        hints["destructiveHint"] = tool.destructive
        hints["idempotentHint"] = tool.idempotent
    elif tool.idempotent:
        hints["idempotentHint"] = True
    return hints


def mcp_tool(tool: ToolDef, session: Session) -> dict[str, Any]:
    """The ``tools/list`` entry of ``tool`` (camelCase, as MCP has it on the wire)."""
    entry: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": hints_of(tool),
    }
    if tool.title:
        entry["title"] = tool.title
        entry["annotations"]["title"] = tool.title
    if tool.output_schema is not None:
        entry["outputSchema"] = tool.output_schema
    if not tool.builtin:  # an MCP server's words: a value resolved since it was added is hidden
        entry = session.redactor.redact_known_json(entry)
    return entry


def listed(session: Session, loaded: set[str]) -> list[dict[str, Any]]:
    """What one agent's ``tools/list`` shows: the core profile, then the tools its own
    ``tool_search`` loaded that are still there."""
    tools = list(session.registry)
    core = [t for t in tools if t.profile == "core"]
    more = [t for t in tools if t.profile != "core" and t.name in loaded]
    return [mcp_tool(t, session) for t in (*core, *more)]
