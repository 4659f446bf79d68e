"""``s-code mcp --standalone`` driven by the official MCP SDK client over stdio, in both protocol
eras (2025-11-25 with ``initialize``; 2026-07-28 with ``server/discover``), and by hand on the
raw pipe: the tool list and its annotations, every core tool through a client that checks each
result against its ``outputSchema``, ``tool_search`` loading a tool for one agent only, tool
errors with ``kind`` and ``field``, output streamed as progress, cancel killing a command's
tree, approvals by MCP elicitation (or failing closed), hostile input, ``--print-config``.

One server per era serves the module's workspace-mode tests (module fixture); tests that need
a fresh list or another mode start their own.
"""

from __future__ import annotations

import inspect
import json
import shlex
import subprocess
import sys
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.subscriptions import ToolsListChanged as ToolsListChangedEvent

from s_code.mcp_face import stdio
from s_code.protocol import framing
from s_code.tools.builtin import default_registry
from tests.e2e.mcp_face_support import (
    ERA_IDS,
    ERAS,
    Agent,
    RawPeer,
    agent,
    make_workspace,
    server_argv,
    server_env,
    until,
)
from tests.security.sandbox_support import alive

LOG_LEVEL = "io.modelcontextprotocol/logLevel"  # a request's opt-in to log messages (2026)
REGISTRY = {t.name: t for t in default_registry()}
CORE = [t.name for t in default_registry() if t.profile == "core"]


class Served:
    """A module's server for one era: the agent, its workspace, its base directory."""

    def __init__(self, agent: Agent, ws: Path, base: Path) -> None:
        self.agent, self.ws, self.base = agent, ws, base


