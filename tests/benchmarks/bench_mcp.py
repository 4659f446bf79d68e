"""Benchmarks 13-14 (issue 17): what running MCP servers through s-code costs.

13. An MCP tool call through s-code (``s-code/tools/call`` over JSON-RPC: dispatch, schema
    validation, the gate, the SDK client, redaction of the result) vs the same call from the SDK
    client straight to the same server: target <= 1.25x.
14. The first built-in tool call (list_files) right after initialize, while an approved MCP
    server takes 10 s to start, vs the same call with no server configured: target <= 1.1x
    (nothing waits for a server).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from harness import Result, median, server_env

from s_code.client import StdioClient
from s_code.protocol import methods

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "mcp" / "notes_server.py"
CALL = {"name": "read_note", "arguments": {"name": "welcome"}}


def _approve(method: str, params: Any) -> Any:
    return {"title": "Approve once"} if method == "window/showMessageRequest" else None


def _workspace(root: Path, slow_start: float | None = None) -> None:
    (root / ".s-code").mkdir(parents=True, exist_ok=True)
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(SAMPLE)]}
    if slow_start:
        entry["env"] = {"NOTES_SLOW_START": str(slow_start)}
    (root / ".s-code" / "mcp.json").write_text(json.dumps({"mcpServers": {"notes": entry}}))


def _start(root: Path, env: dict[str, str]) -> StdioClient:
    client = StdioClient(
        [sys.executable, "-m", "s_code", "serve"], env=env, cwd=str(root), on_request=_approve
    )
    client.initialize(str(root), options={"permissionMode": "workspace"})
    return client


def _running(client: StdioClient) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        entries = client.request(methods.HOST_PROCESSES_LIST, {})["entries"]
        if entries and entries[0]["state"] == "running" and entries[0].get("tools"):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the MCP server did not start: {entries}")


def _direct(runs: int) -> list[float]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def go() -> list[float]:
        params = StdioServerParameters(command=sys.executable, args=[str(SAMPLE)])
        times = []
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            for _ in range(20):
                await s.call_tool(CALL["name"], CALL["arguments"])
            for _ in range(runs):
                t0 = time.perf_counter()
                await s.call_tool(CALL["name"], CALL["arguments"])
                times.append(time.perf_counter() - t0)
        return times

    return asyncio.run(go())


def run_call(scratch: str, *, quick: bool) -> Result:
    runs = 50 if quick else 300
    root = Path(scratch, "mcp-call-ws")
    _workspace(root)
    env = server_env(os.path.join(scratch, "state-mcp-call"))
    env["XDG_CONFIG_HOME"] = os.path.join(scratch, "config-mcp")
    print(f"[13] an MCP tool call through s-code vs the SDK client directly: {runs} calls each")
    client = _start(root, env)
    try:
        client.request(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "notes"})
        _running(client)
        params = {"name": "mcp__notes__read_note", "arguments": CALL["arguments"]}
        for _ in range(20):
            client.request(methods.TOOLS_CALL, params)
        through: list[float] = []
        for _ in range(runs):
            t0 = time.perf_counter()
            client.request(methods.TOOLS_CALL, params)
            through.append(time.perf_counter() - t0)
    finally:
        client.close()
    direct = _direct(runs)
    ms = 1e3
    print(f"  through s-code median {median(through) * ms:6.2f} ms")
    print(f"  SDK directly   median {median(direct) * ms:6.2f} ms")
    result = Result(
        key="mcp_call",
        title="MCP tool call via s-code vs SDK client direct",
        unit="ms",
        scode=median(through) * ms,
        baseline=median(direct) * ms,
        baseline_name="SDK client",
        target=1.25,
        details={"runs": runs},
    )
    result.report()
    return result


def _first_call(root: Path, env: dict[str, str]) -> float:
    client = _start(root, env)
    try:
        t0 = time.perf_counter()
        client.request(methods.LIST_FILES, {})
        return time.perf_counter() - t0
    finally:
        client.close()


def run_slow_start(scratch: str, *, quick: bool) -> Result:
    runs = 3 if quick else 7
    base = Path(scratch, "mcp-slow")
    slow, none = base / "slow", base / "none"
    _workspace(slow, slow_start=10)
    none.mkdir(parents=True)
    env = server_env(os.path.join(scratch, "state-mcp-slow"))
    env["XDG_CONFIG_HOME"] = os.path.join(scratch, "config-mcp-slow")
    print(f"[14] first list_files while an MCP server takes 10 s to start, {runs} runs each")
    client = _start(slow, env)  # approve once: later sessions start it at once
    try:
        client.request(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "notes"})
    finally:
        client.close()
    with_server, without = [], []
    for _ in range(runs):
        with_server.append(_first_call(slow, env))
        without.append(_first_call(none, env))
    ms = 1e3
    print(f"  with a starting server median {median(with_server) * ms:6.2f} ms")
    print(f"  with no server         median {median(without) * ms:6.2f} ms")
    result = Result(
        key="mcp_slow_start",
        title="first tool call, MCP server starting (10 s) vs none",
        unit="ms",
        scode=median(with_server) * ms,
        baseline=median(without) * ms,
        baseline_name="no server",
        target=1.1,
        details={"runs": runs},
    )
    result.report()
    return result
