"""Background terminals through the real sidecar: approved at every start, read by cursor,
written to, streamed redacted, killed with their whole tree, ended with the session, reaped after
a crash."""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from s_code.client import RpcError
from s_code.protocol import methods
from tests.e2e.host_support import SECRET, HostLab, host_lab
from tests.security.sandbox_support import alive

PY = sys.executable
ECHO = (
    "import sys\nprint('ready', flush=True)\n"
    "for l in sys.stdin: print('echo:' + l.strip(), flush=True)"
)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[HostLab]:
    yield from host_lab(tmp_path)


def start(lab: HostLab, command: list[str], **more: Any) -> str:
    return str(lab.tool("terminal_start", {"command": command, **more})["terminal_id"])


def read_until(lab: HostLab, tid: str, text: str, timeout: float = 10) -> dict[str, Any]:
    def check() -> Any:
        got = lab.tool("terminal_read", {"terminal_id": tid, "max_bytes": 1 << 20})
        return got if text in got["output"] else None

    return lab.wait(check, timeout)  # type: ignore[no-any-return]


def gone(marker: str, timeout: float = 0.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive(marker) == []


def test_every_start_asks_in_every_mode_one_approval_per_start(lab: HostLab) -> None:
    lab.start("workspace")  # the most permissive mode still asks
    found = lab.call(methods.TOOLS_SEARCH, {"query": "background terminal start"})
    assert "terminal_start" in [t["name"] for t in found["tools"]]
    tid = start(lab, [PY, "-c", "print('one')"])
    tid2 = start(lab, [PY, "-c", "print('two')"])
    assert tid != tid2 and len(lab.editor.messages) == 2
    assert (
        "outside the sandbox with your account's filesystem and network access"
        in (lab.editor.messages[0])
    )
    lab.editor.answer = "Deny"
    marker = f"never-{uuid.uuid4().hex[:6]}"
    with pytest.raises(RpcError) as err:
        start(lab, [PY, "-c", f"import time; time.sleep(30)  # {marker}"])
    assert err.value.kind == "approval_denied"
    assert alive(marker) == []
    assert len(lab.tool("terminal_list", {})["terminals"]) == 2


def test_stdin_and_streamed_output(lab: HostLab) -> None:
    lab.start()
    tid = start(lab, [PY, "-u", "-c", ECHO])
    read_until(lab, tid, "ready")
    assert lab.tool("terminal_write", {"terminal_id": tid, "text": "hello\n"})["written"] == 6
    got = read_until(lab, tid, "echo:hello")
    assert got["output"] == "ready\necho:hello\n" and got["cursor"] == 17 and got["exit"] is None
    again = lab.tool("terminal_read", {"terminal_id": tid, "cursor": got["cursor"]})
    assert again["output"] == "" and again["cursor"] == 17  # only what is new
    streamed = [n for n in lab.notifications(methods.TERMINAL_OUTPUT) if n["terminalId"] == tid]
    assert "".join(n["text"] for n in streamed) == got["output"]
    assert [n["seq"] for n in streamed] == list(range(1, len(streamed) + 1))
    listed = lab.entries("terminal")
    assert listed[0]["name"] == tid and listed[0]["state"] == "running"


def test_a_pty_program(lab: HostLab) -> None:
    lab.start()
    code = "import os; print(os.isatty(0), os.isatty(1)); s = input('name? '); print('hi', s)"
    tid = start(lab, [PY, "-c", code], tty=True)
    got = read_until(lab, tid, "name? ")  # a prompt without a newline shows
    assert "True True" in got["output"]
    lab.tool("terminal_write", {"terminal_id": tid, "text": "bob\n"})
    waited = lab.tool("terminal_wait", {"terminal_id": tid, "timeout_ms": 10000})
    assert waited["exit"] == {"code": 0, "signal": None} and waited["timed_out"] is False
    final = lab.tool("terminal_read", {"terminal_id": tid})
    assert "hi bob" in final["output"] and final["exit"] == {"code": 0, "signal": None}


def test_output_past_the_buffer_cursor_and_omitted_bytes(lab: HostLab) -> None:
    from s_code.terminals.buffer import HEAD_BYTES, TAIL_BYTES

    lab.start()
    lines = 60000  # "line 000000\n" x 60000 = 720000 bytes, twice: 1.44 MB
    code = f"import sys\nfor i in range({lines} * 2): sys.stdout.write('line %06d\\n' % i)"
    tid = start(lab, [PY, "-c", code])
    lab.tool("terminal_wait", {"terminal_id": tid, "timeout_ms": 20000})
    total = lines * 2 * 12
    head = lab.tool("terminal_read", {"terminal_id": tid, "cursor": 0, "max_bytes": 1 << 20})
    assert head["cursor"] == HEAD_BYTES and head["truncated"] is True
    assert head["omitted_bytes"] == 0 and head["output"].startswith("line 000000\n")
    tail = lab.tool(
        "terminal_read", {"terminal_id": tid, "cursor": head["cursor"], "max_bytes": 1 << 20}
    )
    assert tail["omitted_bytes"] == total - HEAD_BYTES - TAIL_BYTES
    assert tail["cursor"] == total and tail["truncated"] is False
    stream = "".join(f"line {i:06d}\n" for i in range(lines * 2))
    assert tail["output"] == stream[total - TAIL_BYTES :]  # byte c of the stream at cursor c
    assert head["output"] == stream[:HEAD_BYTES]
    small = lab.tool("terminal_read", {"terminal_id": tid, "cursor": 24, "max_bytes": 12})
    assert small["output"] == "line 000002\n" and small["cursor"] == 36


def test_a_secret_from_a_handle_is_never_shown(lab: HostLab) -> None:
    lab.start()
    digest = hashlib.sha256(SECRET.encode()).hexdigest()
    script = (
        "import base64, os, sys, time\n"
        "t = os.environ['TOKEN']\n"
        "print('whole', t, flush=True)\n"
        "print('b64', base64.b64encode(t.encode()).decode(), flush=True)\n"
        "sys.stdout.write('split ' + t[:9]); sys.stdout.flush(); time.sleep(0.4)\n"
        "sys.stdout.write(t[9:] + '\\n'); sys.stdout.flush()\n"
        "import hashlib; print('sha', hashlib.sha256(t.encode()).hexdigest(), flush=True)\n"
    )
    tid = start(lab, [PY, "-c", script], env={"TOKEN": "${secret:env:TERM_SECRET}"})
    lab.tool("terminal_wait", {"terminal_id": tid, "timeout_ms": 10000})
    out = lab.tool("terminal_read", {"terminal_id": tid})["output"]
    assert f"sha {digest}" in out  # positive control: the process did get the value
    assert out.count("[REDACTED]") >= 3
    import base64

    streamed = "".join(n["text"] for n in lab.notifications(methods.TERMINAL_OUTPUT))
    listed = str(lab.tool("terminal_list", {})) + str(lab.entries("terminal"))
    for shown in (out, streamed, listed, "\n".join(lab.editor.messages)):
        assert SECRET not in shown and base64.b64encode(SECRET.encode()).decode() not in shown
        assert SECRET[9:] not in shown
    assert "${secret:env:TERM_SECRET}" in lab.editor.messages[0] or lab.editor.documents == []


def test_kill_ends_a_grandchild_that_ignores_sigterm_and_calls_setsid(lab: HostLab) -> None:
    marker = f"stubborn-{uuid.uuid4().hex[:8]}"
    child = (  # it says so once SIGTERM is ignored (before, a SIGTERM would still end it)
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ignoring', flush=True)\ntime.sleep(600)"
    )
    code = (  # the marker is put together at run time: only the grandchild's argv holds it
        "import subprocess, time\n"
        f"subprocess.Popen(['setsid', {PY!r}, '-c', {child!r}, {marker[:5]!r} + {marker[5:]!r}])\n"
        "print('ready', flush=True)\ntime.sleep(600)"
    )
    lab.start()
    tid = start(lab, [PY, "-c", code])
    read_until(lab, tid, "ignoring")
    pids = lab.wait(lambda: alive(marker))
    (pid,) = pids
    lab.wait(lambda: _ignores_sigterm(pid))  # (its handler is set a moment after it starts)
    # positive control: it is in a session of its own, and SIGTERM does not end it
    assert os.getsid(pid) != os.getsid(os.getpid())
    os.kill(pid, signal.SIGTERM)
    time.sleep(0.3)
    assert alive(marker) == [pid]
    killed = lab.tool("terminal_kill", {"terminal_id": tid}, timeout=30)
    assert killed["gone"] is True
    assert alive(marker) == []  # gone when the reply came, not later
    assert lab.tool("terminal_list", {})["terminals"][0]["state"] == "killed"


def test_everything_ends_with_the_session(lab: HostLab) -> None:
    marker = f"session-{uuid.uuid4().hex[:8]}"
    lab.start()
    start(lab, [PY, "-c", f"import time; time.sleep(600)  # {marker}"])
    start(lab, ["sh", "-c", f"setsid sleep 600 & exec sleep 601 # {marker}"], tty=True)
    lab.wait(lambda: len(alive(marker)) >= 2)
    lab.close()
    assert gone(marker, 10)


def test_a_killed_sidecar_s_terminals_die_and_are_reaped_at_the_next_start(lab: HostLab) -> None:
    marker = f"crash-{uuid.uuid4().hex[:8]}"
    client = lab.start()
    start(lab, [PY, "-c", f"import time; time.sleep(600)  # {marker}"])
    lab.wait(lambda: alive(marker))
    client.proc.send_signal(signal.SIGKILL)  # the helper gets its parent-death signal
    client.proc.wait()
    lab.client = None
    assert gone(marker, 10)
    # the helper itself killed outright too (no parent-death signal can act): the next start
    # reaps what is left
    client = lab.start()
    start(lab, [PY, "-c", f"import time; time.sleep(600)  # {marker}"])
    (command,) = lab.wait(lambda: [p for p in alive(marker) if _argv0(p) == PY])
    helper = int(Path(f"/proc/{command}/stat").read_text().rsplit(")", 1)[1].split()[1])
    os.kill(helper, signal.SIGKILL)
    client.proc.send_signal(signal.SIGKILL)
    client.proc.wait()
    lab.client = None
    time.sleep(0.5)
    assert command in alive(marker)  # positive control: nothing else ends it
    lab.start()
    assert gone(marker, 10)


def _ignores_sigterm(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    ignored = int(next(ln for ln in status.splitlines() if ln.startswith("SigIgn:")).split()[1], 16)
    return bool(ignored & (1 << (signal.SIGTERM - 1)))


def _argv0(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except OSError:
        return ""


def test_a_cap_on_live_terminals(lab: HostLab) -> None:
    from s_code.terminals.manager import MAX_LIVE

    lab.start()
    ids = [start(lab, ["sleep", "60"]) for _ in range(MAX_LIVE)]
    with pytest.raises(RpcError) as err:
        start(lab, ["sleep", "60"])
    assert err.value.kind == "limit_exceeded"
    lab.tool("terminal_kill", {"terminal_id": ids[0]})
    start(lab, ["sleep", "60"])  # room again


def test_the_event_loop_stays_free_while_a_terminal_floods(lab: HostLab) -> None:
    lab.start()
    tid = start(lab, [PY, "-c", "import sys\nwhile True: sys.stdout.write('x' * 4096 + '\\n')"])
    for _ in range(5):  # answered while the flood goes on (it ends only when killed)
        lab.call(methods.PERMISSION_MODE_GET)
    assert lab.tool("terminal_list", {})["terminals"][0]["state"] == "running"
    assert lab.tool("terminal_kill", {"terminal_id": tid}, timeout=30)["gone"] is True
