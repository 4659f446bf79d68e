"""Benchmarks 17-18 (issue 18): what hooks and background terminals cost.

17. The overhead of a no-op ``PreToolUse`` hook on ``read_file`` (the same call with and without a
    trusted hook whose command is ``/bin/true``), against one host-process spawn plus 1 ms: target
    <= 1.0x. The spawn is measured in the same run, interleaved with both servers' calls, the
    way s-code starts every host process (``/bin/true`` under the exec helper's supervisor,
    ``--host --reap``, run and waited for from Python); a bare ``/bin/true`` spawn is printed
    beside it.
18. Terminal output through redaction, the buffer and ``s-code/terminalOutput`` to the client:
    the time per MB of a program printing ordinary log lines as fast as it can, from
    ``terminal_start`` to the last byte streamed, against 50 ms per MB (20 MB/s): target <= 1.0x.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from harness import Result, median, server_env, timed

from s_code.client import StdioClient
from s_code.protocol import methods


def _approve(method: str, params: Any) -> Any:
    return {"title": "Approve once"} if method == "window/showMessageRequest" else None


def _start(root: Path, env: dict[str, str]) -> StdioClient:
    client = StdioClient(
        [sys.executable, "-m", "s_code", "serve"], env=env, cwd=str(root), on_request=_approve
    )
    client.initialize(str(root), options={"permissionMode": "workspace"})
    return client


def run_hook(scratch: str, *, quick: bool) -> Result:
    runs = 30 if quick else 200
    plain, hooked = Path(scratch, "hook-plain"), Path(scratch, "hook-ws")
    for root in (plain, hooked):
        root.mkdir(parents=True, exist_ok=True)
        (root / "a.txt").write_text("x" * 4096)
    (hooked / ".s-code").mkdir(exist_ok=True)
    (hooked / ".s-code" / "hooks.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [{"matcher": "read_file", "hooks": [{"argv": ["/bin/true"]}]}]
                }
            }
        )
    )
    env = server_env(os.path.join(scratch, "state-hook"))
    env["XDG_CONFIG_HOME"] = os.path.join(scratch, "config-hook")
    print(f"[17] read_file with a no-op PreToolUse hook vs without, and one spawn: {runs} each")
    from s_code.hostproc.spawn import host_argv

    supervised = host_argv(["/bin/true"], scratch)
    plain_client, hooked_client = _start(plain, env), _start(hooked, env)
    try:
        hooked_client.request(
            methods.HOST_PROCESSES_APPROVE, {"kind": "hook", "name": "PreToolUse.0.0"}
        )
        params = {"path": "a.txt"}
        calls = {
            "without": lambda: plain_client.request(methods.READ_FILE, params),
            "with_hook": lambda: hooked_client.request(methods.READ_FILE, params),
            "spawn": lambda: subprocess.run(supervised, check=True),
            "bare": lambda: subprocess.run(["/bin/true"], check=True),
        }
        for call in calls.values():  # warm up
            for _ in range(10):
                call()
        times: dict[str, list[float]] = {name: [] for name in calls}
        order = list(calls)
        for i in range(runs):  # interleaved, each in turn first: drift hits every side alike
            for name in order[i % len(order) :] + order[: i % len(order)]:
                times[name].append(timed(calls[name]))
    finally:
        plain_client.close()
        hooked_client.close()
    without, with_hook, spawn, bare = times.values()
    ms = 1e3
    overhead = (median(with_hook) - median(without)) * ms
    budget = median(spawn) * ms + 1.0
    print(f"  read_file without hooks median {median(without) * ms:6.2f} ms")
    print(f"  read_file with a no-op hook    {median(with_hook) * ms:6.2f} ms")
    print(f"  overhead {overhead:6.2f} ms; one supervised spawn {median(spawn) * ms:6.2f} ms")
    print(f"  (a bare spawn of /bin/true: {median(bare) * ms:6.2f} ms)")
    result = Result(
        key="hook_overhead",
        title="no-op PreToolUse hook overhead vs spawn + 1 ms",
        unit="ms",
        scode=overhead,
        baseline=budget,
        baseline_name="one spawn + 1 ms",
        target=1.0,
        details={"runs": runs, "spawn_ms": median(spawn) * ms, "bare_spawn_ms": median(bare) * ms},
    )
    result.report()
    return result


# the build log of benchmark 10 (bench_sandbox.build_log): 3,000 lines made once, then written
# again and again (the program spends its time in write(2), not in formatting: s-code is measured)
LOG = (
    "import sys\n"
    "n = int(sys.argv[1])\n"
    "text = ''.join(\n"
    "    f'   Compiling crate_{j % 97} v0.{j % 13}.{j % 7} '\n"
    "    f'(/home/u/src/proj/crates/c{j % 97})\\n'\n"
    "    f'[{j}/40000] gcc -O2 -Wall -Isrc -c src/file_{j}.c -o build/obj/file_{j}.o\\n'\n"
    "    f'npm WARN deprecated pkg-{j}@1.0.{j % 9}: see https://example.com/pkg-{j}\\n'\n"
    "    for j in range(1000)).encode()\n"
    "out = sys.stdout.buffer\n"
    "for _ in range(n // len(text) + 1):\n"
    "    out.write(text)\n"
    "out.flush()\n"
)


def _cpu_s(pid: int) -> float:
    """User and system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_terminal(scratch: str, *, quick: bool) -> Result:
    size = (20 if quick else 100) * 1_000_000
    root = Path(scratch, "term-ws")
    root.mkdir(parents=True, exist_ok=True)
    env = server_env(os.path.join(scratch, "state-term"))
    env["XDG_CONFIG_HOME"] = os.path.join(scratch, "config-term")
    print(f"[18] terminal output through redaction and streaming: {size / 1e6:.0f} MB of log lines")
    client = _start(root, env)
    try:
        cpu0 = _cpu_s(client.proc.pid)
        t0 = time.perf_counter()
        start = {"command": [sys.executable, "-c", LOG, str(size)]}
        tid = client.request(methods.TOOLS_CALL, {"name": "terminal_start", "arguments": start})[
            "terminal_id"
        ]
        waited = client.request(
            methods.TOOLS_CALL,
            {"name": "terminal_wait", "arguments": {"terminal_id": tid, "timeout_ms": 600000}},
            timeout=700,
        )
        total = waited["cursor"]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            got = sum(
                len(n["params"]["text"].encode())
                for n in list(client.notifications)
                if n.get("method") == methods.TERMINAL_OUTPUT
            )
            if got >= total:
                break
            time.sleep(0.01)
        elapsed = time.perf_counter() - t0
        cpu = _cpu_s(client.proc.pid) - cpu0
    finally:
        client.close()
    mb = total / 1e6
    print(
        f"  {mb:.1f} MB in {elapsed:.2f} s: {mb / elapsed:.1f} MB/s (streamed: {got / 1e6:.1f} MB)"
    )
    print(f"  the sidecar's CPU time: {cpu * 1e3 / mb:.1f} ms per MB (all its threads)")
    result = Result(
        key="terminal_throughput",
        title="terminal output, ms per MB vs 20 MB/s",
        unit="ms",
        scode=elapsed * 1e3 / mb,
        baseline=50.0,
        baseline_name="20 MB/s",
        target=1.0,
        details={
            "bytes": total,
            "seconds": elapsed,
            "mb_per_s": mb / elapsed,
            "sidecar_cpu_ms_per_mb": cpu * 1e3 / mb,
        },
    )
    result.report()
    return result
