"""The records of host-process trees, and what a killed exec helper left behind.

Every host process runs under the exec helper (``--host --reap --track DIR``), which writes a
record of its tree into ``DIR`` = ``<state dir>/host-trees/<boot id>/`` before the command starts,
named ``<helper pid>-<its start time>``, and deletes it once the tree is gone. Where this user may
make a cgroup v2 child of its own cgroup, the command is created in one of its own
(``s-code-host-<pid>-<start>``) and the record names it: the kernel keeps every descendant there,
``setsid`` or not. Otherwise the record lists the tree's processes (pid and start time, rewritten
every second when they change) and the command's environment carries
``S_CODE_HOST_TREE=<pid>.<start>``, which descendants inherit, so one born after the last listing
is found too.

A record whose helper is gone (killed outright with the sidecar, or by the OOM killer: it could
not end its tree, which was reparented to init) is what is left of that tree: :func:`reap` kills
it at every session start, through the cgroup (``cgroup.kill``), or else every listed process
still there (same start time: a reused pid is never taken for it), every process that carries the
marker, and every process of the helper's session; :func:`reap_helper` does the same for one
helper a terminal kill could not end. ``S_CODE_HOST_TRACK=pids`` never makes a cgroup,
``S_CODE_HOST_TRACK=off`` keeps no record (for tests and diagnosis).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

from s_code.sandbox.launcher import LauncherUnavailable, helper
from s_code.state.store import state_dir

log = logging.getLogger(__name__)
TRACK_ENV = "S_CODE_HOST_TRACK"
TREE_ENV = "S_CODE_HOST_TREE"
CGROUP_NAME = re.compile(r"s-code-host-\d+-\d+")
RECORD_NAME = re.compile(r"(\d+)-(\d+)(\.tmp)?")
ENVIRON_BYTES = 1 << 20
PASSES = 5  # kill passes over what is left, for processes that forked in between


@dataclass(frozen=True)
class Record:
    path: str
    helper: int
    start: int
    cgroup: str | None = None
    pids: tuple[tuple[int, int], ...] = ()


def boot() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def directory() -> str:
    return os.path.join(state_dir(), "host-trees", boot())


def helper_args() -> list[str]:
    """The exec helper's tracking options (none when tracking is off or its folder cannot be
    made: the tree is then still ended by the helper and by the sidecar's death, only not
    found again after both were killed)."""
    mode = os.environ.get(TRACK_ENV, "")
    if mode == "off":
        return []
    where = directory()
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
    except OSError as exc:
        log.warning("host processes are not tracked: %s cannot be made (%s)", where, exc)
        return []
    return ["--track", where, *(["--no-cgroup"] if mode == "pids" else [])]


# -- the process table ---------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()


def starttime(pid: int) -> int | None:
    """When ``pid`` started (clock ticks after boot), None when there is no such process."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields is not None and len(fields) > 19 else None


def _running(pid: int, start: int) -> bool:
    """Whether the process ``pid`` that started at ``start`` is still there (not a zombie)."""
    fields = _stat_fields(pid)
    return fields is not None and len(fields) > 19 and fields[0] != "Z" and int(fields[19]) == start


def _kill(pid: int) -> bool:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        return False
    return True


def kill_session(sid: int, since: int) -> list[int]:
    """SIGKILL every process of session ``sid`` started at or after ``since`` (clock ticks since
    boot): what is left of a helper's tree when the helper itself could not end it."""
    killed: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = _stat_fields(int(name))
        if fields is None or len(fields) <= 19 or fields[0] == "Z":
            continue
        if int(fields[3]) == sid and int(fields[19]) >= since and _kill(int(name)):
            killed.append(int(name))
    return killed


def _marked(trees: dict[str, int]) -> list[int]:
    """SIGKILL every process of this user whose environment carries one of ``trees``' markers
    (``<helper pid>.<start>`` → the helper's start) and that started after that helper."""
    killed: list[int] = []
    uid = os.geteuid()
    prefix = TREE_ENV.encode() + b"="
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read(ENVIRON_BYTES)
        except OSError:
            continue
        for entry in environ.split(b"\0"):
            if not entry.startswith(prefix):
                continue
            since = trees.get(entry[len(prefix) :].decode("ascii", "replace"))
            fields = _stat_fields(int(name))
            if (
                since is not None
                and fields is not None
                and len(fields) > 19
                and fields[0] != "Z"
                and int(fields[19]) >= since
                and _kill(int(name))
            ):
                killed.append(int(name))
    return killed


# -- cgroups -------------------------------------------------------------------------------------


def _cgroup2_mounts() -> list[str]:
    mounts: list[str] = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                head, _, tail = line.partition(" - ")
                fields = head.split(" ")
                if tail.startswith("cgroup2 ") and len(fields) > 4:
                    point = re.sub(r"\\([0-3][0-7]{2})", lambda m: chr(int(m[1], 8)), fields[4])
                    mounts.append(point.rstrip("/"))
    except OSError:
        pass
    return mounts


def _ours(path: str) -> bool:
    """A cgroup a helper made: named so, inside a cgroup2 mount, no ``..`` in the way."""
    real = os.path.realpath(path)
    if real != path or not CGROUP_NAME.fullmatch(os.path.basename(path)):
        return False
    return any(path.startswith(m + "/") for m in _cgroup2_mounts())


