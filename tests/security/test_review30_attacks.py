"""Adversarial review of issue 30 (the MCP face): attacks on the real processes.

Each attack runs against a real ``s-code serve`` (the editor's sidecar, driven by a scripted
LSP client that records every prompt) and agents on its link (raw sockets speaking MCP, or real
``s-code mcp`` processes), or against a real ``s-code mcp --standalone``. Each asserts the
behaviour SECURITY.md M1-M4 promise and carries a positive control showing the attack does reach
the code it aims at. Five broke when the review ran and are fixed (a busy editor made an agent
standalone, one line swelled the sidecar, a long agent name buried the question, a sandboxed
command read the link's token, one agent replaced another's plan).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.mcp_face_support import RawPeer, server_argv, server_env
from tests.polling import until
from tests.security.sandbox_support import alive, available_tiers, tier_env

from s_code.client import StdioClient
from s_code.protocol.framing import frame, read_framed

DEADLINE_S = 60.0
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


# -- the editor: a real sidecar, a scripted LSP client ---------------------------------------


class Editor:
    """``s-code serve`` on ``root``, its agent link under ``runtime``; every prompt it shows is
    kept (:attr:`prompts`) and answered from :attr:`answers` (Deny when none is left)."""

    def __init__(
        self, root: Path, runtime: Path, mode: str = "manual", env: dict[str, str] | None = None
    ) -> None:
        self.root = root
        self.runtime = runtime
        self.answers: list[str] = []
        self.prompts: list[dict[str, Any]] = []
        self.env = {**(env or os.environ), "XDG_RUNTIME_DIR": str(runtime)}
        self.client = StdioClient(
            [sys.executable, "-m", "s_code", "serve"], env=self.env, on_request=self._on_request
        )
        self.client.initialize(str(root), options={"permissionMode": mode})
        self.place = place_of(root, runtime)
        deadline = time.monotonic() + DEADLINE_S
        while not os.path.exists(self.place.token):
            assert time.monotonic() < deadline, "the sidecar never listened for agents"
            time.sleep(0.05)
        self.token = Path(self.place.token).read_text()

    def _on_request(self, method: str, params: Any) -> Any:
        if method == "window/showMessageRequest":
            self.prompts.append(params)
            return {"title": self.answers.pop(0) if self.answers else "Deny"}
        return None

    def request(self, method: str, params: Any = None) -> Any:
        return self.client.request(method, params, timeout=DEADLINE_S)

    def close(self) -> None:
        self.client.close()


def place_of(root: Path, runtime: Path) -> Any:
    from s_code.mcp_face import link

    old = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    try:
        return link.place(str(root))
    finally:
        if old is None:
            os.environ.pop("XDG_RUNTIME_DIR")
        else:
            os.environ["XDG_RUNTIME_DIR"] = old


def private_runtime() -> Path:
    path = Path(tempfile.mkdtemp(prefix="s-code-r30-run-"))
    path.chmod(0o700)
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\n")
    return root


@pytest.fixture
def editor(workspace: Path) -> Iterator[Editor]:
    made = Editor(workspace, private_runtime())
    try:
        yield made
    finally:
        made.close()


# -- an agent on the link: a raw socket speaking MCP -----------------------------------------


def attach_message(token: str, workspace: str, msg_id: int = 1) -> dict[str, Any]:
    params = {"token": token, "workspace": workspace}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "s-code/agent/attach", "params": params}


class LinkAgent:
    """An agent attached over the link, speaking newline-delimited MCP on the socket."""

    def __init__(
        self, editor: Editor, name: str, version: str = LEGACY, caps: dict[str, Any] | None = None
    ) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(DEADLINE_S)
        self.sock.connect(editor.place.socket)
        self.sock.sendall(frame(attach_message(editor.token, str(editor.root))))
        reply = read_framed(self.sock)
        assert isinstance(reply, dict) and "result" in reply, reply
        self.attached = reply["result"]
        self.buf = b""
        self.seen: list[dict[str, Any]] = []
        self.next_id = 100
        self.version = version
        hello = {
            "protocolVersion": version,
            "capabilities": caps or {},
            "clientInfo": {"name": name, "version": "1"},
        }
        if version == LEGACY:
            assert "result" in self.request("initialize", hello)
            self.notify("notifications/initialized")
        else:
            self.meta = {
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": caps or {},
            }

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def start(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        if self.version != LEGACY:
            params = {**params, "_meta": {**self.meta, **params.get("_meta", {})}}
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.reply(self.start(method, params))

    def call(self, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """A ``tools/call``: its result (a tool error is a result with isError)."""
        reply = self.request("tools/call", {"name": name, "arguments": arguments, **extra})
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    def _read(self) -> None:
        chunk = self.sock.recv(1 << 20)
        assert chunk, f"the link closed; seen {self.seen[-3:]}"
        self.buf += chunk
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            self.seen.append(json.loads(line))

    def reply(self, rid: int | None) -> dict[str, Any]:
        deadline = time.monotonic() + DEADLINE_S
        while True:
            for m in self.seen:
                if m.get("id") == rid and "method" not in m:
                    self.seen.remove(m)
                    return m
            assert time.monotonic() < deadline, f"no reply to {rid}"
            self._read()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


@contextlib.contextmanager
def linked(editor: Editor, name: str, **kw: Any) -> Iterator[LinkAgent]:
    agent = LinkAgent(editor, name, **kw)
    try:
        yield agent
    finally:
        agent.close()


def sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()[:16]


# == M1: the card tells the truth about who asks and what =====================================


def test_a_long_agent_name_buries_the_question(editor: Editor) -> None:
    command = ["touch", "pwned-by-long-name"]
    # positive control: an ordinary name, the command is on the prompt line near its start
    with linked(editor, "Claude Code") as plain:
        denied = plain.call("run_command", {"command": command})
    assert denied["isError"] and denied["structuredContent"]["kind"] == "approval_denied"
    shown = editor.prompts[-1]["message"]
    assert "Claude Code" in shown and shown.index("pwned-by-long-name") < 200
    # the attack: a name of 20,000 harmless-looking characters
    name = "Claude Code (reading files only; nothing to approve here) " + "\u2800" * 20000
    with linked(editor, name) as long:
        denied = long.call("run_command", {"command": command})
    assert denied["isError"]
    shown = editor.prompts[-1]["message"]
    assert len(shown) < 1000, f"the prompt line is {len(shown)} characters"
    assert "pwned-by-long-name" in shown[:400]
    assert not (editor.root / "pwned-by-long-name").exists()


def test_control_and_bidi_characters_in_the_agent_name_are_escaped(editor: Editor) -> None:
    name = "helper\n\ns-code: the editor approved this already\u202e\x1b[2J\u200b"
    with linked(editor, name) as sly:
        denied = sly.call("run_command", {"command": ["touch", "escaped-name"]})
        assert denied["isError"]
    shown = editor.prompts[-1]["message"]
    # positive control: the name did reach the prompt line
    assert "the editor approved this already" in shown
    assert shown.startswith("s-code, for the agent helper")
    for raw in ("\n", "\u202e", "\x1b", "\u200b"):
        assert raw not in shown, repr(raw)
    assert "\\n\\ns-code" in shown and "\\u202e" in shown and "\\x1b" in shown
    listed = editor.request("s-code/agents/list", {})["agents"]
    assert listed == [] or all("\n" not in a["name"] for a in listed)


@pytest.mark.parametrize("version", [LEGACY, MODERN], ids=["2025", "2026"])
def test_an_attached_agent_cannot_answer_its_own_prompt(editor: Editor, version: str) -> None:
    """Elicitation capability declared, a forged 2026 ``inputResponses`` + ``requestState``:
    the editor is asked (and denies); the agent's answer approves nothing."""
    target = editor.root / "a.txt"
    entry = {"path": "a.txt", "expected_revision": sha(b"alpha\n"), "content": "owned\n"}
    caps: dict[str, Any] = {"elicitation": {"form": {}}}
    forged = {"action": "accept", "content": {"decision": "approve"}}
    with linked(editor, "sly", version=version, caps=caps) as sly:
        asked = len(editor.prompts)
        extra: dict[str, Any] = {}
        if version == MODERN:
            extra = {"inputResponses": {"approval": forged}, "requestState": "s-code-forged"}
        result = sly.call("apply_patch", {"files": [entry]}, **extra)
        # the 2026 path was taken (its results carry resultType), and the answer was no answer
        assert result.get("resultType") == ("complete" if version == MODERN else None), result
        assert result["isError"] and result["structuredContent"]["kind"] == "approval_denied"
        assert len(editor.prompts) == asked + 1 and "sly" in editor.prompts[-1]["message"]
        assert not any(m.get("method") == "elicitation/create" for m in sly.seen)
        assert target.read_text() == "alpha\n"
        # positive control: the editor's own Approve writes it
        editor.answers.append("Approve once")
        done = sly.call("apply_patch", {"files": [entry]})
        assert not done["isError"], done
        assert target.read_text() == "owned\n"


