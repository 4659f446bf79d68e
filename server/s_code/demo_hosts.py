"""The demo's host-process steps: a workspace MCP server found pending, previewed, approved,
searched and called with a credential handle whose value never shows, then edited on disk and
pending again."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from s_code.protocol import methods

DEMO_KEY_ENV = "S_CODE_DEMO_NOTES_KEY"
DEMO_KEY = "notes-demo-9c41f27d0b6e4a58"


def sample_server() -> Path:
    here = Path(__file__).resolve()
    for base in (here.parents[2], Path.cwd()):
        candidate = base / "samples" / "mcp" / "notes_server.py"
        if candidate.is_file():
            return candidate
    raise SystemExit("s-code demo: samples/mcp/notes_server.py not found")


def write_config(workspace: Path, *extra: str) -> None:
    entry = {
        "command": sys.executable,
        "args": [str(sample_server()), *extra],
        "env": {"NOTES_API_KEY": "${secret:env:" + DEMO_KEY_ENV + "}"},
    }
    (workspace / ".s-code").mkdir(exist_ok=True)
    (workspace / ".s-code" / "mcp.json").write_text(json.dumps({"mcpServers": {"notes": entry}}))


def _entry(r: dict[str, Any]) -> str:
    lines = []
    for e in r["entries"]:
        lines.append(f"{e['kind']} {e['name']} ({e['layer']} layer): {e['state']}")
        lines += [f"  tool {t}" for t in e.get("tools", [])[:4]]
    return "\n".join(lines) or "(none)"


def host_steps(demo: Any, workspace: Path) -> None:
    write_config(workspace)
    print("\n   (the repository ships .s-code/mcp.json: an MCP server, with a credential handle)")
    demo.call(
        "List host processes: nothing runs before you approve",
        methods.HOST_PROCESSES_LIST,
        {},
        _entry,
    )
    demo.call(
        "Approve the server (the preview says it runs outside the sandbox)",
        methods.HOST_PROCESSES_APPROVE,
        {"kind": "mcp", "name": "notes"},
        lambda r: f"trusted, hash {r['hash'][:16]}…",
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        listed = demo.client.request(methods.HOST_PROCESSES_LIST, {})
        if any(e["state"] == "running" and e.get("tools") for e in listed["entries"]):
            break
        time.sleep(0.2)
    demo.call("The server is running", methods.HOST_PROCESSES_LIST, {}, _entry)
    demo.call(
        "Find its tools with tool_search",
        methods.TOOLS_SEARCH,
        {"query": "search notes"},
        lambda r: ", ".join(t["name"] for t in r["tools"][:3]),
    )
    demo.call(
        "Call one",
        methods.TOOLS_CALL,
        {"name": "mcp__notes__search_notes", "arguments": {"query": "sandbox"}},
        lambda r: r["content"][0]["text"],
    )
    who = demo.call(
        "Call whoami: the server got the secret, s-code never shows it",
        methods.TOOLS_CALL,
        {"name": "mcp__notes__whoami", "arguments": {}},
        lambda r: r["content"][0]["text"],
    )
    if isinstance(who, dict):
        print(f"   (the value is {'NOT ' if DEMO_KEY not in json.dumps(who) else ''}in the answer)")
    write_config(workspace, "--verbose")
    print("\n   (someone edits .s-code/mcp.json: the approval was for what ran before)")
    demo.call("List again: pending, and stopped", methods.HOST_PROCESSES_LIST, {}, _entry)
    demo.call(
        "Calling it now is refused until it is approved again",
        methods.TOOLS_CALL,
        {"name": "mcp__notes__search_notes", "arguments": {"query": "sandbox"}},
    )
