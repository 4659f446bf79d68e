"""SECURITY.md H10 and H11: what runs is what was approved, the code around it included.

An approved MCP server or hook runs with the user's authority; the file its entry names is not all
it runs: the script's sibling modules, the ``.venv`` its program lives in, the same script read
again after a prompt or a crash. Each attack is an agent (or a sandboxed command) changing that
code so that it runs unsandboxed; each test has a positive control: the planted payload really
runs when that code runs outside s-code. The sandbox is involved where a command does the
changing: those run in tier 1 and tier 2.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.host_support import HostLab, host_lab
from tests.e2e.mcp_support import Editor, Lab, lab, processes_with
from tests.security.sandbox_support import available_tiers

from s_code.client import RpcError
from s_code.protocol import methods

PY = sys.executable
TIERS = available_tiers() or [0]


def payload(marker: Path) -> str:
    return f"open({str(marker)!r}, 'a').write('ran\\n')\n"


def prepended(code: str, script: Path) -> str:
    """``script``'s text with ``code`` run first (its ``__future__`` import dropped)."""
    return code + script.read_text().replace("from __future__ import annotations\n", "")


@pytest.fixture
def notes(tmp_path: Path) -> Iterator[Lab]:
    yield from lab(tmp_path)


def approve(notes: Lab) -> Any:
    result = notes.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "notes"})
    notes.wait_for(lambda e: e["state"] == "running" and e.get("tools"))
    return result


def settled(notes: Lab) -> None:
    """Wait until the server read its host-process configuration (a first listing announced)."""
    assert notes.client is not None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if any(
            n.get("method") == methods.HOST_PROCESSES_UPDATED for n in notes.client.notifications
        ):
            return
        time.sleep(0.02)
    raise AssertionError("no s-code/hostProcesses/updated")


def tier_env(env: dict[str, str], tier: int) -> None:
    if tier == 2:
        env["S_CODE_SANDBOX_DISABLE"] = "bwrap"


# -- H10: the script read after the prompt, or after a crash, is the one approved ----------------


class EditingEditor(Editor):
    """Approves the prompt, but first (as an agent racing the user would) rewrites a file."""

    def __init__(self, path: Path, text: str) -> None:
        super().__init__()
        self.path, self.text = path, text

    def __call__(self, method: str, params: Any) -> Any:
        if method == "window/showMessageRequest" and self.path.exists():
            self.path.write_text(self.text)
        return super().__call__(method, params)


def test_h10_a_script_edited_while_its_prompt_is_open_never_runs(notes: Lab) -> None:
    marker = notes.base / "pwned"
    evil = prepended(payload(marker), notes.script)
    notes.editor = EditingEditor(notes.script, evil)
    notes.start("workspace")
    settled(notes)  # the configuration was read: nothing reads it again while the user is asked
    with pytest.raises(RpcError) as err:
        notes.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "notes"})
    assert err.value.kind == "host_process_untrusted"
    assert "changed" in str(err.value)
    time.sleep(1.0)  # time enough for a server to start, were it going to
    assert not marker.exists()
    assert notes.entry()["state"] == "pending"
    # positive control: approved as it now is, the planted line runs
    notes.editor = Editor()
    notes.client.on_request = notes.editor  # type: ignore[union-attr]
    approve(notes)
    assert marker.read_text() == "ran\n"


def test_h10_a_crash_restart_runs_nothing_edited_since(notes: Lab) -> None:
    marker = notes.base / "pwned"
    notes.start("workspace")
    approve(notes)
    # edited on disk behind the sidecar's back (as a command or another program would), then
    # the server dies by itself (no call of ours to notice the change first)
    notes.script.write_text(prepended(payload(marker), notes.script))
    (pid,) = [  # the server itself (its supervising helper's command line names it too)
        p
        for p in processes_with("tools/notes_server.py")
        if Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[0] == PY.encode()
    ]
    os.kill(pid, signal.SIGKILL)
    # nothing is asked of the sidecar meanwhile: a listing would read the change first
    time.sleep(4.0)  # past the first restart's back-off (1 s) and a start
    assert not marker.exists()
    assert notes.entry()["state"] == "pending"
    # positive control: the edited script, run as the server would be, runs the payload
    subprocess.run([PY, str(notes.script)], input="", text=True, timeout=30, check=False)
    assert marker.read_text() == "ran\n"


