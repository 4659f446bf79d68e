"""A trivial MCP stdio server for the harness's own test: one tool, ``echo``, that writes its text
to the file named by $PROBE_MARKER (proof the tool really ran) and returns it."""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("s-probe")


@server.tool(description="Echo a text back (and leave it in the marker file).")
def echo(text: str) -> str:
    Path(os.environ["PROBE_MARKER"]).write_text(text)
    return f"probe echoed {text}"


if __name__ == "__main__":
    server.run("stdio")
