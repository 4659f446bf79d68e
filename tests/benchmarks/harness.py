"""What the benchmarks share: how servers are started, statistics, and the result record."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from s_code.client import StdioClient

HERE = Path(__file__).resolve().parent
MINIMAL_SERVER = HERE / "minimal_server.py"


def scode_argv() -> list[str]:
    return [sys.executable, "-m", "s_code", "serve"]


def minimal_argv() -> list[str]:
    return [sys.executable, str(MINIMAL_SERVER)]


SERVERS: dict[str, Callable[[], list[str]]] = {"s-code": scode_argv, "minimal": minimal_argv}


def server_env(state_dir: str) -> dict[str, str]:
    """The environment of every server (and rg) child.

    Bytecode is cached under the scratch directory (``PYTHONPYCACHEPREFIX``) rather than not at
    all: with ``PYTHONDONTWRITEBYTECODE=1`` inherited and an editable install, s-code would compile
    its own modules from source on every start while pygls' come precompiled from site-packages,
    which is not how an installed s-code starts. The warm-up runs fill the cache for both sides.
    """
    env = dict(os.environ)
    env["S_CODE_STATE_DIR"] = state_dir
    env["PYTHONPYCACHEPREFIX"] = os.path.join(os.path.dirname(state_dir), "pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("S_CODE_LOG", None)  # the default log level, as an editor would start it
    return env


def initialize_params(root: str) -> dict[str, Any]:
    uri = Path(root).as_uri()
    return {
        "processId": os.getpid(),
        "rootUri": uri,
        "workspaceFolders": [{"uri": uri, "name": os.path.basename(root)}],
        "capabilities": {},
        "initializationOptions": {},
    }


def spawn(argv: list[str], env: dict[str, str], cwd: str) -> StdioClient:
    return StdioClient(argv, env=env, cwd=cwd, stderr=subprocess.DEVNULL)


@contextmanager
def started(argv: list[str], env: dict[str, str], root: str) -> Iterator[tuple[StdioClient, float]]:
    """Spawn a server and initialize it on ``root``; yields the client and spawn->reply seconds."""
    t0 = time.perf_counter()
    client = spawn(argv, env, root)
    try:
        client.request("initialize", initialize_params(root), timeout=60.0)
        elapsed = time.perf_counter() - t0
        client.notify("initialized", {})
        yield client, elapsed
    finally:
        client.close()


def rss_kib(pid: int) -> int:
    """VmRSS of ``pid`` in KiB, from /proc/<pid>/status."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def median(values: list[float]) -> float:
    return statistics.median(values)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


@dataclass
class Result:
    key: str
    title: str
    unit: str
    scode: float
    baseline: float
    baseline_name: str
    target: float
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.scode / self.baseline if self.baseline else float("inf")

    @property
    def passed(self) -> bool:
        return self.ratio <= self.target

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"

    def report(self) -> None:
        print(
            f"  ratio {self.ratio:.2f}x  target <= {self.target:.2f}x  -> {self.verdict}",
            flush=True,
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(ratio=self.ratio, passed=self.passed)
        return data


def timed(call: Callable[[], Any]) -> float:
    """Seconds one call of ``call`` takes."""
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0
