"""The demo's host-process steps: a workspace MCP server found pending, previewed, approved,
searched and called with a credential handle whose value never shows, then edited on disk and
pending again; a user hook that blocks an edit of a file the user marked; a background terminal
running a small server that the agent reads from, writes to and kills."""

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


GUARD = """import json, os, sys
call = json.load(sys.stdin)
marked = open(os.path.join(os.path.dirname(__file__), "marked.txt")).read().split()
asked = json.dumps(call.get("tool_input", {}))
hit = [m for m in marked if m in asked]
if hit:
    print(f"{hit[0]} is marked by the user: s-code leaves it alone", file=sys.stderr)
    sys.exit(2)
"""

SERVER = """import http.server, sys, threading
served = []
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        served.append(self.path); self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=httpd.serve_forever, daemon=True).start()
print(f"listening on http://127.0.0.1:{httpd.server_port}  (type: status)", flush=True)
for line in sys.stdin:
    if line.strip() == "status":
        print(f"{len(served)} requests served, up and healthy", flush=True)
"""


def hook_and_terminal_steps(demo: Any, workspace: Path, config: Path) -> None:
    """A user hook that blocks edits of files the user marked; a background terminal running a
    small server that the agent reads from, writes to and kills."""
    hooks = config / "s-code"
    hooks.mkdir(parents=True, exist_ok=True)
    (hooks / "marked.txt").write_text("src/calc/__init__.py\n")
    (hooks / "protect-marked.py").write_text(GUARD)
    entry = {"matcher": "apply_patch", "hooks": [{"argv": [sys.executable, "protect-marked.py"]}]}
    (hooks / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    print("\n   (the user marks src/calc/__init__.py, and adds a PreToolUse hook that guards it)")
    demo.call(
        "Approve the hook (a host process too: previewed, bound to its script's content)",
        methods.HOST_PROCESSES_APPROVE,
        {"kind": "hook", "name": "PreToolUse.0.0", "layer": "user"},
        lambda r: f"trusted, hash {r['hash'][:16]}…",
    )
    read = demo.client.request(methods.READ_FILE, {"path": "src/calc/__init__.py"})
    demo.call(
        "The agent tries to edit the marked file: the hook blocks it, with its reason",
        methods.APPLY_PATCH,
        {
            "files": [
                {
                    "path": "src/calc/__init__.py",
                    "expected_revision": read["revision"],
                    "content": "# rewritten\n",
                }
            ]
        },
    )
    started = demo.call(
        "Start a small server in a background terminal (asked every time, in every mode)",
        methods.TOOLS_CALL,
        {"name": "terminal_start", "arguments": {"command": [sys.executable, "-u", "-c", SERVER]}},
        lambda r: f"terminal {r['terminal_id']}",
    )
    if not isinstance(started, dict):
        return
    tid = started["terminal_id"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        got = demo.client.request(
            methods.TOOLS_CALL, {"name": "terminal_read", "arguments": {"terminal_id": tid}}
        )
        if "listening" in got["output"]:
            break
        time.sleep(0.1)
    cursor = demo.call(
        "Read what it printed",
        methods.TOOLS_CALL,
        {"name": "terminal_read", "arguments": {"terminal_id": tid}},
        lambda r: f"{r['output'].strip()}\ncursor {r['cursor']}",
    )
    demo.call(
        "Write to its input",
        methods.TOOLS_CALL,
        {"name": "terminal_write", "arguments": {"terminal_id": tid, "text": "status\n"}},
        lambda r: f"{r['written']} bytes written",
    )
    at = cursor["cursor"] if isinstance(cursor, dict) else 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        got = demo.client.request(
            methods.TOOLS_CALL,
            {"name": "terminal_read", "arguments": {"terminal_id": tid, "cursor": at}},
        )
        if "served" in got["output"]:
            break
        time.sleep(0.1)
    demo.call(
        "Read only what is new (from the cursor)",
        methods.TOOLS_CALL,
        {"name": "terminal_read", "arguments": {"terminal_id": tid, "cursor": at}},
        lambda r: r["output"].strip(),
    )
    streamed = [n for n in demo.client.notifications if n["method"] == methods.TERMINAL_OUTPUT]
    print(f"   ⇐ the editor was notified: {methods.TERMINAL_OUTPUT} ({len(streamed)} times)")
    demo.call(
        "Kill it: the answer comes once its whole process tree is gone",
        methods.TOOLS_CALL,
        {"name": "terminal_kill", "arguments": {"terminal_id": tid}},
        lambda r: f"gone={r['gone']}, exit {r['exit']}",
    )
    demo.call(
        "List the terminals",
        methods.TOOLS_CALL,
        {"name": "terminal_list", "arguments": {}},
        lambda r: "\n".join(f"{t['terminal_id']} {t['state']}" for t in r["terminals"]),
    )
