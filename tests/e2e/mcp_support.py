"""A workspace with an MCP server configured, and a client that answers the approval prompt."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from s_code.client import StdioClient
from s_code.protocol import methods
from tests.security.sandbox_support import alive, tier_env

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "mcp" / "notes_server.py"
SECRET = "notes-sk-7f3a9c2e11d04b8ba0c5"


class Editor:
    """Answers every prompt as told (``answer``), and keeps what it was shown."""

    def __init__(self) -> None:
        self.answer = "Approve once"
        self.messages: list[str] = []
        self.documents: list[str] = []
        self.updates: list[Any] = []

    def __call__(self, method: str, params: Any) -> Any:
        if method == "window/showMessageRequest":
            self.messages.append(params["message"])
            if self.answer == "details-then-approve" and len(self.messages) % 2 == 1:
                return {"title": "Show details"}
            return {"title": "Approve once" if self.answer != "Deny" else "Deny"}
        if method == "window/showDocument":
            self.documents.append(Path(params["uri"].removeprefix("file://")).read_text())
            return {"success": True}
        return None


class ServerLab:
    """A real server over stdio for a lab's workspace (``ws``, ``env``, ``editor``)."""

    ws: Path
    env: dict[str, str]
    editor: Editor
    client: StdioClient | None = None
    default_mode = "manual"
    tier: int | None = None  # the sandbox tier of its commands (None: the detected one)

    def start(self, mode: str | None = None) -> StdioClient:
        self.client = StdioClient(
            [sys.executable, "-m", "s_code", "serve"], env=self.env, on_request=self.editor
        )
        self.client.initialize(
            str(self.ws),
            capabilities={"window": {"showDocument": {"support": True}}},
            options={"permissionMode": mode or self.default_mode},
        )
        return self.client

    def call(self, method: str, params: Any = None, timeout: float = 30) -> Any:
        assert self.client is not None
        return self.client.request(method, params if params is not None else {}, timeout)

    def kept_from(self, ran: dict[str, Any], *paths: str) -> None:
        """A command that wrote protected ``paths`` ran at the lab's tier, where tier 1 refused
        the writes (read-only) and tier 2 let them be made, then saw them and put them back."""
        tier = ran["sandbox"]["tier"]
        assert self.tier is None or tier == self.tier, (tier, self.tier)
        seen = {k: ran[k] for k in ("exit_code", "output", "protected_changed")}
        if tier == 1:
            assert ran["output"].count("Read-only file system") == len(paths), seen
        else:
            assert sorted(ran["protected_changed"]) == sorted(paths), seen

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


class Lab(ServerLab):
    """A workspace whose ``.s-code/mcp.json`` names the sample server (copied into the
    workspace, so its content is part of the trust hash), an isolated user config and state."""

    def __init__(self, base: Path, **server: Any) -> None:
        self.base = base
        self.ws = base / "ws"
        (self.ws / ".s-code").mkdir(parents=True)
        (self.ws / "tools").mkdir()
        self.script = self.ws / "tools" / "notes_server.py"
        shutil.copy(SAMPLE, self.script)
        self.marker = base / "started"
        self.env = dict(
            os.environ,
            S_CODE_STATE_DIR=str(base / "state"),
            XDG_CONFIG_HOME=str(base / "config"),
            NOTES_SECRET=SECRET,
        )
        self.write_config(**server)
        self.editor = Editor()
        self.client: StdioClient | None = None

    def write_config(self, **server: Any) -> None:
        entry: dict[str, Any] = {
            "command": sys.executable,
            "args": ["tools/notes_server.py"],
            "env": {"NOTES_API_KEY": "${secret:env:NOTES_SECRET}"},
            "toolTimeoutSec": 10,
        }
        entry.update(server)
        (self.ws / ".s-code" / "mcp.json").write_text(json.dumps({"mcpServers": {"notes": entry}}))

    def entry(self) -> dict[str, Any]:
        listed = self.call(methods.HOST_PROCESSES_LIST)
        (found,) = [e for e in listed["entries"] if e["name"] == "notes"]
        return found  # type: ignore[no-any-return]

    def wait_for(self, check: Callable[[dict[str, Any]], bool], timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        entry = self.entry()
        while not check(entry) and time.monotonic() < deadline:
            time.sleep(0.1)
            entry = self.entry()
        assert check(entry), entry
        return entry

    def tool(self, name: str, arguments: dict[str, Any], timeout: float = 30) -> Any:
        return self.call(
            methods.TOOLS_CALL, {"name": f"mcp__notes__{name}", "arguments": arguments}, timeout
        )


processes_with = alive  # processes whose command line holds a marker


def lab(tmp_path: Path, tier: int | None = None, **server: Any) -> Iterator[Lab]:
    """A lab whose server runs its commands at ``tier`` (None: the detected one)."""
    made = Lab(tmp_path, **server)
    made.env, made.tier = tier_env(tier, made.env), tier
    try:
        yield made
    finally:
        made.close()
