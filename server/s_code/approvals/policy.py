"""The policy: a pure function of (permission mode, operation), exactly PROTOCOL.md's table.

Calls to an approved MCP server's tools are not in PROTOCOL.md's table; they are decided here by
the tool's own annotations: one that says it only reads (``readOnlyHint``) is a read; one that
says it may destroy (``destructiveHint: true``) asks in every mode; any other asks unless the
mode is ``workspace``. An edit of code an approved host process runs (its code scope) is not
in the table either: that code runs with the user's full authority, so it asks in every mode.
"""

from __future__ import annotations

from typing import Literal

Mode = Literal["manual", "accept-edits", "workspace"]
MODES: tuple[Mode, ...] = ("manual", "accept-edits", "workspace")
Operation = Literal[
    "read",  # reads, discovery, git inspection inside the workspace
    "edit",  # edits inside the workspace, not protected
    "edit_protected",
    "edit_host_code",  # an edit of code an approved host process runs (its code scope)
    "write_outside",
    "command_sandboxed",  # sandboxed, no network
    "command_network",  # asks for network, or no sandbox available
    "host_process",  # MCP servers, hooks, background terminals
    "host_tool",  # a call to an MCP server's tool that does not say it only reads
    "host_tool_destructive",  # ... that says it may destroy (destructiveHint: true)
]
Decision = Literal["allow", "ask", "reject"]

_TABLE: dict[Operation, dict[Mode, Decision]] = {
    "read": {"manual": "allow", "accept-edits": "allow", "workspace": "allow"},
    "edit": {"manual": "ask", "accept-edits": "allow", "workspace": "allow"},
    "edit_protected": {"manual": "reject", "accept-edits": "reject", "workspace": "reject"},
    "edit_host_code": {"manual": "ask", "accept-edits": "ask", "workspace": "ask"},
    "write_outside": {"manual": "ask", "accept-edits": "ask", "workspace": "ask"},
    "command_sandboxed": {"manual": "ask", "accept-edits": "ask", "workspace": "allow"},
    "command_network": {"manual": "ask", "accept-edits": "ask", "workspace": "ask"},
    "host_process": {"manual": "ask", "accept-edits": "ask", "workspace": "ask"},
    "host_tool": {"manual": "ask", "accept-edits": "ask", "workspace": "allow"},
    "host_tool_destructive": {"manual": "ask", "accept-edits": "ask", "workspace": "ask"},
}


def decide(mode: Mode, operation: Operation) -> Decision:
    return _TABLE[operation][mode]