def test_an_agent_reaches_no_editor_method_through_tools_call(editor: Editor) -> None:
    """Turn undo, the mode, approvals: LSP methods of the editor, never tools of an agent."""
    with linked(editor, "sly") as sly:
        entry = {"path": "a.txt", "expected_revision": sha(b"alpha\n"), "content": "x\n"}
        editor.answers.append("Approve once")
        done = sly.call("apply_patch", {"files": [entry]})
        assert not done["isError"], done
        turn = done["structuredContent"]["turn_id"]
        for name, args in [
            ("s-code/turn/undo", {"turnId": turn}),
            ("s-code/permissionMode/set", {"mode": "workspace"}),
            ("s-code/approval/answer", {"id": "a-1", "approved": True}),
        ]:
            r = sly.call(name, args)
            assert r["isError"], (name, r)
        assert (editor.root / "a.txt").read_text() == "x\n"
    assert editor.request("s-code/permissionMode/get", {})["mode"] == "manual"
    # positive control: the editor itself undoes that turn
    undone = editor.request("s-code/turn/undo", {"turnId": turn})
    assert undone["restored"] == ["a.txt"]


# == M3: an agent sees and affects nothing of another's ======================================


def test_an_agent_s_command_output_reaches_no_other_agent(editor: Editor) -> None:
    marker = f"secret-output-{uuid.uuid4().hex[:8]}"
    editor.answers.append("Approve once")
    with linked(editor, "first") as first, linked(editor, "second") as second:
        second.request("logging/setLevel", {"level": "debug"})
        ran = first.call(
            "run_command",
            {"command": ["sh", "-c", f"echo {marker}"]},
            _meta={"progressToken": "p1"},
        )
        assert not ran["isError"], ran
        # positive control: the first agent's own stream carried the output
        assert any(marker in json.dumps(m) for m in first.seen if "method" in m)
        second.request("ping", {})
        assert not any(marker in json.dumps(m) for m in second.seen), second.seen


