"""Resource limits of every command, shown in its card and enforced by the exec helper.

Processes, memory and disk are watched by the helper's supervisor over the command's whole
process tree (every 50 ms; the disk more often as it fills, down to every 1 ms): rlimits cannot
express them (``RLIMIT_NPROC`` counts all of the user's processes, and the kernel does not enforce
it for root), and cgroups v2 are rarely delegated to a user session with controllers (not on the
machines this was built on: a hybrid hierarchy with no controller in the unified one), so the
supervisor is what every machine gets.

Hard bounds, where the kernel offers one: the largest file is ``RLIMIT_FSIZE``, never more than
the space the disk guard lets the command use (nine tenths of the free space of each watched disk,
at the card and again when the command starts), so a single writer, however fast, cannot fill the
disk; tier 1's in-memory folders (``/dev/shm``, and ``/var/tmp``, ``/run``, the private home it
hides) are tmpfs mounts of ``TMPFS_SIZE`` each (a write past it fails with ENOSPC). The workspace,
the caches and the private ``/tmp`` (on disk in both tiers, so a disk filler meets the disk guard
instead of filling memory) are on the user's own file systems, where there is no bound a user can
set (a project quota needs the administrator): several files written at once faster than the
guard looks can fill a small disk, and the card says so. The wall time is the call's
``timeout_ms``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MAX_TASKS = 4096  # processes and threads: a parallel build on many cores, far from pid_max
MAX_FILE_SIZE = 8 << 30
TMPFS_SIZE = 512 << 20


def file_bound(path: str) -> int:
    """The largest file a command may write while ``path``'s file system is watched: the space
    the disk guard lets it use (nine tenths of what is free: the helper keeps the last tenth),
    in whole MiB, less one for the file system's own blocks. The helper computes the same when
    the command starts."""
    try:
        v = os.statvfs(path)
    except OSError:
        return MAX_FILE_SIZE
    free = v.f_bavail * v.f_frsize
    room = free - free // 10
    return (room >> 20 << 20) - (1 << 20) if room >= 2 << 20 else 4096


def _size(n: int) -> str:
    if n >= 1 << 30:
        return f"{n / (1 << 30):.1f} GiB".replace(".0 GiB", " GiB")
    return f"{max(n, 0) >> 20} MiB"


def _ram() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 8 << 30


@dataclass(frozen=True)
class Limits:
    processes: int
    memory: int  # resident bytes of the whole tree
    file_size: int
    tmpfs: int  # each in-memory folder of tier 1
    disks: tuple[str, ...]  # file systems that keep a tenth of their free space

    def helper_args(self) -> list[str]:
        args = ["--max-procs", str(self.processes), "--max-rss", str(self.memory)]
        args += ["--max-file-size", str(self.file_size)]
        for path in self.disks:
            args += ["--disk", path]
        return args

    def shown(self, tier: int) -> dict[str, str]:
        gib = 1 << 30
        shown = {
            "processes": f"{self.processes} processes and threads at once (the whole command), "
            "then it is stopped",
            "memory": f"{self.memory / gib:.1f} GiB (the whole command: resident memory and "
            "memory files, or what the machine's free memory lost meanwhile if more), then "
            "stopped",
            "file size": f"{_size(self.file_size)} per file, and never more than nine tenths of "
            "the disk's free space when it starts (the system refuses the rest)",
            "disk": "stopped when less than a tenth of the space free at its start is left; "
            "a fast writer of several files can fill the disk before the guard stops it (each "
            f"file at most {_size(self.file_size)})",
            "time": "the call's timeout_ms (120 s unless asked)",
        }
        if tier == 1:
            where = "/var/tmp, /run, /dev/shm, home"
            shown["in-memory folders"] = f"{self.tmpfs >> 20} MiB each, then writes fail ({where})"
        return shown


def for_command(workspace: str, cache_root: str) -> Limits:
    disks = [workspace]
    if os.stat(cache_root).st_dev != os.stat(workspace).st_dev:
        disks.append(cache_root)
    file_size = min([MAX_FILE_SIZE, *(file_bound(d) for d in disks)])
    return Limits(MAX_TASKS, _ram() // 2, file_size, TMPFS_SIZE, tuple(disks))
