"""How an MCP tool is named among s-code's tools: ``mcp__<server>__<tool>``."""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 128


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` with every character outside ``[A-Za-z0-9_-]`` replaced."""
    name = f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    return name[:MAX_NAME]