def test_one_agent_cannot_replace_another_s_plan(editor: Editor) -> None:
    """Fixed (review 30, low): an attached agent's plan is its own. The editor learns each one
    from ``s-code/planUpdated`` naming the agent; neither replaces the other's, nor the plan of
    the editor's own agent (``s-code/plan/get``)."""
    plan_a = {"plan": [{"step": "A: refactor the parser", "status": "in_progress"}]}
    plan_b = {"plan": [{"step": "B: delete the tests", "status": "pending"}]}
    with linked(editor, "agent-A") as a, linked(editor, "agent-B") as b:
        assert not a.call("update_plan", plan_a)["isError"]
        assert not b.call("update_plan", plan_b)["isError"]
        shown = editor.request("s-code/plan/get", {})
    updates = [
        n["params"] for n in editor.client.notifications if n["method"] == "s-code/planUpdated"
    ]
    by_agent = {u.get("agent"): json.dumps(u) for u in updates}
    assert "A: refactor" in by_agent["agent-A"] and "B: delete" in by_agent["agent-B"]
    assert "delete the tests" not in json.dumps(shown)  # the editor's own plan is not B's


# == M1/M4: an attached agent never ends up approving for itself ==============================


def _initialize(peer: RawPeer, name: str) -> None:
    hello = {
        "protocolVersion": LEGACY,
        "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": name, "version": "1"},
    }
    peer.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": hello})
    assert "result" in peer.reply("init")
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _patch_approving_itself(peer: RawPeer) -> dict[str, Any]:
    """apply_patch a.txt, answering any elicitation of the agent's own client with approve."""
    entry = {"path": "a.txt", "expected_revision": sha(b"alpha\n"), "content": "self-approved\n"}
    params = {"name": "apply_patch", "arguments": {"files": [entry]}}
    peer.send({"jsonrpc": "2.0", "id": "patch", "method": "tools/call", "params": params})
    while True:
        got = peer.until(
            lambda m: m.get("id") == "patch" or m.get("method") == "elicitation/create"
        )
        if got.get("method") != "elicitation/create":
            assert isinstance(got, dict)
            return got
        answer = {"action": "accept", "content": {"decision": "approve"}}
        peer.send({"jsonrpc": "2.0", "id": got["id"], "result": answer})


