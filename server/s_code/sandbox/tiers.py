"""Which sandbox tier this machine gives, decided by a self-test that observes results.

Each candidate tier runs a probe through the real launch path: it signals a host process, writes
outside its workspace, connects to a loopback listener the sidecar opened, and appends to the probe
workspace's ``.git/config``. The sidecar then looks: is the host process alive, did the outside file
appear, did the listener get a connection, did ``.git/config`` change (tier 1 must prevent it;
tier 2 must detect and undo it). Tier 1 is bubblewrap + Landlock + seccomp; tier 2 Landlock +
seccomp; tier 3 neither. The result is cached per boot (keyed by
``/proc/sys/kernel/random/boot_id``) and per launcher build.

``S_CODE_SANDBOX_DISABLE`` (a comma list of ``bwrap``, ``landlock``, ``seccomp``) switches layers
off, for tests and diagnosis; the probe still decides what that leaves.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from s_code.sandbox import launcher, seccomp_filter, watch
from s_code.sandbox.caches import Caches
from s_code.sandbox.profile import (
    LABELS,
    build,
    bwrap_args,
    bwrap_binary,
    helper_args,
    remove_placeholders,
)

log = logging.getLogger(__name__)
DISABLE_ENV = "S_CODE_SANDBOX_DISABLE"


@dataclass(frozen=True)
class TierReport:
    tier: int
    landlock_abi: int
    bwrap: str | None
    reasons: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return LABELS[self.tier]

    def to_wire(self) -> dict[str, Any]:
        return {**asdict(self), "label": self.label}


def disabled() -> set[str]:
    return {p.strip() for p in os.environ.get(DISABLE_ENV, "").split(",") if p.strip()}


def landlock_abi() -> int:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(abi), 0)


_PROBE = """
import os, signal, socket, sys
out, port, host = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    os.kill(host, signal.SIGTERM)
except OSError:
    pass
try:
    open(out + "/escaped", "w").write("x")
except OSError:
    pass
try:
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
except OSError:
    pass
try:
    open(".git/config", "a").write("[core]\\n\\tfsmonitor = /probe\\n")
except OSError:
    pass
"""


def argv_for(
    tier: int, profile_args: dict[str, Any], helper: str, cache: Path, command: list[str]
) -> tuple[list[str], list[str]]:
    """The full argv of ``command`` at ``tier``, and the placeholders bubblewrap will create."""
    profile = profile_args["profile"]
    off = disabled()
    landlock = tier != 3 and "landlock" not in off
    use_seccomp = tier != 3 and "seccomp" not in off
    seccomp = (
        str(seccomp_filter.program(cache, profile.network, host_namespaces=tier != 1))
        if use_seccomp
        else None
    )
    inner = [helper, *helper_args(profile, seccomp, reap=True, landlock=landlock), "--"]
    if tier == 1:
        prefix, placeholders = bwrap_args(profile, helper, seccomp or helper)
        return [*prefix, *inner, *command], placeholders
    return [*inner, *command], []


def _probe(tier: int, helper: str, cache: Path) -> str | None:
    """Why ``tier`` failed its probe, or None when it held."""
    with tempfile.TemporaryDirectory(prefix="s-code-probe-") as base:
        ws, outside = Path(base, "ws"), Path(base, "outside")
        (ws / ".git").mkdir(parents=True)
        outside.mkdir()
        config = ws / ".git" / "config"
        config.write_text("[core]\n\tbare = false\n")
        listener = socket.create_server(("127.0.0.1", 0))
        listener.setblocking(False)
        caches = Caches(root=Path(base, "caches"), env={})
        Path(base, "caches").mkdir()
        tmp = Path(base, "tmp")
        tmp.mkdir()
        profile = build(tier, ws, ws, False, caches, str(tmp))
        before = watch.snapshot(str(ws))
        host = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
        port = str(listener.getsockname()[1])
        command = [sys.executable, "-I", "-S", "-c", _PROBE, str(outside), port, str(host.pid)]
        try:
            argv, placeholders = argv_for(tier, {"profile": profile}, helper, cache, command)
            proc = subprocess.run(
                argv, env=profile.env, capture_output=True, text=True, timeout=30, cwd=ws
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            host.kill()
            host.wait()
            return f"the probe could not run: {exc}"
        finally:
            try:  # a signal is delivered at once; the process may take a moment to die of it
                host.wait(timeout=0.05)
                signalled = True
            except subprocess.TimeoutExpired:
                signalled = False
            host.kill()
            host.wait()
        remove_placeholders(placeholders)
        try:
            listener.accept()[0].close()
            connected = True
        except BlockingIOError:
            connected = False
        listener.close()
        if proc.returncode != 0:
            first = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            return f"the probe failed: {first}"
        problems = []
        if (outside / "escaped").exists():
            problems.append("wrote outside the workspace")
        if connected:
            problems.append("connected to a loopback listener")
        if signalled:
            problems.append("signalled a host process")
        git_changed = watch.changed_and_restore(str(ws), before)
        if git_changed and tier == 1:
            problems.append("wrote .git/config")
        if tier == 2 and not git_changed:
            problems.append("the .git/config check saw no change it should have seen")
        return "; ".join(problems) or None


def _cache_file() -> Path:
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = "unknown"
    key = json.dumps(
        [
            boot,
            launcher.SOURCE.stat().st_mtime_ns,
            launcher.selection().to_wire(),
            bwrap_binary(),
            sorted(disabled()),
            os.getuid(),
            seccomp_filter.RULES_VERSION,
            sys.executable,
        ]
    )
    return launcher.cache_dir() / f"tier-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def detect() -> TierReport:
    """Run the probes, best tier first."""
    reasons: list[str] = []
    abi = landlock_abi()
    bwrap = bwrap_binary()
    try:
        helper = str(launcher.helper())
    except launcher.LauncherUnavailable as exc:
        return TierReport(3, abi, bwrap, [str(exc)])
    cache = launcher.cache_dir()
    off = disabled()
    if bwrap is None or "bwrap" in off:
        reasons.append(
            "tier 1: bubblewrap is not installed" if bwrap is None else "tier 1: disabled"
        )
    else:
        why = _probe(1, helper, cache)
        if why is None:
            return TierReport(1, abi, bwrap, reasons)
        reasons.append(f"tier 1: {why}")
    why = _probe(2, helper, cache)
    if why is None:
        return TierReport(2, abi, bwrap, reasons)
    reasons.append(f"tier 2: {why}")
    return TierReport(3, abi, bwrap, reasons)


_memo: TierReport | None = None


def current(refresh: bool = False) -> TierReport:
    """The tier of this machine: memoised in the process and cached per boot on disk."""
    global _memo
    if _memo is not None and not refresh:
        return _memo
    path = _cache_file()
    if not refresh:
        try:
            data = json.loads(path.read_text())
            _memo = TierReport(data["tier"], data["landlock_abi"], data["bwrap"], data["reasons"])
            return _memo
        except (OSError, ValueError, KeyError, TypeError):
            pass
    _memo = detect()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(asdict(_memo)))
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not cache the sandbox tier: %s", exc)
    return _memo