# -- H11: the code scope -----------------------------------------------------------------------

IMPORTING = (
    "import os, sys\n"
    "sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n"
    "import helper  # noqa\n"
)


@pytest.fixture
def sibling(tmp_path: Path) -> Iterator[Lab]:
    for made in lab(tmp_path):
        (made.ws / "tools" / "helper.py").write_text("VALUE = 1\n")
        made.script.write_text(prepended(IMPORTING, made.script))
        yield made


def test_h11_an_edit_of_a_sibling_module_asks_in_every_mode(sibling: Lab) -> None:
    marker = sibling.base / "pwned"
    sibling.start("workspace")
    approve(sibling)
    read = sibling.call(methods.READ_FILE, {"path": "tools/helper.py"})
    edit = {
        "files": [
            {
                "path": "tools/helper.py",
                "expected_revision": read["revision"],
                "content": payload(marker) + "VALUE = 1\n",
            }
        ]
    }
    sibling.editor.answer = "Deny"
    with pytest.raises(RpcError) as err:  # workspace mode allows edits, but not of this
        sibling.call(methods.APPLY_PATCH, edit)
    assert err.value.kind == "approval_denied"
    asked = sibling.editor.messages[-1]
    assert "OUTSIDE the sandbox" in asked and "notes" in asked
    assert (sibling.ws / "tools" / "helper.py").read_text() == "VALUE = 1\n"
    # approved, it is written, and the server is pending: nothing of the new code runs
    sibling.editor.answer = "Approve once"
    sibling.call(methods.APPLY_PATCH, edit)
    with pytest.raises(RpcError) as err:
        sibling.tool("read_note", {"name": "welcome"})
    assert err.value.kind == "host_process_untrusted"
    assert sibling.entry()["state"] == "pending"
    time.sleep(1.0)
    assert not marker.exists()
    # positive control: the server's script, run, imports the edited sibling
    subprocess.run([PY, str(sibling.script)], input="", text=True, timeout=30, check=False)
    assert marker.read_text() == "ran\n"


def test_h11_an_ordinary_edit_in_workspace_mode_does_not_ask(sibling: Lab) -> None:
    """The control of the one above: outside the code scope, workspace mode edits unasked."""
    sibling.start("workspace")
    approve(sibling)
    sibling.editor.answer = "Deny"
    sibling.call(
        methods.APPLY_PATCH,
        {"files": [{"path": "src_note.txt", "expected_revision": None, "content": "hello\n"}]},
    )
    assert (sibling.ws / "src_note.txt").read_text() == "hello\n"
    assert sibling.tool("read_note", {"name": "welcome"})["is_error"] is False


@pytest.mark.parametrize("tier", TIERS, ids=lambda t: f"tier{t}")
def test_h11_a_command_that_changes_a_server_s_code_makes_it_pending(
    sibling: Lab, tier: int
) -> None:
    tier_env(sibling.env, tier)
    marker = sibling.base / "pwned"
    sibling.start("workspace")
    approve(sibling)
    line = payload(marker).replace("'", "'\"'\"'")
    sibling.call(
        methods.RUN_COMMAND,
        {"command": ["sh", "-c", f"printf '%s\\n' '{line.strip()}' >> tools/helper.py"]},
    )
    assert str(marker) in (sibling.ws / "tools" / "helper.py").read_text()  # it was planted
    with pytest.raises(RpcError) as err:
        sibling.tool("read_note", {"name": "welcome"})
    assert err.value.kind == "host_process_untrusted"
    assert sibling.entry()["state"] == "pending"
    time.sleep(1.0)
    assert not marker.exists()
    subprocess.run([PY, str(sibling.script)], input="", text=True, timeout=30, check=False)
    assert marker.read_text() == "ran\n"  # positive control


