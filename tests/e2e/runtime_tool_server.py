"""The real server with two tools added at run time by raw JSON Schema, as MCP tools will be.

``mcp__fake__widgets`` counts widgets; ``mcp__fake__forget`` removes a runtime tool while the
server serves. Used by tests/e2e/test_e2e_runtime_tools.py.
"""

from __future__ import annotations

import sys
from typing import Any

from s_code.lsp.handlers import create_server
from s_code.lsp.transport import serve_stdio
from s_code.tools.registry import ToolDef

WIDGETS_SCHEMA = {
    "type": "object",
    "properties": {
        "count": {"type": "integer", "minimum": 0, "description": "How many widgets."},
        "bin": {"type": "string", "description": "The warehouse bin."},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["count", "bin"],
    "additionalProperties": False,
}


async def _widgets(session: Any, args: dict[str, Any]) -> dict[str, Any]:
    return {"bin": args["bin"], "count": args["count"], "tags": args.get("tags", [])}


async def _forget(session: Any, args: dict[str, Any]) -> dict[str, Any]:
    return {"removed": session.registry.remove(args["name"]) is not None}


def main() -> int:
    server = create_server()
    server.registry.add(
        ToolDef(
            name="mcp__fake__widgets",
            description="Count the widgets stored in a warehouse bin.",
            handler=_widgets,
            read_only=True,
            schema=WIDGETS_SCHEMA,
            profile="specialized",
            source="mcp:fake",
        )
    )
    server.registry.add(
        ToolDef(
            name="mcp__fake__forget",
            description="Remove a runtime tool.",
            handler=_forget,
            read_only=False,
            schema={
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
            profile="specialized",
            source="mcp:fake",
        )
    )
    return serve_stdio(server)


if __name__ == "__main__":
    sys.exit(main())
