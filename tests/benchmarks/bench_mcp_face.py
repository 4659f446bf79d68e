"""Benchmarks 19-20: read_file through the MCP face against the same call on the LSP face.

19. ``s-code mcp`` standalone over stdio vs ``s-code serve`` (``s-code/readFile``), same build,
    same workspace, calls interleaved (target <= 1.15x, issue 30).
20. An attached agent (agent -> ``s-code mcp`` -> the agent link -> the editor's session) vs the
    editor's own ``s-code/readFile`` on that session (target <= 1.3x, issue 30).

The MCP side is driven by a minimal newline JSON-RPC client (no SDK client, whose own
validation would be measured too), as the LSP side is by ``StdioClient``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from bench_latency import FILE_NAME, make_workspace
from harness import Result, median, p95, server_env, started, timed

from s_code.protocol import methods

TARGET_STANDALONE = 1.15
TARGET_ATTACHED = 1.3


class LineClient:
    """MCP over stdio: one request at a time, newline-delimited JSON."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str) -> None:
        self.proc = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        )
        self.notify("notifications/initialized")

    def notify(self, method: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                assert "result" in reply, reply
                return reply["result"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _compare(
    mcp: LineClient, lsp: Any, iterations: int, warmup: int
) -> tuple[list[float], list[float]]:
    call = {"name": "read_file", "arguments": {"path": FILE_NAME}}

    def over_mcp() -> Any:
        return mcp.request("tools/call", call)

    def over_lsp() -> Any:
        return lsp.request(methods.READ_FILE, {"path": FILE_NAME})

    assert over_mcp()["structuredContent"]["revision"] == over_lsp()["revision"]
    for _ in range(warmup):
        over_mcp()
        over_lsp()
    mcp_s: list[float] = []
    lsp_s: list[float] = []
    for i in range(iterations):  # interleaved, alternating which goes first
        if i % 2:
            mcp_s.append(timed(over_mcp))
            lsp_s.append(timed(over_lsp))
        else:
            lsp_s.append(timed(over_lsp))
            mcp_s.append(timed(over_mcp))
    us = 1e6
    for label, values in (("over MCP", mcp_s), ("over LSP", lsp_s)):
        print(f"  {label:<9} median {median(values) * us:8.1f} us  p95 {p95(values) * us:8.1f} us")
    return mcp_s, lsp_s


def _mcp_argv(root: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "s_code", "mcp", "--workspace", root, *extra]


def run_standalone(scratch: str, *, quick: bool) -> Result:
    iterations, warmup = (300, 50) if quick else (2000, 200)
    root = os.path.join(scratch, "mcp-face-ws")
    make_workspace(root)
    env = server_env(os.path.join(scratch, "state-mcp-face"))
    env["XDG_RUNTIME_DIR"] = os.path.join(scratch, "run-mcp-face")
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    print(f"[19] read_file over s-code mcp (stdio) vs over s-code serve: {iterations} each")
    mcp = LineClient(_mcp_argv(root, "--standalone"), env, root)
    try:
        with started([sys.executable, "-m", "s_code", "serve"], env, root) as (lsp, _):
            mcp_s, lsp_s = _compare(mcp, lsp, iterations, warmup)
    finally:
        mcp.close()
    result = Result(
        key="mcp_face_read_file",
        title="read_file over the MCP face vs the LSP face",
        unit="us",
        scode=median(mcp_s) * 1e6,
        baseline=median(lsp_s) * 1e6,
        baseline_name="s-code/readFile over LSP",
        target=TARGET_STANDALONE,
    )
    result.report()
    return result


def run_attached(scratch: str, *, quick: bool) -> Result:
    iterations, warmup = (300, 50) if quick else (2000, 200)
    root = os.path.join(scratch, "mcp-attached-ws")
    make_workspace(root)
    env = server_env(os.path.join(scratch, "state-mcp-attached"))
    env["XDG_RUNTIME_DIR"] = os.path.join(scratch, "run-mcp-attached")
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    print(f"[20] read_file by an attached agent vs the editor's own: {iterations} each")
    with started([sys.executable, "-m", "s_code", "serve"], env, root) as (lsp, _):
        deadline = time.monotonic() + 30
        run_dir = os.path.join(env["XDG_RUNTIME_DIR"], "s-code")
        while not (
            os.path.isdir(run_dir) and any(n.endswith(".token") for n in os.listdir(run_dir))
        ):
            assert time.monotonic() < deadline, "the editor's sidecar never listened for agents"
            time.sleep(0.05)
        mcp = LineClient(_mcp_argv(root), env, root)
        try:
            mcp_s, lsp_s = _compare(mcp, lsp, iterations, warmup)
        finally:
            mcp.close()
    result = Result(
        key="mcp_face_attached_read_file",
        title="read_file by an attached agent vs the editor",
        unit="us",
        scode=median(mcp_s) * 1e6,
        baseline=median(lsp_s) * 1e6,
        baseline_name="s-code/readFile over LSP, same session",
        target=TARGET_ATTACHED,
    )
    result.report()
    return result
