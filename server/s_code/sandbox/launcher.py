"""The exec helper binary: the one shipped in the wheel, else ``launch.c`` compiled on first use.

A C helper, because it runs before every sandboxed command: an interpreter would cost more than
bubblewrap itself (about 50 ms against 6 ms here). A wheel carries the helper compiled for the
platform it was built on (``bin/s-code-launch``, built by ``setup.py`` at wheel-build time with
:func:`compile_helper`). It is used when it runs here: an ELF file for this machine's architecture
whose ``--version`` names the bundled source's hash. Otherwise (another architecture, another C
library, a checkout or an editable install, which ship none) the bundled source is compiled with
the system compiler into the launcher cache, once per source version; the build is atomic (compile
to a temporary name, then rename) so concurrent sidecars never run a half-written binary. With
neither, :class:`LauncherUnavailable` says why in one line and the sandbox is tier 3.

This module imports only the standard library at the top: ``setup.py`` loads it by path to build
the shipped helper with the same command.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).with_name("launch.c")
NAME = "s-code-launch"
SHIPPED = Path(__file__).with_name("bin") / NAME
# e_machine of an ELF file for each `uname -m` (the shipped helper's architecture check)
ELF_MACHINES = {
    "x86_64": 62,
    "amd64": 62,
    "aarch64": 183,
    "arm64": 183,
    "i386": 3,
    "i486": 3,
    "i586": 3,
    "i686": 3,
    "armv6l": 40,
    "armv7l": 40,
    "riscv64": 243,
    "ppc64le": 21,
    "ppc64": 21,
    "s390x": 22,
    "loongarch64": 258,
}


class LauncherUnavailable(Exception):
    """No helper runs here (the shipped one cannot run, and no C compiler built one): the sandbox
    cannot run. The message is one line."""


def cache_dir() -> Path:
    override = os.environ.get("S_CODE_LAUNCHER_DIR")
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("s-code")) / "launcher"


def source_id(source: bytes | None = None) -> str:
    """What a helper built from ``source`` (the bundled launch.c) answers to ``--version``."""
    data = SOURCE.read_bytes() if source is None else source
    return hashlib.sha256(data).hexdigest()[:16]


def find_compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def compile_helper(compiler: str, out: Path, source: Path = SOURCE) -> None:
    """Compile ``source`` into ``out`` atomically; LauncherUnavailable (one line) on failure."""
    ident = source_id(source.read_bytes())
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.{threading.get_ident()}")
    argv = [compiler, "-O2", f'-DS_CODE_LAUNCH_ID="{ident}"', "-o", str(tmp), str(source)]
    try:
        # Static where the C library allows it: the wheel's helper then runs on any Linux of its
        # architecture whatever its C library, and each command skips the dynamic loader.
        proc = subprocess.run([*argv, "-static"], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        tmp.unlink(missing_ok=True)
        raise LauncherUnavailable(f"building the exec helper failed: {exc}") from None
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        first = (proc.stderr.strip().splitlines() or ["(no output)"])[0]
        raise LauncherUnavailable(f"building the exec helper failed: {first}")
    os.chmod(tmp, 0o755)
    os.replace(tmp, out)


def elf_problem(path: Path) -> str | None:
    """Why ``path`` is not an executable for this machine's architecture, or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return "is not an ELF executable"
    found = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
    machine = os.uname().machine
    expected = ELF_MACHINES.get(machine)
    if expected is not None and found != expected:
        names = sorted(k for k, v in ELF_MACHINES.items() if v == found)
        built = names[0] if names else f"ELF machine {found}"
        return f"is built for {built}, and this machine is {machine}"
    return None


def check(path: Path) -> str | None:
    """Why the helper at ``path`` cannot be used here, or None: it must be an executable ELF file
    for this architecture, run, and name the bundled source's hash."""
    if not path.is_file():
        return "is missing"
    if not os.access(path, os.X_OK):
        return "is not executable"
    problem = elf_problem(path)
    if problem:
        return problem
    try:
        proc = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=10, env={}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return f"does not run here ({reason})"
    if proc.returncode != 0:
        return f"does not run here (exit {proc.returncode})"
    expected = f"{NAME} {source_id()}"
    got = proc.stdout.strip()
    if got != expected:
        return f"is another version ({got or 'no version'!r}; the bundled source is {expected!r})"
    return None


@dataclass(frozen=True)
class Selection:
    """Which helper this process uses, and why not the shipped one (for ``s-code doctor``)."""

    path: Path | None
    origin: str  # "shipped" | "compiled" | "none"
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.origin == "shipped":
            return "the one shipped with the package, for this machine"
        if self.origin == "compiled":
            return "compiled from the bundled source"
        return "NONE"

    def to_wire(self) -> dict[str, Any]:
        return {
            "path": str(self.path) if self.path else None,
            "origin": self.origin,
            "notes": list(self.notes),
        }


def _select() -> Selection:
    notes: list[str] = []
    if SHIPPED.exists():
        why = check(SHIPPED)
        if why is None:
            return Selection(SHIPPED, "shipped")
        notes.append(f"the shipped helper {why}")
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source + os.uname().machine.encode()).hexdigest()[:16]
    out = cache_dir() / f"{NAME}-{digest}"
    why = check(out) if out.exists() else "is missing"
    if why is not None:  # not built yet (or a broken build): build it
        compiler = find_compiler()
        if compiler is None:
            notes.append("there is no C compiler (cc or gcc) to build one from the bundled source")
            return Selection(None, "none", tuple(notes))
        try:
            compile_helper(compiler, out)
        except LauncherUnavailable as exc:
            notes.append(str(exc))
            return Selection(None, "none", tuple(notes))
        why = check(out)
    if why is not None:
        notes.append(f"the helper compiled into {out} {why}")
        return Selection(None, "none", tuple(notes))
    return Selection(out, "compiled", tuple(notes))


_lock = threading.Lock()
_chosen: dict[str, Selection] = {}


def selection(refresh: bool = False) -> Selection:
    """The helper of this process (checked once per launcher cache directory), never raising."""
    key = str(cache_dir())
    with _lock:
        chosen = _chosen.get(key)
        if refresh or chosen is None or (chosen.path is not None and not chosen.path.exists()):
            chosen = _chosen[key] = _select()
        return chosen


def helper() -> Path:
    """The helper's path; LauncherUnavailable (one line: every reason) when none runs here."""
    chosen = selection()
    if chosen.path is None:
        # a compiler may have been installed since: look again before refusing
        chosen = selection(refresh=True)
    if chosen.path is None:
        raise LauncherUnavailable("no sandbox exec helper: " + "; ".join(chosen.notes))
    return chosen.path
