"""Benchmark 1: read_file of a 4 KiB file vs the cheapest s-code request, one connection."""

from __future__ import annotations

import os
from typing import Any

from harness import Result, median, p95, scode_argv, server_env, started, timed

from s_code.protocol import methods

TARGET = 1.35
FILE_NAME = "four_kib.txt"
FILE_BYTES = 4096


def make_workspace(root: str) -> None:
    os.makedirs(root, exist_ok=True)
    line = "x" * 63 + "\n"  # 64 lines of 64 bytes
    data = "".join(f"{i:04d}{line[4:]}" for i in range(FILE_BYTES // len(line)))
    assert len(data.encode()) == FILE_BYTES
    with open(os.path.join(root, FILE_NAME), "w") as f:
        f.write(data)


def run(scratch: str, *, quick: bool) -> Result:
    iterations, warmup = (300, 50) if quick else (2000, 200)
    root = os.path.join(scratch, "latency-ws")
    make_workspace(root)
    env = server_env(os.path.join(scratch, "state-latency"))
    print(f"[1] read_file (4 KiB) vs {methods.PERMISSION_MODE_GET}: {iterations} iterations each")
    with started(scode_argv(), env, root) as (client, _):

        def read() -> Any:
            return client.request(methods.READ_FILE, {"path": FILE_NAME})

        def cheap() -> Any:
            return client.request(methods.PERMISSION_MODE_GET, {})

        reply = read()
        assert reply["line_count"] == FILE_BYTES // 64, reply
        assert cheap()["mode"] == "manual"
        for _ in range(warmup):
            read()
            cheap()
        read_s: list[float] = []
        cheap_s: list[float] = []
        for i in range(iterations):  # interleaved, alternating which goes first
            if i % 2:
                read_s.append(timed(read))
                cheap_s.append(timed(cheap))
            else:
                cheap_s.append(timed(cheap))
                read_s.append(timed(read))
    us = 1e6
    for label, values in (("read_file", read_s), ("permissionMode/get", cheap_s)):
        print(f"  {label:<18} median {median(values) * us:8.1f} us  p95 {p95(values) * us:8.1f} us")
    result = Result(
        key="read_file_latency",
        title="read_file 4 KiB vs permissionMode/get (median)",
        unit="us",
        scode=median(read_s) * us,
        baseline=median(cheap_s) * us,
        baseline_name="permissionMode/get",
        target=TARGET,
        details={
            "iterations": iterations,
            "warmup": warmup,
            "read_file_p95_us": p95(read_s) * us,
            "permission_mode_get_p95_us": p95(cheap_s) * us,
        },
    )
    result.report()
    return result


DISPATCH_TARGET = 1.05


def run_dispatch(scratch: str, *, quick: bool) -> Result:
    """read_file through ``s-code/tools/call`` vs its typed method: both take the one dispatch,
    so the difference is tools/call's envelope (its params checked, ``arguments`` unwrapped)."""
    iterations, warmup = (300, 50) if quick else (2000, 200)
    root = os.path.join(scratch, "latency-ws")
    make_workspace(root)
    env = server_env(os.path.join(scratch, "state-dispatch"))
    print(f"[1b] read_file through {methods.TOOLS_CALL} vs {methods.READ_FILE}: {iterations} each")
    with started(scode_argv(), env, root) as (client, _):

        def typed() -> Any:
            return client.request(methods.READ_FILE, {"path": FILE_NAME})

        def generic() -> Any:
            return client.request(
                methods.TOOLS_CALL, {"name": "read_file", "arguments": {"path": FILE_NAME}}
            )

        assert typed() == generic()
        for _ in range(warmup):
            typed()
            generic()
        typed_s: list[float] = []
        generic_s: list[float] = []
        for i in range(iterations):
            if i % 2:
                typed_s.append(timed(typed))
                generic_s.append(timed(generic))
            else:
                generic_s.append(timed(generic))
                typed_s.append(timed(typed))
    us = 1e6
    for label, values in (("tools/call", generic_s), ("s-code/readFile", typed_s)):
        print(f"  {label:<18} median {median(values) * us:8.1f} us  p95 {p95(values) * us:8.1f} us")
    result = Result(
        key="dispatch_overhead",
        title="tools/call read_file vs typed method (median)",
        unit="us",
        scode=median(generic_s) * us,
        baseline=median(typed_s) * us,
        baseline_name="s-code/readFile",
        target=DISPATCH_TARGET,
        details={"iterations": iterations, "warmup": warmup},
    )
    result.report()
    return result
