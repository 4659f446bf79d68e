"""Second adversarial review (red team) of the hardening in b3e4d53 / 16c9365. Each test FAILS
while the hole it names is open; positive controls first where they make sense.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from tests.security.sandbox_support import PY, Box, box, reached
from tests.security.sandbox_support import lowered as _lowered

__all__ = ["box"]

MIB = 1 << 20
DATA = Path(__file__).parent / "review2_data"


def _compiled(box: Box, name: str) -> Path:
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler")
    out = box.workspace / name
    subprocess.run(["cc", "-O2", "-pthread", "-o", str(out), str(DATA / f"{name}.c")], check=True)
    return out


# -- memory the supervisor does not count (S21) ---------------------------------------------------


def test_q1_a_thread_group_whose_leader_exited_holds_uncounted_memory(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The supervisor reads each process's memory from /proc/PID/stat and /proc/PID/status of
    the thread-group *leader*. When the leader thread calls pthread_exit() while another thread
    runs, the leader is shown as a zombie ('Z': read_stat() zeroes its rss), its status has no
    Rss lines and its /proc/PID/fd is empty (no memfd either): the whole process's memory is
    invisible. 400 MiB pass a 150 MiB limit; the same hog from the main thread is stopped."""
    _lowered(monkeypatch, memory=150 * MIB)
    hog = _compiled(box, "zombie_leader")
    control = box.py("x = bytearray(400 << 20)\nimport time; time.sleep(2); print('survived')")
    assert "stopped: more than 150 MiB" in control.output  # positive control
    outcome, _ = box.run([str(hog)])
    assert "survived" not in outcome.output, outcome.output


