"""SECURITY.md H14: no terminal or hook descendant survives a SIGKILL of the sidecar and its exec
helper; the next sidecar start finds it, even when it left the helper's session (``setsid``) and,
without a cgroup, even when it cleared its environment.

The helper normally ends its tree itself (when the command ends, and on the sidecar's death, by
its parent-death signal); these tests kill the helper outright first, so that nothing of it acts,
then the sidecar. The tier does not matter: host processes run outside the sandbox, under the same
helper in host mode, whatever tier the machine gives commands. Each test runs with the helper's own
cgroup (where this machine lets one be made) and with the recorded list of pids
(``S_CODE_HOST_TRACK=pids``); the positive control runs the same attack with no record kept
(``S_CODE_HOST_TRACK=off``) and shows the grandchild outlives the next start, as it did when only
the helper's session was killed.
"""

from __future__ import annotations

import contextlib
import glob
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.e2e.host_support import HostLab, host_lab
from tests.e2e.mcp_support import Lab, ServerLab
from tests.e2e.mcp_support import lab as mcp_lab
from tests.security.sandbox_support import alive

from s_code.hostproc import trees
from s_code.protocol import methods

PY = sys.executable
SLEEPER = "import time; time.sleep(1000)"


def _clean(base: Path) -> None:
    """A failed test leaves nothing running: every process that works in its folders, and the
    cgroups its records name."""
    for pid in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if pid.isdigit() and os.readlink(f"/proc/{pid}/cwd").startswith(str(base)):
                os.kill(int(pid), signal.SIGKILL)
    for path in glob.glob(str(base / "state/host-trees/*/*")):
        record = trees.read(path)
        if record is not None and record.cgroup:
            trees.kill_cgroup(record.cgroup)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[HostLab]:
    try:
        yield from host_lab(tmp_path)
    finally:
        _clean(tmp_path)


@pytest.fixture
def notes(tmp_path: Path) -> Iterator[Lab]:
    try:
        yield from mcp_lab(tmp_path)
    finally:
        _clean(tmp_path)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _helper_of(pid: int) -> int:
    """The exec helper above ``pid``."""
    while pid > 1:
        pid = int(_stat(pid)[1])
        if b"s-code-launch" in _cmdline(pid):
            return pid
    raise AssertionError("no exec helper above the process")


def _records(lab: ServerLab) -> str:
    return "".join(Path(p).read_text() for p in glob.glob(str(lab.base / "state/host-trees/*/*")))


def _track(lab: ServerLab, mode: str) -> None:
    lab.env.pop(trees.TRACK_ENV, None)
    if mode != "cgroup":
        lab.env[trees.TRACK_ENV] = mode


def _kill_helper_then_sidecar(lab: ServerLab, grandchild: int) -> int:
    """SIGKILL the helper above ``grandchild``, then the sidecar; the helper's pid."""
    assert lab.client is not None
    helper = _helper_of(grandchild)
    os.kill(helper, signal.SIGKILL)
    lab.client.proc.send_signal(signal.SIGKILL)
    lab.client.proc.wait()
    lab.client = None
    return helper