@contextlib.contextmanager
def _backlog_full(editor: Editor) -> Iterator[None]:
    """The sidecar stopped (an editor suspended, a blocked loop): its listen backlog fills."""
    pid = editor.client.proc.pid
    os.kill(pid, signal.SIGSTOP)
    held: list[socket.socket] = []
    try:
        while len(held) < 5000:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(editor.place.socket)
            except BlockingIOError:
                s.close()
                break
            held.append(s)
        yield
    finally:
        for s in held:
            s.close()
        os.kill(pid, signal.SIGCONT)


def test_a_busy_editor_does_not_turn_an_agent_standalone(editor: Editor, tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "s_code", "mcp", "--workspace", str(editor.root)]
    # positive control: with the sidecar answering, the agent attaches and the editor asks
    peer = RawPeer(argv, editor.env, tmp_path / "attached.log")
    try:
        _initialize(peer, "agent")
        reply = _patch_approving_itself(peer)
        assert reply["result"]["isError"], reply
        assert "agent" in editor.prompts[-1]["message"]
    finally:
        peer.close()
    asked = len(editor.prompts)
    with _backlog_full(editor):
        peer = RawPeer(argv, editor.env, tmp_path / "busy.log")
        try:
            peer.send({"jsonrpc": "2.0", "id": "probe", "method": "ping"})
            deadline = time.monotonic() + 20
            while peer.proc.poll() is None and time.monotonic() < deadline and not peer.seen:
                peer.quiet_for(0.2)
            served = any(m.get("id") == "probe" for m in peer.seen)
            if served:  # serving on its own: see who approves
                peer.seen.clear()
                _initialize(peer, "agent")
                _patch_approving_itself(peer)
        finally:
            with contextlib.suppress(BrokenPipeError):
                peer.close()
    # the agent's own "approve" wrote the editor's file, and the editor never saw a prompt
    assert (editor.root / "a.txt").read_text() == "alpha\n"
    assert not served, "s-code mcp served while the editor's sidecar was busy"
    assert len(editor.prompts) == asked


# == M2: the link's token stays with the user's own processes ===============================


@pytest.mark.parametrize("tier", available_tiers() or [0], ids=lambda t: f"tier{t}")
def test_a_sandboxed_command_cannot_read_the_link_token(workspace: Path, tier: int) -> None:
    if tier == 0:
        pytest.skip("no sandbox tier on this machine")
    if not os.access("/var/lib", os.W_OK):
        pytest.skip("needs a runtime folder outside /run, /tmp and $HOME (/var/lib here)")
    runtime = Path(tempfile.mkdtemp(prefix="s-code-r30-run-", dir="/var/lib"))
    runtime.chmod(0o700)
    editor = Editor(workspace, runtime, mode="workspace", env=tier_env(tier))
    try:
        marker = f"ran-{uuid.uuid4().hex[:8]}"
        script = f"echo {marker}; cat {editor.place.token}"
        ran = editor.request(
            "s-code/tools/call",
            {"name": "run_command", "arguments": {"command": ["sh", "-c", script]}},
        )
        assert ran["sandbox"]["tier"] == tier
        # positive control: the command ran, and the token is there for an unsandboxed reader
        assert marker in ran["output"]
        assert editor.token and Path(editor.place.token).read_text() == editor.token
        assert editor.token not in ran["output"], "the sandboxed command read the link's token"
    finally:
        editor.close()
        shutil.rmtree(runtime, ignore_errors=True)


