"""MCP stdio servers through the real sidecar: pending until approved, previewed, searched,
called, redacted; crashes, hangs, floods and changing tools handled; nothing outlives the session.

SECURITY.md H1-H6 and H8 each have a positive control: the same server run directly through the
SDK (or the config as written) shows what the defence stops.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from s_code.client import RpcError, StdioClient
from s_code.protocol import methods
from tests.e2e.mcp_support import SECRET, Lab, lab, processes_with
from tests.security.sandbox_support import each_tier, tier_of

SERVER = "tools/notes_server.py"


@pytest.fixture
def notes(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Lab]:
    yield from lab(tmp_path, tier_of(request))


def approve(notes: Lab) -> dict[str, object]:
    result = notes.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "notes"})
    notes.wait_for(lambda e: e["state"] == "running" and e.get("tools"))
    return result  # type: ignore[no-any-return]


def test_h1_a_workspace_server_never_starts_before_approval(notes: Lab) -> None:
    notes.start()
    time.sleep(1.0)  # time enough to have started, were it going to
    entry = notes.entry()
    assert entry["state"] == "pending" and entry["layer"] == "workspace"
    assert processes_with(SERVER) == []
    with pytest.raises(RpcError) as err:
        notes.tool("search_notes", {"query": "sandbox"})
    assert err.value.kind == "host_process_untrusted"  # its tools are not there either
    assert "approve" in str(err.value)
    # positive control: the configuration, run as written, does start a server
    notes.editor.answer = "details-then-approve"
    approve(notes)
    assert processes_with(SERVER) != []


def test_the_preview_says_what_runs_and_with_what_authority(notes: Lab) -> None:
    notes.start()
    notes.editor.answer = "details-then-approve"
    approve(notes)
    message, document = notes.editor.messages[0], notes.editor.documents[0]
    assert "outside the sandbox with your account's filesystem and network access" in message
    assert "OUTSIDE the sandbox" in document
    assert sys.executable in document and SERVER in document
    assert "NOTES_API_KEY=${secret:env:NOTES_SECRET}" in document
    assert "${secret:env:NOTES_SECRET}" in document.split("Credential handles")[1]
    assert SECRET not in document and SECRET not in message
    assert "Trust hash: " + notes.entry()["hash"] in document
    assert "notes_server.py sha256:" in document  # the script's content is bound too


def test_search_and_call_a_tool_with_a_redacted_secret(notes: Lab) -> None:
    notes.start()
    approve(notes)
    found = notes.call(methods.TOOLS_SEARCH, {"query": "search notes word"})
    assert found["tools"][0]["name"] == "mcp__notes__search_notes"
    assert found["tools"][0]["inputSchema"]["required"] == ["query"]
    assert found["tools"][0]["source"] == "mcp:notes"
    result = notes.tool("search_notes", {"query": "sandbox"})
    assert result["is_error"] is False
    assert result["content"][0]["text"] == "sandbox"
    who = notes.tool("whoami", {})  # H4: the resolved secret never comes back
    text = str(who)
    assert SECRET not in text and "[REDACTED]" in text
    # bad arguments are refused by field path, before the server is asked
    with pytest.raises(RpcError) as err:
        notes.tool("search_notes", {"query": 3})
    assert err.value.kind == "invalid_params" and err.value.data["field"] == "arguments.query"


def test_h4_the_secret_value_is_real_and_never_shown(notes: Lab) -> None:
    """Positive control: the server does get the value (it says so through the SDK); s-code's
    answer, its log and its audit rows never hold it."""
    import json

    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def direct() -> str:
        params = StdioServerParameters(
            command=sys.executable, args=[str(notes.script)], env={"NOTES_API_KEY": SECRET}
        )
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            res = await s.call_tool("whoami", {})
            return str(res.content[0].text)

    assert SECRET in asyncio.run(direct())
    notes.start("workspace")
    approve(notes)
    assert SECRET not in json.dumps(notes.tool("whoami", {}))
    notes.close()
    import sqlite3

    db = sqlite3.connect(Path(notes.env["S_CODE_STATE_DIR"]) / "state.sqlite3")
    dumped = "\n".join(str(row) for row in db.iterdump())
    assert SECRET not in dumped


def test_h2_an_approved_entry_edited_on_disk_is_pending_again(notes: Lab) -> None:
    notes.start()
    approve(notes)
    assert notes.tool("read_note", {"name": "welcome"})["is_error"] is False
    notes.write_config(args=[SERVER, "--verbose"])  # the arguments changed
    assert notes.entry()["state"] == "pending"
    with pytest.raises(RpcError) as err:
        notes.tool("read_note", {"name": "welcome"})
    assert err.value.kind == "host_process_untrusted"
    assert processes_with(SERVER) == []  # the old approval stopped running
    # approved again, then its script's content changes: pending again
    notes.write_config()
    approve(notes)
    notes.script.write_text(notes.script.read_text() + "\n# changed\n")
    assert notes.entry()["state"] == "pending"


@each_tier("notes")  # a command's write: refused read-only (tier 1) or put back (tier 2)
def test_h3_the_agent_cannot_write_the_configuration(notes: Lab) -> None:
    notes.start("workspace")
    read = notes.call(methods.READ_FILE, {"path": ".s-code/mcp.json"})
    with pytest.raises(RpcError) as err:
        notes.call(
            methods.APPLY_PATCH,
            {
                "files": [
                    {
                        "path": ".s-code/mcp.json",
                        "expected_revision": read["revision"],
                        "content": '{"mcpServers": {}}',
                    }
                ]
            },
        )
    assert err.value.kind == "protected_path"
    before = (notes.ws / ".s-code" / "mcp.json").read_text()
    ran = notes.call(
        methods.RUN_COMMAND, {"command": ["sh", "-c", "echo '{}' > .s-code/mcp.json; exit 0"]}
    )
    notes.kept_from(ran, ".s-code/mcp.json")
    assert (notes.ws / ".s-code" / "mcp.json").read_text() == before


def test_a_crash_mid_call_fails_fast_and_the_server_comes_back(notes: Lab) -> None:
    notes.start("workspace")
    approve(notes)
    with pytest.raises(RpcError) as err:  # fails fast: not the call's timeout, its own error
        notes.tool("crash", {})
    assert err.value.kind == "host_process_failed"
    notes.wait_for(lambda e: e["state"] == "running" and e.get("tools"), timeout=30)
    assert notes.tool("read_note", {"name": "welcome"})["is_error"] is False


def test_a_hung_call_times_out_and_a_cancel_is_answered(tmp_path: Path) -> None:
    for notes in lab(tmp_path / "timeout", toolTimeoutSec=1.5):
        notes.start("workspace")
        approve(notes)
        with pytest.raises(RpcError) as err:  # the call sleeps 60 s; its timeout is 1.5 s
            notes.tool("slow", {"seconds": 60}, timeout=30)
        assert err.value.kind == "timeout"
        assert notes.call(methods.PERMISSION_MODE_GET)["mode"] == "workspace"
    for notes in lab(tmp_path / "cancel", toolTimeoutSec=120):
        client = notes.start("workspace")
        approve(notes)
        params = {"name": "mcp__notes__slow", "arguments": {"seconds": 60}}
        replies: list[dict[str, Any]] = []
        hung = threading.Thread(target=_request_into, args=(client, params, "hung", replies))
        hung.start()
        # requests start in the order they come: once this one is answered, the call is under way
        assert notes.call(methods.PERMISSION_MODE_GET)["mode"] == "workspace"
        assert not replies  # the call hangs: no answer yet
        client.notify("$/cancelRequest", {"id": "hung"})
        hung.join(30)
        assert replies, "the cancelled call was never answered"
        error = replies[0]["error"]
        assert error["code"] == -32800 and error["data"]["kind"] == "cancelled", replies
        assert "tools/call" in error["message"]
        # the sidecar and its MCP session go on: another call of that server is answered
        assert notes.tool("read_note", {"name": "welcome"})["is_error"] is False


def test_a_tool_timeout_shorter_than_the_start_up_still_lets_the_server_start(
    tmp_path: Path,
) -> None:
    """toolTimeoutSec bounds a tool call; the start (initialize, the tool list) has its own
    startupTimeoutSec. A server that takes 2 s to start, with a 1 s tool timeout, starts."""
    env = {"NOTES_SLOW_START": "2", "NOTES_API_KEY": "x"}
    for notes in lab(tmp_path, toolTimeoutSec=1, startupTimeoutSec=30, env=env):
        notes.start("workspace")
        approve(notes)
        assert notes.tool("read_note", {"name": "welcome"})["is_error"] is False


def _request_into(
    client: StdioClient, params: dict[str, Any], msg_id: str, replies: list[dict[str, Any]]
) -> None:
    replies.append(client.request_raw(methods.TOOLS_CALL, params, timeout=30, msg_id=msg_id))


def test_a_server_flooding_stderr_keeps_answering(notes: Lab) -> None:
    notes.start("workspace")
    approve(notes)
    done = notes.tool("shout", {"lines": 20000})
    assert "shouted 20000 lines" in str(done)
    assert notes.tool("read_note", {"name": "welcome"})["is_error"] is False


def test_h8_a_tool_that_appears_after_approval_is_hidden_until_approved(notes: Lab) -> None:
    notes.start("workspace")
    approve(notes)
    notes.tool("grow", {})
    entry = notes.wait_for(lambda e: "extra" in e.get("toolsPendingApproval", []))
    assert "mcp__notes__extra" not in entry.get("tools", [])
    with pytest.raises(RpcError) as err:
        notes.tool("extra", {})
    assert err.value.kind == "host_process_untrusted"
    notes.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "notes"})
    entry = notes.wait_for(lambda e: "mcp__notes__extra" in e.get("tools", []))
    assert notes.tool("extra", {})["content"][0]["text"] == "extra"


def test_a_slow_server_never_holds_up_other_tools(tmp_path: Path) -> None:
    env = {"NOTES_SLOW_START": "10", "NOTES_API_KEY": "x"}
    for notes in lab(tmp_path, env=env, startupTimeoutSec=60):
        notes.start("workspace")
        notes.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "notes"})
        # ordering, not timing: the listing is answered while the server is still starting
        notes.call(methods.LIST_FILES, {})
        assert notes.entry()["state"] == "starting"
        notes.wait_for(lambda e: e["state"] == "running" and e.get("tools"), timeout=60)


def test_h6_nothing_outlives_the_session(notes: Lab) -> None:
    marker = f"orphan-{uuid.uuid4().hex[:8]}"
    notes.start("workspace")
    approve(notes)
    notes.tool("spawn_orphan", {"marker": marker})
    assert processes_with(marker)
    notes.close()  # shutdown + exit
    deadline = time.monotonic() + 10
    while (processes_with(marker) or processes_with(SERVER)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with(marker) == [] and processes_with(SERVER) == []


def test_h6_a_killed_sidecar_takes_its_servers_with_it(notes: Lab) -> None:
    marker = f"orphan-{uuid.uuid4().hex[:8]}"
    client = notes.start("workspace")
    approve(notes)
    notes.tool("spawn_orphan", {"marker": marker})
    client.proc.send_signal(signal.SIGKILL)
    client.proc.wait()
    deadline = time.monotonic() + 10
    while (processes_with(marker) or processes_with(SERVER)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with(marker) == [] and processes_with(SERVER) == []
    notes.client = None


def test_revoke_stops_the_server(notes: Lab) -> None:
    notes.start("workspace")
    approve(notes)
    notes.call(methods.HOST_PROCESSES_REVOKE, {"kind": "mcp", "name": "notes"})
    assert notes.entry()["state"] == "pending"
    deadline = time.monotonic() + 10
    while processes_with(SERVER) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with(SERVER) == []
