"""Benchmarks 8-10 (issue 5): the sandbox's cost and the redactor's speed.

8. ``true`` through the tier-1 spawn (bubblewrap + exec helper + Landlock + seccomp, the argv
   run_command uses) vs bare ``bwrap --ro-bind / / --unshare-all ... true``, interleaved:
   target <= 1.5x.
9. run_command ``true`` over JSON-RPC (projection, snapshot, spawn, report) vs plain ``true`` run by
   the benchmark itself: reported, no target.
10. Redaction of a generated build log in 64 KiB chunks, in ms per MB, against the 20 MB/s
    budget (50 ms per MB): target <= 1.0x.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from harness import Result, median, scode_argv, server_env, started

from s_code.redaction import Redactor, StreamRedactor
from s_code.sandbox import caches, launcher, tiers
from s_code.sandbox.profile import build

# issue 16: with the limits, the supervisor and the wider watch, at most 1.5x bare bubblewrap
SPAWN_TARGET = 1.5
BARE = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all"]
BARE += ["--die-with-parent", "--new-session"]


def _time(argv: list[str], runs: int, env: dict[str, str] | None = None) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, env=env, stdin=subprocess.DEVNULL)
        out.append(time.perf_counter() - t0)
    return out


def run_spawn(scratch: str, *, quick: bool) -> Result:
    runs = 20 if quick else 100
    bwrap = shutil.which("bwrap")
    print(f"[8] true: tier-1 spawn vs bare bwrap vs plain, {runs} runs each")
    if bwrap is None or tiers.current().tier != 1:
        print("  tier 1 is not available here: not measured")
        return Result(
            "sandbox_spawn", "sandboxed true vs bare bwrap (tier 1)", "ms", 0, 0, "", SPAWN_TARGET
        )
    ws = Path(scratch, "sandbox-ws")
    ws.mkdir()
    os.environ.setdefault(caches.CACHE_ENV, os.path.join(scratch, "tool-caches"))
    dep = caches.for_workspace(ws)
    tmp = dep.root / "tmp" / "run-bench"  # where run_command puts a run's private tmp
    tmp.mkdir(parents=True)
    profile = build(1, ws, ws, False, dep, str(tmp))
    helper = launcher.helper()
    argv, _ = tiers.argv_for(1, {"profile": profile}, str(helper), launcher.cache_dir(), ["true"])
    for a in (argv, [bwrap, *BARE, "true"], ["true"]):
        _time(a, 3, profile.env)  # warm-up
    # interleaved, so that a change in the machine's load falls on both alike
    sandboxed, bare, plain = [], [], []
    for _ in range(runs):
        sandboxed += _time(argv, 1, profile.env)
        bare += _time([bwrap, *BARE, "true"], 1)
        plain += _time(["true"], 1)
    ms = 1e3
    print(f"  sandboxed true  median {median(sandboxed) * ms:7.2f} ms")
    print(f"  bare bwrap true median {median(bare) * ms:7.2f} ms")
    print(f"  plain true      median {median(plain) * ms:7.2f} ms")
    result = Result(
        key="sandbox_spawn",
        title="sandboxed true vs bare bwrap true (tier 1)",
        unit="ms",
        scode=median(sandboxed) * ms,
        baseline=median(bare) * ms,
        baseline_name="bwrap true",
        target=SPAWN_TARGET,
        details={"runs": runs, "plain_ms": median(plain) * ms},
    )
    result.report()
    return result


def run_tool(scratch: str, *, quick: bool) -> Result:
    runs = 10 if quick else 30
    root = os.path.join(scratch, "run-command-ws")
    os.makedirs(root)
    env = server_env(os.path.join(scratch, "state-run"))
    print(f"[9] run_command true over JSON-RPC vs plain true, {runs} runs each")
    tool, plain = [], []
    with started(scode_argv(), env, root) as (client, _):
        client.request("s-code/permissionMode/set", {"mode": "workspace"})
        client.request("s-code/runCommand", {"command": ["true"]})
        for _ in range(runs):
            t0 = time.perf_counter()
            client.request("s-code/runCommand", {"command": ["true"]})
            tool.append(time.perf_counter() - t0)
    plain = _time(["true"], runs)
    ms = 1e3
    print(f"  run_command true median {median(tool) * ms:7.2f} ms")
    print(f"  plain true       median {median(plain) * ms:7.2f} ms")
    result = Result(
        key="run_command",
        title="run_command true vs plain true (reported, no target)",
        unit="ms",
        scode=median(tool) * ms,
        baseline=median(plain) * ms,
        baseline_name="true",
        target=float("inf"),
        details={"runs": runs},
    )
    result.report()
    return result


def build_log(lines: int) -> str:
    out = []
    for i in range(lines):
        out.append(
            f"   Compiling crate_{i % 97} v0.{i % 13}.{i % 7} (/home/u/src/proj/crates/c{i % 97})\n"
            f"[{i}/{lines}] gcc -O2 -Wall -Isrc -c src/file_{i}.c -o build/obj/file_{i}.o\n"
            f"npm WARN deprecated pkg-{i}@1.0.{i % 9}: see https://example.com/pkg-{i}\n"
        )
    return "".join(out)


def run_redaction(scratch: str, *, quick: bool) -> Result:
    log = build_log(10_000 if quick else 40_000)
    mb = len(log.encode()) / 1e6
    runs = 3 if quick else 7
    print(f"[10] redaction of a {mb:.1f} MB build log in 64 KiB chunks, {runs} runs")
    redactor = Redactor(["a-known-secret-value-123"])
    times = []
    for _ in range(runs):
        stream = StreamRedactor(redactor)
        t0 = time.perf_counter()
        for i in range(0, len(log), 65536):
            stream.feed(log[i : i + 65536])
        stream.flush()
        times.append(time.perf_counter() - t0)
    per_mb = median(times) / mb * 1e3
    print(f"  {per_mb:.1f} ms per MB = {1e3 / per_mb:.1f} MB/s (budget 20 MB/s = 50 ms per MB)")
    result = Result(
        key="redaction",
        title="redaction ms/MB vs the 20 MB/s budget",
        unit="ms",
        scode=per_mb,
        baseline=50.0,
        baseline_name="20 MB/s",
        target=1.0,
        details={"runs": runs, "mb_per_s": 1e3 / per_mb},
    )
    result.report()
    return result


WATCH_BUDGET_MS = 15.0


def _tree(root: Path, dirs: int = 2000, files_per_dir: int = 10) -> None:
    """20,000 files in 2,000 directories, nested four levels, with repositories in the usual
    and the unusual places (one at the root, one vendored, one in node_modules, one deep)."""
    for d in range(dirs):
        p = root / f"pkg{d // 500}" / f"mod{(d // 50) % 10}" / f"part{d % 50}"
        p.mkdir(parents=True, exist_ok=True)
        for f in range(files_per_dir):
            (p / f"f{f}.py").write_text("x = 1\n")
    for repo in (".", "vendor/lib", "node_modules/dep", "pkg0/mod0/part0/deep"):
        git = root / repo / ".git"
        (git / "hooks").mkdir(parents=True, exist_ok=True)
        (git / "config").write_text("[core]\n\tbare = false\n")
        (git / "HEAD").write_text("ref: refs/heads/main\n")


def run_watch(scratch: str, *, quick: bool) -> Result:
    """11. The check after a command: the directory index refreshed (a stat per folder), every
    git directory found, the watched entries compared with the snapshot from before the run,
    on a 20,000-file tree with 2,000 folders and nothing changed: the cost every command pays."""
    from s_code.commands.projection import scan
    from s_code.sandbox import watch
    from s_code.session.session import Session
    from s_code.tools.builtin import default_registry
    from s_code.workspace.folders import Folders

    runs = 10 if quick else 40
    ws = Path(scratch, "watch-ws")
    ws.mkdir()
    _tree(ws)
    session = Session(folders=Folders.open([(str(ws), None)]), registry=default_registry())
    first = time.perf_counter()
    watched = scan(session, str(ws))  # the session's first command walks the whole tree
    full_walk = time.perf_counter() - first
    before = watch.snapshot(str(ws), watched.gitdirs, watched.extra)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        after = scan(session, str(ws))
        changed = watch.changed_and_restore(str(ws), before, after.gitdirs, after.extra)
        times.append(time.perf_counter() - t0)
        assert changed == [], changed
    ms = 1e3
    found = len(watched.gitdirs.dirs)
    print(f"[11] check after a command, {runs} runs: {len(session.tree(str(ws)).dirs)} folders")
    print(f"  median {median(times) * ms:6.2f} ms  max {max(times) * ms:6.2f} ms")
    print(f"  first walk of the tree (once per session): {full_walk * ms:.1f} ms; {found} git dirs")
    result = Result(
        key="git_dir_check",
        title="post-command git-dir check, 20k files / 2k dirs",
        unit="ms",
        scode=median(times) * ms,
        baseline=WATCH_BUDGET_MS,
        baseline_name="15 ms budget",
        target=1.0,
        details={"runs": runs, "first_walk_ms": full_walk * ms, "git_dirs": found},
    )
    result.report()
    return result