def _remove_cgroup(path: str) -> bool:
    """The cgroup and the (empty) ones below it removed; whether it is gone."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(path):
            if entry.is_dir(follow_symlinks=False):
                _remove_cgroup(entry.path)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _procs(path: str) -> list[int]:
    try:
        with open(os.path.join(path, "cgroup.procs"), encoding="ascii") as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return []


def kill_cgroup(path: str, wait_s: float = 2.0) -> list[int]:
    """Kill every process in a helper's cgroup (one write to ``cgroup.kill``), wait until it is
    empty and remove it; the pids it held."""
    if not _ours(path) or not os.path.isdir(path):
        return []
    held = _procs(path)
    try:
        with open(os.path.join(path, "cgroup.kill"), "w", encoding="ascii") as f:
            f.write("1")
    except OSError:  # no cgroup.kill: by pid, until none is left
        for pid in held:
            _kill(pid)
    deadline = time.monotonic() + wait_s
    while not _remove_cgroup(path) and time.monotonic() < deadline:
        for pid in _procs(path):
            _kill(pid)
        time.sleep(0.01)
    return held


# -- records -------------------------------------------------------------------------------------


def read(path: str) -> Record | None:
    """A record as the helper wrote it; None when it is not one."""
    match = RECORD_NAME.fullmatch(os.path.basename(path))
    if match is None:
        return None
    helper, start = int(match[1]), int(match[2])
    cgroup: str | None = None
    pids: list[tuple[int, int]] = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read(1 << 22).splitlines()
    except OSError:
        lines = []
    for line in lines:
        kind, _, rest = line.partition(" ")
        if kind == "cgroup" and rest:
            cgroup = rest
        elif kind == "pid":
            with contextlib.suppress(ValueError):
                pid, since = rest.split(" ")
                pids.append((int(pid), int(since)))
    return Record(path, helper, start, cgroup, tuple(pids))


def kill_tree(records: list[Record]) -> list[int]:
    """Kill what is left of the trees of these records' (gone) helpers; the pids killed."""
    killed: list[int] = []
    for rec in records:
        if rec.cgroup:
            killed += kill_cgroup(rec.cgroup)
    marked = {f"{r.helper}.{r.start}": r.start for r in records if not r.cgroup}
    for _ in range(PASSES):
        now: list[int] = []
        for rec in records:
            now += [pid for pid, since in rec.pids if _running(pid, since) and _kill(pid)]
            now += kill_session(rec.helper, rec.start)
        if marked:
            now += _marked(marked)
        killed += now
        if not now:
            break
    return sorted(set(killed))


def _settle(records: list[Record]) -> list[int]:
    killed = kill_tree(records)
    for rec in records:
        with contextlib.suppress(OSError):
            os.unlink(rec.path)
    return killed


def reap() -> list[int]:
    """Kill what every gone helper left (its record stays until then); the pids killed. Records
    of an earlier boot are dropped: nothing of them runs."""
    where = directory()
    with contextlib.suppress(OSError):
        for other in os.scandir(os.path.dirname(where)):
            if other.path != where and other.is_dir(follow_symlinks=False):
                shutil.rmtree(other.path, ignore_errors=True)
    try:
        names = sorted(os.listdir(where))
    except OSError:
        return []
    gone: list[Record] = []
    for name in names:
        rec = read(os.path.join(where, name))
        if rec is not None and not _running(rec.helper, rec.start):
            gone.append(rec)
    return _settle(gone) if gone else []


def reap_helper(pid: int, start: int) -> list[int]:
    """Kill what is left of one helper's tree (the helper itself killed already): by its record
    when it has one, and its session in any case."""
    name = os.path.join(directory(), f"{pid}-{start}")
    rec = read(name) if os.path.exists(name) else None
    return _settle([rec or Record(name, pid, start)])


# -- what this machine does ----------------------------------------------------------------------


def _own_cgroup() -> str | None:
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as f:
            path = next((ln[3:].strip() for ln in f if ln.startswith("0::")), None)
    except OSError:
        return None
    mounts = _cgroup2_mounts()
    return mounts[0] + (path if path and path != "/" else "") if mounts and path else None


def observed() -> str:
    """How host-process trees are tracked here, in one line: the helper run once (for
    ``s-code doctor``)."""
    mode = os.environ.get(TRACK_ENV, "")
    if mode == "off":
        return f"NOT tracked ({TRACK_ENV}=off): a helper killed outright leaves its tree running"
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["--host", "--reap", "--track", tmp, *(["--no-cgroup"] if mode == "pids" else [])]
        try:
            done = subprocess.run(
                [str(helper()), *argv, "--", "cat", "/proc/self/cgroup"],
                capture_output=True,
                text=True,
                timeout=10,
            )
        except (LauncherUnavailable, OSError, subprocess.TimeoutExpired) as exc:
            return f"NOT tracked: the exec helper does not run ({exc})"
    if "/s-code-host-" in done.stdout:
        return f"each helper in a cgroup of its own (under {_own_cgroup()})"
    if mode == "pids":
        why = f"{TRACK_ENV}=pids"
    elif _own_cgroup() is None:
        why = "no cgroup v2 hierarchy is mounted here"
    else:
        why = (
            f"no cgroup could be made under {_own_cgroup()} (not this user's to change, or a "
            "kernel before Linux 5.14, without cgroup.kill)"
        )
    return (
        "a list of each tree's processes, rewritten every second, and a marker in their "
        f"environment ({why})"
    )
