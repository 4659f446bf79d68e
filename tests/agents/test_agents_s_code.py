"""Real agents use s-code's tools through the MCP face, and the editor approves.

An editor session (the project's own JSON-RPC client running ``s-code serve`` on a temporary
workspace, permission mode manual) answers the sidecar's prompts (``window/showMessageRequest``)
as each test decides and keeps what it was asked. Each agent CLI (Claude Code, Codex CLI) runs
offline against the scripted model with ``s-code mcp --workspace WS`` as its one MCP server; that
server finds the editor's agent link (same ``XDG_RUNTIME_DIR``), attaches, and every call runs in
the editor's session. The model reads a file, edits it with the revision it read (the editor
approves, or denies), and runs a command in the sandbox. Each test asserts what the tool did (the
file on disk, the command's output file), what the model was sent back, and what the editor was
asked (the card names the agent by its MCP ``clientInfo`` name, and the file or command), never
only the CLI's exit code.

Keeping the CLI's own tools out of the way, so that s-code's tools (and the editor's approvals)
are the only way to touch the workspace, and letting s-code's tools through the CLI's own
permission system without it asking (docs/agents.md takes these from here):
- Claude Code: ``--tools ""`` (no built-in tool at all: no Bash, Read, Edit, Write, WebFetch...;
  the MCP tools stay) and ``--allowedTools mcp__s-code__read_file,mcp__s-code__apply_patch,...``
  (the s-code tools run without Claude Code asking; s-code asks in the editor).
- Codex CLI: ``-c features.shell_tool=false`` (no ``exec_command``/``write_stdin``) and
  ``approval_mode = "approve"`` on each s-code tool (``[mcp_servers.s-code.tools.read_file]``...;
  ``default_tools_approval_mode = "approve"`` on the server entry approves all of them) with
  ``approval_policy = "never"``. Codex offers its own ``apply_patch`` only to models whose
  metadata asks for it (not to the scripted model here); we found no 0.169 key that removes it.

What the CLIs do with a result (measured): both send the model ``structuredContent`` as JSON,
not the text rendering (Claude Code's error results are the exception: their text, with
``is_error``). Both wait over two minutes for a call by default (the editor's user may take
that long); ``MCP_TOOL_TIMEOUT`` (ms, Claude Code's environment) and ``tool_timeout_sec`` (Codex,
per server) shorten it.

Without the CLIs (``make agents``) these tests skip, or fail under CI=true.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from s_code.client import StdioClient
from tests.agents import harness
from tests.agents.scripted_model import CallTool, Final, FromResults, ScriptedModel, Step

# real agents' sessions, each bounded at harness.TIMEOUT (180 s), several to a test
pytestmark = pytest.mark.timeout(900)

SERVER = "s-code"
TOOLS = ("read_file", "apply_patch", "run_command")
ALLOWED = [f"mcp__{SERVER}__{t}" for t in TOOLS]

# How each CLI names itself in MCP's clientInfo: the name on the editor's cards.
AGENT_NAMES = {"claude": "claude-code", "codex": "codex-mcp-client"}

# Claude Code: no built-in tools; Codex: no shell tool (see the module docstring).
CLAUDE_ARGS = ["--tools", ""]
CODEX_ARGS = ["-c", "features.shell_tool=false"]

NOTES = "alpha\nbeta\ngamma\n"
PATCH = (
    "*** Begin Patch\n*** Update File: notes.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n*** End Patch\n"
)
EDITED = "alpha\nBETA\ngamma\n"
LINK_WAIT_S = 30.0


class Editor(StdioClient):
    """The editor: an LSP client of ``s-code serve`` that answers each prompt with ``answer``
    (None: holds it unanswered, a user who has not looked yet, until :meth:`answer_held`) and
    keeps every prompt's text."""

    def __init__(self, argv: list[str], env: dict[str, str], stderr: Any) -> None:
        self.answer: str | None = "Approve once"
        self.prompts: list[str] = []
        self.held: list[dict[str, Any]] = []
        super().__init__(argv, env=env, stderr=stderr)

    def _answer(self, msg: dict[str, Any]) -> None:
        if msg["method"] != "window/showMessageRequest":
            super()._answer(msg)  # nothing else is asked of this editor: answered with null
            return
        self.prompts.append(str(msg["params"]["message"]))
        if self.answer is None:
            self.held.append(msg)
        else:
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": {"title": self.answer}})

    def answer_held(self, title: str) -> None:
        for msg in self.held:
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": {"title": title}})