@pytest.fixture(scope="module", params=ERAS, ids=ERA_IDS.get)
def face(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    base = tmp_path_factory.mktemp(f"face-{ERA_IDS[request.param]}")
    ws = make_workspace(base / "ws")
    with agent(ws, base / "agent", request.param, "workspace") as peer:
        yield Served(peer, ws, base)


def _error(result: types.CallToolResult) -> dict[str, Any]:
    """A tool error's structured part, after checking that its text line says the same."""
    assert result.is_error is True
    data = result.structured_content
    assert isinstance(data, dict) and isinstance(data.get("message"), str), data
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    where = f" (field {data['field']})" if data.get("field") else ""
    assert block.text == f"error {data['kind']}{where}: {data['message']}"
    assert "Traceback" not in block.text and 'File "' not in block.text
    return data


# 1. the tool list, and every core tool once -----------------------------------------------------


def test_the_list_is_the_core_profile_with_truthful_annotations(face: Served) -> None:
    a = face.agent
    assert a.client.protocol_version == ("2025-11-25" if a.era == "legacy" else "2026-07-28")
    tools = a.tools()
    assert sorted(t.name for t in tools) == sorted(CORE) and len(tools) == len(CORE)
    for tool in tools:
        spec = REGISTRY[tool.name]
        assert tool.title == spec.title and tool.title
        assert tool.description == spec.description and tool.description
        assert tool.input_schema == spec.input_schema and tool.input_schema["type"] == "object"
        assert tool.output_schema == spec.output_schema and tool.output_schema is not None
        hints = tool.annotations
        assert hints is not None
        assert hints.read_only_hint is spec.read_only, tool.name
        # the spec's defaults are destructive and open-world: a closed tool must say it is not
        assert hints.open_world_hint is (tool.name == "run_command"), tool.name
        destructive = tool.name in ("apply_patch", "run_command")
        assert (hints.destructive_hint is True) is destructive, tool.name
    writers = {t.name for t in tools if not t.annotations or not t.annotations.read_only_hint}
    assert writers == {"apply_patch", "run_command"}


def test_the_client_checks_results_against_the_output_schema(face: Served) -> None:
    """Positive control for the calls below: the SDK client holds every core tool's
    ``outputSchema`` and refuses a ``structuredContent`` that drifts from it."""
    a = face.agent
    a.tools()
    for name in CORE:
        drifted = types.CallToolResult(
            content=[types.TextContent(type="text", text="{}")],
            structured_content={"not_a_field": 1},
        )
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            a.run(a.client.session.validate_tool_result, name, drifted)


def test_read_file_gives_numbered_content_and_revision(face: Served) -> None:
    result = face.agent.call("read_file", {"path": "notes.txt"})
    assert not result.is_error
    data = result.structured_content
    assert isinstance(data, dict)
    assert data["path"] == "notes.txt" and data["line_count"] == 4
    assert data["numbered_content"].splitlines()[1].split("\t") == ["     2", "BETA"]
    text = face.agent.text(result)
    assert text.splitlines()[:4] == data["numbered_content"].splitlines()
    assert f"revision {data['revision']}" in text and data["sha256"] in text
    part = face.agent.ok("read_file", {"path": "notes.txt", "start_line": 3, "end_line": 3})
    assert part["numbered_content"] == "     3\tgamma\n"


def test_list_files_and_search_text(face: Served) -> None:
    listed = face.agent.ok("list_files", {})
    paths = {e["path"] for e in listed["entries"]}
    assert {"notes.txt", "src", "src/app.py"} <= paths and ".git" not in paths
    found = face.agent.ok("search_text", {"pattern": "return \\d+"})
    assert [(m["path"], m["line_number"], m["text"]) for m in found["matches"]] == [
        ("src/app.py", 2, "    return 42")
    ]


def test_apply_patch_in_workspace_mode_edits_without_asking(face: Served) -> None:
    a, target = face.agent, face.ws / "patched.txt"
    target.write_text("one\ntwo\n")
    asked = len(a.asked)
    revision = a.ok("read_file", {"path": "patched.txt"})["revision"]
    entry = {"path": "patched.txt", "expected_revision": revision, "content": "one\nTWO\n"}
    applied = a.ok("apply_patch", {"files": [entry]})
    assert [f["path"] for f in applied["applied"]] == ["patched.txt"]
    assert target.read_text() == "one\nTWO\n"
    assert len(a.asked) == asked  # the client could have been asked; the mode says no need
    stale = a.call("apply_patch", {"files": [entry]})  # the same revision again: stale now
    assert _error(stale)["kind"] == "stale_revision"
    assert target.read_text() == "one\nTWO\n"


def test_update_plan(face: Served) -> None:
    plan = [
        {"step": "read", "status": "completed"},
        {"step": "edit", "status": "in_progress"},
        {"step": "test", "status": "pending"},
    ]
    result = face.agent.ok("update_plan", {"plan": plan, "explanation": "started"})
    assert result["plan"] == plan and result["completed"] == 1 and result["total"] == 3


def test_git_status_diff_and_log(face: Served) -> None:
    a = face.agent
    status = a.ok("git_status", {})
    assert status["branch"] == "main"
    assert {"path": "notes.txt", "worktree": "M"}.items() <= status["entries"][0].items()
    diff = a.ok("git_diff", {"paths": ["notes.txt"]})
    (changed,) = diff["files"]
    assert "-beta\n+BETA\n" in changed["patch"]
    assert (changed["additions"], changed["deletions"]) == (1, 1)
    log = a.ok("git_log", {})
    assert [c["subject"] for c in log["commits"]] == ["second: delta", "first commit"]
    assert log["commits"][0]["commit"] == status["head"]


def test_run_command(face: Served) -> None:
    result = face.agent.call("run_command", {"command": ["sh", "-c", "echo out; exit 3"]})
    assert not result.is_error
    data = result.structured_content
    assert isinstance(data, dict)
    assert data["exit_code"] == 3 and data["output"] == "out\n"
    assert data["sandbox"]["workspace"] == str(face.ws.resolve())
    assert face.agent.text(result) == "exit code 3\nout\n"


# 2. tool_search loads a tool for this agent ------------------------------------------------------


async def _search_and_listen(a: Agent) -> list[str]:
    """2026: open ``subscriptions/listen`` for tool-list changes, load git_show, wait for the
    event, then list (the event evicted the client's cached list)."""
    async with a.client.listen(tools_list_changed=True) as sub:
        result = await a.client.call_tool("tool_search", {"query": "select:git_show"})
        assert not result.is_error
        with anyio.fail_after(30):
            async for event in sub:
                assert isinstance(event, ToolsListChangedEvent)
                break
    listed = await a.client.list_tools()
    return [t.name for t in listed.tools]


def test_tool_search_loads_a_tool_for_this_agent_only(face: Served) -> None:
    with agent(face.ws, face.base / "searcher", face.agent.era, "workspace") as a:
        before = [t.name for t in a.run(a.client.list_tools).tools]  # the client caches this
        assert sorted(before) == sorted(CORE)
        if a.modern:
            names: list[str] = a.run(_search_and_listen, a)
        else:
            a.ok("tool_search", {"query": "select:git_show"})
            assert until(
                lambda: any(isinstance(n, types.ToolListChangedNotification) for n in a.notices)
            )
            names = [t.name for t in a.run(a.client.list_tools).tools]  # evicted by the notice
        assert names == [*before, "git_show"]
        shown = a.ok("git_show", {"revision": "HEAD", "paths": ["notes.txt"]})
        assert shown["commit"]["subject"] == "second: delta"
        assert "+delta" in shown["files"][0]["patch"]
        found = a.ok("tool_search", {"query": "git blame"})  # a keyword search loads what it finds
        assert "git_blame" in [t["name"] for t in found["tools"]]
        assert "git_blame" in [t.name for t in a.tools()]
        # another agent process on the same workspace still has the core profile only
        assert sorted(t.name for t in face.agent.tools()) == sorted(CORE)


# 3. tool errors ---------------------------------------------------------------------------------


def test_a_missing_file_is_not_found(face: Served) -> None:
    data = _error(face.agent.call("read_file", {"path": "missing/nope.txt"}))
    assert data["kind"] == "not_found" and data["path"] == "missing/nope.txt"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [({}, "path"), ({"path": 7}, "path"), ({"path": "notes.txt", "bogus": True}, "bogus")],
    ids=["missing", "wrong-type", "unknown-field"],
)
def test_bad_arguments_name_the_field(face: Served, arguments: dict[str, Any], field: str) -> None:
    data = _error(face.agent.call("read_file", arguments))
    assert data["kind"] == "invalid_params" and data["field"] == field
    assert field in data["message"]


