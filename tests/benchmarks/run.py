"""s-code benchmarks: measurements against targets, not tests (the run exits 0 either way).

    .venv/bin/python tests/benchmarks/run.py [--quick] [--json PATH] [--only NAME ...]

1. read_file of a 4 KiB file vs ``s-code/permissionMode/get`` on one connection (target <= 1.35x)
1b. read_file through ``s-code/tools/call`` vs its typed method (target <= 1.05x)
2. cold start to the initialize reply vs a minimal pygls server (target <= 1.15x)
3. idle RSS after initialize vs the minimal server (target <= 1.3x)
4. search_text over a 20,000-file tree vs rg run directly with the same argv (target <= 1.3x)
5-7. apply_patch batches and single edits, git_status (see bench_edits.py, bench_git.py)
8-10. the sandbox's spawn cost, run_command, and redaction speed (see bench_sandbox.py)
11. the check after every command on a 20,000-file tree (see bench_sandbox.py run_watch)
12. tool_search over 1,000 registered MCP tools, median against a 5 ms budget (bench_tool_search.py)
15. code_mode with 10 read_file calls vs 10 read_file requests (target <= 0.8x; bench_code_mode.py)
16. an empty code_mode run's fixed cost against a 60 ms budget (bench_code_mode.py)
17. a no-op PreToolUse hook's overhead on read_file vs one spawn + 1 ms (bench_hosts.py)
18. terminal output through redaction and streaming vs 20 MB/s (bench_hosts.py)
19. read_file over the MCP face (stdio) vs the LSP face (target <= 1.15x; bench_mcp_face.py)
20. read_file by an agent attached to the editor's session vs the editor's (target <= 1.3x)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_code_mode
import bench_edits
import bench_git
import bench_hosts
import bench_latency
import bench_mcp
import bench_mcp_face
import bench_process
import bench_sandbox
import bench_search
import bench_tool_search
from harness import Result

BENCHMARKS: dict[str, Callable[..., Result]] = {
    "latency": bench_latency.run,
    "dispatch": bench_latency.run_dispatch,
    "cold-start": bench_process.run_cold_start,
    "rss": bench_process.run_idle_rss,
    "search": bench_search.run,
    "edits": bench_edits.run_batch,
    "edit-latency": bench_edits.run_single,
    "git": bench_git.run,
    "sandbox": bench_sandbox.run_spawn,
    "run-command": bench_sandbox.run_tool,
    "redaction": bench_sandbox.run_redaction,
    "git-dir-check": bench_sandbox.run_watch,
    "mcp-call": bench_mcp.run_call,
    "mcp-slow-start": bench_mcp.run_slow_start,
    "tool-search": bench_tool_search.run,
    "code-mode": bench_code_mode.run_batch,
    "code-mode-empty": bench_code_mode.run_empty,
    "hook-overhead": bench_hosts.run_hook,
    "terminal-throughput": bench_hosts.run_terminal,
    "mcp-face": bench_mcp_face.run_standalone,
    "mcp-face-attached": bench_mcp_face.run_attached,
}


def summary(results: list[Result]) -> str:
    header = f"{'benchmark':<48} {'s-code':>10} {'baseline':>10} {'unit':<4} {'ratio':>6} "
    header += f"{'target':>7}  result"
    lines = [header, "-" * len(header)]
    for r in results:
        lines.append(
            f"{r.title:<48} {r.scode:>10.1f} {r.baseline:>10.1f} {r.unit:<4} {r.ratio:>5.2f}x "
            f"{'<=' + format(r.target, '.2f') + 'x':>7}  {r.verdict}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="few iterations: a smoke run")
    parser.add_argument("--json", metavar="PATH", help="also write the numbers to PATH")
    parser.add_argument(
        "--only", action="append", choices=list(BENCHMARKS), help="run only these (repeatable)"
    )
    args = parser.parse_args(argv)
    chosen = args.only or list(BENCHMARKS)
    print(
        f"s-code benchmarks{' (quick)' if args.quick else ''}: python {platform.python_version()}"
        f" on {os.cpu_count()} CPUs\n",
        flush=True,
    )
    results: list[Result] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="s-code-bench-") as scratch:
        for name in chosen:
            results.append(BENCHMARKS[name](scratch, quick=args.quick))
            print(flush=True)
    elapsed = time.perf_counter() - started
    print(summary(results))
    print(f"\n{sum(r.passed for r in results)}/{len(results)} within target; {elapsed:.0f}s total")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "quick": args.quick,
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "elapsed_s": elapsed,
                    "results": [r.to_json() for r in results],
                },
                f,
                indent=2,
            )
            f.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