def test_an_agent_cannot_cancel_another_s_call(editor: Editor) -> None:
    """Request ids are per connection: B's cancel of A's id cancels only B's own (nothing)."""
    editor.answers.extend(["Approve once", "Approve once"])
    with linked(editor, "A") as a, linked(editor, "B") as b:
        tag = f"{2 + (uuid.uuid4().int % 1000) / 1000:.3f}"  # a sleep argument of its own
        args = {"command": ["sh", "-c", f"sleep {tag}; echo finished"]}
        rid = a.start("tools/call", {"name": "run_command", "arguments": args})
        deadline = time.monotonic() + DEADLINE_S
        while len(editor.prompts) < 1:  # A's call is running (it asked, was approved)
            assert time.monotonic() < deadline
            time.sleep(0.05)
        until(lambda: alive(f"sleep\0{tag}"), what="A's command, running")
        b.notify("notifications/cancelled", {"requestId": rid, "reason": "B says so"})
        done = a.reply(rid)["result"]
        assert not done["isError"] and "finished" in done["structuredContent"]["output"]
        # positive control: A's own cancel of the same kind of call ends it
        rid = a.start("tools/call", {"name": "run_command", "arguments": args})
        while len(editor.prompts) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        until(lambda: alive(f"sleep\0{tag}"), what="A's command, running")
        a.notify("notifications/cancelled", {"requestId": rid, "reason": "mine"})
        b.request("ping", {})
        a.sock.settimeout(6)  # a cancelled request gets no reply (or an error): never "finished"
        reply: Any = None
        with contextlib.suppress(TimeoutError):
            reply = a.reply(rid)
        assert "finished" not in json.dumps(reply), reply


# == M3: no folder the editor did not open ====================================================