def test_an_unknown_tool(face: Served) -> None:
    data = _error(face.agent.call("no_such_tool", {}))
    assert data["kind"] == "unknown_tool" and data["name"] == "no_such_tool"
    assert "tool_search" in data["message"]


# 4. progress while a command runs -------------------------------------------------------------


def test_output_streams_as_progress_while_the_command_runs(face: Served) -> None:
    """The command waits for a file that the test makes only after the first line arrived as
    progress: were output not streamed while it runs, the command would time out."""
    a, go = face.agent, f"go-{uuid.uuid4().hex[:8]}"
    seen: list[tuple[float, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, message))

    script = f"echo first; while [ ! -e {go} ]; do sleep 0.05; done; echo second"
    arguments = {"command": ["sh", "-c", script], "timeout_ms": 60_000}
    pending = a.soon(a.client.call_tool, "run_command", arguments, progress_callback=progress)
    assert until(lambda: any(m and "first" in m for _, m in seen)), seen
    assert not pending.done()
    (face.ws / go).touch()
    result = pending.result(timeout=60)
    assert not result.is_error
    assert result.structured_content["output"] == "first\nsecond\n"
    assert result.structured_content["timed_out"] is False
    assert "".join(m or "" for _, m in seen) == "first\nsecond\n"
    assert [p for p, _ in seen] == sorted({p for p, _ in seen})  # strictly increasing


def test_output_goes_to_log_messages_without_a_progress_token(face: Served) -> None:
    """2025: always; 2026: only for a call whose ``_meta`` asked for a log level."""
    a, unasked, asked = face.agent, f"unasked-{uuid.uuid4().hex[:8]}", f"asked-{uuid.uuid4().hex}"
    a.ok("run_command", {"command": ["echo", unasked]})
    a.ok("run_command", {"command": ["echo", asked]}, meta={LOG_LEVEL: "info"})
    assert until(lambda: any(asked in str(d) for d in a.logs)), a.logs
    assert any(unasked in str(d) for d in a.logs) is not a.modern


# 5. cancel ---------------------------------------------------------------------------------------