def _gone(marker: str, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive(marker) == []


def _survivor_of_a_terminal(lab: HostLab, marker: str, clear_env: bool = False) -> int:
    """A terminal whose grandchild left the helper's session and was orphaned (double fork):
    reparented to the helper, the subreaper. Its pid."""
    env = "env -i " if clear_env else ""
    split = f'"{marker[:4]}""{marker[4:]}"'  # the marker only in the grandchild's command line
    line = f"({env}setsid {PY} -c '{SLEEPER}' {split} &); exec sleep 600"
    lab.tool("terminal_start", {"command": ["sh", "-c", line]})
    (grandchild,) = lab.wait(lambda: alive(marker))
    # the same pid runs env and setsid before the sleeper: wait for the sleeper itself (its
    # environment is the one the sleeper was started with)
    lab.wait(lambda: _cmdline(int(grandchild)).split(b"\0")[0] == PY.encode())
    lab.wait(lambda: b"s-code-launch" in _cmdline(int(_stat(grandchild)[1])))
    return int(grandchild)


def _check_cgroup(lab: ServerLab, mode: str) -> None:
    if mode == "cgroup" and "cgroup /" not in _records(lab):
        pytest.skip("this machine does not let s-code make a cgroup: the list of pids is used")


@pytest.mark.parametrize("mode", ["cgroup", "pids"])
def test_h14_a_terminal_s_setsid_grandchild_dies_at_the_next_start(lab: HostLab, mode: str) -> None:
    marker = f"h14term-{uuid.uuid4().hex[:8]}"
    _track(lab, mode)
    lab.start()
    grandchild = _survivor_of_a_terminal(lab, marker)
    _check_cgroup(lab, mode)
    helper = _kill_helper_then_sidecar(lab, grandchild)
    # it left the helper's session: killing that session, all an earlier sidecar did, misses it
    assert os.getsid(grandchild) != helper
    assert grandchild not in trees.kill_session(helper, 0)
    assert alive(marker) == [grandchild]
    lab.start()
    lab.call(methods.LIST_FILES, {})  # the session is open: its start has reaped
    assert _gone(marker)
    assert _records(lab) == ""  # the dead helper's record went with its tree


def test_h14_without_a_cgroup_a_grandchild_that_cleared_its_environment_is_found_by_the_list(
    lab: HostLab,
) -> None:
    marker = f"h14envi-{uuid.uuid4().hex[:8]}"
    _track(lab, "pids")
    lab.start()
    grandchild = _survivor_of_a_terminal(lab, marker, clear_env=True)
    assert trees.TREE_ENV.encode() not in Path(f"/proc/{grandchild}/environ").read_bytes()
    lab.wait(lambda: f"pid {grandchild} " in _records(lab))  # listed within a second
    _kill_helper_then_sidecar(lab, grandchild)
    lab.start()
    lab.call(methods.LIST_FILES, {})
    assert _gone(marker)


@pytest.mark.parametrize("mode", ["cgroup", "pids"])
def test_h14_a_hook_s_setsid_grandchild_dies_at_the_next_start(lab: HostLab, mode: str) -> None:
    marker = f"h14hook-{uuid.uuid4().hex[:8]}"
    lab.script(
        "spawn.py",
        "import subprocess, time\n"
        f"subprocess.Popen(['setsid', {PY!r}, '-c', {SLEEPER!r}, {marker!r}])\n"
        "time.sleep(600)\n",
    )
    lab.pre("list_files", {"command": "./hooks/spawn.py", "timeout": 600})
    _track(lab, mode)
    lab.start()
    lab.approve_hooks()
    call = threading.Thread(target=_call_quietly, args=(lab,), daemon=True)
    call.start()  # held by the hook until the sidecar dies
    (grandchild,) = lab.wait(lambda: alive(marker))
    _check_cgroup(lab, mode)
    helper = _kill_helper_then_sidecar(lab, grandchild)
    call.join(30)
    assert os.getsid(grandchild) != helper and alive(marker) == [grandchild]
    lab.start()
    lab.call(methods.READ_FILE, {"path": "src/app.py"})  # (list_files would fire the hook)
    assert _gone(marker)


@pytest.mark.parametrize("mode", ["cgroup", "pids"])
def test_h14_an_mcp_server_s_setsid_grandchild_dies_at_the_next_start(
    notes: Lab, mode: str
) -> None:
    marker = f"h14mcp-{uuid.uuid4().hex[:8]}"
    _track(notes, mode)
    notes.start("workspace")
    notes.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "notes"})
    notes.wait_for(lambda e: e["state"] == "running" and e.get("tools"))
    notes.tool("spawn_orphan", {"marker": marker})
    (grandchild,) = alive(marker)  # started when the call returns
    _check_cgroup(notes, mode)
    helper = _kill_helper_then_sidecar(notes, grandchild)
    assert os.getsid(grandchild) != helper and alive(marker) == [grandchild]
    notes.start("workspace")
    notes.call(methods.LIST_FILES, {})
    assert _gone(marker)


def _call_quietly(lab: HostLab) -> None:
    with contextlib.suppress(Exception):  # the sidecar is killed under the call
        lab.call(methods.LIST_FILES, {}, timeout=120)


def test_h14_positive_control_untracked_the_grandchild_outlives_the_next_start(
    lab: HostLab,
) -> None:
    marker = f"h14ctl-{uuid.uuid4().hex[:8]}"
    _track(lab, "off")
    lab.start()
    grandchild = _survivor_of_a_terminal(lab, marker)
    try:
        _kill_helper_then_sidecar(lab, grandchild)
        lab.start()
        lab.call(methods.LIST_FILES, {})  # the start has reaped what it knew of
        assert alive(marker) == [grandchild]
    finally:
        for pid in alive(marker):
            os.kill(pid, signal.SIGKILL)