@dataclass
class EditorSession:
    """A sidecar serving ``ws`` for an editor, its agent link open."""

    ws: Path
    env: dict[str, str]  # what the sidecar and s-code mcp share: state, config, the agent link
    editor: Editor
    log: Path  # the sidecar's stderr
    closed: bool = False

    def server(self, **extra: Any) -> dict[str, Any]:
        """s-code as the CLI's MCP stdio server, attaching to this session."""
        shared = ("S_CODE_STATE_DIR", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME")
        return {
            "command": sys.executable,
            "args": ["-m", "s_code", "mcp", "--workspace", str(self.ws)],
            "env": {k: self.env[k] for k in shared},
            **extra,
        }

    def close(self) -> None:
        """Shut the sidecar down (its round trip: what the editor sent before is handled); its
        log holds no error."""
        if self.closed:
            return
        self.closed = True
        self.editor.close()
        text = self.log.read_text()
        assert "Traceback" not in text and "ERROR" not in text, text


def _wait_for_link(runtime: Path) -> None:
    """The sidecar serves agents once its socket and token are in place."""
    folder = runtime / "s-code"
    deadline = time.monotonic() + LINK_WAIT_S
    while time.monotonic() < deadline:
        if list(folder.glob("agent-*.sock")) and list(folder.glob("agent-*.token")):
            return
        time.sleep(0.05)
    raise AssertionError(f"the editor's sidecar did not open its agent link in {folder}")


@pytest.fixture
def session(tmp_path: Path) -> Iterator[EditorSession]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text(NOTES)
    # a short path of its own: a unix socket's path holds at most 107 bytes
    runtime = Path(tempfile.mkdtemp(prefix="sc-run-"))
    env = dict(
        os.environ,
        S_CODE_STATE_DIR=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),  # the commands' tool caches: not the user's
        XDG_RUNTIME_DIR=str(runtime),
    )
    log = tmp_path / "sidecar.log"
    with log.open("w") as stderr:
        editor = Editor([sys.executable, "-m", "s_code", "serve"], env, stderr)
    made = EditorSession(ws, env, editor, log)
    try:
        editor.initialize(str(ws), capabilities={}, options={"permissionMode": "manual"})
        _wait_for_link(runtime)
        yield made
        made.close()
    finally:
        editor.close()
        shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture(params=["claude", "codex"])
def cli(request: pytest.FixtureRequest) -> str:
    (harness.require_claude if request.param == "claude" else harness.require_codex)()
    return str(request.param)


def run(
    cli: str,
    session: EditorSession,
    script: Sequence[Step],
    home: Path,
    tool_timeout_s: int | None = None,
) -> harness.AgentRun:
    """One turn of ``cli`` with s-code as its one MCP server and only s-code's tools;
    ``tool_timeout_s``: how long the CLI waits for a tool call."""
    prompt = "Work on notes.txt with the s-code tools."
    if cli == "claude":
        server = session.server()
        env = {"MCP_TOOL_TIMEOUT": str(tool_timeout_s * 1000)} if tool_timeout_s else {}
        with ScriptedModel(script) as model:
            done = harness.run_claude(
                prompt,
                {SERVER: server},
                ALLOWED,
                model,
                home,
                extra_args=CLAUDE_ARGS,
                extra_env=env,
            )
    else:
        server = session.server(**({"tool_timeout_sec": tool_timeout_s} if tool_timeout_s else {}))
        with ScriptedModel(script) as model:
            done = harness.run_codex(
                prompt, {SERVER: server}, ALLOWED, model, home, extra_args=CODEX_ARGS
            )
    offered = done.model_requests()[0].tool_names()
    if cli == "claude":  # s-code's tools and nothing else
        assert set(ALLOWED) <= set(offered), (offered, done.describe())
        assert all(t.startswith(f"mcp__{SERVER}__") for t in offered), offered
    else:  # s-code's tools; of Codex's own, none that runs commands or edits files
        assert {f"mcp__s_code/{t}" for t in TOOLS} <= set(offered), (offered, done.describe())
        assert not {"exec_command", "write_stdin", "shell", "apply_patch"} & set(offered), offered
    return done


def revision_in(text: str) -> str:
    """The revision a read_file result names, as a model reads it (from the JSON or the text)."""
    found = re.search(r"revision\W+([0-9a-f]{16})", text)
    assert found, text
    return found.group(1)


def edit_after_reading() -> list[Step]:
    return [
        CallTool(SERVER, "read_file", {"path": "notes.txt"}),
        FromResults(
            lambda results: CallTool(
                SERVER,
                "apply_patch",
                {"patch": PATCH, "revisions": {"notes.txt": revision_in(results[-1])}},
            )
        ),
        Final("done"),
    ]


