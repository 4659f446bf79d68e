"""Driving ``s-code serve`` over its socket faces: a child server whose stderr is kept, and a raw
JSON-RPC connection over TCP or a unix socket that records every frame it receives."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from s_code.client import frame, read_frame

TIMEOUT = 20.0


def child_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The test's environment for a server: private state and runtime dirs, no token given."""
    env = dict(os.environ)
    env["S_CODE_STATE_DIR"] = str(tmp_path / "state")
    env["XDG_RUNTIME_DIR"] = str(tmp_path / "run")
    env.pop("S_CODE_LOG", None)
    env.pop("S_CODE_TOKEN", None)
    env.update(extra)
    return env


class ServedChild:
    """A server process; its stderr lines are collected as they come."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.lines: list[str] = []
        self.stdout = b""
        self.ended = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for raw in iter(self.proc.stderr.readline, b""):
            self.lines.append(raw.decode("utf-8", "replace"))
        self.ended.set()

    def stderr(self) -> str:
        return "".join(self.lines)

    def wait_for(self, pattern: str) -> re.Match[str]:
        """The first stderr line matching ``pattern``, waiting for it."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if match := re.search(pattern, line):
                    return match
            if self.ended.is_set():
                raise AssertionError(f"server ended without {pattern!r}; stderr: {self.lines!r}")
            time.sleep(0.01)
        raise AssertionError(f"no {pattern!r} within {TIMEOUT}s; stderr: {self.lines!r}")

    def port(self) -> int:
        return int(self.wait_for(r"listening on \('127\.0\.0\.1', (\d+)\)").group(1))

    def finish(self) -> str:
        """Stop the server (if it has not ended) and return all its stderr; what it wrote to
        stdout is kept in ``stdout``."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)
        self.ended.wait(TIMEOUT)
        if self.proc.stdout is not None and not self.proc.stdout.closed:
            self.stdout = self.proc.stdout.read()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return self.stderr()

    def __enter__(self) -> ServedChild:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.finish()


def serve_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "s_code", "serve", *args]


class Conn:
    """One client connection; ``frames`` holds every body received, in order."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        sock.settimeout(TIMEOUT)
        self.rfile = sock.makefile("rb")
        self.frames: list[bytes] = []
        self.notifications: list[dict[str, Any]] = []

    @classmethod
    def tcp(cls, port: int) -> Conn:
        return cls(socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT))

    @classmethod
    def unix(cls, path: str) -> Conn:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
        except OSError:
            sock.close()
            raise
        return cls(sock)

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()

    def send(self, payload: dict[str, Any] | bytes) -> None:
        self.sock.sendall(frame(payload))

    def next_frame(self) -> bytes | None:
        """The next body, or None once the server has closed the connection."""
        try:
            body = read_frame(self.rfile)
        except ConnectionResetError:
            return None
        if body is not None:
            self.frames.append(body)
        return body

    def reply_to(self, msg_id: int) -> dict[str, Any] | None:
        """Read frames until the response to ``msg_id`` (keeping notifications); None if the
        connection closed first."""
        while (body := self.next_frame()) is not None:
            msg = json.loads(body)
            if "method" in msg:
                assert "id" not in msg, f"unexpected server request {msg!r}"
                self.notifications.append(msg)
                continue
            assert msg.get("id") == msg_id, msg
            return dict(msg)
        return None

    def request(self, msg_id: int, method: str, params: Any) -> dict[str, Any] | None:
        """The reply; None if the server closed the connection (before or after the send)."""
        try:
            self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        except (BrokenPipeError, ConnectionResetError):
            return None
        return self.reply_to(msg_id)

    def initialize(self, root: Path, **options: Any) -> dict[str, Any] | None:
        """``initialize`` on ``root`` (with ``initializationOptions`` if given), then
        ``initialized``; the reply, or None if the server closed the connection."""
        params: dict[str, Any] = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        if options:
            params["initializationOptions"] = options
        reply = self.request(1, "initialize", params)
        if reply is not None:
            self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return reply
