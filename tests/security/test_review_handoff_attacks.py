"""Review of the handoff (SECURITY.md M2): attacks on the descriptors an attached ``s-code mcp``
hands to the editor's sidecar (``SCM_RIGHTS``), against a real sidecar.

A peer here is of this uid and holds the token (anything less is closed before the handoff,
test_agent_link.py); what it must still not get is a sidecar that blocks or spins, leaks
descriptors, keeps an agent alive past its process, or lets the agent's pipes into commands.
Each attack checks the sidecar answers the editor afterwards and serves a plain pipe pair.
Three broke when the review ran and are fixed by class: a peer clearing O_NONBLOCK on its copy
of a handed pipe blocked the sidecar's event loop (now every stream is read and written through
a description of the sidecar's own, or with MSG_DONTWAIT: mcp_face/fdio.py); a socket whose error
queue is not empty spun it (only connected unix stream sockets are taken, and a wake-up with an
error or a hang-up and nothing to read ends the stream); a peer that handed the link connection
itself left an agent (a slot) behind for good (an agent now ends with its peer's process, a
pidfd).
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import fcntl
import json
import os
import select
import socket
import subprocess
import sys
import termios
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.polling import until
from tests.security.sandbox_support import alive, available_tiers, tier_env
from tests.security.test_agent_handoff import (
    HELLO,
    agents,
    closed_unserved,
    connect,
    hand,
    line,
    read_line,
    served,
)
from tests.security.test_agent_link import ENV, Editor, attach, editor
from tests.security.test_review30_attacks import Editor as R30Editor
from tests.security.test_review30_attacks import private_runtime, workspace

from s_code.lsp.admission import ADMISSION_TIMEOUT
from s_code.protocol.framing import frame, read_framed

__all__ = ["editor", "workspace"]

DEADLINE_S = 30.0
LIBC = ctypes.CDLL(None, use_errno=True)


# -- helpers --------------------------------------------------------------------------------


def wait_for(check: Any, timeout: float = DEADLINE_S, what: str = "the state") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what} never came"
        time.sleep(0.05)


def unread(fd: int) -> int:
    """The bytes written to a pipe or socket and not read from it yet (by anyone holding it)."""
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]


def full(fd: int) -> bool:
    """Is the pipe whose read end we hold as ``fd`` full: room for less than one atomic write
    (``PIPE_BUF``) left, so a writer's next line waits?"""
    return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) - unread(fd) < select.PIPE_BUF


def closed(sock: socket.socket) -> bool:
    """Has the sidecar closed its end of our link connection?"""
    if not select.select([sock], [], [], 0)[0]:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except ConnectionResetError:
        return True


def dealt_with(editor: Editor, sock: socket.socket, stdin: int | None = None) -> bool:
    """Has the sidecar dealt with the descriptors handed over ``sock``: it closed the connection
    (it took none), or it serves an agent and has read what was written to its stdin (``stdin``:
    our copy of the read end it got)?"""
    return closed(sock) or (bool(agents(editor)) and (stdin is None or unread(stdin) == 0))


def sidecar_fds(editor: Editor) -> dict[str, str]:
    pid = editor.client.proc.pid
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            out[fd] = os.readlink(f"/proc/{pid}/fd/{fd}")
    return out


def holds(editor: Editor, fd: int) -> bool:
    """Does the sidecar hold a descriptor of the same pipe or socket as our ``fd``?"""
    ino = os.fstat(fd).st_ino
    return any(t.endswith(f":[{ino}]") for t in sidecar_fds(editor).values())


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def spins(editor: Editor, seconds: float = 2.0) -> float:
    """The sidecar's CPU use (1.0 = one core) over ``seconds`` while nothing is asked of it."""
    pid = editor.client.proc.pid
    before, start = cpu_ticks(pid), time.monotonic()
    time.sleep(seconds)
    used = (cpu_ticks(pid) - before) / os.sysconf("SC_CLK_TCK")
    return used / (time.monotonic() - start)


def answers(editor: Editor, timeout: float = 10.0) -> bool:
    """Does the sidecar answer an editor request within ``timeout``?"""
    try:
        editor.client.request("s-code/permissionMode/get", {}, timeout=timeout)
    except TimeoutError:
        return False
    return True


