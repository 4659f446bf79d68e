"""The git runner's process handling, with plain shell commands standing in for git: output
bounds, the timeout (the whole group killed), a stop from the event loop's thread, and a child
that escaped the group while holding a pipe open."""

from __future__ import annotations

import asyncio
import errno
import os
import threading
import time
from pathlib import Path

import pytest

from s_code.git import runner
from s_code.git.runner import MAX_STDERR, Handle, _spawn_sync
from s_code.protocol.errors import ErrorKind, SCodeError
from tests.polling import until

ENV = {"PATH": "/usr/bin:/bin"}


@pytest.fixture(autouse=True, params=["pidfd", "no-pidfd"])
def exit_watch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs twice: with the child's pidfd, and as on a kernel without pidfd_open."""
    if request.param == "no-pidfd":

        def refused(pid: int) -> int:
            raise OSError(errno.ENOSYS, "Function not implemented")

        monkeypatch.setattr(runner.os, "pidfd_open", refused)
    return str(request.param)


def run(script: str, cwd: Path, *, max_bytes: int = 1 << 20, timeout: float = 10.0, handle=None):
    return _spawn_sync(["sh", "-c", script], ENV, str(cwd), max_bytes, timeout, handle or Handle())


def alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for its parent (init may be slow to reap here)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def pid_in(pid_file: Path) -> int:
    """The pid a script wrote (polled: a backgrounded writer may not have got there yet)."""
    return int(until(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the pid"))


def wait_dead(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_output_exit_code_and_stderr_are_kept(tmp_path: Path) -> None:
    out = run("printf 'a\\0b'; echo oops >&2; exit 3", tmp_path)
    assert (out.stdout, out.stderr, out.returncode, out.truncated) == (b"a\0b", "oops\n", 3, False)


def test_stdout_past_the_bound_is_cut_and_the_writer_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    out = run(f"echo $$ > {pid_file}; yes 0123456789", tmp_path, max_bytes=100_000)
    assert out.truncated and len(out.stdout) == 100_000
    assert out.stdout.startswith(b"0123456789\n")
    assert wait_dead(int(pid_file.read_text()))


def test_stderr_is_bounded_and_drained(tmp_path: Path) -> None:
    """A chatty stderr neither blocks the child (it is drained) nor grows without bound."""
    out = run("head -c 1000000 /dev/zero | tr '\\0' e >&2; echo done", tmp_path)
    assert out.stdout == b"done\n" and out.returncode == 0
    assert len(out.stderr) == MAX_STDERR


def test_a_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    pid_file, natural = tmp_path / "pid", tmp_path / "natural"
    with pytest.raises(SCodeError) as err:
        run(f"(sleep 60; touch {natural}) & echo $! > {pid_file}; wait", tmp_path, timeout=0.5)
    assert err.value.kind == ErrorKind.TIMEOUT
    assert not natural.exists(), "the call waited for the child's own end"
    assert wait_dead(int(pid_file.read_text())), "the background child outlived the timeout"


def test_a_child_that_left_the_group_holding_stdout_cannot_hold_the_call(tmp_path: Path) -> None:
    """``setsid`` puts the sleeper beyond the group kill, and it keeps stdout open: the call
    still ends at its deadline instead of waiting for the pipe to close."""
    pid_file = tmp_path / "pid"
    try:
        with pytest.raises(SCodeError) as err:
            run(
                f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 60' & exit 0",
                tmp_path,
                timeout=1.0,
            )
        assert err.value.kind == ErrorKind.TIMEOUT
        # the call ended while the escapee (holding stdout) still ran: it did not wait for it
        assert alive(pid_in(pid_file)), "the call waited for the escapee's pipe"
    finally:
        for _ in range(100):
            if pid_file.exists() and pid_file.read_text().strip():
                os.kill(int(pid_file.read_text()), 9)
                break
            time.sleep(0.02)


def stopper(pid_file: Path) -> tuple[Handle, threading.Thread]:
    """A handle, and a thread (the event loop's stand-in) that stops it once ``pid_file`` names
    the process the script started."""
    handle = Handle()

    def stop_when_started() -> None:
        while not pid_file.exists() or not pid_file.read_text().strip():
            time.sleep(0.01)
        handle.stop()

    thread = threading.Thread(target=stop_when_started)
    thread.start()
    return handle, thread


def test_a_stop_from_another_thread_kills_the_group_and_cancels(tmp_path: Path) -> None:
    pid_file, natural = tmp_path / "pid", tmp_path / "natural"
    handle, thread = stopper(pid_file)
    with pytest.raises(asyncio.CancelledError):
        run(f"(sleep 60; touch {natural}) & echo $! > {pid_file}; wait", tmp_path, handle=handle)
    thread.join()
    assert not natural.exists(), "the stop waited for the child's own end"
    assert wait_dead(int(pid_file.read_text()))


def test_a_stopped_handle_spawns_nothing_more(tmp_path: Path) -> None:
    handle = Handle()
    handle.stop()
    with pytest.raises(asyncio.CancelledError):
        run(f"touch {tmp_path / 'ran'}", tmp_path, handle=handle)
    assert not (tmp_path / "ran").exists()


def test_a_child_that_closed_its_pipes_and_lingers_times_out(tmp_path: Path) -> None:
    natural = tmp_path / "natural"
    with pytest.raises(SCodeError) as err:
        run(f"exec >/dev/null 2>&1; sleep 60; touch {natural}", tmp_path, timeout=0.5)
    assert err.value.kind == ErrorKind.TIMEOUT
    assert not natural.exists(), "the call waited for the child's own end"


def test_a_group_member_left_behind_by_the_leader_is_killed_at_the_timeout(tmp_path: Path) -> None:
    """The leader exits at once; a background member of its group keeps stdout open: at the
    deadline the whole group is killed (the unreaped leader keeps the group id ours)."""
    pid_file = tmp_path / "pid"
    with pytest.raises(SCodeError) as err:
        run(f"sleep 60 & echo $! > {pid_file}; exit 0", tmp_path, timeout=0.5)
    assert err.value.kind == ErrorKind.TIMEOUT
    assert wait_dead(int(pid_file.read_text())), "the group member outlived the call"


def test_a_stop_ends_the_call_even_while_an_escaped_child_holds_stdout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    handle, thread = stopper(pid_file)
    try:
        with pytest.raises(asyncio.CancelledError):
            run(
                f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 60' & sleep 60",
                tmp_path,
                timeout=30,
                handle=handle,
            )
        # the call ended while the escapee (holding stdout) still ran: it did not wait for it
        assert alive(pid_in(pid_file)), "the stop waited for the escapee's pipe"
    finally:
        thread.join()
        os.kill(int(pid_file.read_text()), 9)