def test_q2_a_memfd_kept_only_by_an_untouched_mapping_is_not_counted(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    """memfd_bytes() finds memory files through /proc/PID/fd. A memfd written with write(),
    then mapped (never touched: no resident page, RssShmem 0; mmap(2) itself -- Python's mmap module
    keeps a dup of the fd) and its fd closed, stays alive in
    memory through the mapping alone and is in no fd table (so does one sent over a socketpair
    in an SCM_RIGHTS message nobody receives): 400 MiB pass a 150 MiB limit. (The
    same with the fd kept open is stopped: the positive control.)"""
    _lowered(monkeypatch, memory=150 * MIB)
    hog = (
        "import ctypes, os, sys, time\n"
        "fd = os.memfd_create('x')\n"
        "for _ in range(400): os.write(fd, b'x' * (1 << 20))\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.mmap.restype = ctypes.c_void_p\n"
        "libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,\n"
        "                      ctypes.c_int, ctypes.c_long]\n"
        "assert libc.mmap(None, 400 << 20, 1, 1, fd, 0) not in (None, 2**64 - 1)\n"
        "if sys.argv[1] == 'close': os.close(fd)\n"
        "time.sleep(2); print('survived with 400 MiB')\n"
    )
    control = box.run([PY, "-I", "-S", "-c", hog, "keep"])[0]
    assert "stopped: more than 150 MiB" in control.output, control.output
    outcome = box.run([PY, "-I", "-S", "-c", hog, "close"])[0]
    assert "survived" not in outcome.output, outcome.output


def test_q3_socket_buffers_hold_uncounted_kernel_memory(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    """socketpair() is allowed in every tier; each AF_UNIX stream socket queues up to its send
    buffer (wmem_default, ~200 KiB) of data the peer has not read, in kernel memory no /proc
    RSS counts, and (unlike pipes) no per-user limit caps. 2,000 pairs (4,000 fds, within
    RLIMIT_NOFILE) hold ~400 MiB past a 150 MiB limit; one process can hold RLIMIT_NOFILE/2
    pairs, and the tree 4,096 processes."""
    _lowered(monkeypatch, memory=150 * MIB)
    hog = (
        "import socket, time\n"
        "keep, total = [], 0\n"
        "chunk = b'x' * 65536\n"
        "for _ in range(2000):\n"
        "    a, b = socket.socketpair()\n"
        "    a.setblocking(False)\n"
        "    try:\n"
        "        while True: total += a.send(chunk)\n"
        "    except BlockingIOError: pass\n"
        "    keep += [a, b]\n"
        "print(total >> 20, 'MiB queued', flush=True)\n"
        "time.sleep(2); print('survived')\n"
    )
    outcome = box.py(hog)
    queued = (
        outcome.output.split(" MiB queued")[0].split()[-1] if "queued" in outcome.output else "0"
    )
    assert "survived" not in outcome.output or int(queued) < 150, outcome.output


def test_q5_tier1_dev_shm_is_not_counted_in_the_memory_limit(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Low: tier 1's /dev/shm is now a sized tmpfs (512 MiB), but a file written there (not
    mapped, not a memfd) is in no RSS and no fd table: up to 512 MiB of RAM on top of the memory
    limit, whatever the limit. Here 400 MiB pass a 150 MiB limit (the card says the memory limit
    is "the whole command: resident memory and memory files")."""
    if box.tier != 1:
        pytest.skip("tier 2 has no writable in-memory folder")
    _lowered(monkeypatch, memory=150 * MIB)
    outcome, _ = box.sh(
        "dd if=/dev/zero of=/dev/shm/fill bs=1M count=400 2>/dev/null && sleep 1.5 && echo survived"
    )
    assert "survived" not in outcome.output, outcome.output


# -- sockets (S-network) --------------------------------------------------------------------------


def test_q4_a_datagram_socketpair_reaches_any_host_datagram_socket(box: Box) -> None:
    """socket() is refused for AF_UNIX, but socketpair() is allowed ("a pair connects to nothing
    else"). That holds for stream pairs only: an AF_UNIX *datagram* socket may connect() again,
    or sendto() any address, so ``socketpair(AF_UNIX, SOCK_DGRAM)`` reaches every pathname
    datagram socket the command can name -- journald's /run/systemd/journal/socket and /dev/log
    (forged log entries under any identifier), systemd's notify socket, any daemon's -- in both
    tiers, without network. Landlock (ABI < 9) does not cover connect()/sendto() on a path."""
    import socket

    from s_code.sandbox import seccomp_filter, tiers

    address = str(box.outside / "daemon.dgram")
    code = (
        "import socket, sys\n"
        "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
        "a.sendto(b'pwned', sys.argv[1])\n"
    )
    argv = [PY, "-I", "-S", "-c", code, address]
    outcome: list[str] = []
    sent = reached(address, lambda: outcome.append(box.run(argv)[0].output), socket.SOCK_DGRAM)
    assert not sent, f"tier {box.tier} without network sent to a host datagram socket"
    assert "Protocol not supported" in outcome[0], outcome  # the socketpair itself is refused
    # positive control: with datagram pairs allowed by the seccomp program (nothing else
    # changed), the same command reaches the host socket
    if tiers.landlock_abi() < 9:
        pairs = (*seccomp_filter._PAIR_TYPES, socket.SOCK_DGRAM)
        with box.seccomp_with(_PAIR_TYPES=pairs):
            assert reached(address, lambda: box.run(argv), socket.SOCK_DGRAM)


# -- the check after a command, and the restore at the next start (S23, S24) ----------------------


def test_q6_tier2_a_large_protected_file_a_command_deletes_is_lost(box: Box) -> None:
    """The user's protectedPaths hold in tier 1 (bound read-only). In tier 2 the check after the
    run puts back what the command changed -- but only from the content the snapshot kept: a
    file over 4 MiB (or past the 64 MiB budget) is kept as a digest, so ``rm`` of it cannot be
    undone (create() returns False, silently), and neither can the sidecar's own removal of a
    protected directory the command overflowed with 20,001 entries (the command then deletes
    nothing itself). The card's "not prevented in this tier" does not say so."""
    from s_code.workspace.protected import ProtectedPaths

    vault = box.workspace / "secrets" / "vault.kdbx"
    vault.parent.mkdir()
    vault.write_bytes(b"\x01" * (5 << 20))
    box.session.protected = ProtectedPaths(["secrets/"])
    _, changed = box.sh("rm -f secrets/vault.kdbx; exit 0")
    if box.tier == 1:
        assert vault.exists(), f"a protected file is gone for good (reported {changed})"
        return
    # Not prevented in tier 2 (only a digest of so large a file is kept): said in the card, and
    # the report says it was not put back rather than listing it as handled.
    from s_code.sandbox.profile import not_prevented

    assert not vault.exists(), "positive control: tier 2 lets the command delete it"
    assert any("not put back" in c for c in changed), changed
    assert any("larger than 4 MiB" in note for note in not_prevented(2))
    # a protected directory overflowed with entries is set aside, not removed: nothing is lost
    keep = box.workspace / "secrets" / "small.key"
    keep.write_text("kept\n")
    _, changed = box.sh(
        "python3 -c \"import os\nfor i in range(20001): open(f'secrets/f{i}', 'w').close()\"; "
        "exit 0"
    )
    assert keep.read_text() == "kept\n", changed
    aside = [p for p in box.workspace.iterdir() if p.name.startswith("secrets.s-code-quarantined")]
    assert aside and (aside[0] / "f20000").exists(), changed


def test_q7_a_stale_snapshot_reverts_and_deletes_what_the_user_did_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """restore_interrupted() puts back a row left by a sidecar that died (the editor quit during
    a long build: the row stays) whenever the workspace is next opened -- a week later, say --
    with no bound on age and no check that what differs is the command's doing: everything the
    *user* did meanwhile under the watched paths is undone. A pre-commit hook they installed and
    a key they added under their protected ``secrets/`` are deleted (remove(), not set aside), a
    remote they added to .git/config is reverted."""
    import os

    from s_code.commands import snapshots
    from s_code.sandbox import watch
    from s_code.tools.host import open_session
    from s_code.workspace.protected import ProtectedPaths

    monkeypatch.setenv("S_CODE_STATE_DIR", str(tmp_path / "state"))
    from tests.security.test_git_support import git, make_repo

    ws = make_repo(tmp_path / "ws")
    (ws / "secrets").mkdir()
    (ws / "secrets" / "old.key").write_text("old\n")
    real = os.path.realpath(ws)
    # the sidecar snapshots, starts a build, and is killed with the editor (SIGKILL: no check)
    session = open_session([(str(ws), None)], store=True)
    session.protected = ProtectedPaths(["secrets/"])
    from s_code.commands.projection import scan

    watched = scan(session, real)
    row = snapshots.save(session.store, real, watch.snapshot(real, watched.gitdirs, watched.extra))
    assert row is not None
    import json
    import time

    (data,) = session.store.store.execute(
        "SELECT data FROM command_snapshots WHERE id = ?", (row,)
    )[0]
    ended = dict(json.loads(bytes(data)), until=time.time() - 1)  # days ago, as it were
    session.store.store.execute(
        "UPDATE command_snapshots SET pid = 999999999, data = ? WHERE id = ?",
        (json.dumps(ended).encode(), row),
    )  # its sidecar is dead
    session.close()
    # days of the user's own work, outside s-code
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexec pre-commit run\n")
    hook.chmod(0o755)
    (ws / "secrets" / "new.key").write_text("the user's new key\n")
    git(ws, "remote", "add", "origin", "https://example.invalid/repo.git")
    # the workspace is opened again
    open_session([(str(ws), None)], store=True).close()
    lost = [p for p in (hook, ws / "secrets" / "new.key") if not p.exists()]
    config = (ws / ".git" / "config").read_text()
    assert not lost and "origin" in config, f"the user's own work undone: lost {lost}"


# -- IPC shared with the host (tier 2) ------------------------------------------------------------


def test_q8_tier2_posix_message_queues_are_the_hosts(box: Box) -> None:
    """System V IPC is denied in tier 2 (its objects outlive the command and are shared with host
    processes), but POSIX message queues are not: mq_open(O_CREAT) creates a queue in the host's
    IPC namespace (Landlock then refuses the open, after the queue exists: it stays), and
    mq_unlink() removes any host queue (it calls vfs_unlink, no Landlock path hook). Tier 1 has
    its own IPC namespace."""
    import ctypes
    import os
    import uuid

    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    name = f"/s-code-review2-{uuid.uuid4().hex[:8]}".encode()
    fd = rt.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None)
    assert fd >= 0, "positive control: the host makes a queue"
    os.close(fd)
    code = (
        "import ctypes, sys\n"
        "rt = ctypes.CDLL('librt.so.1', use_errno=True)\n"
        "print('unlinked' if rt.mq_unlink(sys.argv[1].encode()) == 0 else 'refused')\n"
    )
    try:
        outcome = box.run([PY, "-I", "-S", "-c", code, name.decode()])[0]
        still = rt.mq_open(name, os.O_RDWR)
        if still >= 0:
            os.close(still)
    finally:
        rt.mq_unlink(name)
    assert still >= 0, f"tier {box.tier} removed a host message queue ({outcome.output.strip()})"
