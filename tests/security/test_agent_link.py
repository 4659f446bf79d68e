"""SECURITY.md M2 and M3: the agent link admits only this user with the token, over a private
unix socket (never TCP), for a workspace inside the editor's folders, and serves tool calls only.

Each refusal has its positive control: the same connection with the one thing fixed is admitted.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from s_code.client import StdioClient
from s_code.mcp_face import link
from s_code.protocol.framing import frame, read_framed

RUNTIME = tempfile.mkdtemp(prefix="s-code-run-")
ENV = {**os.environ, "XDG_RUNTIME_DIR": RUNTIME}
NOBODY = 65534


class Editor:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.client = StdioClient(
            [sys.executable, "-m", "s_code", "serve"], env=ENV, on_request=lambda m, p: None
        )
        self.client.initialize(str(root), options={"permissionMode": "manual"})
        self.place = link.place(str(root), os.path.join(RUNTIME, "s-code"))
        deadline = time.monotonic() + 20
        while not os.path.exists(self.place.token):
            assert time.monotonic() < deadline, "the sidecar never listened for agents"
            time.sleep(0.05)
        self.token = Path(self.place.token).read_text()


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[Editor]:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\n")
    made = Editor(root)
    try:
        yield made
    finally:
        made.client.close()


def exchange(path: str, message: dict[str, Any], timeout: float = 5) -> list[Any]:
    """Send the framed first ``message`` on the link; its framed reply, if any ([] when the
    connection closes unanswered)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(frame(message))
        try:
            reply = read_framed(sock)
        except (TimeoutError, ConnectionResetError):
            reply = None
    return [] if reply is None else [reply]


def attach(token: str, workspace: str, msg_id: int = 1) -> dict[str, Any]:
    params = {"token": token, "workspace": workspace}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "s-code/agent/attach", "params": params}


def test_m2_a_wrong_token_is_closed_unanswered(editor: Editor) -> None:
    assert exchange(editor.place.socket, attach("not-the-token", str(editor.root))) == []
    # positive control: the token admits the same connection
    (reply,) = exchange(editor.place.socket, attach(editor.token, str(editor.root)))
    assert reply["result"]["folders"] == [str(editor.root.resolve())]


def test_m2_the_socket_and_token_are_private_and_never_tcp(editor: Editor) -> None:
    for path in (editor.place.socket, editor.place.token):
        st = os.lstat(path)
        assert st.st_uid == os.getuid() and st.st_mode & 0o077 == 0, oct(st.st_mode)
    assert os.stat(os.path.dirname(editor.place.socket)).st_mode & 0o077 == 0
    listening = Path("/proc/net/tcp").read_text() + Path("/proc/net/tcp6").read_text()
    pid = editor.client.proc.pid
    inodes = {
        os.readlink(f"/proc/{pid}/fd/{fd}").removeprefix("socket:[").rstrip("]")
        for fd in os.listdir(f"/proc/{pid}/fd")
        if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
    }
    assert not any(line.split()[9] in inodes for line in listening.splitlines()[1:])


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run a peer as another uid")
def test_m2_another_uid_cannot_attach(editor: Editor) -> None:
    probe = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.settimeout(5)\n"
        "try:\n"
        "    s.connect(sys.argv[1])\n"
        f"    s.sendall({frame(attach(editor.token, str(editor.root)))!r})\n"
        "    print('reply' if s.recv(100) else 'closed')\n"
        "except (BrokenPipeError, ConnectionResetError):\n"
        "    print('closed')\n"
        "except PermissionError:\n"
        "    print('no access')\n"
        "except OSError as e:\n"
        "    print('error', e)\n"
    )
    as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]

    def run(*prefix: str) -> str:
        done = subprocess.run(
            [*prefix, sys.executable, "-c", probe, editor.place.socket],
            capture_output=True,
            text=True,
            timeout=30,
        )
        return done.stdout.strip()

    folder = os.path.dirname(editor.place.socket)
    assert run(*as_nobody) == "no access"  # the 0700 folder and the 0600 socket
    # with the file permissions opened, the peer check still refuses another uid ...
    for opened in (RUNTIME, folder):
        os.chmod(opened, 0o755)
    os.chmod(editor.place.socket, 0o666)
    try:
        assert run(*as_nobody) == "closed"
        assert run() == "reply"  # positive control: this uid, same token, is answered
    finally:
        os.chmod(editor.place.socket, 0o600)
        for opened in (RUNTIME, folder):
            os.chmod(opened, 0o700)


