"""Finding 11 of issue 29: a resolved secret never goes into a command line.

A process's command line is readable by every program of the user (``/proc/PID/cmdline``), a
sandboxed command at tier 2 included (it shares the host's PID namespace); its environment is
readable only by what may trace it, which the sandbox forbids. So a credential handle in an
argument is refused everywhere, through the real server: an MCP server entry and a hook become
*failed* entries naming the field, ``terminal_start`` is ``invalid_params`` naming
``command.N`` (the ``/usr/bin/env NAME=${secret:...}`` wrapper included); in ``env`` the same
handle works. The last test shows the point at tier 1 and tier 2: a terminal's secret (given in
``env``) is in neither its command line nor its environment as a sandboxed command can read
them, while a plain process with the secret in its argv gives it away (the positive control).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.host_support import SECRET, HostLab, host_lab
from tests.e2e.mcp_support import SECRET as NOTES_SECRET
from tests.e2e.mcp_support import Lab, processes_with
from tests.security.sandbox_support import Box, alive, box

from s_code.client import RpcError
from s_code.protocol import methods

PY = sys.executable
WAIT = "import time; time.sleep(120)"
SECRET_HANDLE = "${secret:env:TERM_SECRET}"
__all__ = ["box"]


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[HostLab]:
    yield from host_lab(tmp_path)


def _refusal(message: str, field: str) -> None:
    assert f"{field}: a credential handle may not stand in a command line" in message, message
    assert "/proc/PID/cmdline" in message and "pass the secret in env" in message
    assert SECRET not in message and NOTES_SECRET not in message


# -- MCP servers ----------------------------------------------------------------------------------


def _servers(notes: Lab) -> list[int]:
    """This lab's notes servers (other tests may run theirs meanwhile)."""
    found = []
    for pid in processes_with("notes_server.py"):
        try:
            if Path(f"/proc/{pid}/cwd").resolve() == notes.ws.resolve():
                found.append(pid)
        except OSError:
            continue
    return found


@pytest.mark.parametrize(
    ("server", "field"),
    [
        ({"args": ["tools/notes_server.py", "--token", "${secret:env:NOTES_SECRET}"]}, "args.2"),
        (
            {"args": ["tools/notes_server.py", "--header=Bearer ${secret:env:NOTES_SECRET}"]},
            "args.1",
        ),
        (  # the env wrapper: its NAME=value is an argument too
            {
                "command": "/usr/bin/env",
                "args": ["NOTES_API_KEY=${secret:env:NOTES_SECRET}", PY, "tools/notes_server.py"],
                "env": {},
            },
            "args.0",
        ),
    ],
    ids=["flag", "inside", "env-wrapper"],
)
def test_an_mcp_entry_with_a_handle_in_an_argument_fails_naming_it(
    tmp_path: Path, server: dict[str, Any], field: str
) -> None:
    notes = Lab(tmp_path, **server)
    try:
        notes.start()
        entry = notes.entry()
        assert entry["state"] == "failed"
        _refusal(entry["error"], f"mcpServers.notes.{field}")
        with pytest.raises(RpcError) as err:
            notes.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "notes"})
        assert err.value.kind == "host_process_failed"
        assert notes.editor.messages == []  # nothing was offered for approval
        assert _servers(notes) == []
        # positive control: the same secret in env is an entry that runs, and gets the value
        notes.write_config(env={"NOTES_API_KEY": "${secret:env:NOTES_SECRET}"})
        assert notes.entry()["state"] == "pending"
        notes.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "notes"})
        notes.wait_for(lambda e: e["state"] == "running" and e.get("tools"))
        said = notes.tool("whoami", {})
        assert "with key [REDACTED]" in json.dumps(said)  # it had a key, and it is hidden
        for pid in _servers(notes):
            assert NOTES_SECRET.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
    finally:
        notes.close()


# -- hooks ----------------------------------------------------------------------------------------


