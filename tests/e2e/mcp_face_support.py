"""Driving ``s-code mcp --standalone`` from tests: the official SDK client, and the raw pipe.

:class:`Agent` is one ``mcp.Client`` over stdio to a server process of its own. The client lives
on an event loop in a thread of its own (an anyio blocking portal), so one server can serve a
whole test module and the tests stay plain functions; everything the client is sent (list
changes, log messages, elicitation requests) is kept for the tests to look at.
:class:`RawPeer` writes newline-delimited JSON (or any bytes) to a server and reads its replies
with deadlines, for what no SDK client would send.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

ERAS = ["legacy", "auto"]
"""The SDK client's modes: ``legacy`` negotiates 2025-11-25 with ``initialize``, ``auto`` gets
2026-07-28 from ``server/discover`` (no handshake)."""
ERA_IDS = {"legacy": "2025", "auto": "2026"}
DEADLINE_S = 60.0
"""The most any one request may take before the test fails (a hang is a failure, not a wait)."""


def until(check: Callable[[], Any], within_s: float = 30) -> bool:
    """Poll ``check()`` until it holds or ``within_s`` passed; whether it held."""
    deadline = time.monotonic() + within_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def make_workspace(root: Path) -> Path:
    """A small git repository: two commits, then an uncommitted change to ``notes.txt``."""
    root.mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    git = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.invalid"]
    quiet: dict[str, Any] = {"cwd": root, "check": True, "capture_output": True}
    subprocess.run([*git, "init", "-q", "-b", "main"], **quiet)
    subprocess.run([*git, "add", "-A"], **quiet)
    subprocess.run([*git, "commit", "-q", "-m", "first commit"], **quiet)
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\ndelta\n")
    subprocess.run([*git, "commit", "-q", "-am", "second: delta"], **quiet)
    (root / "notes.txt").write_text("alpha\nBETA\ngamma\ndelta\n")
    return root


def server_env(base: Path) -> dict[str, str]:
    """The server's environment: its own state, runtime and config dirs under ``base``."""
    dirs = {
        "S_CODE_STATE_DIR": base / "state",
        "XDG_RUNTIME_DIR": base / "run",
        "XDG_CONFIG_HOME": base / "config",
    }
    for path in dirs.values():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return dict(os.environ, **{k: str(v) for k, v in dirs.items()})


def server_argv(ws: Path, mode: str) -> list[str]:
    return [sys.executable, "-m", "s_code", "mcp", "--workspace", str(ws), "--mode", mode]


@dataclass
class Agent:
    """An MCP client (the SDK's) connected to its own ``s-code mcp --standalone`` process."""

    portal: BlockingPortal
    era: str
    client: Client = field(init=False)
    answer: str = "deny"
    """How the elicitation callback answers: approve, deny, decline, cancel, unreadable, error,
    or hold (approve when :attr:`let_go` is set)."""
    asked: list[str] = field(default_factory=list)
    """The message of every elicitation request, in order."""
    notices: list[Any] = field(default_factory=list)
    """Every notification the message handler saw."""
    logs: list[Any] = field(default_factory=list)
    let_go: threading.Event = field(default_factory=threading.Event)
    held: list[str] = field(default_factory=list)
    """How each held question ended: answered (after let_go) or cancelled (by the client)."""

    async def on_elicit(
        self, ctx: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        self.asked.append(params.message)
        if self.answer == "hold":  # approve, once the test lets go
            try:
                while not self.let_go.is_set():
                    await anyio.sleep(0.05)
                return types.ElicitResult(action="accept", content={"decision": "approve"})
            finally:
                self.held.append("answered" if self.let_go.is_set() else "cancelled")
        if self.answer == "approve":
            return types.ElicitResult(action="accept", content={"decision": "approve"})
        if self.answer == "deny":
            return types.ElicitResult(action="accept", content={"decision": "deny"})
        if self.answer == "unreadable":  # an accept that says nothing the schema allows
            return types.ElicitResult(action="accept", content={"decision": "yes, sure"})
        if self.answer == "error":  # the client failed to show it
            return types.ErrorData(code=types.INTERNAL_ERROR, message="the UI crashed")
        return types.ElicitResult(action=self.answer)  # type: ignore[arg-type]

    async def on_message(self, message: Any) -> None:
        self.notices.append(message)

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params.data)

    def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``await fn(*args, **kwargs)`` on the client's loop, from the test's thread."""
        return self.portal.call(partial(fn, *args, **kwargs))

    def soon(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future[Any]:
        return self.portal.start_task_soon(partial(fn, *args, **kwargs))

    def call(self, name: str, arguments: dict[str, Any], **kw: Any) -> types.CallToolResult:
        """``tools/call`` through ``Client.call_tool``, which checks a success result's
        ``structuredContent`` against the tool's ``outputSchema`` (a mismatch raises)."""
        result = self.run(self.client.call_tool, name, arguments, **kw)
        assert isinstance(result, types.CallToolResult)
        return result

    def ok(self, name: str, arguments: dict[str, Any], **kw: Any) -> dict[str, Any]:
        """A call that must succeed: its ``structuredContent``."""
        result = self.call(name, arguments, **kw)
        assert not result.is_error, result.structured_content
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    def text(self, result: types.CallToolResult) -> str:
        (block,) = result.content
        assert isinstance(block, types.TextContent)
        return block.text

    def tools(self) -> list[types.Tool]:
        listed = self.run(self.client.list_tools, cache_mode="refresh")
        return list(listed.tools)

    @property
    def modern(self) -> bool:
        return self.era != "legacy"


