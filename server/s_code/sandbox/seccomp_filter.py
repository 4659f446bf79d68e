"""The seccomp program the exec helper loads, built with libseccomp (through pyseccomp).

Default allow; the listed syscalls fail with an errno rather than killing the process, so a tool
that probes for a feature degrades instead of crashing. Unknown architectures (x32 included) are
killed by libseccomp's architecture check. The program is exported once per rule set to a file in
the launcher cache and reused.
"""

from __future__ import annotations

import contextlib
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
# Denied as well when the command shares the host's namespaces (tier 2): System V IPC objects
# outlive the command and are shared with host processes, and extended attributes are metadata
# Landlock does not cover.
DENIED_SHARED = (
    "shmget",
    "shmat",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semctl",
    "semtimedop",
    # POSIX message queues live in the host's IPC namespace too, and Landlock does not govern
    # mq_unlink (a host program's queue deleted) or a queue made before the open is refused
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
)
# (syscall, index of its mode argument); fchmodat2 by number (452): older libseccomp lacks it
_CHMODS: tuple[tuple[str | int, int], ...] = (
    ("chmod", 1),
    ("fchmod", 1),
    ("fchmodat", 2),
    (452, 2),
)
# setxattrat (463) and removexattrat (466), newer than this libseccomp's syscall table
_NEW_XATTR_SYSCALLS = (463, 466)
# Socket families a command with network may open: IP, and netlink (getaddrinfo asks the kernel
# which addresses the machine has). Not AF_UNIX: a path names a host socket the read rules do not
# cover (Landlock before ABI 9 does not govern connect()), the user's session bus or ssh agent.
NETWORK_FAMILIES = (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK)
_LAST_FAMILY = 63  # AF_MAX is 46 on Linux 6.x: every number above is refused as a whole
# socketpair types that stay connected to their pair: a datagram one can send to any path
_PAIR_TYPES = (socket.SOCK_STREAM, socket.SOCK_SEQPACKET)
_SOCK_TYPE_MASK = 0xF
RULES_VERSION = "5"


def rules_key(network: bool, host_namespaces: bool) -> str:
    body = (
        f"{RULES_VERSION}|{network}|{host_namespaces}|{','.join(DENIED + DENIED_SHARED)}|"
        f"{os.uname().machine}"
    )
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def build(network: bool, host_namespaces: bool, out: Path) -> None:
    """Write the BPF program to ``out``. ``socket()`` fails, but for the families of
    :data:`NETWORK_FAMILIES` when ``network``; ``socketpair`` stays for stream and seqpacket
    pairs (connected to each other only; a datagram one could send to any path). With
    ``host_namespaces`` (tier 2: no mount, IPC or PID namespace of its own) System V
    IPC and extended attributes fail too, and ``setsid``/``setpgid`` do nothing (they return 0),
    so every process stays in the command's process group, which the helper kills at once."""
    import pyseccomp as sc

    f = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in DENIED + (DENIED_SHARED if host_namespaces else ()):
        f.add_rule(sc.ERRNO(errno.EPERM), name)
    # another process's resource limits (a CPU limit of 1 s kills the sidecar); 0 is "self"
    f.add_rule(sc.ERRNO(errno.EPERM), "prlimit64", sc.Arg(0, sc.NE, 0))
    # no set-user-ID or set-group-ID bits: the file may be outside the workspace (tier 2 runs
    # with the user's uid, root's on some machines, and Landlock does not cover chmod)
    for call, mode_arg in _CHMODS:
        for bit in (0o4000, 0o2000):
            with contextlib.suppress(RuntimeError, ValueError, OSError):
                f.add_rule(sc.ERRNO(errno.EPERM), call, sc.Arg(mode_arg, sc.MASKED_EQ, bit, bit))
    if host_namespaces:
        for number in _NEW_XATTR_SYSCALLS:
            with contextlib.suppress(RuntimeError, ValueError, OSError):
                f.add_rule(sc.ERRNO(errno.EPERM), number)
    # clone3 passes its flags in memory seccomp cannot read: ENOSYS makes libc fall back to clone.
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    f.add_rule(
        sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
    )
    for request in (TIOCSTI, TIOCLINUX):
        f.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    if not network:
        f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket")
    else:
        for family in range(_LAST_FAMILY + 1):
            if family not in NETWORK_FAMILIES:
                f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.EQ, family))
        f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.GT, _LAST_FAMILY))
    for kind in range(_SOCK_TYPE_MASK + 1):
        if kind not in _PAIR_TYPES:
            f.add_rule(
                sc.ERRNO(errno.EPROTONOSUPPORT),
                "socketpair",
                sc.Arg(1, sc.MASKED_EQ, _SOCK_TYPE_MASK, kind),
            )
    if host_namespaces:
        for name in ("setsid", "setpgid"):
            f.add_rule(sc.ERRNO(0), name)
    tmp = out.with_name(f".{out.name}.{os.getpid()}")
    with open(tmp, "wb") as fh:
        f.export_bpf(fh)
    os.replace(tmp, out)


def program(cache: Path, network: bool, host_namespaces: bool) -> Path:
    """The path of the compiled program for these rules, building it on first use."""
    out = cache / f"seccomp-{rules_key(network, host_namespaces)}.bpf"
    if not out.exists():
        cache.mkdir(parents=True, exist_ok=True)
        build(network, host_namespaces, out)
    return out