def _digest_hook(lab: HostLab, out: Path) -> None:
    lab.script(
        "digest.py",
        "import hashlib, os\n"
        f"open({str(out)!r}, 'w').write(hashlib.sha256(os.environ['T'].encode()).hexdigest())\n",
    )


@pytest.mark.parametrize(
    ("hook", "field"),
    [
        ({"argv": ["./hooks/digest.py", "--token", "${secret:env:TERM_SECRET}"]}, "argv.2"),
        ({"argv": ["/usr/bin/env", "T=${secret:env:TERM_SECRET}", "./hooks/digest.py"]}, "argv.1"),
        ({"command": "T=${secret:env:TERM_SECRET} ./hooks/digest.py"}, "command"),
    ],
    ids=["argv", "env-wrapper", "shell-line"],
)
def test_a_hook_with_a_handle_in_its_command_line_fails_closed_naming_it(
    lab: HostLab, hook: dict[str, Any], field: str
) -> None:
    out = lab.base / "digest"
    _digest_hook(lab, out)
    lab.pre("list_files", hook)
    lab.start()
    (entry,) = lab.entries("hook")
    assert entry["state"] == "failed"
    _refusal(entry["error"], f"hooks.PreToolUse.0.hooks.0.{field}")
    with pytest.raises(RpcError) as err:  # a gating hook that cannot run blocks what it covers
        lab.call(methods.LIST_FILES, {})
    assert err.value.kind == "host_process_failed"
    assert "hooks.PreToolUse.0.hooks.0." + field in str(err.value)
    assert not out.exists()
    # positive control: the same hook with the secret in its env runs and gets the value
    lab.pre(
        "list_files", {"argv": ["./hooks/digest.py"], "env": {"T": "${secret:env:TERM_SECRET}"}}
    )
    (entry,) = lab.entries("hook")
    assert entry["state"] == "pending"
    lab.approve_hooks()
    lab.call(methods.LIST_FILES, {})
    assert out.read_text() == hashlib.sha256(SECRET.encode()).hexdigest()


def test_a_hook_s_env_is_bound_to_its_approval(lab: HostLab) -> None:
    out = lab.base / "digest"
    _digest_hook(lab, out)
    lab.pre(
        "list_files", {"argv": ["./hooks/digest.py"], "env": {"T": "${secret:env:TERM_SECRET}"}}
    )
    lab.start()
    lab.approve_hooks()
    lab.call(methods.LIST_FILES, {})
    assert out.read_text() == hashlib.sha256(SECRET.encode()).hexdigest()  # control: it ran
    out.unlink()
    env = {"T": SECRET_HANDLE, "PYTHONINSPECT": "1"}  # one more variable
    lab.pre("list_files", {"argv": ["./hooks/digest.py"], "env": env})
    with pytest.raises(RpcError) as err:
        lab.call(methods.LIST_FILES, {})
    assert err.value.kind == "host_process_untrusted"
    assert lab.entries("hook")[0]["state"] == "pending"
    assert not out.exists()


# -- terminals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "field"),
    [
        ([PY, "-c", WAIT, "--token", "${secret:env:TERM_SECRET}"], "command.4"),
        ([PY, "-c", WAIT, "--token=${secret:env:TERM_SECRET}"], "command.3"),
        (["/usr/bin/env", "T=${secret:env:TERM_SECRET}", PY, "-c", WAIT], "command.1"),
        ([PY, "-c", WAIT, "${secret:env:}"], "command.3"),  # malformed: refused the same way
    ],
    ids=["argument", "inside", "env-wrapper", "malformed"],
)
def test_terminal_start_with_a_handle_in_its_command_is_invalid_params(
    lab: HostLab, command: list[str], field: str
) -> None:
    lab.start()
    with pytest.raises(RpcError) as err:
        lab.tool("terminal_start", {"command": command})
    assert err.value.kind == "invalid_params"
    assert err.value.data["field"] == field
    _refusal(str(err.value), field)
    assert lab.editor.messages == []  # refused before the user is asked
    assert lab.tool("terminal_list", {})["terminals"] == []
    # positive control: the secret in env starts
    started = lab.tool(
        "terminal_start",
        {"command": [PY, "-c", "print(1)"], "env": {"T": "${secret:env:TERM_SECRET}"}},
    )
    assert started["terminal_id"]


