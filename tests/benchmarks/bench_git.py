"""Benchmark 7: git_status through the sidecar (config guard included, over JSON-RPC) vs plain
`git status --porcelain=v2` on a generated 5,000-file repository."""

from __future__ import annotations

import os
import subprocess
import time

from harness import Result, median, scode_argv, server_env, started

from s_code.protocol import methods

FILES = 5000
TARGET = 1.25  # issue 32 (it had drifted to 1.35)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@s-code.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@s-code.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def make_repo(root: str) -> None:
    for i in range(FILES):
        d = os.path.join(root, f"d{i // 100:02d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i:04d}.txt"), "w") as f:
            f.write(f"file {i}\n")
    env = {**os.environ, **GIT_ENV}
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "generated"],
    ):
        subprocess.run(argv, cwd=root, env=env, check=True)
    with open(os.path.join(root, "d00", "f0000.txt"), "a") as f:
        f.write("changed\n")


def run(scratch: str, *, quick: bool) -> Result:
    runs = 10 if quick else 40
    root = os.path.join(scratch, "git-ws")
    os.makedirs(root)
    make_repo(root)
    env = server_env(os.path.join(scratch, "state-git"))
    print(f"[7] git_status vs plain git status on {FILES} files, {runs} runs each")
    plain_env = {**os.environ, **GIT_ENV}
    sidecar, plain = [], []
    with started(scode_argv(), env, root) as (client, _):
        client.request(methods.GIT_STATUS, {})  # warm-up (and the page cache)
        for _ in range(runs):
            t0 = time.perf_counter()
            client.request(methods.GIT_STATUS, {})
            sidecar.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run(
                ["git", "status", "--porcelain=v2", "-z"],
                cwd=root,
                env=plain_env,
                check=True,
                capture_output=True,
            )
            plain.append(time.perf_counter() - t0)
    ms = 1e3
    print(f"  s-code git_status median {median(sidecar) * ms:8.1f} ms")
    print(f"  plain git status  median {median(plain) * ms:8.1f} ms")
    result = Result(
        key="git_status",
        title=f"git_status vs git status ({FILES} files)",
        unit="ms",
        scode=median(sidecar) * ms,
        baseline=median(plain) * ms,
        baseline_name="git status",
        target=TARGET,
        details={"runs": runs},
    )
    result.report()
    return result
