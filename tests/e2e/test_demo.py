"""`s-code demo` (the README's main job) runs end to end and shows each step's answer."""

from __future__ import annotations

import subprocess
import sys


def test_demo_runs_the_agent_session() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "s_code", "demo"], capture_output=True, text=True, timeout=120
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr
    tools_line = out.split("→ s-code/tools/list {}")[1].splitlines()[1]
    listed = tools_line.removeprefix("   ← ").split(", ")
    for name in ("read_file", "list_files", "search_text", "update_plan", "tool_search"):
        assert name in listed
    for name in ("git_status", "git_diff", "git_log", "run_command"):
        assert name in listed
    assert "git_show" not in listed and "git_blame" not in listed
    assert "src/calc/ops.py:17: # TODO: raise a clear error for b == 0" in out
    listing = out.split("→ s-code/listFiles")[1].split("Search for TODO")[0]
    assert "src/calc/ops.py" in listing and "debug.log" not in listing
    assert "from buffer" in out and "from disk" in out
    assert "error kind=path_escape" in out
    assert "error kind=invalid_params: unknown field 'lines'" in out
    assert "s-code/planUpdated" in out
    status = out.split("git status of the sample repository")[1].split("git diff")[0]
    assert "on main at " in status and ".M changed   src/calc/ops.py" in status
    diff = out.split("git diff of the change")[1].split("git log")[0]
    assert "src/calc/ops.py (modified, +2 -1)" in diff
    assert "-    # TODO: raise a clear error for b == 0" in diff
    assert '+        raise ZeroDivisionError("divide by zero")' in diff
    assert "Import the calc sample" in out.split("── 12. git log")[1]
    evil = out.split("git status of the malicious repository")[1]
    assert "error kind=git_config_rejected" in evil
    assert "key=core.fsmonitor scope=local" in evil
    assert "marker file PWNED: not written" in evil
    edits = out.split("Apply a patch")[1]
    assert "the editor asks: 's-code: Edit tests/test_ops.py (+7 -0)?'" in edits
    assert "tests/test_ops.py: now revision" in edits and "(via disk)" in edits
    stale = edits.split("refused: stale")[1]
    assert "error kind=stale_revision" in stale.split("Undo the turn")[0]
    assert "restored ['tests/test_ops.py'], refused []" in stale
    before = out.split("Read tests/test_ops.py before editing it")[1].split("\n")[2]
    after = out.split("back to the revision it had")[1].split("\n")[2]
    assert before == after and "revision " in before
    assert "apply_patch" in listed
    assert "→ Show details" in edits and "the editor shows the card:" in edits
    assert "│   M tests/test_ops.py  (+7 -0, via disk)" in edits
    accept = out.split("Switch to accept-edits")[1].split("Back to manual mode")[0]
    assert "mode accept-edits" in accept and "docs/changes.md: created=True" in accept
    assert "the editor asks" not in accept
    sandboxed = out.split("Run the tests in the sandbox")[1].split("writes outside")[0]
    assert "the editor asks: 's-code: Run " in sandboxed
    assert "exit 0 in" in sandboxed and "2 passed" in sandboxed
    blocked = out.split("writes outside the workspace and into .git")[1].split("Finish the plan")[0]
    assert "cannot create /etc/s-code-demo-outside.txt" in blocked
    assert "cannot create .git/config" in blocked
    assert "/etc/s-code-demo-outside.txt was not written" in blocked
    hooked = out.split("the hook blocks it, with its reason")[1].split("── ")[0]
    assert "error kind=hook_blocked" in hooked
    assert "src/calc/__init__.py is marked by the user" in hooked
    terminal = out.split("Start a small server in a background terminal")[1]
    assert "Start the background terminal" in terminal and "listening on http://" in terminal
    assert "requests served, up and healthy" in terminal.split("Read only what is new")[1]
    assert "gone=True, exit {'code': None, 'signal': 'SIGTERM'}" in terminal
    assert " killed" in terminal.split("List the terminals")[1]
    assert "the server exited with code 0" in out
    assert out.count("the server exited with code 0") == 1