@contextlib.contextmanager
def agent(
    ws: Path,
    base: Path,
    era: str,
    mode: str = "workspace",
    *,
    elicitation: bool = True,
    name: str = "face-test-agent",
) -> Iterator[Agent]:
    """An :class:`Agent` on ``ws`` in ``mode``; its server's stderr goes to ``base/stderr.log``.
    The servers of one workspace share its user's dirs (state, runtime, config: next to it)."""
    base.mkdir(parents=True, exist_ok=True)
    argv = server_argv(ws, mode)
    params = StdioServerParameters(
        command=argv[0], args=[*argv[1:], "--standalone"], env=server_env(ws.parent)
    )
    with (
        start_blocking_portal() as portal,
        (base / "stderr.log").open("w") as errlog,
    ):
        peer = Agent(portal, era)
        transport = stdio_client(params, errlog=errlog)
        client = Client(
            transport,  # type: ignore[arg-type]
            mode=era,  # type: ignore[arg-type]
            read_timeout_seconds=DEADLINE_S,
            message_handler=peer.on_message,
            logging_callback=peer.on_log,
            elicitation_callback=peer.on_elicit if elicitation else None,
            client_info=types.Implementation(name=name, version="1.0"),
        )
        with portal.wrap_async_context_manager(client) as entered:
            peer.client = entered
            yield peer
    logged = (base / "stderr.log").read_text()
    assert "Traceback" not in logged, logged  # the server logs a bug's traceback here


class RawPeer:
    """A server on raw pipes: ``send`` any bytes or object, ``until`` a reply with an id arrives.
    Everything read from stdout is kept in :attr:`wire` (for a look for tracebacks)."""

    def __init__(self, argv: list[str], env: dict[str, str], stderr: Path) -> None:
        self._err = stderr.open("wb")
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, env=env
        )
        self.wire = b""
        self._buf = b""
        self.seen: list[Any] = []

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else (json.dumps(message) + "\n").encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _read(self, within_s: float) -> bool:
        """Read what arrives within ``within_s``; False at EOF."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], within_s)
        if not ready:
            return True
        chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
        if not chunk:
            return False
        self.wire += chunk
        self._buf += chunk
        while b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
            self.seen.append(json.loads(line))
        return True

    def until(self, check: Callable[[Any], bool], within_s: float = DEADLINE_S) -> Any:
        """The first message not taken yet that ``check`` accepts (taken now); fails at the
        deadline."""
        deadline = time.monotonic() + within_s
        start = 0
        while True:
            for message in self.seen[start:]:
                if check(message):
                    self.seen.remove(message)
                    return message
            start = len(self.seen)
            left = deadline - time.monotonic()
            assert left > 0, f"no such reply within {within_s}s; got {self.seen[-5:]}"
            assert self._read(min(left, 0.5)), f"the server closed its output: {self.seen[-5:]}"

    def reply(self, rid: Any, within_s: float = DEADLINE_S) -> dict[str, Any]:
        """The reply (result or error) to the request ``rid`` (None: an error with id null)."""
        found = self.until(
            lambda m: isinstance(m, dict) and m.get("id", "absent") == rid and "method" not in m,
            within_s,
        )
        assert isinstance(found, dict)
        return found

    def quiet_for(self, seconds: float) -> list[Any]:
        """What arrives within ``seconds`` (used only to show that nothing more came)."""
        deadline = time.monotonic() + seconds
        start = len(self.seen)
        while (left := deadline - time.monotonic()) > 0 and self._read(min(left, 0.1)):
            pass
        return self.seen[start:]

    def close(self) -> int:
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            code = self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._err.close()
        return code
