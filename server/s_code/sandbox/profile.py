"""The effective sandbox profile of one command, and the argv that enforces it.

One projection serves the approval card, ``s-code/sandbox/preview``, the CLI and the spawn, so what
the user approves is what runs. Tier 1 wraps the exec helper in bubblewrap; tier 2 runs the helper
alone, as a supervising subreaper; tier 3 runs the command unconfined (and always asks).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from s_code.sandbox import limits, reads, runtimes
from s_code.sandbox.caches import Caches
from s_code.sandbox.limits import TMPFS_SIZE, Limits
from s_code.state.store import state_dir
from s_code.workspace.protected import PROTECTED_DIRS, protected_in

LABELS = {1: "bubblewrap+landlock+seccomp", 2: "landlock+seccomp", 3: "unsandboxed"}
# Device nodes a build may write; everything else under /dev is read-only or absent.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
# Tier 1: bubblewrap's minimal /dev is a tmpfs of half the RAM; only its nodes, its own pty
# instance and a sized /dev/shm are writable.
DEVICES_TIER1 = (*DEVICES, "/dev/pts", "/dev/shm")
ENV_ALLOWED = (
    "PATH",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "COLORTERM",
    "NO_COLOR",
    *runtimes.ENV_NAMES,
)


@dataclass(frozen=True)
class Profile:
    tier: int
    workspace: str
    cwd: str
    network: bool
    readable: tuple[str, ...]
    writable: tuple[str, ...]
    read_only: tuple[str, ...]  # protected paths inside the workspace, kept read-only
    hidden: tuple[str, ...]  # replaced by empty private directories (tier 1)
    runtimes: tuple[str, ...]
    caches: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    unreadable: tuple[str, ...] = ()  # what the readable roots leave out
    private_tmp: str = ""  # the command's own tmp (tier 1: bound at /tmp)
    limits: Limits | None = None

    @property
    def not_prevented(self) -> tuple[str, ...]:
        return not_prevented(self.tier)

    @property
    def label(self) -> str:
        return LABELS[self.tier]


def not_prevented(tier: int) -> tuple[str, ...]:
    """What a tier cannot stop, in plain words (the card and ``s-code doctor`` say it)."""
    if tier == 3:
        return ("anything: the command runs unsandboxed, with your full access",)
    if tier == 2:
        return (
            "changing the permissions, owner or times of your files outside the workspace "
            "(chmod, chown, touch): Landlock does not cover file attributes",
            "reading the command lines of your other programs (/proc/PID/cmdline): a secret "
            "passed as an argument elsewhere is visible to it",
            "changing the repository's git configuration and hooks while it runs: they are put "
            "back after it, but a git you or your editor run meanwhile (a shell prompt, the "
            "source control view) reads them and may run what they name",
            "deleting a protected file larger than 4 MiB: only its digest is kept, so it is "
            "reported but cannot be put back",
        )
    return ()


def _with_home_path_dirs(roots: tuple[str, ...], path: str, home: str) -> tuple[str, ...]:
    """Runtime roots plus the PATH directories under $HOME (``~/.local/bin``, ``~/bin``): tier 1
    hides $HOME, and a program the card resolved there must still be found, read-only."""
    extra = [
        os.path.realpath(p)
        for p in path.split(":")
        if p.startswith(home + "/") and os.path.isdir(p)
    ]
    found = list(roots)
    for p in extra:
        if not any(p == r or p.startswith(r + "/") for r in found):
            found.append(p)
    return tuple(found)


def clean_path(value: str) -> str:
    return ":".join(p for p in value.split(":") if os.path.isabs(p))


def build(
    tier: int,
    workspace: Path,
    cwd: Path,
    network: bool,
    caches: Caches,
    tmp: str,
    keep_read_only: tuple[str, ...] = (),
) -> Profile:
    """The profile of one command. ``keep_read_only``: absolute paths inside the workspace that
    tier 1 binds read-only besides the protected names at its root (every git directory, every
    ``.git`` file, the files of the user's protected patterns)."""
    ws = os.path.realpath(workspace)
    home = os.path.realpath(os.path.expanduser("~"))
    env = {k: v for k, v in os.environ.items() if k in ENV_ALLOWED or k.startswith("LC_")}
    env["PATH"] = clean_path(env.get("PATH", "/usr/local/bin:/usr/bin:/bin"))
    # Tier 1 hides $HOME behind an empty tmpfs; tier 2 cannot (Landlock only denies it, and
    # git, for one, stops when ~/.gitconfig is there but unreadable), so HOME is an empty
    # private directory in the command's own tmp, and the runtimes under the real one are named.
    env["HOME"] = home if tier == 1 else os.path.join(tmp, "home")
    env.update(runtimes.variables())
    env["TMPDIR"] = "/tmp" if tier == 1 else tmp
    env["S_CODE_SANDBOX"] = LABELS[tier]
    env.update(caches.env)
    no_reads = reads.unreadable(home, state_dir(), *reads.runtime_dir(ws))
    hidden: tuple[str, ...] = ()
    if tier == 1:  # /tmp is the private tmp, bound from the disk
        hidden = tuple(p for p in no_reads if p not in ("/tmp", "/dev") and os.path.isdir(p))
    roots = _with_home_path_dirs(runtimes.roots(), env["PATH"], home)
    return Profile(
        tier=tier,
        workspace=ws,
        cwd=os.path.realpath(cwd),
        network=network,
        readable=(*reads.carve(no_reads), *roots) if tier != 3 else ("/",),
        writable=(ws, *caches.writable, tmp) if tier != 3 else ("/",),
        read_only=read_only_binds(ws, keep_read_only) if tier == 1 else (),
        hidden=hidden,
        runtimes=roots,
        caches=dict(caches.env),
        env=env,
        unreadable=no_reads if tier != 3 else (),
        private_tmp=tmp,
        limits=limits.for_command(ws, str(caches.root)),
    )


def read_only_binds(workspace: str, keep: tuple[str, ...]) -> tuple[str, ...]:
    """The root's protected names, then the rest, outermost first, without one inside another
    (a bind inside a read-only bind is read-only already)."""
    ordered = [*protected_in(workspace), *sorted(set(keep), key=lambda p: (p.count("/"), p))]
    out: list[str] = []
    for path in ordered:
        if path not in out and not any(path.startswith(o + "/") for o in out):
            out.append(path)
    return tuple(out)


def bwrap_binary() -> str | None:
    return os.environ.get("S_CODE_BWRAP") or shutil.which("bwrap")


def helper_args(profile: Profile, seccomp: str | None, reap: bool, landlock: bool) -> list[str]:
    args = ["--chdir", profile.cwd]
    if reap:
        args.append("--reap")
        if profile.limits is not None:
            args += profile.limits.helper_args()
            if profile.tier == 1:  # an in-memory file system the command may fill: memory
                args += ["--count-fs", "/dev/shm"]
    if not landlock:
        return [*args, "--no-landlock"]
    for path in profile.readable:
        args += ["--ro", path]
    if seccomp:  # the helper reads its seccomp program after Landlock is in force
        args += ["--ro", os.path.dirname(seccomp)]
    for path in profile.writable:
        args += ["--rw", path]
    if profile.tier == 1:
        args += ["--rw", "/tmp"]
    for dev in DEVICES_TIER1 if profile.tier == 1 else DEVICES:
        args += ["--rw", dev]
    if not profile.network:
        args.append("--no-net")
    args.append("--scope")
    if seccomp:
        args += ["--seccomp", seccomp]
    return args


def bwrap_args(profile: Profile, helper: str, seccomp: str) -> tuple[list[str], list[str]]:
    """The bubblewrap prefix, and the placeholders it will create for missing protected paths."""
    bwrap = bwrap_binary() or "bwrap"
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    size = str(profile.limits.tmpfs if profile.limits is not None else TMPFS_SIZE)
    args += ["--size", size, "--tmpfs", "/dev/shm"]
    for path in profile.hidden:
        args += ["--size", size, "--tmpfs", path]
    args += ["--bind", profile.private_tmp, "/tmp"]
    # Bound back after the tmpfs mounts hid them: runtimes, the helper and its program, caches.
    # the helper and its seccomp programs share one directory: one mount for both
    launcher_dirs = {os.path.dirname(helper), os.path.dirname(seccomp)}
    covered = (*profile.hidden, "/tmp")  # /tmp is the private tmp now
    for path in (*profile.runtimes, *sorted(launcher_dirs)):
        if any(path == h or path.startswith(h + "/") for h in covered):
            args += ["--ro-bind", path, path]
    bound: list[str] = []
    for path in profile.writable:
        # a folder inside one bound already is the same folder there: one mount fewer (the
        # run's private tmp lives in the workspace's cache folder)
        if not any(path == b or path.startswith(b + "/") for b in bound):
            args += ["--bind", path, path]
            bound.append(path)
    placeholders: list[str] = []
    for path in profile.read_only:
        if os.path.lexists(path):
            args += ["--ro-bind", path, path]
        elif os.path.basename(path) in PROTECTED_DIRS:
            # A missing .git or editor directory cannot be created while the command runs (the
            # editor would read it live). A missing auto-run file is left to the watcher, which
            # removes it after the run: each placeholder costs a file and a mount per command.
            args += ["--ro-bind", "/dev/null", path]
            placeholders.append(path)
    args += ["--unshare-all", "--unshare-user", "--cap-drop", "ALL"]
    if profile.network:
        args.append("--share-net")
    args += ["--die-with-parent", "--new-session", "--chdir", profile.cwd, "--"]
    return args, placeholders


def remove_placeholders(placeholders: list[str]) -> None:
    """bubblewrap creates empty mount points for missing protected paths: remove them after."""
    for path in placeholders:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if st.st_size == 0 and not os.path.islink(path):
            try:
                if os.path.isdir(path):
                    os.rmdir(path)
                else:
                    os.unlink(path)
            except OSError:
                pass