def make_venv(ws: Path, marker: Path) -> Path:
    """A workspace ``.venv`` whose tool imports a module from its site-packages."""
    venv = ws / ".venv"
    site = venv / "lib" / "python3" / "site-packages"
    site.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (site / "quietlib.py").write_text("OK = True\n")
    tool = venv / "bin" / "quiet-check"
    tool.parent.mkdir()
    tool.write_text(
        f"#!{PY}\nimport sys\nsys.path.insert(0, {str(site)!r})\nimport quietlib  # noqa\n"
    )
    tool.chmod(0o755)
    return site / "quietlib.py"


@pytest.fixture
def venv_hook(tmp_path: Path) -> Iterator[HostLab]:
    yield from host_lab(tmp_path)


@pytest.mark.parametrize("tier", TIERS, ids=lambda t: f"tier{t}")
def test_h11_a_hook_s_venv_changed_by_a_command_makes_it_pending(
    venv_hook: HostLab, tier: int
) -> None:
    lab_ = venv_hook
    tier_env(lab_.env, tier)
    marker = lab_.base / "pwned"
    module = make_venv(lab_.ws, marker)
    lab_.pre("list_files", {"command": ".venv/bin/quiet-check"})
    lab_.start()
    lab_.approve_hooks()
    lab_.call(methods.LIST_FILES, {})  # trusted, it runs
    (entry,) = lab_.entries("hook")
    assert entry["state"] == "trusted"
    # a sandboxed command (pip install, say) rewrites a module of the venv
    rel = os.path.relpath(module, lab_.ws)
    lab_.call(
        methods.RUN_COMMAND,
        {"command": ["sh", "-c", f"echo \"open('{marker}','a').write('ran')\" >> {rel}"]},
    )
    assert str(marker) in module.read_text()  # planted
    with pytest.raises(RpcError) as err:
        lab_.call(methods.LIST_FILES, {})
    assert err.value.kind == "host_process_untrusted"
    assert not marker.exists()
    # positive control: the hook's program, run, imports the planted module
    subprocess.run([str(lab_.ws / ".venv" / "bin" / "quiet-check")], timeout=30, check=False)
    assert marker.exists()


def test_h11_the_card_names_the_code_scope(sibling: Lab) -> None:
    sibling.editor.answer = "details-then-approve"
    sibling.start("workspace")
    approve(sibling)
    card = "\n".join(sibling.editor.documents)
    assert "Code scope" in card
    assert f"{sibling.ws / 'tools'}/ (everything below it)" in card


# -- H10 (races): a command that flips a hook's script through a linked folder ------------------


@pytest.mark.parametrize("tier", TIERS, ids=lambda t: f"tier{t}")
def test_h10_a_command_flipping_a_linked_folder_never_gets_its_script_run(
    venv_hook: HostLab, tier: int
) -> None:
    lab_ = venv_hook
    tier_env(lab_.env, tier)
    marker = lab_.base / "pwned"
    for name, body in (("good", "true\n"), ("evil", f"echo ran >> {marker}\n")):
        (lab_.ws / name).mkdir()
        (lab_.ws / name / "check.sh").write_text(f"#!/bin/sh\n{body}")
        (lab_.ws / name / "check.sh").chmod(0o755)
    (lab_.ws / "tools").symlink_to("good")
    lab_.pre("list_files", {"command": "./tools/check.sh"})
    lab_.start()
    lab_.approve_hooks()
    flip = (
        "end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do "
        "ln -sfn evil tools.new && mv -T tools.new tools; "
        "ln -sfn good tools.new && mv -T tools.new tools; done"
    )
    errors: list[BaseException] = []

    def command() -> None:
        try:
            lab_.call(methods.RUN_COMMAND, {"command": ["sh", "-c", flip]}, timeout=60)
        except BaseException as exc:
            errors.append(exc)

    runner = threading.Thread(target=command)
    runner.start()
    calls = 0
    while runner.is_alive():
        with contextlib.suppress(RpcError):  # a call that met the changed link is refused
            lab_.call(methods.LIST_FILES, {})
        calls += 1
    runner.join()
    assert not errors, errors
    assert calls > 0
    assert not marker.exists()
    # positive control: the same flip beside a plain loop running the script runs the evil one
    control = subprocess.Popen(["sh", "-c", flip], cwd=lab_.ws)
    while control.poll() is None:
        subprocess.run(["./tools/check.sh"], cwd=lab_.ws, check=False)
    assert marker.exists()
