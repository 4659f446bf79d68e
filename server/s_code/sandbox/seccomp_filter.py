"""The seccomp program the exec helper loads, built with libseccomp (through pyseccomp).

Default allow; the listed syscalls fail with an errno rather than killing the process, so a tool
that probes for a feature degrades instead of crashing. Unknown architectures (x32 included) are
killed by libseccomp's architecture check. The program is exported once per rule set to a file in
the launcher cache and reused.
"""

from __future__ import annotations

import errno
import hashlib
import os
import socket
from pathlib import Path

TIOCSTI = 0x5412
TIOCLINUX = 0x541C
CLONE_NEWUSER = 0x10000000

# Each of these fails with EPERM: kernel attack surface or reach into other processes.
DENIED = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "bpf",
    "perf_event_open",
    "keyctl",
    "add_key",
    "request_key",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "open_by_handle_at",
    "userfaultfd",
)
RULES_VERSION = "1"


def rules_key(network: bool, unix_sockets: bool) -> str:
    body = f"{RULES_VERSION}|{network}|{unix_sockets}|{','.join(DENIED)}|{os.uname().machine}"
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def build(network: bool, unix_sockets: bool, out: Path) -> None:
    """Write the BPF program to ``out``: sockets other than AF_UNIX fail unless ``network``;
    AF_UNIX ``socket()`` itself fails unless ``unix_sockets`` (tier 2 has no mount namespace to
    hide host sockets such as an ssh agent's; ``socketpair`` stays allowed)."""
    import pyseccomp as sc

    f = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in DENIED:
        f.add_rule(sc.ERRNO(errno.EPERM), name)
    # clone3 passes its flags in memory seccomp cannot read: ENOSYS makes libc fall back to clone.
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    f.add_rule(
        sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
    )
    for request in (TIOCSTI, TIOCLINUX):
        f.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    if not network:
        if unix_sockets:
            f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.NE, socket.AF_UNIX))
        else:
            f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket")
    tmp = out.with_name(f".{out.name}.{os.getpid()}")
    with open(tmp, "wb") as fh:
        f.export_bpf(fh)
    os.replace(tmp, out)


def program(cache: Path, network: bool, unix_sockets: bool) -> Path:
    """The path of the compiled program for these rules, building it on first use."""
    out = cache / f"seccomp-{rules_key(network, unix_sockets)}.bpf"
    if not out.exists():
        cache.mkdir(parents=True, exist_ok=True)
        build(network, unix_sockets, out)
    return out
