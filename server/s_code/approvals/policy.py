"""The policy: a pure function of (permission mode, operation), exactly PROTOCOL.md's table."""

from __future__ import annotations

from typing import Literal

Mode = Literal["manual", "accept-edits", "workspace"]
MODES: tuple[Mode, ...] = ("manual", "accept-edits", "workspace")
Operation = Literal[
    "read",  # reads, discovery, git inspection inside the workspace
    "edit",  # edits inside the workspace, not protected
    "edit_protected",
    "write_outside",
    "command_sandboxed",  # sandboxed, no network
    "command_network",  # asks for network, or no sandbox available
    "host_process",  # MCP servers, hooks, background terminals
]
Decision = Literal["allow", "ask", "reject"]

_TABLE: dict[Operation, dict[Mode, Decision]] = {
    "read": {"manual": "allow", "accept-edits": "allow", "workspace": "allow"},
    "edit": {"manual": "ask", "accept-edits": "allow", "workspace": "allow"},
    "edit_protected": {"manual": "reject", "accept-edits": "reject", "workspace": "reject"},
    "write_outside": {"manual": "ask", "accept-edits": "ask", "workspace": "ask"},
    "command_sandboxed": {"manual": "ask", "accept-edits": "ask", "workspace": "allow"},
    "command_network": {"manual": "ask", "accept-edits": "ask", "workspace": "ask"},
    "host_process": {"manual": "ask", "accept-edits": "ask", "workspace": "ask"},
}


def decide(mode: Mode, operation: Operation) -> Decision:
    return _TABLE[operation][mode]