def structured(text: str) -> dict[str, Any]:
    """The tool's structured result as the model was sent it. Both CLIs send the model
    ``structuredContent`` as JSON, not the result's text rendering (Claude Code with a reminder
    after it, Codex after a "Wall time" line)."""
    start = text.find("{")
    assert start >= 0, text
    found, _ = json.JSONDecoder().raw_decode(text, start)
    assert isinstance(found, dict), text
    return found


def expected_revision(content: str) -> str:
    """s-code's revision of a file holding ``content``: the head of its SHA-256."""
    return hashlib.sha256(content.encode()).hexdigest()[:16]


def test_the_agent_reads_then_edits_after_the_editor_approves(
    cli: str, session: EditorSession, tmp_path: Path
) -> None:
    done = run(cli, session, edit_after_reading(), tmp_path / "home")
    results = done.tool_results()
    assert len(results) == 2, done.describe()
    read, patched = (structured(r) for r in results)
    # (1) the model got the file's numbered content and its revision
    assert read["numbered_content"] == "".join(
        f"{n:6d}\t{line}\n" for n, line in enumerate(NOTES.splitlines(), 1)
    ), read
    assert read["revision"] == expected_revision(NOTES), read
    # (2) the editor was asked, once, naming the agent and the file; it approved; the file changed
    name = AGENT_NAMES[cli]
    assert session.editor.prompts == [f"s-code, for the agent {name}: Edit notes.txt (+1 -1)?"]
    assert (session.ws / "notes.txt").read_text() == EDITED
    assert [(a["path"], a["revision"]) for a in patched["applied"]] == [
        ("notes.txt", expected_revision(EDITED))
    ], patched
    assert done.exit_code == 0, done.describe()


def test_a_denied_edit_leaves_the_file_and_tells_the_model(
    cli: str, session: EditorSession, tmp_path: Path
) -> None:
    session.editor.answer = "Deny"
    done = run(cli, session, edit_after_reading(), tmp_path / "home")
    results = done.tool_results()
    assert len(results) == 2, done.describe()
    name = AGENT_NAMES[cli]
    assert session.editor.prompts == [f"s-code, for the agent {name}: Edit notes.txt (+1 -1)?"]
    assert (session.ws / "notes.txt").read_text() == NOTES
    denied = results[1]
    if cli == "claude":  # an error result: Claude Code sends the model its text (is_error set)
        assert denied.startswith(
            "error approval_denied: the user did not approve: Edit notes.txt"
        ), denied
    else:  # Codex sends the structured part, as for any result
        assert structured(denied)["kind"] == "approval_denied", denied
        assert "Edit notes.txt" in structured(denied)["message"], denied
    assert done.exit_code == 0, done.describe()


def test_the_agent_runs_a_command_in_the_sandbox_after_the_editor_approves(
    cli: str, session: EditorSession, tmp_path: Path
) -> None:
    argv = ["sh", "-c", "echo hi from the sandbox > out.txt && cat notes.txt"]
    script: list[Step] = [CallTool(SERVER, "run_command", {"command": argv}), Final("ran it")]
    done = run(cli, session, script, tmp_path / "home")
    (result,) = done.tool_results()
    name = AGENT_NAMES[cli]
    (prompt,) = session.editor.prompts
    assert prompt.startswith(f"s-code, for the agent {name}: Run "), prompt
    assert (
        "echo hi from the sandbox" in prompt and "(no network; writes only the workspace)" in prompt
    )
    assert (session.ws / "out.txt").read_text() == "hi from the sandbox\n"
    ran = structured(result)
    assert (ran["exit_code"], ran["output"], ran["timed_out"]) == (0, NOTES, False), ran
    assert ran["sandbox"]["tier"] in (1, 2) and ran["sandbox"]["network"] is False, ran["sandbox"]
    assert done.exit_code == 0, done.describe()


def test_an_approval_after_the_agent_gave_up_runs_nothing(
    cli: str, session: EditorSession, tmp_path: Path
) -> None:
    """The user has not answered when the CLI stops waiting for the call (its tool timeout, then
    the turn ends and its MCP server goes): the call is cancelled in the editor's session, and
    the approval that comes afterwards runs nothing and is dropped quietly (the fixture checks the
    sidecar's log)."""
    session.editor.answer = None
    argv = ["sh", "-c", "echo late > late.txt"]
    script: list[Step] = [CallTool(SERVER, "run_command", {"command": argv}), Final("gave up")]
    done = run(cli, session, script, tmp_path / "home", tool_timeout_s=2)
    (result,) = done.tool_results()
    assert "timed out" in result, result
    (prompt,) = session.editor.prompts
    assert prompt.startswith(f"s-code, for the agent {AGENT_NAMES[cli]}: Run "), prompt
    session.editor.answer_held("Approve once")
    session.close()  # the late answer is handled before the shutdown's reply
    assert not (session.ws / "late.txt").exists()
