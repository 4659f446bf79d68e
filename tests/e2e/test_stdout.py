"""stdout carries protocol bytes only: every byte of a whole session parses as LSP frames.

The server runs with raw pipes (no client library in between) and ``S_CODE_LOG=DEBUG``, so it logs
a great deal; all of it must land on stderr. The captured stdout is then parsed strictly as
``Content-Length: N\\r\\n[Content-Type: ...\\r\\n]\\r\\n<N bytes of JSON-RPC 2.0>`` with nothing
before, between or after the frames.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind

TIMEOUT = 10.0
_LENGTH = re.compile(rb"Content-Length: (\d+)\r\n")
# The one other header LSP defines, exactly as the base protocol spells it.
_TYPE = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"


def frame(payload: dict[str, Any] | bytes) -> bytes:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def parse_frames(data: bytes) -> list[dict[str, Any]]:
    """Every frame of ``data``; anything that is not a well-formed frame fails the test."""
    messages: list[dict[str, Any]] = []
    pos = 0
    while pos < len(data):
        match = _LENGTH.match(data, pos)
        assert match, f"non-protocol bytes at offset {pos}: {data[pos : pos + 200]!r}"
        pos = match.end()
        if data.startswith(_TYPE, pos):
            pos += len(_TYPE)
        assert data.startswith(b"\r\n", pos), (
            f"unexpected header bytes at offset {pos}: {data[pos : pos + 200]!r}"
        )
        pos += 2
        length = int(match.group(1))
        body = data[pos : pos + length]
        assert len(body) == length, f"truncated frame at offset {pos}: {len(body)} of {length}"
        pos += length
        try:
            message = json.loads(body)
        except ValueError:
            pytest.fail(f"a frame body is not JSON: {body[:300]!r}")
        check_jsonrpc(message)
        messages.append(message)
    return messages


def check_jsonrpc(message: Any) -> None:
    """One JSON-RPC 2.0 request, notification or response, as the specification shapes them."""
    assert isinstance(message, dict), message
    assert message.get("jsonrpc") == "2.0", message
    if "method" in message:
        assert isinstance(message["method"], str), message
        assert set(message) <= {"jsonrpc", "id", "method", "params"}, message
        if "id" in message:
            assert isinstance(message["id"], (int, str)), message
            assert not isinstance(message["id"], bool), message
        if "params" in message:
            assert isinstance(message["params"], (dict, list)), message
        return
    assert "id" in message, f"neither a request, a notification nor a response: {message}"
    assert message["id"] is None or isinstance(message["id"], (int, str)), message
    assert ("result" in message) != ("error" in message), message
    assert set(message) <= {"jsonrpc", "id", "result", "error"}, message
    if "error" in message:
        error = message["error"]
        assert isinstance(error, dict), message
        assert isinstance(error.get("code"), int), message
        assert isinstance(error.get("message"), str), message


class RawSession:
    """The server over raw pipes: every stdout and stderr byte is kept as it arrived."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "s_code", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.stdout = bytearray()
        self.stderr = bytearray()
        self._cond = threading.Condition()
        self._threads = [
            threading.Thread(target=self._drain, args=(self.proc.stdout, self.stdout), daemon=True),
            threading.Thread(target=self._drain, args=(self.proc.stderr, self.stderr), daemon=True),
        ]
        for t in self._threads:
            t.start()
        self._next_id = 0

    def _drain(self, stream: Any, into: bytearray) -> None:
        fd = stream.fileno()
        while chunk := os.read(fd, 65536):
            with self._cond:
                into.extend(chunk)
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def send(self, payload: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(payload))
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def _frames_so_far(self) -> list[dict[str, Any]]:
        """Complete frames received until now (lenient: used only to wait for replies)."""
        found, pos, data = [], 0, bytes(self.stdout)
        while (head := data.find(b"\r\n\r\n", pos)) != -1:
            match = re.search(rb"Content-Length: (\d+)", data[pos:head])
            if not match:
                break
            end = head + 4 + int(match.group(1))
            if end > len(data):
                break
            found.append(json.loads(data[head + 4 : end]))
            pos = end
        return found

    def wait_reply(self, msg_id: Any) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        with self._cond:
            while True:
                for message in self._frames_so_far():
                    if "method" not in message and message.get("id") == msg_id:
                        return message
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    pytest.fail(
                        f"no reply to id {msg_id!r} within {TIMEOUT}s; stderr tail:\n"
                        f"{self.stderr[-3000:].decode(errors='replace')}"
                    )
                self._cond.wait(min(left, 0.5))

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        self._next_id += 1
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            payload["params"] = params
        self.send(payload)
        return self.wait_reply(self._next_id)

    def finish(self) -> int:
        """Close stdin, wait for the exit and for both pipes to reach EOF."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail("the server did not exit after shutdown + exit")
        for t in self._threads:
            t.join(TIMEOUT)
            assert not t.is_alive(), "a pipe stayed open after the server exited"
        return code


def _kind(reply: dict[str, Any]) -> Any:
    return reply.get("error", {}).get("data", {}).get("kind")


def test_stdout_is_only_protocol_frames(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "app.py").write_text("def main():\n    print('hi')\n    return 42\n")
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    env = dict(os.environ, S_CODE_LOG="DEBUG", S_CODE_STATE_DIR=str(tmp_path / "state"))
    s = RawSession(env)
    try:
        uri = workspace.as_uri()
        init = s.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "ws"}],
                "capabilities": {},
            },
        )
        assert init["result"]["serverInfo"]["name"] == "s-code"
        s.notify("initialized", {})
        app_uri = (workspace / "src" / "app.py").as_uri()
        s.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": app_uri,
                    "languageId": "python",
                    "version": 1,
                    "text": "def main():\n    print('unsaved')\n",
                }
            },
        )

        read = s.request(methods.READ_FILE, {"path": "src/app.py"})
        assert read["result"]["source"] == "buffer", read
        assert "print('unsaved')" in read["result"]["numbered_content"]
        assert "result" in s.request(methods.TOOLS_LIST, {})
        assert "result" in s.request(methods.LIST_FILES, {})
        found = s.request(methods.SEARCH_TEXT, {"pattern": "alpha"})
        assert found["result"]["matches"], found
        plan = {"plan": [{"step": "look", "status": "in_progress"}]}
        assert "result" in s.request(methods.UPDATE_PLAN, plan)

        assert _kind(s.request(methods.READ_FILE, {"path": "../etc/passwd"})) == "path_escape"
        assert _kind(s.request(methods.READ_FILE, {"path": "missing.txt"})) == "not_found"
        assert _kind(s.request(methods.TOOLS_CALL, {"name": "nope"})) == "unknown_tool"
        assert _kind(s.request(methods.SEARCH_TEXT, {"pattern": "("})) == "invalid_params"
        assert _kind(s.request(methods.LIST_FILES, [1, 2])) == ErrorKind.INVALID_PARAMS
        assert s.request("s-code/noSuchMethod", {})["error"]["code"] == -32601
        assert s.request("textDocument/hover", {"x": 1})["error"]["code"] == -32602
        s.send(b"{not json")
        assert s.wait_reply(None)["error"]["code"] == -32700

        s.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": app_uri, "version": 2},
                "contentChanges": [{"text": "changed\n"}],
            },
        )
        s.notify("textDocument/didClose", {"textDocument": {"uri": app_uri}})
        shutdown = s.request("shutdown")
        assert "result" in shutdown and shutdown["result"] is None, shutdown
        s.notify("exit", None)
        code = s.finish()
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()

    assert code == 0, f"exit code {code} after shutdown + exit"
    messages = parse_frames(bytes(s.stdout))
    replies = [m for m in messages if "method" not in m]
    ids = [m["id"] for m in replies]
    assert sorted(i for i in ids if i is not None) == list(range(1, s._next_id + 1)), (
        f"each request answered exactly once: {ids}"
    )
    assert ids.count(None) == 1, "the one parse error is answered with id null"
    notified = {m["method"] for m in messages if "method" in m and "id" not in m}
    assert methods.PLAN_UPDATED in notified, "the server's notifications are framed too"

    log = bytes(s.stderr).decode(errors="replace")
    log_lines = [line for line in log.splitlines() if line.startswith("s-code ")]
    assert len(log_lines) >= 10, f"expected DEBUG logging on stderr, got:\n{log[:2000]}"
    assert any(" DEBUG " in line for line in log_lines), log[:2000]
    assert "Content-Length" not in log, "protocol bytes leaked to stderr"


@pytest.mark.parametrize(
    "data",
    [
        b"hello" + frame({"jsonrpc": "2.0", "method": "x"}),
        frame({"jsonrpc": "2.0", "method": "x"}) + b"\n",
        frame({"jsonrpc": "2.0", "method": "x"})[:-1],
        b"Content-Length: 2\r\nX-Other: 1\r\n\r\n{}",
        frame(b"[1]"),
        frame({"jsonrpc": "1.0", "id": 1, "result": None}),
        frame({"jsonrpc": "2.0", "id": 1, "result": None, "error": {"code": 1, "message": ""}}),
    ],
    ids=["leading", "trailing", "truncated", "other-header", "not-object", "v1", "both"],
)
def test_the_frame_parser_is_strict(data: bytes) -> None:
    """Negative controls: the parser above does reject what must not reach stdout."""
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        parse_frames(data)


def test_the_frame_parser_accepts_lsp_frames() -> None:
    body = b'{"jsonrpc": "2.0", "method": "s-code/planUpdated", "params": {}}'
    plain = frame(body)
    typed = b"Content-Length: %d\r\n" % len(body) + _TYPE + b"\r\n" + body
    assert len(parse_frames(plain + typed + plain)) == 3
