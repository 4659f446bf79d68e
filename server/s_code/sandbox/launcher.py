"""The exec helper binary: ``launch.c`` compiled once per source version into the launcher cache.

A C helper, because it runs before every sandboxed command: an interpreter would cost more than
bubblewrap itself (about 50 ms against 6 ms here). The build is atomic (compile to a temporary
name, then rename) so concurrent sidecars never run a half-written binary.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from platformdirs import user_cache_dir

SOURCE = Path(__file__).with_name("launch.c")


class LauncherUnavailable(Exception):
    """No helper could be built (no C compiler, or it failed): the sandbox cannot run."""


def cache_dir() -> Path:
    override = os.environ.get("S_CODE_LAUNCHER_DIR")
    return Path(override) if override else Path(user_cache_dir("s-code")) / "launcher"


def helper() -> Path:
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source + os.uname().machine.encode()).hexdigest()[:16]
    out = cache_dir() / f"s-code-launch-{digest}"
    if out.exists():
        return out
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise LauncherUnavailable("no C compiler (cc or gcc) to build the sandbox's exec helper")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}")
    proc = subprocess.run(
        [compiler, "-O2", "-o", str(tmp), str(SOURCE)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        first = (proc.stderr.strip().splitlines() or ["(no output)"])[0]
        raise LauncherUnavailable(f"building the exec helper failed: {first}")
    os.replace(tmp, out)
    return out
