"""``s-code mcp --print-config CLIENT``: the snippet that adds s-code to each agent client.

Each names the ``s-code`` found on PATH (else this interpreter running ``-m s_code``) and the
workspace. docs/agents.md explains each one, and how to keep the agent's own file, shell and
edit tools out of the way so that s-code's approvals are the ones that count.
"""

from __future__ import annotations

import json
import shutil
import sys


def _command() -> list[str]:
    found = shutil.which("s-code")
    return [found, "mcp"] if found else [sys.executable, "-m", "s_code", "mcp"]


def snippet(client: str, workspace: str) -> str:
    command = _command()
    args = [*command[1:], "--workspace", workspace]
    stdio = {"command": command[0], "args": args}
    if client == "claude":
        quoted = " ".join(_sh(a) for a in [command[0], *args])
        return (
            f"claude mcp add --scope project s-code -- {quoted}\n"
            "# or, in .mcp.json:\n" + json.dumps({"mcpServers": {"s-code": stdio}}, indent=2)
        )
    if client == "codex":
        return (
            "# ~/.codex/config.toml\n[mcp_servers.s-code]\n"
            f"command = {json.dumps(command[0])}\nargs = {json.dumps(args)}\n"
            "required = true\nstartup_timeout_sec = 20\n"
        )
    if client == "gemini":
        return "// .gemini/settings.json\n" + json.dumps(
            {"mcpServers": {"s-code": {**stdio, "trust": False}}}, indent=2
        )
    if client == "vscode":
        return "// .vscode/mcp.json\n" + json.dumps(
            {"servers": {"s-code": {"type": "stdio", **stdio}}}, indent=2
        )
    if client == "zed":
        return "// Zed settings.json\n" + json.dumps(
            {"context_servers": {"s-code": {"source": "custom", **stdio}}}, indent=2
        )
    # an ACP host passes MCP servers to its agent on session/new
    return "// ACP session/new params\n" + json.dumps(
        {
            "cwd": workspace,
            "mcpServers": [{"name": "s-code", "command": command[0], "args": args, "env": []}],
        },
        indent=2,
    )


def _sh(word: str) -> str:
    import shlex

    return shlex.quote(word)