# -- what a sandboxed command can read --------------------------------------------------------


_READ = """
import sys
out = []
for pid in sys.argv[2:]:
    for part in ("cmdline", "environ"):
        try:
            data = open(f"/proc/{pid}/{part}", "rb").read().replace(b"\\0", b" ")
            out.append(f"{part} {pid} READ " + data.decode("utf-8", "replace"))
        except OSError as exc:
            out.append(f"{part} {pid} REFUSED {exc.errno}")
open(sys.argv[1], "w").write("\\n".join(out))
"""


def _read_proc(box: Box, pids: list[int]) -> str:
    """What a sandboxed command reads of ``pids``' command lines and environments, as it wrote
    it into the workspace (its output would pass the redactor, which is not what stops it)."""
    found = box.workspace / f"read-{uuid.uuid4().hex[:8]}"
    outcome, _ = box.run([PY, "-I", "-S", "-c", _READ, str(found), *map(str, pids)])
    assert outcome.exit_code == 0, outcome.output
    return found.read_text()


def test_a_sandboxed_command_cannot_read_a_terminal_s_secret(box: Box, tmp_path: Path) -> None:
    """At tier 2 a sandboxed command can read every host process's command line (the channel is
    real: it reads the terminal's marker); the terminal's secret, given in ``env``, is not
    there, and its environment is refused. A plain process with the secret in its argv gives it
    away to the same command (tier 2) and to any unconfined program of the user (both tiers)."""
    made = HostLab(tmp_path / "lab")
    try:
        made.start()
        marker = f"argv-{uuid.uuid4().hex[:10]}"
        with pytest.raises(RpcError) as err:  # what the old code ran, with a note
            made.tool("terminal_start", {"command": [PY, "-c", WAIT, marker, SECRET_HANDLE]})
        assert err.value.data["field"] == "command.4"
        made.tool(
            "terminal_start",
            {"command": [PY, "-c", WAIT, marker], "env": {"T": SECRET_HANDLE}},
        )
        pids = made.wait(lambda: alive(marker))
        terminal = _read_proc(box, pids)
        assert SECRET not in terminal, terminal  # neither its command line nor its environ
        for pid in pids:
            assert f"environ {pid} READ" not in terminal, terminal  # S9, for a terminal
        unconfined = "".join(
            Path(f"/proc/{pid}/{part}").read_bytes().decode("utf-8", "replace")
            for pid in pids
            for part in ("cmdline", "environ")
        )
        assert SECRET in unconfined  # control: the terminal does hold it, in its environment
        if box.tier == 2:  # control: the command does read host command lines (tier 1 sees none)
            assert f"cmdline {pids[0]} READ" in terminal and marker in terminal, terminal

        # positive control: the same secret in a plain process's argv is readable by others
        plain_marker = f"plain-{uuid.uuid4().hex[:10]}"
        plain = subprocess.Popen([PY, "-c", WAIT, plain_marker, SECRET])
        try:
            plain_pids = made.wait(lambda: alive(plain_marker))
            assert SECRET.encode() in Path(f"/proc/{plain_pids[0]}/cmdline").read_bytes()
            read = _read_proc(box, plain_pids)
            if box.tier == 2:
                assert SECRET in read, read  # what a handle in an argument would give away
            else:
                assert SECRET not in read, read  # tier 1: its own PID namespace
        finally:
            plain.kill()
            plain.wait()
    finally:
        made.close()
