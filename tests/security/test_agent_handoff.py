"""SECURITY.md M2: an attached ``s-code mcp`` hands the agent's own stdin and stdout to the
editor's sidecar (``SCM_RIGHTS``), which serves the MCP stream on them directly.

The sidecar takes exactly a readable and a writable pipe or socket from an admitted peer, and
nothing else (a file, a device, a third descriptor, none); the stream lives as long as the
``s-code mcp`` process (killed: the agent is gone from the editor; the sidecar gone: the agent
sees its server's output end). Each refusal has its positive control: the same handoff with a
pipe pair is served.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from tests.security.sandbox_support import alive
from tests.security.test_agent_link import ENV, Editor, attach, editor

from s_code.protocol.framing import frame, read_framed

__all__ = ["editor"]

HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "handoff-test", "version": "1"},
    },
}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def read_line(fd: int, timeout: float = 20) -> bytes:
    """One line from ``fd`` (b"" at its end)."""
    got = b""
    deadline = time.monotonic() + timeout
    while not got.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no line within {timeout} s (so far {got!r})"
        chunk = os.read(fd, 1)
        if not chunk:
            return got
        got += chunk
    return got


def agents(editor: Editor) -> list[Any]:
    return list(editor.client.request("s-code/agents/list", {})["agents"])


def connect(editor: Editor, handoff: bool = True) -> socket.socket:
    """Attached (the reply read), asking for the handoff; the byte with the descriptors not
    sent yet."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(editor.place.socket)
    hello = attach(editor.token, str(editor.root))
    hello["params"]["handoff"] = handoff
    sock.sendall(frame(hello))
    reply = read_framed(sock)
    assert reply["result"]["handoff"] is handoff, reply
    return sock


def hand(editor: Editor, fds: list[int], extra: bytes = b"") -> socket.socket:
    """Attach asking for the handoff, and send ``fds`` with the one byte (and ``extra``)."""
    sock = connect(editor)
    socket.send_fds(sock, [b"\0" + extra], fds)
    return sock


def served(editor: Editor) -> None:
    """Positive control: a pipe pair handed the same way is served."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    sock = hand(editor, [in_r, out_w])
    os.close(in_r)
    os.close(out_w)
    try:
        os.write(in_w, line(HELLO))
        reply = json.loads(read_line(out_r))
        assert reply["result"]["serverInfo"]["name"] == "s-code"
    finally:
        os.close(in_w)
        os.close(out_r)
        sock.close()


def closed_unserved(sock: socket.socket) -> None:
    try:
        assert sock.recv(1) == b""  # the sidecar closed the connection
    except ConnectionResetError:
        pass
    finally:
        sock.close()


@pytest.mark.parametrize(
    "what", ["a file", "a device", "three descriptors", "none", "a read end to write to"]
)
def test_m2_the_sidecar_takes_only_a_pipe_or_socket_pair(
    editor: Editor, tmp_path: Path, what: str
) -> None:
    planted = tmp_path / "planted"
    planted.write_text(json.dumps(HELLO) + "\n")
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    opened: list[int] = []
    if what == "a file":
        opened = [os.open(planted, os.O_RDONLY), os.open(planted, os.O_WRONLY)]
        fds = opened
    elif what == "a device":
        opened = [os.open("/dev/zero", os.O_RDONLY)]
        fds = [opened[0], out_w]
    elif what == "three descriptors":
        fds = [in_r, out_w, out_w]
    elif what == "none":
        fds = []
    else:
        fds = [in_r, out_r]
    os.write(in_w, line(HELLO))
    closed_unserved(hand(editor, fds))
    for fd in (in_r, in_w, out_w, *opened):
        os.close(fd)
    os.set_blocking(out_r, False)
    assert os.read(out_r, 1) == b""  # nothing answered, and the sidecar kept no write end
    os.close(out_r)
    assert planted.read_text() == json.dumps(HELLO) + "\n"
    assert agents(editor) == []
    served(editor)


def mcp(root: Path, **kw: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "s_code", "mcp", "--workspace", str(root)],
        env=ENV,
        stdin=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        **kw,
    )


def call(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> Any:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line(message))
    proc.stdin.flush()
    return json.loads(read_line(proc.stdout.fileno()))


def wait_for(check: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the state never came"
        time.sleep(0.05)


def test_m2_a_handed_stream_ends_with_its_s_code_mcp(editor: Editor) -> None:
    proc = mcp(editor.root, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert "serverInfo" in call(proc, HELLO)["result"]
        # handed over: s-code mcp holds neither end of the agent's pipes any more
        assert os.readlink(f"/proc/{proc.pid}/fd/0") == "/dev/null"
        assert os.readlink(f"/proc/{proc.pid}/fd/1") == "/dev/null"
        wait_for(lambda: len(agents(editor)) == 1)  # control: attached while it runs
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        wait_for(lambda: agents(editor) == [])  # our pipes are still open: its death ends it
        assert read_line(proc.stdout.fileno()) == b""  # and the sidecar let go of its stdout
    finally:
        proc.kill()
        proc.wait()


def test_the_agent_sees_the_stream_end_when_the_editor_goes(editor: Editor) -> None:
    proc = mcp(editor.root, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    try:
        assert "serverInfo" in call(proc, HELLO)["result"]
        editor.client.close()
        assert read_line(proc.stdout.fileno()) == b""
        assert proc.wait(20) == 0
    finally:
        proc.kill()
        proc.wait()


def test_a_stdout_that_is_no_pipe_is_relayed(editor: Editor, tmp_path: Path) -> None:
    """A file for stdout (or a terminal): s-code mcp copies the bytes itself."""
    out = tmp_path / "out.jsonl"
    with out.open("wb") as f:
        proc = mcp(editor.root, stdout=f)
        assert proc.stdin is not None
        try:
            proc.stdin.write(line(HELLO))
            proc.stdin.flush()
            wait_for(lambda: out.read_bytes().endswith(b"\n"))
            assert "serverInfo" in json.loads(out.read_bytes())["result"]
            assert os.readlink(f"/proc/{proc.pid}/fd/0").startswith("pipe:")  # not handed
        finally:
            proc.stdin.close()
            assert proc.wait(20) == 0


@pytest.mark.parametrize("how", ["stdin closed", "s-code mcp killed"])
def test_a_call_running_when_its_agent_goes_is_cancelled_whole(editor: Editor, how: str) -> None:
    """The agent goes while its command runs: the call is cancelled once, as ``$/cancelRequest``
    does, and the command's whole tree ends; the editor's session goes on."""
    editor.client.request("s-code/permissionMode/set", {"mode": "workspace"})
    tag = f"{400 + uuid.uuid4().int % 1000 / 1000:.3f}"
    proc = mcp(editor.root, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    try:
        assert "serverInfo" in call(proc, HELLO)["result"]
        proc.stdin.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        command = ["sh", "-c", f"sleep {tag} & sleep {tag}"]
        run = {"name": "run_command", "arguments": {"command": command}}
        proc.stdin.write(line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": run}))
        proc.stdin.flush()
        wait_for(lambda: len(alive(f"sleep\0{tag}")) == 2)  # control: it runs while the agent is
        if how == "stdin closed":
            proc.stdin.close()
        else:
            os.kill(proc.pid, signal.SIGKILL)
        wait_for(lambda: not alive(f"sleep\0{tag}"))
        wait_for(lambda: agents(editor) == [])
        assert editor.client.request("s-code/readFile", {"path": "a.txt"})["line_count"] == 1
    finally:
        for pid in alive(f"sleep\0{tag}"):
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait()
