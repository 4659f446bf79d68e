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


def _measure(scratch: str, quick: bool, attached: bool) -> tuple[list[float], list[float]]:
    """Both sides' read_file times: the MCP face (attached to the LSP server's session, or a
    standalone one beside it) and the LSP server, interleaved."""
    iterations, warmup = (300, 50) if quick else (2000, 200)
    name = "mcp-attached" if attached else "mcp-face"
    root = os.path.join(scratch, f"{name}-ws")
    make_workspace(root)
    env = server_env(os.path.join(scratch, f"state-{name}"))
    env["XDG_RUNTIME_DIR"] = os.path.join(scratch, f"run-{name}")
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    print(f"  {iterations} calls each")
    with started([sys.executable, "-m", "s_code", "serve"], env, root) as (lsp, _):
        if attached:  # the sidecar listens for agents once its session is open
            deadline = time.monotonic() + 30
            run_dir = os.path.join(env["XDG_RUNTIME_DIR"], "s-code")
            while not (
                os.path.isdir(run_dir) and any(n.endswith(".token") for n in os.listdir(run_dir))
            ):
                assert time.monotonic() < deadline, "the sidecar never listened for agents"
                time.sleep(0.05)
        mcp = LineClient(_mcp_argv(root, *(() if attached else ("--standalone",))), env, root)
        try:
            return _compare(mcp, lsp, iterations, warmup)
        finally:
            mcp.close()


def _result(key: str, title: str, baseline: str, target: float, times: Any) -> Result:
    mcp_s, lsp_s = times
    result = Result(
        key=key,
        title=title,
        unit="us",
        scode=median(mcp_s) * 1e6,
        baseline=median(lsp_s) * 1e6,
        baseline_name=baseline,
        target=target,
    )
    result.report()
    return result


def run_standalone(scratch: str, *, quick: bool) -> Result:
    print("[19] read_file over s-code mcp (stdio) vs over s-code serve")
    return _result(
        "mcp_face_read_file",
        "read_file over the MCP face vs the LSP face",
        "s-code/readFile over LSP",
        TARGET_STANDALONE,
        _measure(scratch, quick, attached=False),
    )


def run_attached(scratch: str, *, quick: bool) -> Result:
    print("[20] read_file by an attached agent vs the editor's own")
    return _result(
        "mcp_face_attached_read_file",
        "read_file by an attached agent vs the editor",
        "s-code/readFile over LSP, same session",
        TARGET_ATTACHED,
        _measure(scratch, quick, attached=True),
    )