def test_cancel_kills_the_whole_tree_and_the_server_goes_on(face: Served) -> None:
    a = face.agent
    tag = uuid.uuid4().int % 1000 / 1000
    first, second = f"{300 + tag:.3f}", f"{301 + tag:.3f}"
    sleeping = [f"sleep\0{first}", f"sleep\0{second}"]
    scopes: list[anyio.CancelScope] = []

    async def call() -> types.CallToolResult | None:
        with anyio.CancelScope() as scope:  # leaving it cancelled sends notifications/cancelled
            scopes.append(scope)
            command = ["sh", "-c", f"sleep {first} & sleep {second}"]
            return await a.client.call_tool("run_command", {"command": command})
        return None

    pending = a.soon(call)
    try:
        assert until(lambda: all(alive(s) for s in sleeping)), "the tree never came up"
        a.run(_cancel, scopes[0])
        assert pending.result(timeout=30) is None  # the call was cancelled, not answered
        assert until(lambda: not any(alive(s) for s in sleeping)), [alive(s) for s in sleeping]
    finally:
        for pid in [p for s in sleeping for p in alive(s)]:
            subprocess.run(["kill", "-9", str(pid)], check=False)
    assert a.ok("read_file", {"path": "notes.txt"})["line_count"] == 4


async def _cancel(scope: anyio.CancelScope) -> None:
    scope.cancel()


# 6. approvals in a standalone session ----------------------------------------------------------


