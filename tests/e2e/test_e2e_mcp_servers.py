"""Other MCP servers through the real sidecar: a third-party one from npm (the reference
"everything" server), one that pages its tool list, and a cancelled call."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from s_code.client import RpcError
from s_code.protocol import methods
from tests.e2e.mcp_support import SECRET, Lab

HERE = Path(__file__).resolve().parents[1] / "mcp_servers"
EVERYTHING = HERE / "everything" / "node_modules" / "@modelcontextprotocol" / "server-everything"
NODE = shutil.which("node")


def configured(tmp_path: Path, name: str, entry: dict[str, object]) -> Lab:
    lab = Lab(tmp_path)
    (lab.ws / ".s-code" / "mcp.json").write_text(json.dumps({"mcpServers": {name: entry}}))
    return lab


def approved(lab: Lab, name: str) -> dict[str, object]:
    lab.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": name})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        (entry,) = [
            e for e in lab.call(methods.HOST_PROCESSES_LIST)["entries"] if e["name"] == name
        ]
        if entry["state"] == "running" and entry.get("tools"):
            return entry  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError(entry)


needs_everything = pytest.mark.skipif(
    (NODE is None or not EVERYTHING.is_dir()) and not os.environ.get("CI"),
    reason="the everything server is installed by make test (npm ci in tests/mcp_servers)",
)


@needs_everything
def test_the_reference_everything_server(tmp_path: Path) -> None:
    assert NODE is not None and EVERYTHING.is_dir(), "make test installs it"
    lab = configured(
        tmp_path,
        "everything",
        {
            "command": NODE,
            "args": [str(EVERYTHING / "dist" / "index.js"), "stdio"],
            "env": {"EVERYTHING_TOKEN": "${secret:env:NOTES_SECRET}"},
        },
    )
    try:
        lab.start("workspace")
        entry = approved(lab, "everything")
        assert "mcp__everything__echo" in entry["tools"]  # type: ignore[operator]
        found = lab.call(methods.TOOLS_SEARCH, {"query": "add two numbers sum"})
        assert found["tools"][0]["name"] == "mcp__everything__get-sum"
        echo = lab.call(
            methods.TOOLS_CALL,
            {"name": "mcp__everything__echo", "arguments": {"message": "hello"}},
        )
        assert echo["content"][0]["text"] == "Echo: hello"
        total = lab.call(
            methods.TOOLS_CALL, {"name": "mcp__everything__get-sum", "arguments": {"a": 2, "b": 3}}
        )
        assert "5" in json.dumps(total)
        env = lab.call(methods.TOOLS_CALL, {"name": "mcp__everything__get-env", "arguments": {}})
        shown = json.dumps(env)
        assert "EVERYTHING_TOKEN" in shown  # the server got it...
        assert SECRET not in shown  # ...and s-code never shows its value
        with pytest.raises(RpcError) as err:
            lab.call(
                methods.TOOLS_CALL,
                {"name": "mcp__everything__get-sum", "arguments": {"a": "two"}},
            )
        assert err.value.kind == "invalid_params"
        assert err.value.data["field"] in ("arguments.a", "arguments.b")
    finally:
        lab.close()


def test_a_paged_tool_list_is_read_to_the_end(tmp_path: Path) -> None:
    lab = configured(
        tmp_path,
        "paged",
        {"command": sys.executable, "args": [str(HERE / "paged_server.py")]},
    )
    try:
        lab.start("workspace")
        entry = approved(lab, "paged")
        assert len(entry["tools"]) == 25  # type: ignore[arg-type]
        called = lab.call(methods.TOOLS_CALL, {"name": "mcp__paged__tool_24", "arguments": {}})
        assert called["content"][0]["text"] == "called tool_24"
    finally:
        lab.close()


def test_a_cancelled_call_is_answered_and_the_server_stays(tmp_path: Path) -> None:
    lab = Lab(tmp_path)
    try:
        client = lab.start("workspace")
        approved(lab, "notes")
        rid, data = client.encode_request(
            methods.TOOLS_CALL, {"name": "mcp__notes__slow", "arguments": {"seconds": 30}}
        )
        import queue

        answer: queue.Queue[dict[str, object]] = queue.Queue()
        client._pending[rid] = answer  # the reply to the request sent below
        client.send_raw(data)
        # requests start in the order they come: once this one is answered, the call is under way
        lab.call(methods.PERMISSION_MODE_GET)
        assert answer.empty()  # the call sleeps 30 s: no answer yet
        client.notify("$/cancelRequest", {"id": rid})
        # a cancel that is not honoured ends the call as a success, 30 s on: not "cancelled"
        reply = answer.get(timeout=90)
        assert reply["error"]["data"]["kind"] == "cancelled"  # type: ignore[index]
        # the server is still there for the next call
        done = lab.tool("read_note", {"name": "welcome"})
        assert done["is_error"] is False
    finally:
        lab.close()