def test_m3_a_workspace_outside_the_editor_s_folders_is_refused(
    editor: Editor, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (reply,) = exchange(editor.place.socket, attach(editor.token, str(outside)))
    assert reply["error"]["data"]["kind"] == "path_escape"
    (reply,) = exchange(editor.place.socket, attach(editor.token, str(editor.root / "..")))
    assert reply["error"]["data"]["kind"] == "path_escape"
    # positive control: a folder inside the editor's is admitted
    (reply,) = exchange(editor.place.socket, attach(editor.token, str(editor.root / "sub")))
    assert "result" in reply


def test_m3_the_link_serves_tool_calls_only(editor: Editor) -> None:
    """After the attach the connection is an MCP stream: the editor's control methods (mode,
    approvals, host processes, edits of buffers) are not there; a tool call is."""
    control = [
        ("s-code/permissionMode/set", {"mode": "workspace"}),
        ("s-code/approval/answer", {"id": "a-1", "approved": True}),
        ("s-code/hostProcesses/approve", {"kind": "hook", "name": "PreToolUse.0.0"}),
        ("workspace/applyEdit", {"edit": {}}),
    ]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(editor.place.socket)
    sock.sendall(frame(attach(editor.token, str(editor.root))))
    stream = sock.makefile("rb")
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    assert "result" in json.loads(stream.read(length))
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "link-test", "version": "1"},
    }
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *(
            {"jsonrpc": "2.0", "id": i, "method": m, "params": p}
            for i, (m, p) in enumerate(control, start=2)
        ),
        {
            "jsonrpc": "2.0",
            "id": 99,
            "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": "a.txt"}},
        },
    ]
    for message in messages:
        sock.sendall(json.dumps(message).encode() + b"\n")
    replies: dict[Any, Any] = {}
    while 99 not in replies or len(replies) < len(control) + 2:
        reply = json.loads(stream.readline())
        if "id" in reply:
            replies[reply["id"]] = reply
    sock.close()
    for i in range(2, len(control) + 2):
        assert "error" in replies[i] and "result" not in replies[i], replies[i]
    assert replies[99]["result"]["structuredContent"]["numbered_content"].endswith("alpha\n")
    assert editor.client.request("s-code/permissionMode/get", {})["mode"] == "manual"
    # positive control: the editor itself can change the mode
    editor.client.request("s-code/permissionMode/set", {"mode": "workspace"})
    assert editor.client.request("s-code/permissionMode/get", {})["mode"] == "workspace"


@pytest.mark.parametrize("bad", ["socket mode", "token mode"])
def test_m2_a_link_with_loose_permissions_is_refused_in_one_line(editor: Editor, bad: str) -> None:
    path = editor.place.socket if bad == "socket mode" else editor.place.token
    os.chmod(path, 0o644)
    try:
        done = run_mcp(editor.root)
    finally:
        os.chmod(path, 0o600)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "644" in lines[0] and "refused" in lines[0], done.stderr
    # positive control: with the modes right it attaches and serves until stdin closes
    ok = run_mcp(editor.root)
    assert ok.returncode == 0, ok.stderr


def run_mcp(root: Path) -> subprocess.CompletedProcess[str]:
    """``s-code mcp`` on ``root`` with nothing to serve (stdin closed): its exit and its lines."""
    return subprocess.run(
        [sys.executable, "-m", "s_code", "mcp", "--workspace", str(root)],
        env=ENV,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
