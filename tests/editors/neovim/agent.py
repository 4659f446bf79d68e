"""An agent for the Neovim cases: the official MCP SDK client over stdio on ``s-code mcp``.

    python agent.py WORKSPACE NAME

Started by a case of run.lua with Neovim's environment, which ``s-code mcp`` gets whole (the
sidecar Neovim runs has it too, so the agent finds its link). It reads ``a.txt``, then asks to
change its first line to ``AGENT``, and prints one JSON line after each call; then it stays
attached until its stdin closes.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def say(step: str, result: types.CallToolResult) -> None:
    structured = result.structured_content or {}
    print(json.dumps({"step": step, "is_error": result.is_error, "result": structured}), flush=True)


async def main(workspace: str, name: str) -> None:
    params = StdioServerParameters(  # the SDK passes on a few variables unless told all
        command=sys.executable,
        args=["-m", "s_code", "mcp", "--workspace", workspace],
        env=dict(os.environ),
    )
    info = types.Implementation(name=name, version="1.0")
    async with Client(params, mode="legacy", client_info=info) as client:
        read = await client.call_tool("read_file", {"path": "a.txt"})
        say("read", read)
        revision = (read.structured_content or {}).get("revision")
        edit = {
            "path": "a.txt",
            "expected_revision": revision,
            "edits": [{"start_line": 1, "end_line": 1, "new_text": "AGENT"}],
        }
        say("patch", await client.call_tool("apply_patch", {"files": [edit]}))
        await anyio.to_thread.run_sync(sys.stdin.read)  # attached until Neovim closes stdin


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