class Pipes:
    """An agent's two pipes: ``in_w`` -> (stdin) ``in_r``, ``out_w`` (stdout) -> ``out_r``."""

    def __init__(self) -> None:
        self.in_r, self.in_w = os.pipe()
        self.out_r, self.out_w = os.pipe()

    def theirs(self) -> list[int]:
        return [self.in_r, self.out_w]

    def drop_theirs(self) -> None:
        for fd in self.theirs():
            with contextlib.suppress(OSError):
                os.close(fd)

    def close(self) -> None:
        for fd in (self.in_r, self.in_w, self.out_r, self.out_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def initialize(self) -> dict[str, Any]:
        os.write(self.in_w, line(HELLO))
        return dict(json.loads(read_line(self.out_r)))


@pytest.fixture
def pipes() -> Iterator[Pipes]:
    made = Pipes()
    try:
        yield made
    finally:
        made.close()


# == the shared open file description: O_NONBLOCK is the peer's to clear =====================


def test_a_peer_clearing_o_nonblock_on_stdin_cannot_block_the_event_loop(
    editor: Editor, pipes: Pipes
) -> None:
    """The sidecar's copy of the agent's stdin shares its open file description (and so its
    O_NONBLOCK) with the copy the peer kept: cleared there, the sidecar's next read of the pipe
    waits in the event loop itself, and the editor is answered no more."""
    sock = hand(editor, pipes.theirs())
    try:
        assert "serverInfo" in pipes.initialize()["result"]  # control: served
        assert answers(editor)
        os.set_blocking(pipes.in_r, True)  # our copy: the same open file as the sidecar's
        os.write(pipes.in_w, line({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        # (the sidecar reads the ping, and reads again before it answers: no more data)
        assert answers(editor, timeout=5), "the sidecar's event loop waits in a read of our pipe"
    finally:
        os.close(pipes.in_w)  # the read ends (EOF): the loop goes on
        sock.close()


def test_a_peer_clearing_o_nonblock_on_stdout_cannot_block_the_event_loop(
    editor: Editor, pipes: Pipes
) -> None:
    sock = hand(editor, pipes.theirs())
    try:
        assert "serverInfo" in pipes.initialize()["result"]
        assert answers(editor)
        os.set_blocking(pipes.out_w, True)
        ping = b"".join(line({"jsonrpc": "2.0", "id": i, "method": "ping"}) for i in range(3000))
        os.write(pipes.in_w, ping)  # ~200 KiB of answers for a 64 KiB pipe nobody reads
        until(lambda: full(pipes.out_r), what="the agent's stdout, full")  # the next write waits
        assert answers(editor, timeout=5), "the sidecar's event loop waits in a write to our pipe"
    finally:
        os.set_blocking(pipes.out_r, False)
        with contextlib.suppress(BlockingIOError):
            while os.read(pipes.out_r, 1 << 16):
                pass
        os.close(pipes.out_r)  # EPIPE for the writer: the loop goes on
        sock.close()


# == the agent's life is its process's ======================================================


PEER = """
import os, socket, sys
from s_code.protocol.framing import frame, read_framed

path, token, root, how = sys.argv[1:]
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(path)
hello = {"token": token, "workspace": root, "handoff": True}
sock.sendall(frame({"jsonrpc": "2.0", "id": 1, "method": "s-code/agent/attach", "params": hello}))
assert read_framed(sock)["result"]["handoff"] is True
if how == "its own end":
    fds = [sock.fileno(), sock.fileno()]
else:  # its own end in flight to a socket the sidecar holds and only writes to
    a, b = socket.socketpair()
    socket.send_fds(b, [b"x"], [sock.fileno()])
    fds = [b.fileno(), a.fileno()]
socket.send_fds(sock, [b"\\0"], fds)
os._exit(0)  # the peer is gone: nothing of it is left but what the sidecar holds
"""


def leave_behind(editor: Editor, how: str) -> None:
    """A peer process that hands the sidecar what keeps its link connection open, and exits."""
    argv = [sys.executable, "-c", PEER, editor.place.socket, editor.token, str(editor.root), how]
    done = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("how", ["its own end", "its own end in flight"])
def test_a_stream_cannot_outlive_its_process_by_handing_the_link_itself(
    editor: Editor, pipes: Pipes, how: str
) -> None:
    """The peer hands its own end of the link connection (or a socket with that end in flight)
    as stdin and stdout, then exits: the sidecar holds what keeps the connection open, and yet
    the agent ends with its process (it held one of the MAX_AGENTS slots for good)."""
    with hand(editor, pipes.theirs()):
        wait_for(lambda: len(agents(editor)) == 1)
    pipes.drop_theirs()
    wait_for(lambda: agents(editor) == [], what="a plain handoff's end")  # control
    leave_behind(editor, how)
    wait_for(lambda: agents(editor) == [], timeout=15, what="the agent's end after its peer went")


def test_peers_that_left_cannot_take_every_agent_slot(editor: Editor) -> None:
    for _ in range(8):
        leave_behind(editor, "its own end")
    wait_for(lambda: agents(editor) == [], timeout=15, what="the slots of the peers that left")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(editor.place.socket)
        sock.sendall(frame(attach(editor.token, str(editor.root))))
        reply = read_framed(sock)
    assert "result" in reply, f"no process is attached, yet a new agent is refused: {reply}"


# == descriptors the sidecar polls: none may make it spin ====================================


def _udp_with_an_error_queued() -> socket.socket:
    """A UDP socket whose error queue holds an ICMP error and whose pending error is taken:
    epoll says EPOLLERR for ever, a read says EAGAIN for ever."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.setsockopt(socket.IPPROTO_IP, getattr(socket, "IP_RECVERR", 11), 1)
    udp.connect(("127.0.0.1", closed_port))
    udp.send(b"x")
    wait_for(lambda: select.select([], [], [udp], 0)[2] or select.select([udp], [], [], 0)[0])
    udp.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)  # takes sk_err; the queue stays
    udp.setblocking(False)
    # positive control: ready for reading, and yet nothing to read
    assert select.select([udp], [], [], 0)[0]
    with pytest.raises(BlockingIOError):
        udp.recv(1)
    return udp


def test_a_socket_always_ready_and_never_readable_does_not_spin_the_sidecar(
    editor: Editor, pipes: Pipes
) -> None:
    """Such a socket is no unix stream socket: refused (were one of those ever ready with an
    error and nothing to read, its stream would end)."""
    sock = hand(editor, pipes.theirs())
    try:
        assert "serverInfo" in pipes.initialize()["result"]
        assert spins(editor) < 0.3  # control: a served plain pipe pair costs nothing idle
    finally:
        sock.close()
        pipes.close()
    udp = _udp_with_an_error_queued()
    try:
        out_r, out_w = os.pipe()
        with hand(editor, [udp.fileno(), out_w]) as handed:
            os.close(out_w)
            assert handed.recv(1) == b""  # refused: the connection closed
            assert agents(editor) == []
            used = spins(editor)
            assert used < 0.3, f"the sidecar spins on the handed socket ({used:.0%} of a core)"
        os.close(out_r)
    finally:
        udp.close()


def _timerfd() -> int:
    fd = int(LIBC.timerfd_create(1, 0))  # CLOCK_MONOTONIC
    assert fd >= 0, os.strerror(ctypes.get_errno())
    return fd


def _inotify() -> int:
    fd = int(LIBC.inotify_init1(0))
    assert fd >= 0, os.strerror(ctypes.get_errno())
    return fd


def _epoll() -> int:
    ep = select.epoll()
    try:
        return os.dup(ep.fileno())
    finally:
        ep.close()


def _o_path_fifo(tmp_path: Path) -> int:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return os.open(fifo, os.O_PATH)


def _pty() -> int:
    master, slave = os.openpty()
    os.close(master)
    return slave


KINDS: dict[str, Any] = {
    "eventfd": lambda tmp: os.eventfd(1),
    "timerfd": lambda tmp: _timerfd(),
    "memfd": lambda tmp: os.memfd_create("x"),
    "epoll": lambda tmp: _epoll(),
    "pidfd": lambda tmp: os.pidfd_open(os.getpid()),
    "inotify": lambda tmp: _inotify(),
    "O_PATH fifo": _o_path_fifo,
    "directory": lambda tmp: os.open(tmp, os.O_RDONLY | os.O_DIRECTORY),
    "terminal": lambda tmp: _pty(),
}


@pytest.mark.parametrize("side", ["stdin", "stdout"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_no_other_kind_of_descriptor_is_taken(
    editor: Editor, pipes: Pipes, tmp_path: Path, kind: str, side: str
) -> None:
    odd = KINDS[kind](tmp_path)
    try:
        fds = [odd, pipes.out_w] if side == "stdin" else [pipes.in_r, odd]
        os.write(pipes.in_w, line(HELLO))
        closed_unserved(hand(editor, fds))
        pipes.drop_theirs()
        os.set_blocking(pipes.out_r, False)
        assert os.read(pipes.out_r, 1) == b""  # unanswered, and no write end kept
        assert not holds(editor, pipes.in_w)
        assert agents(editor) == []
    finally:
        os.close(odd)
    served(editor)


def _listening() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def _listening_with_a_caller() -> socket.socket:
    sock = _listening()
    # pending: ready to accept for ever
    _KEPT.append(socket.create_connection(sock.getsockname()))
    return sock


_KEPT: list[socket.socket] = []


def _dgram_peer_gone() -> socket.socket:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    b.close()
    return a


SOCKETS: dict[str, Any] = {
    "listening tcp": _listening,
    "listening tcp with a caller": _listening_with_a_caller,
    "unconnected unix": lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM),
    "unbound udp": lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM),
    "netlink": lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0),
    "dgram, peer gone": _dgram_peer_gone,
    "seqpacket, shut down": lambda: _shut(socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)),
}


def _shut(pair: tuple[socket.socket, socket.socket]) -> socket.socket:
    pair[0].shutdown(socket.SHUT_RDWR)
    pair[1].close()
    return pair[0]


@pytest.mark.parametrize("side", ["stdin", "stdout"])
@pytest.mark.parametrize("kind", list(SOCKETS))
def test_a_socket_in_an_odd_state_neither_blocks_nor_spins_the_sidecar(
    editor: Editor, pipes: Pipes, kind: str, side: str
) -> None:
    """Any socket passes the check: whatever state it is in, the sidecar stays idle and
    answering, and lets it go with the connection."""
    odd = SOCKETS[kind]()
    try:
        fds = [odd.fileno(), pipes.out_w] if side == "stdin" else [pipes.in_r, odd.fileno()]
        with hand(editor, fds) as sock:
            if side == "stdout":
                os.write(pipes.in_w, line(HELLO))  # answers to a socket that takes none
            stdin = pipes.in_r if side == "stdout" else None
            until(lambda: dealt_with(editor, sock, stdin), what="the handoff taken")
            assert answers(editor)
            used = spins(editor, 1.5)
            assert used < 0.3, f"the sidecar spins ({used:.0%} of a core)"
        wait_for(lambda: agents(editor) == [])
        assert not holds(editor, odd.fileno()) and not holds(editor, pipes.out_r)
    finally:
        odd.close()
    served(editor)


# == the fd byte: early, never, crowded ========================================================


def test_a_fd_byte_sent_before_the_reply_is_dropped_not_leaked(
    editor: Editor, pipes: Pipes
) -> None:
    """Pipelined with the request: the transport reads the byte (its descriptors are discarded
    by the kernel: a plain recv has no room for them), and the handoff waits in vain."""
    before = len(sidecar_fds(editor))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(ADMISSION_TIMEOUT + 10)
    sock.connect(editor.place.socket)
    hello = attach(editor.token, str(editor.root))
    hello["params"]["handoff"] = True
    sock.sendall(frame(hello))
    socket.send_fds(sock, [b"\0"], pipes.theirs())
    pipes.drop_theirs()
    assert read_framed(sock)["result"]["handoff"] is True
    closed_unserved(sock)  # after ADMISSION_TIMEOUT
    assert not holds(editor, pipes.in_w) and not holds(editor, pipes.out_r)
    assert agents(editor) == []
    wait_for(lambda: len(sidecar_fds(editor)) <= before)
    served(editor)


def test_a_peer_that_never_sends_the_fd_byte_leaves_its_slot_after_the_timeout(
    editor: Editor,
) -> None:
    sock = connect(editor)
    try:
        assert len(agents(editor)) == 1  # the slot is taken while the byte is awaited
        wait_for(lambda: agents(editor) == [], timeout=ADMISSION_TIMEOUT + 10)
        closed_unserved(sock)
    finally:
        sock.close()
    served(editor)


def test_many_descriptors_and_credentials_are_refused_and_closed(
    editor: Editor, pipes: Pipes
) -> None:
    more = [os.dup(pipes.in_r) for _ in range(250)]
    try:
        ucred = _ints([os.getpid(), os.getuid(), os.getgid()])
        sock = connect(editor)
        sock.sendmsg(
            [b"\0"],
            [
                (socket.SOL_SOCKET, socket.SCM_CREDENTIALS, ucred),
                (socket.SOL_SOCKET, socket.SCM_RIGHTS, _ints([*pipes.theirs(), *more])),
            ],
        )
        closed_unserved(sock)
    finally:
        for fd in more:
            os.close(fd)
    pipes.drop_theirs()
    assert not holds(editor, pipes.in_w) and not holds(editor, pipes.out_r)
    assert agents(editor) == []
    served(editor)


def _ints(fds: list[int]) -> bytes:
    return bytes((ctypes.c_int * len(fds))(*fds))


def test_bytes_and_descriptors_after_the_fd_byte_are_dropped(editor: Editor, pipes: Pipes) -> None:
    sock = hand(editor, pipes.theirs(), extra=b"Content-Length: 2\r\n\r\n{}")
    try:
        extra_r, extra_w = os.pipe()
        socket.send_fds(sock, [b"more"], [extra_r, extra_w])
        sock.sendall(b"x" * (1 << 20))
        os.close(extra_r)
        assert "serverInfo" in pipes.initialize()["result"]
        assert not holds(editor, extra_w)  # the late descriptors were not kept
        os.close(extra_w)
    finally:
        sock.close()
    pipes.drop_theirs()
    wait_for(lambda: agents(editor) == [])


def test_handoffs_leave_no_descriptor_behind(editor: Editor, tmp_path: Path) -> None:
    served(editor)  # the SDK imported, the first agent's lasting state made
    before = len(sidecar_fds(editor))
    for i in range(12):
        pipes = Pipes()
        try:
            if i % 3 == 0:
                served_pipes(editor, pipes)
            elif i % 3 == 1:
                closed_unserved(hand(editor, [pipes.in_r, pipes.out_r]))  # refused
            else:
                closed_unserved(hand(editor, [pipes.in_r, pipes.out_w, pipes.out_w]))
            pipes.drop_theirs()
            assert not holds(editor, pipes.in_w) and not holds(editor, pipes.out_r)
        finally:
            pipes.close()
    wait_for(lambda: agents(editor) == [])
    wait_for(lambda: len(sidecar_fds(editor)) <= before, what=f"{before} descriptors")


def served_pipes(editor: Editor, pipes: Pipes) -> None:
    with hand(editor, pipes.theirs()):
        assert "serverInfo" in pipes.initialize()["result"]
    wait_for(lambda: agents(editor) == [])


# == the agent's side ==========================================================================


def test_the_agent_s_own_ends_keep_their_blocking_mode(editor: Editor, pipes: Pipes) -> None:
    """O_NONBLOCK is set on no end the agent or its s-code mcp holds."""
    sock = hand(editor, pipes.theirs())
    try:
        assert "serverInfo" in pipes.initialize()["result"]
        assert os.get_blocking(pipes.in_w) and os.get_blocking(pipes.out_r)
        # the handed ends too: the sidecar reads and writes through descriptions of its own
        # (when the review ran, it set O_NONBLOCK on the handed ones, shared with the agent's)
        assert os.get_blocking(pipes.in_r) and os.get_blocking(pipes.out_w)
    finally:
        sock.close()


def test_one_pipe_for_both_ends_neither_loops_nor_spins(editor: Editor) -> None:
    """stdout is the write end of stdin's own pipe: the sidecar reads what it writes."""
    r, w = os.pipe()
    try:
        with hand(editor, [r, w]) as sock:
            os.write(w, line(HELLO) + b"not json\n")
            until(lambda: dealt_with(editor, sock, r), what="the handoff taken, its input read")
            assert answers(editor)
            used = spins(editor, 1.5)
            assert used < 0.3, f"the sidecar talks to itself ({used:.0%} of a core)"
        wait_for(lambda: agents(editor) == [])
        assert not holds(editor, r)
    finally:
        os.close(r)
        os.close(w)


def test_a_fifo_opened_read_write_for_both_ends_with_the_connection(
    editor: Editor, tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)
    try:
        with hand(editor, [fd, fd]):
            wait_for(lambda: len(agents(editor)) == 1)
            assert answers(editor)
        wait_for(lambda: agents(editor) == [])
        assert not holds(editor, fd)
    finally:
        os.close(fd)


# == the agent's pipes reach no process the sidecar starts ====================================


def holders(ino: int) -> set[int]:
    """The processes holding a descriptor of the pipe or socket ``ino``."""
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}").endswith(f":[{ino}]"):
                        found.add(int(pid))
    return found


def _reply(fd: int, rid: int) -> dict[str, Any]:
    while True:
        got = json.loads(read_line(fd, 60))
        if got.get("id") == rid:
            return dict(got)


@pytest.mark.parametrize("tier", available_tiers() or [0], ids=lambda t: f"tier{t}")
def test_a_command_run_for_a_handed_agent_holds_none_of_its_pipes(
    workspace: Path, tier: int
) -> None:
    if tier == 0:
        pytest.skip("no sandbox tier on this machine")
    runtime = private_runtime()
    editor = R30Editor(workspace, runtime, env=tier_env(tier))
    editor.answers.append("Approve once")
    pipes = Pipes()
    link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        link.connect(editor.place.socket)
        hello = attach(editor.token, str(workspace))
        hello["params"]["handoff"] = True
        link.sendall(frame(hello))
        assert read_framed(link)["result"]["handoff"] is True
        socket.send_fds(link, [b"\0"], pipes.theirs())
        ours = {os.fstat(fd).st_ino for fd in pipes.theirs()}
        pipes.drop_theirs()
        assert "serverInfo" in pipes.initialize()["result"]
        os.write(pipes.in_w, line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        marker = f"ran-{os.getpid()}"
        tag = f"{3 + (uuid.uuid4().int % 1000) / 1000:.3f}"  # a sleep argument of its own
        script = f"echo {marker}; ls -l /proc/self/fd/; sleep {tag}"
        call = {"name": "run_command", "arguments": {"command": ["sh", "-c", script]}}
        os.write(
            pipes.in_w, line({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        )
        sidecar = editor.client.proc.pid
        wait_for(lambda: len(editor.prompts) == 1, what="the command's prompt")
        until(lambda: alive(f"sleep\0{tag}"), what="the command's sleep")  # the command runs
        # positive control: the sidecar itself holds the pipes
        others = {pid for ino in ours for pid in holders(ino)} - {sidecar, os.getpid()}
        assert all(sidecar in holders(ino) for ino in ours)
        ran = _reply(pipes.out_r, 3)
        assert marker in json.dumps(ran), ran
        assert not others, f"processes other than the sidecar hold the agent's pipes: {others}"
    finally:
        link.close()
        pipes.close()
        editor.close()


def test_an_agent_that_never_reads_its_stdout_stalls_neither_the_editor_nor_other_agents(
    editor: Editor, pipes: Pipes
) -> None:
    sock = hand(editor, pipes.theirs())
    other = Pipes()
    try:
        assert "serverInfo" in pipes.initialize()["result"]
        listing = line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        os.set_blocking(pipes.in_w, False)
        blocked = False
        for _ in range(20000):  # answers far past what the pipe and the queues hold
            try:
                os.write(pipes.in_w, listing)
            except BlockingIOError:
                blocked = True
                time.sleep(0.01)
        until(lambda: full(pipes.out_r), what="the agent's stdout, full")
        assert select.select([pipes.out_r], [], [], 0)[0]  # control: its stdout is full
        assert blocked, "the sidecar took requests without bound while its answers waited"
        assert answers(editor), "the editor waits on an agent that does not read"
        with hand(editor, other.theirs()):
            assert "serverInfo" in other.initialize()["result"]
    finally:
        sock.close()
        other.close()
    pipes.drop_theirs()
    wait_for(lambda: agents(editor) == [])
    assert not holds(editor, pipes.out_r)


# == the real s-code mcp: the agent's death, a terminal ======================================


def test_when_the_agent_dies_its_s_code_mcp_and_its_slot_go_too(editor: Editor) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "s_code", "mcp", "--workspace", str(editor.root)],
        env=ENV,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(line(HELLO))
        proc.stdin.flush()
        assert "serverInfo" in json.loads(read_line(proc.stdout.fileno()))["result"]
        wait_for(lambda: len(agents(editor)) == 1)  # control
        proc.stdin.close()  # the agent is gone: its ends of both pipes close
        proc.stdout.close()
        assert proc.wait(DEADLINE_S) == 0
        wait_for(lambda: agents(editor) == [])
    finally:
        proc.kill()
        proc.wait()


def test_a_terminal_on_stdin_is_relayed_not_handed(editor: Editor) -> None:
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "s_code", "mcp", "--workspace", str(editor.root)],
        env=ENV,
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    os.close(slave)
    assert proc.stdout is not None
    try:
        os.write(master, line(HELLO))
        assert "serverInfo" in json.loads(read_line(proc.stdout.fileno()))["result"]
        assert os.readlink(f"/proc/{proc.pid}/fd/0").startswith("/dev/pts/")  # kept: relayed
        assert not holds(editor, proc.stdout.fileno())
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