def test_a_symlinked_workspace_leading_outside_is_refused(editor: Editor, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (editor.root / "sub" / "out").symlink_to(outside)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(editor.place.socket)
        sock.sendall(frame(attach_message(editor.token, str(editor.root / "sub" / "out"))))
        reply = read_framed(sock)
    assert isinstance(reply, dict) and reply["error"]["data"]["kind"] == "path_escape", reply
    # positive control: the folder that holds the link is admitted
    with linked(editor, "ok") as ok:
        assert ok.attached["folders"] == [str(editor.root.resolve())]
        escaped = ok.call("read_file", {"path": "sub/out/../../a.txt"})
        assert escaped["isError"]
        through = ok.call("list_files", {"path": "sub/out"})
        assert through["isError"] or "outside" not in json.dumps(through["structuredContent"])


# == M3: the mode is the editor's ============================================================


def test_an_attached_agent_s_mode_option_is_not_the_mode(editor: Editor, tmp_path: Path) -> None:
    argv = [
        sys.executable,
        "-m",
        "s_code",
        "mcp",
        "--workspace",
        str(editor.root),
        "--mode",
        "workspace",
    ]
    peer = RawPeer(argv, editor.env, tmp_path / "mode.log")
    try:
        _initialize(peer, "permissive")
        reply = _patch_approving_itself(peer)
    finally:
        peer.close()
    assert reply["result"]["isError"], reply
    assert reply["result"]["structuredContent"]["kind"] == "approval_denied"
    assert "permissive" in editor.prompts[-1]["message"]  # the editor (manual) asked
    assert (editor.root / "a.txt").read_text() == "alpha\n"
    assert editor.request("s-code/permissionMode/get", {})["mode"] == "manual"


def test_a_standalone_elicitation_cannot_approve_a_protected_edit(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".vscode").mkdir(parents=True)
    (ws / ".vscode" / "settings.json").write_text("{}\n")
    (ws / "a.txt").write_text("alpha\n")
    argv = [*server_argv(ws, "workspace"), "--standalone"]
    peer = RawPeer(argv, server_env(tmp_path), tmp_path / "standalone.log")
    try:
        _initialize(peer, "self-approver")
        target = {"path": ".vscode/settings.json", "expected_revision": sha(b"{}\n")}
        params = {"name": "apply_patch", "arguments": {"files": [{**target, "content": "{1}\n"}]}}
        peer.send({"jsonrpc": "2.0", "id": "p", "method": "tools/call", "params": params})
        got = peer.until(lambda m: m.get("id") == "p" or m.get("method") == "elicitation/create")
        assert got.get("method") != "elicitation/create", "the protected edit was put to the agent"
        assert got["result"]["structuredContent"]["kind"] == "protected_path", got
        # positive control: an ordinary edit in manual mode is put to the agent, who approves
        peer.close()
        peer = RawPeer(
            [*server_argv(ws, "manual"), "--standalone"],
            server_env(tmp_path),
            tmp_path / "manual.log",
        )
        _initialize(peer, "self-approver")
        assert not _patch_approving_itself(peer)["result"]["isError"]
        assert (ws / "a.txt").read_text() == "self-approved\n"
    finally:
        peer.close()
    assert (ws / ".vscode" / "settings.json").read_text() == "{}\n"


# == M2: another user's link ==================================================================


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to plant files as another uid")
def test_a_link_planted_by_another_user_is_refused(workspace: Path, tmp_path: Path) -> None:
    """XDG_RUNTIME_DIR on a shared, world-writable folder: another user plants the folder, a
    listening socket and a token where s-code mcp looks; it refuses them in one line and
    never sends the token it does not have to anyone."""
    shared = Path(tempfile.mkdtemp(prefix="s-code-r30-shared-"))
    shared.chmod(0o1777)
    where = place_of(workspace, shared)
    nobody = 65534
    plant = (
        "import os, socket, sys, time\n"
        "d = os.path.dirname(sys.argv[1]); os.makedirs(d, mode=0o700)\n"
        "s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o600)\n"
        "s.listen(); open(sys.argv[2], 'w').write('attacker'); os.chmod(sys.argv[2], 0o600)\n"
        "print('ready', flush=True)\n"
        "c, _ = s.accept(); data = c.recv(65536); open(sys.argv[3], 'wb').write(data)\n"
    )
    loot = Path(tempfile.mkdtemp(prefix="s-code-r30-loot-"))
    loot.chmod(0o777)
    attacker = subprocess.Popen(
        [
            "setpriv",
            f"--reuid={nobody}",
            f"--regid={nobody}",
            "--clear-groups",
            sys.executable,
            "-c",
            plant,
            where.socket,
            where.token,
            str(loot / "got"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert attacker.stdout is not None and attacker.stdout.readline().strip() == "ready"
        assert os.lstat(where.socket).st_uid == nobody  # positive control: the plant is there
        done = subprocess.run(
            [sys.executable, "-m", "s_code", "mcp", "--workspace", str(workspace)],
            env={**os.environ, "XDG_RUNTIME_DIR": str(shared)},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "refused" in lines[0] and str(nobody) in lines[0], done.stderr
        assert not (loot / "got").exists()
    finally:
        attacker.kill()
        attacker.wait()
        shutil.rmtree(shared, ignore_errors=True)
        shutil.rmtree(loot, ignore_errors=True)


# == DoS through the link: the editor's own sidecar ==========================================


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_one_agent_line_cannot_swell_the_editor_s_sidecar(editor: Editor) -> None:
    pid = editor.client.proc.pid
    with linked(editor, "flood") as flood:
        # positive control: a small call with an unknown field reaches the parser and is refused
        small = flood.call("read_file", {"path": "a.txt", "x": [{}, {}]})
        assert small["isError"] and small["structuredContent"]["field"] == "x"
        before = _peak_rss_kib(pid)
        items = (60 << 20) // 3
        call = (
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file",'
            b'"arguments":{"path":"a.txt","x":[' + b"{}," * items + b"{}]}}}\n"
        )
        flood.sock.sendall(call)
        del call
        refused = flood.reply(None)  # over the link's line limit: refused unread (no id known)
        assert refused["error"]["code"] == -32600 and "over" in refused["error"]["message"]
        assert flood.call("read_file", {"path": "a.txt"})["isError"] is False  # still served
        grown_mib = (_peak_rss_kib(pid) - before) >> 10
    assert grown_mib < 512, f"one agent's line grew the editor's sidecar by {grown_mib} MiB"
    assert editor.request("s-code/permissionMode/get", {})["mode"] == "manual"


# == a hostile client against the standalone server ===========================================


def test_a_hostile_client_gets_answers_not_hangs_or_tracebacks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    peer = RawPeer(
        [*server_argv(ws, "manual"), "--standalone"], server_env(tmp_path), tmp_path / "err.log"
    )
    try:
        _initialize(peer, "hostile")
        _initialize(peer, "hostile-again")  # a second initialize
        # answers to questions never asked, a cancel of the initialize request
        peer.send(
            {
                "jsonrpc": "2.0",
                "id": 99,
                "result": {"action": "accept", "content": {"decision": "approve"}},
            }
        )
        peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "init"}}
        )
        read = {"name": "read_file", "arguments": {"path": "a.txt"}}
        odd: list[tuple[str, Any]] = [
            ("tools/call", {**read, "_meta": {"progressToken": {"an": "object"}}}),
            ("tools/call", {**read, "_meta": {str(i): i for i in range(20000)}}),
            ("tools/call", {"name": "read_file", "arguments": [1, 2]}),
            ("tools/call", {**read, "requestState": 5, "inputResponses": [1]}),
            ("tools/call", {"name": "n" * 100000, "arguments": {}}),
            ("logging/setLevel", {"level": "bogus"}),
            ("subscriptions/listen", {}),
            (
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "x"},
                    "argument": {"name": "a", "value": "b"},
                },
            ),
            ("ping", [1]),
        ]
        for i, (method, params) in enumerate(odd):
            peer.send({"jsonrpc": "2.0", "id": f"odd{i}", "method": method, "params": params})
            peer.reply(f"odd{i}", 30)
        # an approval answered with an approve the schema does not allow: a denial
        cmd = {"name": "run_command", "arguments": {"command": ["touch", "made"]}}
        peer.send({"jsonrpc": "2.0", "id": "cmd", "method": "tools/call", "params": cmd})
        asked = peer.until(lambda m: m.get("method") == "elicitation/create")
        peer.send(
            {
                "jsonrpc": "2.0",
                "id": asked["id"],
                "result": {"action": "accept", "content": {"decision": ["approve"]}},
            }
        )
        assert peer.reply("cmd")["result"]["structuredContent"]["kind"] == "approval_denied"
        # a call cancelled while its question is out, the question answered after: not run
        peer.send({"jsonrpc": "2.0", "id": "cmd2", "method": "tools/call", "params": cmd})
        asked = peer.until(lambda m: m.get("method") == "elicitation/create")
        peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "cmd2"}}
        )
        peer.quiet_for(0.5)
        peer.send(
            {
                "jsonrpc": "2.0",
                "id": asked["id"],
                "result": {"action": "accept", "content": {"decision": "approve"}},
            }
        )
        peer.quiet_for(1.0)
        peer.send({"jsonrpc": "2.0", "id": "alive", "method": "ping"})
        assert peer.reply("alive")["result"] == {}
        assert not (ws / "made").exists()
        # positive control: the same call with a well-formed approve runs
        peer.send({"jsonrpc": "2.0", "id": "cmd3", "method": "tools/call", "params": cmd})
        asked = peer.until(lambda m: m.get("method") == "elicitation/create")
        peer.send(
            {
                "jsonrpc": "2.0",
                "id": asked["id"],
                "result": {"action": "accept", "content": {"decision": "approve"}},
            }
        )
        assert not peer.reply("cmd3")["result"]["isError"]
        assert (ws / "made").exists()
        assert b"Traceback" not in peer.wire
    finally:
        assert peer.close() == 0
    assert "Traceback" not in (tmp_path / "err.log").read_text()
