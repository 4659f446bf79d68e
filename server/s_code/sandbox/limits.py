"""Resource limits of every command, shown in its card and enforced by the exec helper.

Processes, memory and disk are watched by the helper's supervisor over the command's whole
process tree (every 50 ms): rlimits cannot express them (``RLIMIT_NPROC`` counts all of the
user's processes, and the kernel does not enforce it for root), and cgroups v2 are rarely
delegated to a user session (not on the machines this was built on: a hybrid hierarchy with no
controller in the unified one), so the supervisor is what every machine gets. The largest file is
``RLIMIT_FSIZE``. Tier 1's in-memory folders (``/var/tmp``, ``/run``, the private home) have a size
too, and its ``/tmp`` is the private directory on disk that tier 2 uses, so a disk filler meets the
disk guard instead of filling memory. The wall time is the call's ``timeout_ms``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MAX_TASKS = 4096  # processes and threads: a parallel build on many cores, far from pid_max
MAX_FILE_SIZE = 8 << 30
TMPFS_SIZE = 512 << 20


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
            "file size": f"{self.file_size // gib} GiB per file",
            "disk": "stopped when less than a tenth of the space free at its start is left",
            "time": "the call's timeout_ms (120 s unless asked)",
        }
        if tier == 1:
            where = "/var/tmp, /run, /dev/shm, home"
            shown["in-memory folders"] = f"{self.tmpfs >> 20} MiB each ({where})"
        return shown


def for_command(workspace: str, cache_root: str) -> Limits:
    disks = [workspace]
    if os.stat(cache_root).st_dev != os.stat(workspace).st_dev:
        disks.append(cache_root)
    return Limits(MAX_TASKS, _ram() // 2, MAX_FILE_SIZE, TMPFS_SIZE, tuple(disks))