@pytest.fixture(scope="module")
def manual(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A 2025 client that can answer elicitation, on a server in manual mode."""
    base = tmp_path_factory.mktemp("manual")
    ws = make_workspace(base / "ws")
    with agent(ws, base / "agent", "legacy", "manual") as peer:
        yield Served(peer, ws, base)


@pytest.fixture(scope="module", params=["legacy", "auto"], ids=["2025", "2026"])
def asking(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """A client that can answer elicitation, on a server in manual mode: at 2025 it is asked
    with ``elicitation/create``, at 2026 the question comes back as an ``input_required``
    result and the SDK client calls again with the answer."""
    base = tmp_path_factory.mktemp(f"asking-{request.param}")
    ws = make_workspace(base / "ws")
    with agent(ws, base / "agent", request.param, "manual") as peer:
        yield Served(peer, ws, base)


def _patch(a: Agent, ws: Path, name: str) -> tuple[Path, types.CallToolResult]:
    target = ws / name
    target.write_text("before\n")
    revision = a.ok("read_file", {"path": name})["revision"]
    entry = {"path": name, "expected_revision": revision, "content": "after\n"}
    return target, a.call("apply_patch", {"files": [entry]})


def test_approve_through_elicitation_writes(asking: Served) -> None:
    a = asking.agent
    a.answer, a.asked[:] = "approve", []
    target, result = _patch(a, asking.ws, "approved.txt")
    assert not result.is_error, result.structured_content
    assert target.read_text() == "after\n"
    (question,) = a.asked
    assert "approved.txt" in question


@pytest.mark.parametrize("answer", ["deny", "decline", "cancel", "unreadable", "error"])
def test_anything_but_approve_is_a_denial(asking: Served, answer: str) -> None:
    a = asking.agent
    if answer == "error" and a.modern:
        pytest.skip("at 2026 a client error ends the call in the client (it never calls again)")
    a.answer, a.asked[:] = answer, []
    target, result = _patch(a, asking.ws, f"kept-{answer}.txt")
    assert _error(result)["kind"] == "approval_denied"
    assert target.read_text() == "before\n"
    (question,) = a.asked
    assert f"kept-{answer}.txt" in question


def test_a_call_cancelled_while_it_asks_never_writes(manual: Served) -> None:
    """The client cancels the call while its prompt is open, then answers approve: too late."""
    a, target = manual.agent, manual.ws / "cancelled.txt"
    a.answer, a.asked[:], a.held[:] = "hold", [], []
    a.let_go.clear()
    target.write_text("before\n")
    revision = a.ok("read_file", {"path": "cancelled.txt"})["revision"]
    entry = {"path": "cancelled.txt", "expected_revision": revision, "content": "after\n"}
    scopes: list[anyio.CancelScope] = []

    async def call() -> types.CallToolResult | None:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            return await a.client.call_tool("apply_patch", {"files": [entry]})
        return None

    pending = a.soon(call)
    assert until(lambda: len(a.asked) == 1)
    a.run(_cancel, scopes[0])
    assert pending.result(timeout=30) is None
    a.let_go.set()  # the answer to the cancelled question, if the client still sends it
    assert until(lambda: a.held), "the held question never ended"
    assert a.ok("read_file", {"path": "notes.txt"})["line_count"] == 4  # it still serves
    assert target.read_text() == "before\n", a.held


def test_a_command_in_manual_mode_asks(asking: Served) -> None:
    a, made = asking.agent, f"made-{uuid.uuid4().hex[:8]}"
    a.answer, a.asked[:] = "deny", []
    denied = a.call("run_command", {"command": ["touch", made]})
    assert _error(denied)["kind"] == "approval_denied"
    assert not (asking.ws / made).exists()
    assert len(a.asked) == 1 and made in a.asked[0]
    a.answer = "approve"
    ran = a.ok("run_command", {"command": ["touch", made]})
    assert ran["exit_code"] == 0 and (asking.ws / made).exists()
    assert len(a.asked) == 2 and made in a.asked[1]


@pytest.mark.parametrize("era", ["legacy", "auto"], ids=["2025", "2026"])
def test_without_a_prompt_the_call_fails_closed(tmp_path: Path, era: str) -> None:
    """A client that cannot be asked (no elicitation) gets ``no_prompt`` and how to get one."""
    ws = make_workspace(tmp_path / "ws")
    with agent(ws, tmp_path / "agent", era, "manual", elicitation=False) as a:
        target, result = _patch(a, ws, "untouched.txt")
        data = _error(result)
        assert data["kind"] == "approval_denied" and data["reason"] == "no_prompt"
        assert "editor" in data["message"] and "--mode" in data["message"]
        assert target.read_text() == "before\n"
        assert a.asked == []


def test_a_2026_answer_nobody_asked_for_approves_nothing(asking: Served) -> None:
    """An ``inputResponses`` approval sent with a call s-code never asked about (or with a state
    it did not mint) is no answer: the call asks, and is denied when the user denies."""
    a = asking.agent
    if not a.modern:
        pytest.skip("input_required rounds are 2026's")
    target = asking.ws / "forged.txt"
    target.write_text("before\n")
    revision = a.ok("read_file", {"path": "forged.txt"})["revision"]
    entry = {"path": "forged.txt", "expected_revision": revision, "content": "after\n"}
    forged = types.ElicitResult(action="accept", content={"decision": "approve"})
    state = ["s-code-made-up"]

    async def send() -> Any:
        assert a.client is not None
        return await a.client.session.call_tool(
            "apply_patch",
            {"files": [entry]},
            input_responses={"approval": forged},
            request_state=state[0],
            allow_input_required=True,
        )

    reply = a.run(send)
    assert isinstance(reply, types.InputRequiredResult), reply  # asked, not approved
    assert target.read_text() == "before\n"
    # positive control: the same answer with the state s-code minted for that question approves
    state[0] = reply.request_state
    done = a.run(send)
    assert isinstance(done, types.CallToolResult) and not done.is_error, done
    assert target.read_text() == "after\n"


# 7. hostile input on the raw pipe --------------------------------------------------------------

LIMIT = 4096
"""The line limit of the raw-pipe server: the real one (64 MiB, the LSP face's) made small so
that a line over it is cheap to send; the server is otherwise the one ``s-code mcp`` runs."""
BOOT = (
    "import functools, sys\n"
    "import s_code.mcp_face.server as face\n"
    "face.hardened_stdio = functools.partial(face.hardened_stdio, max_bytes=int(sys.argv[1]))\n"
    "from s_code.cli import main\n"
    "raise SystemExit(main(sys.argv[2:]))\n"
)
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw-agent", "version": "1"},
}


def _raw_server(base: Path) -> RawPeer:
    ws = make_workspace(base / "ws")
    argv = [sys.executable, "-c", BOOT, str(LIMIT), *server_argv(ws, "workspace")[3:]]
    return RawPeer([*argv, "--standalone"], server_env(base), base / "stderr.log")


def _initialize(peer: RawPeer) -> None:
    peer.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT})
    assert peer.reply("init")["result"]["protocolVersion"] == "2025-11-25"
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _serving(peer: RawPeer) -> None:
    """The server still answers, and nothing it wrote carries a Python traceback."""
    rid = f"ping-{uuid.uuid4().hex[:6]}"
    peer.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
    assert peer.reply(rid) == {"jsonrpc": "2.0", "id": rid, "result": {}}
    assert b"Traceback" not in peer.wire and b'File "' not in peer.wire


def _fault(reply: dict[str, Any], code: int) -> None:
    assert "result" not in reply and reply["error"]["code"] == code, reply
    assert "Traceback" not in json.dumps(reply)


def test_the_line_limit_is_the_lsp_faces() -> None:
    assert stdio.MAX_LINE_BYTES == framing.MAX_BODY_BYTES
    assert inspect.signature(stdio.hardened_stdio).parameters["max_bytes"].default == (
        stdio.MAX_LINE_BYTES
    )


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawPeer]:
    peer = _raw_server(tmp_path_factory.mktemp("raw"))
    try:
        _initialize(peer)
        yield peer
    finally:
        peer.close()


def test_requests_before_initialize_get_errors_not_silence(tmp_path: Path) -> None:
    peer = _raw_server(tmp_path)
    try:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        _fault(peer.reply(1), -32602)
        call = {"name": "run_command", "arguments": {"command": ["touch", "early"]}}
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        _fault(peer.reply(2), -32602)
        _initialize(peer)
        peer.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        tools = peer.reply(3)["result"]["tools"]
        assert sorted(t["name"] for t in tools) == sorted(CORE)
        _serving(peer)
        assert not (tmp_path / "ws" / "early").exists()  # the early call never ran
    finally:
        assert peer.close() == 0  # stdin closed: a clean exit


@pytest.mark.parametrize(
    "line",
    [b"this is not json\n", b'{"jsonrpc": "2.0", "id": 1, "method": \n', b"\xff\xfe{}\n"],
    ids=["text", "truncated", "not-utf8"],
)
def test_malformed_json_is_a_parse_error(raw: RawPeer, line: bytes) -> None:
    raw.send(line)
    _fault(raw.reply(None), -32700)
    _serving(raw)


def test_a_broken_envelope_is_answered_with_its_id(raw: RawPeer) -> None:
    """The SDK's own transport never answers these: the client would wait forever."""
    raw.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "str"})
    _fault(raw.reply(3), -32600)
    raw.send({"jsonrpc": "2.0", "id": 4, "method": 5})
    _fault(raw.reply(4), -32600)
    raw.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"arguments": {}}})
    _fault(raw.reply(5), -32602)  # no tool name: the SDK's own check
    raw.send({"jsonrpc": "2.0", "id": 6, "method": "no/such/method"})
    _fault(raw.reply(6), -32601)
    raw.send(b"42\n")
    _fault(raw.reply(None), -32600)
    for bad_id in (None, 1.5, True):  # MCP: a string or an integer; else taken for a notification
        raw.send({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
        _fault(raw.reply(None), -32600)
    _serving(raw)


def test_a_batch_is_refused(raw: RawPeer) -> None:
    raw.send([{"jsonrpc": "2.0", "id": 7, "method": "ping"}])
    _fault(raw.reply(None), -32600)
    _serving(raw)
    assert not any(isinstance(m, dict) and m.get("id") == 7 for m in raw.seen)


def test_a_line_over_the_limit_is_refused_and_skipped(raw: RawPeer) -> None:
    def ping(rid: int, size: int) -> bytes:
        head = f'{{"jsonrpc": "2.0", "id": {rid}, "method": "ping", "params": {{"pad": "'
        tail = '"}}\n'
        return (head + "x" * (size - len(head) - len(tail) + 1) + tail).encode()

    at_limit = ping(8, LIMIT)
    assert len(at_limit) == LIMIT + 1  # the newline is not part of the message
    raw.send(at_limit)
    assert raw.reply(8)["result"] == {}
    over = ping(9, 50 * LIMIT)  # spans several reads; nothing of it may be taken
    raw.send(over[: len(over) // 2])
    raw.send(over[len(over) // 2 :])
    refused = raw.reply(None)
    _fault(refused, -32600)
    assert str(LIMIT) in refused["error"]["message"]
    _serving(raw)
    assert not any(isinstance(m, dict) and m.get("id") == 9 for m in raw.seen)


def test_deep_nesting_is_refused_not_fatal(raw: RawPeer) -> None:
    """Deeper than Python's JSON parser goes, within the line limit."""
    for line in (b"[" * 3000, b'{"a":[' * 600):
        assert len(line) < LIMIT
        raw.send(line + b"\n")
        _fault(raw.reply(None), -32700)
    _serving(raw)


def test_lone_surrogates_sent_back_are_not_fatal(raw: RawPeer) -> None:
    """A string the server echoes (a tool name, an id, a progress token) may hold a lone
    surrogate, which JSON escapes allow and UTF-8 cannot carry."""
    raw.send(b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"\\ud800x"}}\n')
    result = raw.reply(10)["result"]
    assert result["isError"] is True and result["structuredContent"]["kind"] == "unknown_tool"
    assert result["structuredContent"]["name"] == "\ufffdx"
    raw.send(b'{"jsonrpc":"2.0","id":"\\udfff","method":"ping"}\n')
    assert raw.reply("\ufffd") == {"jsonrpc": "2.0", "id": "\ufffd", "result": {}}
    call = {"name": "run_command", "arguments": {"command": ["echo", "streamed"]}}
    request = {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": call}
    line = json.dumps(request).replace(
        '"arguments"', '"_meta": {"progressToken": "\\ud800"}, "arguments"'
    )
    raw.send(line.encode() + b"\n")
    assert raw.reply(11)["result"]["structuredContent"]["output"] == "streamed\n"
    progress = raw.until(
        lambda m: isinstance(m, dict) and m.get("method") == "notifications/progress"
    )
    assert progress["params"]["progressToken"] == "\ufffd"
    assert progress["params"]["message"] == "streamed\n"
    _serving(raw)


# 8. --print-config ------------------------------------------------------------------------------


def _config(client: str, ws: Path) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "s_code", "mcp", "--print-config", client, "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stderr == ""
    text = done.stdout
    if client == "codex":
        return tomllib.loads(text)["mcp_servers"]["s-code"]
    if client == "claude":
        first, rest = text.split("\n", 1)
        words = shlex.split(first)
        assert words[:6] == ["claude", "mcp", "add", "--scope", "project", "s-code"]
        body = json.loads(rest.split("\n", 1)[1])["mcpServers"]["s-code"]
        assert words[7:] == [body["command"], *body["args"]]
        return body
    lines = text.splitlines()
    assert lines[0].startswith("//")  # a JSONC comment line saying where it goes
    return json.loads("\n".join(lines[1:]))


@pytest.mark.parametrize("client", ["codex", "gemini", "zed", "acp"])
def test_print_config(tmp_path: Path, client: str) -> None:
    """The command each snippet runs (every block of every client: tests/unit/test_agents_doc)."""
    ws = tmp_path / "my ws"
    ws.mkdir()
    found = _config(client, ws)
    entry = {
        "gemini": lambda c: c["mcpServers"]["s-code"],
        "vscode": lambda c: c["servers"]["s-code"],
        "zed": lambda c: c["context_servers"]["s-code"],
        "acp": lambda c: c["mcpServers"][0],
    }.get(client, lambda c: c)(found)
    argv = [entry["command"], *entry["args"]]
    assert argv[-2:] == ["--workspace", str(ws.resolve())]
    assert "mcp" in argv[1:]
    assert Path(argv[0]).is_absolute() and Path(argv[0]).exists()
    if client == "acp":
        assert found["cwd"] == str(ws.resolve())


def test_the_printed_command_serves(tmp_path: Path) -> None:
    """What the codex snippet says to run is an MCP server on that workspace."""
    ws = make_workspace(tmp_path / "ws")
    entry = _config("codex", ws)
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=server_env(tmp_path / "env")
    )

    async def listed() -> list[str]:
        async with Client(params, mode="legacy") as client:
            read = await client.call_tool("read_file", {"path": "notes.txt"})
            assert read.structured_content["line_count"] == 4
            return [t.name for t in (await client.list_tools()).tools]

    assert sorted(anyio.run(listed)) == sorted(CORE)
