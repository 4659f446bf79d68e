"""A workspace with hooks and terminals: an isolated user config and state, hook scripts written
into the workspace, and a client that answers the approval prompt (see ``mcp_support.Editor``)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from s_code.client import StdioClient
from s_code.protocol import methods
from tests.e2e.mcp_support import Editor, ServerLab
from tests.security.sandbox_support import tier_env

SECRET = "term-sk-5be1c0d3a9f2477e8c61"


class HostLab(ServerLab):
    default_mode = "workspace"

    def __init__(self, base: Path) -> None:
        self.base = base
        self.ws = base / "ws"
        (self.ws / ".s-code").mkdir(parents=True)
        (self.ws / "hooks").mkdir()
        (self.ws / "src").mkdir()
        (self.ws / "src" / "app.py").write_text("print('hello')\n")
        (self.ws / "src" / "marked.py").write_text("KEEP = 1\n")
        self.env = dict(
            os.environ,
            S_CODE_STATE_DIR=str(base / "state"),
            XDG_CONFIG_HOME=str(base / "config"),
            TERM_SECRET=SECRET,
        )
        self.editor = Editor()
        self.client: StdioClient | None = None

    # -- configuration ------------------------------------------------------------------------

    def script(self, name: str, body: str) -> Path:
        """A hook script in the workspace (Python), executable."""
        path = self.ws / "hooks" / name
        path.write_text(f"#!{sys.executable}\n{body}")
        path.chmod(0o755)
        return path

    def hooks(self, events: dict[str, Any], layer: str = "workspace") -> Path:
        directory = self.ws / ".s-code" if layer == "workspace" else self.base / "config" / "s-code"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "hooks.json"
        path.write_text(json.dumps({"hooks": events}))
        return path

    def pre(self, matcher: str, *hooks: dict[str, Any]) -> Path:
        return self.hooks({"PreToolUse": [{"matcher": matcher, "hooks": list(hooks)}]})

    # -- the client ---------------------------------------------------------------------------

    def tool(self, name: str, arguments: dict[str, Any], timeout: float = 30) -> Any:
        return self.call(methods.TOOLS_CALL, {"name": name, "arguments": arguments}, timeout)

    def entries(self, kind: str) -> list[dict[str, Any]]:
        listed = self.call(methods.HOST_PROCESSES_LIST)
        return [e for e in listed["entries"] if e["kind"] == kind]

    def approve_hooks(self) -> None:
        for entry in self.entries("hook"):
            if entry["state"] == "pending":
                self.call(
                    methods.HOST_PROCESSES_APPROVE,
                    {"kind": "hook", "name": entry["name"], "layer": entry["layer"]},
                )

    def notifications(self, method: str) -> list[dict[str, Any]]:
        assert self.client is not None
        return [n["params"] for n in list(self.client.notifications) if n.get("method") == method]

    def wait(self, check: Callable[[], Any], timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            time.sleep(0.05)
        raise AssertionError("timed out waiting")

    def edit(self, path: str, content: str) -> Any:
        exists = (self.ws / path).exists()
        read = self.call(methods.READ_FILE, {"path": path}) if exists else {"revision": None}
        return self.call(
            methods.APPLY_PATCH,
            {"files": [{"path": path, "expected_revision": read["revision"], "content": content}]},
        )


def host_lab(tmp_path: Path, tier: int | None = None) -> Iterator[HostLab]:
    """A lab whose server runs its commands at ``tier`` (None: the detected one)."""
    made = HostLab(tmp_path)
    made.env, made.tier = tier_env(tier, made.env), tier
    try:
        yield made
    finally:
        made.close()
