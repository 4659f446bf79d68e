"""``s-code mcp --print-config CLIENT``: the files that add s-code to each agent client.

For each client, :func:`blocks` gives what goes where: the entry that starts ``s-code mcp``, the
setting that keeps the client from asking again for s-code's tools (s-code asks, in the editor),
and the setting that keeps the client's own file, shell and edit tools out of the way. Each
names the ``s-code`` found on PATH (else this interpreter running ``-m s_code``). The workspace
is named only where it must be: Claude Code, Codex and Gemini CLI start the server in the folder
they run in, VS Code substitutes ``${workspaceFolder}``; Zed and an ACP host get the folder
given (default: the current one). docs/agents.md shows the same blocks and says where each key
was checked; tests/unit/test_agents_doc.py keeps the two equal.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from dataclasses import dataclass

SERVER = "s-code"

# Claude Code's own tools that read, search, edit or run commands (deny rules remove them from
# the model's tool list; without Bash, Claude Code offers Glob and Grep of its own).
CLAUDE_DENY = ("Bash", "Read", "Edit", "Write", "NotebookEdit", "Glob", "Grep")

# Gemini CLI's built-in tools that read, search, edit or run commands (docs/reference/tools.md).
GEMINI_EXCLUDE = (
    "run_shell_command",
    "read_file",
    "read_many_files",
    "write_file",
    "replace",
    "glob",
    "grep_search",
    "list_directory",
)

CODEX_INSTRUCTIONS = "Read, search and edit files and run commands only with the s-code tools."

VSCODE_AGENT = f"""---
name: s-code
description: Work through s-code; the editor asks before edits and commands.
tools: ['{SERVER}/*']
---
Read, search and edit files and run commands only with the s-code tools."""


@dataclass(frozen=True)
class Block:
    """One piece of configuration: where it goes, its language (json, toml, sh, md), its text."""

    where: str
    lang: str
    text: str


def command() -> list[str]:
    found = shutil.which("s-code")
    return [found, "mcp"] if found else [sys.executable, "-m", "s_code", "mcp"]


def core_tools() -> list[str]:
    from s_code.tools.builtin import default_registry

    return [t.name for t in default_registry().core()]


def blocks(client: str, workspace: str | None, cwd: str) -> list[Block]:
    """The configuration of ``client``; ``workspace`` pins the folder (None: the client's own,
    where the client's working folder is the project; ``cwd`` where it is not)."""
    exe, *args = command()
    pin = ["--workspace", workspace] if workspace else []
    if client == "claude":
        server = {"type": "stdio", "command": exe, "args": [*args, *pin], "alwaysLoad": True}
        add = ["claude", "mcp", "add-json", "--scope", "project", SERVER, _json(server, None)]
        settings = {
            "enabledMcpjsonServers": [SERVER],
            "permissions": {"allow": [f"mcp__{SERVER}"], "deny": list(CLAUDE_DENY)},
        }
        return [
            Block("shell, in the project (writes .mcp.json)", "sh", shlex.join(add)),
            Block(".mcp.json", "json", _json({"mcpServers": {SERVER: server}})),
            Block(".claude/settings.local.json", "json", _json(settings)),
        ]
    if client == "codex":
        server_toml = "\n".join(
            [
                f"[mcp_servers.{SERVER}]",
                f"command = {json.dumps(exe)}",
                f"args = {json.dumps([*args, *pin])}",
                "required = true",
                "startup_timeout_sec = 20",
                'default_tools_approval_mode = "approve"',
            ]
        )
        profile = "\n".join(
            [
                'approval_policy = "never"',
                'sandbox_mode = "read-only"',
                'web_search = "disabled"',
                f"developer_instructions = {json.dumps(CODEX_INSTRUCTIONS)}",
                "",
                "[features]",
                "shell_tool = false",
            ]
        )
        return [
            Block("~/.codex/config.toml", "toml", server_toml),
            Block("~/.codex/s-code.config.toml (codex --profile s-code)", "toml", profile),
        ]
    if client == "gemini":
        settings = {
            "mcpServers": {SERVER: {"command": exe, "args": [*args, *pin], "trust": True}},
            "tools": {"exclude": list(GEMINI_EXCLUDE)},
        }
        return [Block("~/.gemini/settings.json", "json", _json(settings))]
    if client == "vscode":
        folder = pin or ["--workspace", "${workspaceFolder}"]
        server = {"type": "stdio", "command": exe, "args": [*args, *folder]}
        return [
            Block(".vscode/mcp.json", "json", _json({"servers": {SERVER: server}})),
            Block(".github/agents/s-code.agent.md", "md", VSCODE_AGENT),
        ]
    pin = pin or ["--workspace", cwd]
    if client == "zed":
        settings = {
            "context_servers": {
                SERVER: {"source": "custom", "command": exe, "args": [*args, *pin], "env": {}}
            },
            "agent": {
                "profiles": {
                    SERVER: {"name": SERVER, "tools": {}, "enable_all_context_servers": True}
                },
                "tool_permissions": {
                    "tools": {f"mcp:{SERVER}:{t}": {"default": "allow"} for t in core_tools()}
                },
            },
        }
        return [Block("Zed settings.json", "json", _json(settings))]
    # an ACP host passes MCP servers to its agent on session/new
    params = {
        "cwd": workspace or cwd,
        "mcpServers": [{"name": SERVER, "command": exe, "args": [*args, *pin], "env": []}],
    }
    return [Block("ACP session/new params", "json", _json(params))]


def snippet(client: str, workspace: str | None, cwd: str) -> str:
    """What ``--print-config`` prints: each block under a line that says where it goes (``//``
    before JSON and Markdown, ``#`` before TOML and shell)."""
    return "\n\n".join(f"{label(b)}\n{b.text}" for b in blocks(client, workspace, cwd)) + "\n"


def label(block: Block) -> str:
    return ("# " if block.lang in ("toml", "sh") else "// ") + block.where


def _json(value: object, indent: int | None = 2, depth: int = 0) -> str:
    """JSON as people write it: nested objects indented, a short list or object of plain values
    on one line; ``indent=None``: all on one line."""
    flat = json.dumps(value, ensure_ascii=False)
    if indent is None or not isinstance(value, dict | list) or not value:
        return flat
    plain = all(not isinstance(v, dict | list) for v in _values(value))
    if plain and depth > 0 and len(flat) <= 72:
        return flat
    pad = " " * indent * (depth + 1)
    if isinstance(value, dict):
        items = [f"{json.dumps(k)}: {_json(v, indent, depth + 1)}" for k, v in value.items()]
        opener, closer = "{", "}"
    else:
        items = [_json(v, indent, depth + 1) for v in value]
        opener, closer = "[", "]"
    inner = ",\n".join(pad + item for item in items)
    return f"{opener}\n{inner}\n{' ' * indent * depth}{closer}"


def _values(value: dict[str, object] | list[object]) -> list[object]:
    return list(value.values()) if isinstance(value, dict) else value
