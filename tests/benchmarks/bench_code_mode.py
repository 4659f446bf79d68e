"""Benchmarks 15-16: code mode (issue 19).

15. One ``code_mode`` run doing 10 ``read_file`` calls (returning their revisions) vs the same 10
    ``read_file`` requests sent one after another by the client (target <= 0.8x).
16. The fixed cost of an empty run (``return null``), against a 60 ms budget; also reported: a cold
    run (no warm spare worker: Python and QuickJS started for it), measured in this process.

Between two timed iterations both sides wait ``GAP_S`` untimed (env ``S_CODE_BENCH_GAP_S``): an
agent sends code_mode once per model turn, and the warm spare worker the server starts after each
run is ready by the next one (a run that follows another within ~20 ms waits for the spare).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from harness import Result, median, p95, scode_argv, server_env, started, timed

from s_code.protocol import methods

BATCH_TARGET = 0.8
EMPTY_BUDGET_MS = 60.0
FILES = 10
GAP_S = float(os.environ.get("S_CODE_BENCH_GAP_S", "0.05"))


def make_workspace(root: str) -> list[str]:
    os.makedirs(root, exist_ok=True)
    paths = []
    for i in range(FILES):
        name = f"file_{i}.py"
        with open(os.path.join(root, name), "w") as f:
            f.write("".join(f"line {n:04d} of file {i}: {'x' * 40}\n" for n in range(64)))
        paths.append(name)
    return paths


def run_batch(scratch: str, *, quick: bool) -> Result:
    iterations, warmup = (20, 5) if quick else (100, 10)
    root = os.path.join(scratch, "code-mode-ws")
    paths = make_workspace(root)
    env = server_env(os.path.join(scratch, "state-code-mode"))
    code = (
        f"const paths = {json.dumps(paths)};\n"
        "return paths.map((path) => tools.read_file({ path }).revision);"
    )
    print(
        f"[15] code_mode with {FILES} read_file calls vs {FILES} read_file requests: "
        f"{iterations} iterations each, {GAP_S * 1000:.0f} ms apart"
    )
    with started(scode_argv(), env, root) as (client, _):

        def batch() -> Any:
            return client.request(methods.CODE_MODE_RUN, {"code": code})

        def separate() -> Any:
            return [client.request(methods.READ_FILE, {"path": p})["revision"] for p in paths]

        assert batch()["result"] == separate()
        for _ in range(warmup):
            time.sleep(GAP_S)
            batch()
            time.sleep(GAP_S)
            separate()
        batch_s: list[float] = []
        separate_s: list[float] = []
        for i in range(iterations):
            for which in ((batch, batch_s), (separate, separate_s))[:: 1 if i % 2 else -1]:
                time.sleep(GAP_S)
                which[1].append(timed(which[0]))
    ms = 1e3
    for label, values in (("code_mode", batch_s), ("10 x read_file", separate_s)):
        print(f"  {label:<15} median {median(values) * ms:7.2f} ms  p95 {p95(values) * ms:7.2f} ms")
    result = Result(
        key="code_mode_batch",
        title=f"code_mode {FILES} reads vs {FILES} read_file (median)",
        unit="ms",
        scode=median(batch_s) * ms,
        baseline=median(separate_s) * ms,
        baseline_name=f"{FILES} read_file requests",
        target=BATCH_TARGET,
        details={
            "iterations": iterations,
            "gap_ms": GAP_S * ms,
            "code_mode_p95_ms": p95(batch_s) * ms,
            "separate_p95_ms": p95(separate_s) * ms,
        },
    )
    result.report()
    return result


class _NoTools:
    def check(self, name: str) -> None:
        raise AssertionError(name)

    async def call(self, name: str, arguments: Any) -> Any:
        raise AssertionError(name)

    def redact(self, value: Any) -> Any:
        return value

    def notify(self, method: str, params: dict[str, Any]) -> None:
        pass


def _cold_runs(count: int) -> list[float]:
    """Empty runs without a spare: each starts its worker (no LSP round trip)."""
    from s_code.codemode.runner import run
    from s_code.codemode.workers import Pool

    async def main() -> list[float]:
        pool = Pool(warm=False)
        times = []
        for _ in range(count):
            t0 = time.perf_counter()
            await run(pool, _NoTools(), "return null")
            times.append(time.perf_counter() - t0)
        pool.close()
        return times

    return asyncio.run(main())


def run_empty(scratch: str, *, quick: bool) -> Result:
    iterations, warmup = (20, 5) if quick else (100, 10)
    root = os.path.join(scratch, "code-mode-ws")
    make_workspace(root)
    env = server_env(os.path.join(scratch, "state-code-mode-empty"))
    print(f"[16] an empty code_mode run: {iterations} iterations, {GAP_S * 1000:.0f} ms apart")
    with started(scode_argv(), env, root) as (client, _):

        def empty() -> Any:
            return client.request(methods.CODE_MODE_RUN, {"code": "return null"})

        assert empty()["result"] is None
        for _ in range(warmup):
            time.sleep(GAP_S)
            empty()
        times = []
        for _ in range(iterations):
            time.sleep(GAP_S)
            times.append(timed(empty))
        cheap = []
        for _ in range(iterations):
            cheap.append(timed(lambda: client.request(methods.PERMISSION_MODE_GET, {})))
    cold = _cold_runs(max(5, iterations // 5))
    ms = 1e3
    print(
        f"  warm (spare ready) median {median(times) * ms:7.2f} ms  p95 {p95(times) * ms:7.2f} ms"
    )
    print(f"  cold (no spare)    median {median(cold) * ms:7.2f} ms  p95 {p95(cold) * ms:7.2f} ms")
    print(f"  permissionMode/get median {median(cheap) * ms:7.2f} ms")
    result = Result(
        key="code_mode_empty",
        title="code_mode empty run, fixed cost (median)",
        unit="ms",
        scode=median(times) * ms,
        baseline=EMPTY_BUDGET_MS,
        baseline_name="60 ms budget",
        target=1.0,
        details={
            "iterations": iterations,
            "p95_ms": p95(times) * ms,
            "cold_median_ms": median(cold) * ms,
            "cold_p95_ms": p95(cold) * ms,
            "permission_mode_get_ms": median(cheap) * ms,
        },
    )
    result.report()
    return result
