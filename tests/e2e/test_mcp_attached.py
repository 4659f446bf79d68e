"""The MCP face attached to an editor's session: an agent's calls run there, the editor approves.

A pytest-lsp editor (scripted prompt answers, buffers that ``workspace/applyEdit`` really changes)
serves a workspace; agents are ``s-code mcp`` processes driven by the official MCP SDK client.
SECURITY.md M1 and M3: only the editor approves an attached agent's call and the card names the
agent; an agent sees nothing of another's calls or terminals, and its terminals end with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest_lsp
from lsprotocol import types as lsp
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pytest_lsp import LanguageClient, client_capabilities

from s_code.protocol import methods
from tests.e2e.support import TIMEOUT, call, call_error
from tests.e2e.test_e2e_edits import Editor, make_client, rev
from tests.security.sandbox_support import alive

RUNTIME = tempfile.mkdtemp(prefix="s-code-run-")
STATE = os.environ["S_CODE_STATE_DIR"]
ENV = {**os.environ, "S_CODE_STATE_DIR": STATE, "XDG_RUNTIME_DIR": RUNTIME}
CONFIG = pytest_lsp.ClientServerConfig(
    server_command=[sys.executable, "-m", "s_code", "serve"],
    client_factory=make_client,
    server_env=ENV,
)


@pytest_lsp.fixture(config=CONFIG)
async def editor(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[LanguageClient]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")
    lsp_client.root = root  # type: ignore[attr-defined]
    await asyncio.wait_for(
        lsp_client.initialize_session(
            lsp.InitializeParams(
                capabilities=client_capabilities("visual_studio_code"),
                root_uri=root.as_uri(),
                workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                initialization_options={"permissionMode": "workspace"},
            )
        ),
        TIMEOUT,
    )
    await wait_for_link(root)
    yield lsp_client
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


@contextlib.contextmanager
def sidecar_runtime() -> Iterator[None]:
    """This process sees the agent links as the sidecar (whose XDG_RUNTIME_DIR is RUNTIME)."""
    old = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = RUNTIME
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("XDG_RUNTIME_DIR")
        else:
            os.environ["XDG_RUNTIME_DIR"] = old


def link_place(root: Path) -> Any:
    """The agent link of ``root``, where the sidecar places it."""
    from s_code.mcp_face import link

    return link.place(str(root), os.path.join(RUNTIME, "s-code"))


def doctor_view(root: Path) -> dict[str, Any]:
    """What ``s-code doctor`` run in ``root`` learns over the link (it attaches for a moment)."""
    from s_code.mcp_face import link

    with sidecar_runtime():
        return link.status(str(root))


async def wait_for_link(root: Path) -> None:
    where = link_place(root)
    deadline = time.monotonic() + TIMEOUT
    while not os.path.exists(where.token):
        assert time.monotonic() < deadline, "the editor's sidecar never listened for agents"
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def agent(root: Path, name: str, **kw: Any) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "s_code", "mcp", "--workspace", str(root)], env=ENV
    )
    info = types.Implementation(name=name, version="1.0")
    async with Client(params, mode="legacy", client_info=info, **kw) as client:
        yield client


def ed(client: LanguageClient) -> Editor:
    return client.editor  # type: ignore[attr-defined, no-any-return]


async def test_the_editor_approves_and_the_card_names_the_agent(editor: LanguageClient) -> None:
    root: Path = editor.root  # type: ignore[attr-defined]
    buffer = ed(editor)
    buffer.open(root / "a.txt", "alpha (unsaved)\n")
    async with agent(root, "Claude Code") as claude:
        read = await claude.call_tool("read_file", {"path": "a.txt"})
        assert "alpha (unsaved)" in read.structured_content["numbered_content"]  # the buffer
        revision = read.structured_content["revision"]
        edit = {"files": [{"path": "a.txt", "expected_revision": revision, "content": "new\n"}]}
        # workspace mode: an edit of an ordinary file is allowed, so make one that asks:
        # a command, which is in the editor's table too; first the edit goes to the buffer
        applied = await claude.call_tool("apply_patch", edit)
        assert not applied.is_error, applied.structured_content
        assert applied.structured_content["applied"][0]["via"] == "editor"
        uri = (root / "a.txt").as_uri()
        assert buffer.buffers[uri][1] == "new\n"
        assert (root / "a.txt").read_text() == "alpha\n"  # the disk is the editor's business
        buffer.answers.append("Deny")  # network asks in every mode
        denied = await claude.call_tool(
            "run_command", {"command": ["touch", "made.txt"], "network": True}
        )
        assert denied.is_error and denied.structured_content["kind"] == "approval_denied"
        assert "Claude Code" in buffer.prompts[-1].message  # the card names the agent
        assert not (root / "made.txt").exists()
        ran = await claude.call_tool("run_command", {"command": ["touch", "made.txt"]})
        assert not ran.is_error, ran.structured_content
        assert (root / "made.txt").exists()


async def test_manual_mode_asks_the_editor_and_deny_leaves_every_file(
    editor: LanguageClient,
) -> None:
    root: Path = editor.root  # type: ignore[attr-defined]
    await call(editor, methods.PERMISSION_MODE_SET, {"mode": "manual"})  # the editor's choice
    buffer = ed(editor)
    async with agent(root, "codex-cli") as codex:
        files = [
            {"path": "a.txt", "expected_revision": rev(b"alpha\n"), "content": "A\n"},
            {"path": "b.txt", "expected_revision": rev(b"beta\n"), "content": "B\n"},
        ]
        buffer.answers.append("Deny")
        denied = await codex.call_tool("apply_patch", {"files": files})
        assert denied.is_error and denied.structured_content["kind"] == "approval_denied"
        assert "codex-cli" in buffer.prompts[-1].message
        assert (root / "a.txt").read_text() == "alpha\n" and (
            root / "b.txt"
        ).read_text() == "beta\n"
        buffer.answers.append("Approve once")
        done = await codex.call_tool("apply_patch", {"files": files})
        assert not done.is_error, done.structured_content
        assert (root / "a.txt").read_text() == "A\n" and (root / "b.txt").read_text() == "B\n"
        # the editor undoes the agent's turn
        undone = await call(
            editor, methods.TURN_UNDO, {"turnId": done.structured_content["turn_id"]}
        )
        assert sorted(undone["restored"]) == ["a.txt", "b.txt"]
        assert (root / "a.txt").read_text() == "alpha\n" and (
            root / "b.txt"
        ).read_text() == "beta\n"


async def test_the_agent_s_own_elicitation_never_approves_an_attached_call(
    editor: LanguageClient,
) -> None:
    root: Path = editor.root  # type: ignore[attr-defined]
    await call(editor, methods.PERMISSION_MODE_SET, {"mode": "manual"})
    asked: list[str] = []

    async def approve_myself(ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"decision": "approve"})

    ed(editor).answers.append("Deny")
    async with agent(root, "sly", elicitation_callback=approve_myself) as sly:
        edit = {
            "files": [{"path": "a.txt", "expected_revision": rev(b"alpha\n"), "content": "x\n"}]
        }
        result = await sly.call_tool("apply_patch", edit)
    assert result.is_error and result.structured_content["kind"] == "approval_denied"
    assert asked == []  # the agent's client was never asked
    assert (root / "a.txt").read_text() == "alpha\n"
    assert "sly" in ed(editor).prompts[-1].message  # the editor was


async def test_a_second_agent_sees_nothing_of_the_first(editor: LanguageClient) -> None:
    root: Path = editor.root  # type: ignore[attr-defined]
    marker = f"first-agent-{os.getpid()}-{time.monotonic_ns()}"
    buffer = ed(editor)
    async with agent(root, "first") as first:
        buffer.answers.append("Approve once")  # a terminal asks in every mode
        started = await first.call_tool(
            "terminal_start", {"command": ["sh", "-c", f"echo ready; sleep 300 # {marker}"]}
        )
        assert not started.is_error, started.structured_content
        tid = started.structured_content["terminal_id"]
        assert alive(marker)
        async with agent(root, "second") as second:
            listed = await second.call_tool("terminal_list", {})
            assert listed.structured_content["terminals"] == []
            peek = await second.call_tool("terminal_read", {"terminal_id": tid})
            assert peek.is_error and peek.structured_content["kind"] == "not_found"
            mine = await first.call_tool("terminal_list", {})
            assert [t["terminal_id"] for t in mine.structured_content["terminals"]] == [tid]
    # the first agent went away: its terminal's whole tree ends
    deadline = time.monotonic() + TIMEOUT
    while alive(marker):
        assert time.monotonic() < deadline, "the detached agent's terminal survived"
        await asyncio.sleep(0.1)


async def test_the_editor_lists_the_link_and_the_agents_attached(editor: LanguageClient) -> None:
    """``s-code/agents/list``: the socket agents attach to, then each agent as it attaches (no
    name before its first call), by the name its calls carry (escaped: the agent chose it),
    until it goes away."""
    root: Path = editor.root  # type: ignore[attr-defined]
    socket = link_place(root).socket
    assert socket.startswith(os.path.join(RUNTIME, "s-code", "agent-"))
    listed = await call(editor, methods.AGENTS_LIST, {})
    assert listed == {
        "socket": socket,
        "folders": [os.path.realpath(root)],
        "agents": [],
        "problems": [],
    }
    assert os.path.exists(socket)

    async def names(want: int) -> list[str]:
        deadline = time.monotonic() + TIMEOUT
        while len(agents := (await call(editor, methods.AGENTS_LIST, {}))["agents"]) != want:
            assert time.monotonic() < deadline, f"{want} agents were never listed: {agents}"
            await asyncio.sleep(0.05)
        assert len({a["id"] for a in agents}) == want
        return [a["name"] for a in agents]

    async with agent(root, "Claude Code") as claude:
        assert await names(1) == [""]  # attached, no call yet
        await claude.call_tool("list_files", {})
        assert await names(1) == ["Claude Code"]
        async with agent(root, "codex\x1b[2J\nApproved") as codex:
            await codex.call_tool("list_files", {})
            assert await names(2) == ["Claude Code", "codex\\x1b[2J\\nApproved"]
            # s-code doctor (over the link) shows them escaped too: no escape reaches a terminal
            shown = await asyncio.to_thread(doctor_view, root)
            assert [a["name"] for a in shown["agents"]] == await names(2)
        assert await names(1) == ["Claude Code"]  # the second went away
    assert await names(0) == []
    err = await call_error(editor, methods.AGENTS_LIST, {"socket": "/tmp/elsewhere"})
    assert err.data["kind"] == "invalid_params" and err.data["field"] == "socket"
