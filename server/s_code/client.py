"""A small synchronous JSON-RPC client for a ``s-code serve`` child process.

Used by ``s-code demo``, the fuzz and stdout tests, and the benchmarks: it speaks the same
Content-Length framing an editor does, answers server->client requests through a callback, and
keeps every notification it receives.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

ServerRequestHandler = Callable[[str, Any], Any]


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", ""))
        self.error = error
        self.code = error.get("code")
        self.data = error.get("data") or {}
        self.kind = self.data.get("kind")


def frame(payload: dict[str, Any] | bytes) -> bytes:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_frame(stream: Any) -> bytes | None:
    """One framed body from a binary stream, or None at EOF."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        raise ValueError("frame without Content-Length")
    body: bytes = stream.read(length)
    return body


class StdioClient:
    def __init__(
        self,
        argv: list[str] | None = None,
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        on_request: ServerRequestHandler | None = None,
        stderr: Any = None,
    ) -> None:
        argv = argv or [sys.executable, "-m", "s_code", "serve"]
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr if stderr is not None else sys.stderr,
            env=env,
            cwd=cwd,
        )
        self._next_id = 0
        self._lock = threading.Lock()
        self._pending: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.raw_frames: list[bytes] = []
        self.on_request = on_request
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # -- plumbing ------------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self._lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def _send(self, payload: dict[str, Any]) -> None:
        self.send_raw(frame(payload))

    def _read_loop(self) -> None:
        assert self.proc.stdout is not None
        while True:
            try:
                body = read_frame(self.proc.stdout)
            except ValueError:
                body = None
            if body is None:
                for q in list(self._pending.values()):
                    q.put({"error": {"code": -1, "message": "server closed the connection"}})
                return
            self.raw_frames.append(body)
            msg = json.loads(body)
            if "method" in msg and "id" in msg:
                self.server_requests.append(msg)
                self._answer(msg)
            elif "method" in msg:
                self.notifications.append(msg)
            else:
                q = self._pending.pop(msg.get("id"), None)  # type: ignore[arg-type]
                if q is not None:
                    q.put(msg)

    def _answer(self, msg: dict[str, Any]) -> None:
        try:
            result = self.on_request(msg["method"], msg.get("params")) if self.on_request else None
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        except Exception as exc:
            self._send(
                {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32603, "message": str(exc)}}
            )

    # -- API -----------------------------------------------------------------------------------

    def request_raw(
        self, method: str, params: Any = None, timeout: float = 30.0, msg_id: Any = None
    ) -> dict[str, Any]:
        """Send a request and return the whole response message (result or error)."""
        with self._lock:
            self._next_id += 1
            rid = self._next_id if msg_id is None else msg_id
        q: queue.Queue[dict[str, Any]] = queue.Queue()
        self._pending[rid] = q
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            payload["params"] = params
        self._send(payload)
        try:
            return q.get(timeout=timeout)
        except queue.Empty:
            self._pending.pop(rid, None)
            raise TimeoutError(f"no reply to {method} within {timeout}s") from None

    def encode_request(self, method: str, params: Any = None) -> tuple[int, bytes]:
        """A request framed ahead of time, as (id, bytes), for :meth:`request_encoded`: the
        benchmarks time the server, not this client's JSON encoding."""
        with self._lock:
            self._next_id += 1
            rid = self._next_id
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            payload["params"] = params
        return rid, frame(payload)

    def request_encoded(self, encoded: tuple[int, bytes], timeout: float = 30.0) -> Any:
        """Send a request from :meth:`encode_request`; its result, or RpcError."""
        rid, data = encoded
        q: queue.Queue[dict[str, Any]] = queue.Queue()
        self._pending[rid] = q
        self.send_raw(data)
        try:
            msg = q.get(timeout=timeout)
        except queue.Empty:
            self._pending.pop(rid, None)
            raise TimeoutError(f"no reply to request {rid} within {timeout}s") from None
        if "error" in msg:
            raise RpcError(msg["error"])
        return msg.get("result")

    def request(self, method: str, params: Any = None, timeout: float = 30.0) -> Any:
        msg = self.request_raw(method, params, timeout)
        if "error" in msg:
            raise RpcError(msg["error"])
        return msg.get("result")

    def notify(self, method: str, params: Any = None) -> None:
        payload: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            payload["params"] = params
        self._send(payload)

    def initialize(
        self,
        root: str,
        capabilities: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Any:
        from pathlib import Path

        uri = Path(root).as_uri()
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": os.path.basename(root)}],
                "capabilities": capabilities or {},
                "initializationOptions": options or {},
            },
        )
        self.notify("initialized", {})
        return result

    def close(self, timeout: float = 10.0) -> int:
        """shutdown + exit; returns the server's exit code."""
        try:
            if self.proc.poll() is None:
                self.request("shutdown", timeout=timeout)
                self.notify("exit")
        except (OSError, TimeoutError, RpcError):
            pass
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
