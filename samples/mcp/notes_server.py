"""A small MCP server on the official SDK (stdio), shipped for the demo and the tests.

Tools: ``search_notes`` and ``read_note`` (read-only) over a few notes; ``add_note``; ``whoami``,
which reports the API key it was started with (a credential handle resolves to it: s-code must
never show the value); and, for the tests, ``slow`` (sleeps), ``crash`` (dies mid-call),
``shout`` (floods stderr), ``spawn_orphan`` (starts a grandchild that ignores SIGTERM and calls
setsid) and ``grow`` (adds a tool and announces ``notifications/tools/list_changed``).

    python notes_server.py        # speaks MCP on stdin/stdout
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")
NOTES = {
    "welcome": "s-code runs MCP servers as host processes, with your account's authority.",
    "sandbox": "Commands run in an OS sandbox; MCP servers do not: approve them with care.",
    "handles": "Configuration holds credential handles, never values.",
}
READ_ONLY = ToolAnnotations(readOnlyHint=True)


@server.tool(annotations=READ_ONLY)
def search_notes(query: str) -> str:
    """Search the notes for a word; returns the names of the notes that mention it."""
    hits = [name for name, text in NOTES.items() if query.lower() in text.lower()]
    return ", ".join(sorted(hits)) or "no note mentions it"


@server.tool(annotations=READ_ONLY)
def read_note(name: str) -> str:
    """Read one note by name."""
    return NOTES.get(name, f"no note named {name}")


@server.tool()
def add_note(name: str, text: str) -> str:
    """Add a note (kept while the server runs)."""
    NOTES[name] = text
    return f"added {name}"


@server.tool(annotations=READ_ONLY)
def whoami() -> str:
    """Who the server is talking to the notes service as (its API key, from its environment)."""
    return f"user notes-bot with key {os.environ.get('NOTES_API_KEY', '(none)')}"


@server.tool(annotations=READ_ONLY)
def slow(seconds: float) -> str:
    """Take a while to answer."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def crash() -> str:
    """Die in the middle of a call."""
    os._exit(3)


@server.tool()
def shout(lines: int) -> str:
    """Write many lines to stderr."""
    for i in range(lines):
        sys.stderr.write(f"shouting line {i} {'x' * 100}\n")
    sys.stderr.flush()
    return f"shouted {lines} lines"


@server.tool()
def spawn_orphan(marker: str) -> str:
    """Start a grandchild that ignores SIGTERM and leaves the session (it must not survive)."""
    # start_new_session: setsid() in the child (the script itself calling it again would fail:
    # a session leader cannot, and the grandchild would die at once)
    script = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"time.sleep(600)  # {marker}"
    )
    subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    return "spawned"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named ``extra`` and tell the client the tool list changed."""

    def extra() -> str:
        """A tool that appeared after the server started."""
        return "extra"

    server.add_tool(extra, name="extra")
    await ctx.session.send_tool_list_changed()
    return "grew"


if __name__ == "__main__":
    if os.environ.get("NOTES_SLOW_START"):
        time.sleep(float(os.environ["NOTES_SLOW_START"]))
    server.run("stdio")
