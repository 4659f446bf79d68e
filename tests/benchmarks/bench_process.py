"""Benchmarks 2 and 3: cold start to the initialize reply, and idle RSS, s-code vs minimal pygls."""

from __future__ import annotations

import os
import time

from harness import SERVERS, Result, median, rss_kib, server_env, started

from s_code.protocol import methods

START_TARGET = 1.12
RSS_TARGET = 1.2  # issue 32 (it had drifted to 1.3)


def make_workspace(root: str) -> None:
    """A small but real workspace folder: a few sources, a README, a .gitignore."""
    os.makedirs(os.path.join(root, "src", "pkg"), exist_ok=True)
    files = {
        ".gitignore": "build/\n*.pyc\n",
        "README.md": "# bench workspace\n\nNothing to see.\n",
        "src/pkg/__init__.py": "",
        "src/pkg/core.py": "def add(a, b):\n    return a + b\n" * 20,
        "src/main.py": "from pkg.core import add\n\nprint(add(1, 2))\n",
    }
    for rel, text in files.items():
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)


def _order(i: int) -> list[str]:
    names = list(SERVERS)
    return names if i % 2 == 0 else names[::-1]


def run_cold_start(scratch: str, *, quick: bool) -> Result:
    runs = 3 if quick else 15
    root = os.path.join(scratch, "process-ws")
    make_workspace(root)
    env = server_env(os.path.join(scratch, "state-process"))
    print(f"[2] cold start, spawn -> initialize reply: {runs} interleaved runs each")
    for name in _order(0):  # warm the page cache and the .pyc files; not counted
        with started(SERVERS[name](), env, root):
            pass
    times: dict[str, list[float]] = {name: [] for name in SERVERS}
    for i in range(runs):
        for name in _order(i):
            with started(SERVERS[name](), env, root) as (_, elapsed):
                times[name].append(elapsed)
    ms = 1e3
    for name, values in times.items():
        print(
            f"  {name:8s} median {median(values) * ms:7.1f} ms"
            f"  min {min(values) * ms:7.1f} ms  max {max(values) * ms:7.1f} ms"
        )
    result = Result(
        key="cold_start",
        title="cold start to initialize reply (median)",
        unit="ms",
        scode=median(times["s-code"]) * ms,
        baseline=median(times["minimal"]) * ms,
        baseline_name="minimal pygls",
        target=START_TARGET,
        details={"runs": runs, "samples_ms": {k: [v * ms for v in vs] for k, vs in times.items()}},
    )
    result.report()
    return result


def run_idle_rss(scratch: str, *, quick: bool) -> Result:
    runs, settle = (2, 0.2) if quick else (5, 0.5)
    root = os.path.join(scratch, "process-ws")
    make_workspace(root)
    env = server_env(os.path.join(scratch, "state-process"))
    print(f"[3] idle RSS after initialize + one request + {settle}s settle: {runs} runs each")
    rss: dict[str, list[float]] = {name: [] for name in SERVERS}
    for i in range(runs):
        for name in _order(i):
            with started(SERVERS[name](), env, root) as (client, _):
                # The same request to both; the minimal server answers "method not found".
                reply = client.request_raw(methods.PERMISSION_MODE_GET, {})
                assert ("result" in reply) == (name == "s-code"), reply
                time.sleep(settle)
                rss[name].append(rss_kib(client.proc.pid) / 1024)
    for name, values in rss.items():
        samples = ", ".join(f"{v:.1f}" for v in values)
        print(f"  {name:8s} median {median(values):6.1f} MiB  ({samples})")
    result = Result(
        key="idle_rss",
        title="idle RSS after initialize (median)",
        unit="MiB",
        scode=median(rss["s-code"]),
        baseline=median(rss["minimal"]),
        baseline_name="minimal pygls",
        target=RSS_TARGET,
        details={"runs": runs, "settle_s": settle, "samples_mib": rss},
    )
    result.report()
    return result
