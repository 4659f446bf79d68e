"""Hooks through the real sidecar: fired from the one dispatch around every tool call, trusted by
hash, failing closed, their output redacted; PostToolUse sees the result.

Each defence has a positive control: the same call without the hook (or before it applies) goes
through, so a passing test is not a call that would have failed anyway.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from s_code.client import RpcError, StdioClient
from s_code.protocol import methods
from tests.e2e.host_support import HostLab, host_lab
from tests.security.sandbox_support import each_tier, tier_of

BLOCK_MARKED = """
import json, sys
call = json.load(sys.stdin)
path = json.dumps(call["tool_input"])
if "marked.py" in path:
    print("marked.py is marked: the user keeps it as is", file=sys.stderr)
    sys.exit(2)
"""


@pytest.fixture
def lab(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HostLab]:
    yield from host_lab(tmp_path, tier_of(request))


def test_a_blocking_hook_stops_the_call_with_its_reason(lab: HostLab) -> None:
    lab.script("guard.py", BLOCK_MARKED)
    lab.pre("apply_patch", {"type": "command", "command": "./hooks/guard.py"})
    lab.start()
    (entry,) = lab.entries("hook")
    assert entry["state"] == "pending" and entry["name"] == "PreToolUse.0.0"
    lab.approve_hooks()
    with pytest.raises(RpcError) as err:
        lab.edit("src/marked.py", "KEEP = 2\n")
    assert err.value.kind == "hook_blocked"
    assert "marked.py is marked: the user keeps it as is" in str(err.value)
    assert err.value.data["hook"] == "PreToolUse.0.0" and err.value.data["failed"] is False
    assert (lab.ws / "src" / "marked.py").read_text() == "KEEP = 1\n"
    # positive control: the same hook lets another file's edit through
    lab.edit("src/app.py", "print('bye')\n")
    assert (lab.ws / "src" / "app.py").read_text() == "print('bye')\n"


def test_a_crashing_hook_blocks(lab: HostLab) -> None:
    lab.script("crash.py", "raise SystemExit('boom: the hook crashed')\n")
    lab.pre("read_file", {"command": "./hooks/crash.py"})
    lab.start()
    lab.approve_hooks()
    with pytest.raises(RpcError) as err:
        lab.call(methods.READ_FILE, {"path": "src/app.py"})
    assert err.value.kind == "hook_blocked" and err.value.data["failed"] is True
    assert "exited with status 1" in str(err.value) and "boom" in str(err.value)
    assert lab.entries("hook")[0]["error"].startswith("it exited with status 1")
    # positive control: "onFailure": "allow" says the crash must not block
    lab.pre("read_file", {"command": "./hooks/crash.py", "onFailure": "allow"})
    lab.approve_hooks()
    assert lab.call(methods.READ_FILE, {"path": "src/app.py"})["numbered_content"]


def test_a_timed_out_hook_blocks_and_is_killed(lab: HostLab) -> None:
    marker = "hook-sleeper-4d1e"
    lab.script("slow.py", f"import time\n# {marker}\ntime.sleep(60)\n")
    lab.pre("list_files", {"command": "./hooks/slow.py", "timeout": 1})
    lab.start()
    lab.approve_hooks()
    with pytest.raises(RpcError) as err:  # the hook sleeps 60 s; its deadline is what ends it
        lab.call(methods.LIST_FILES, {})
    assert err.value.kind == "hook_blocked" and "did not finish within 1 s" in str(err.value)
    from tests.security.sandbox_support import alive

    assert alive("hooks/slow.py") == []  # its tree was ended


def test_a_hook_script_edited_after_approval_is_pending_again(lab: HostLab) -> None:
    script = lab.script("guard.py", BLOCK_MARKED)
    lab.pre("apply_patch", {"command": "./hooks/guard.py"})
    lab.start()
    lab.approve_hooks()
    approved = lab.entries("hook")[0]
    assert approved["state"] == "trusted"
    script.write_text(script.read_text() + "\n# changed by someone\n")
    with pytest.raises(RpcError) as err:
        lab.edit("src/app.py", "x = 1\n")
    assert err.value.kind == "host_process_untrusted"
    assert "PreToolUse.0.0" in str(err.value) and err.value.data["name"] == "PreToolUse.0.0"
    after = lab.entries("hook")[0]
    assert after["state"] == "pending" and after["hash"] != approved["hash"]
    updates = lab.notifications(methods.HOST_PROCESSES_UPDATED)
    assert any(
        e["kind"] == "hook" and e["state"] == "pending" for u in updates for e in u["entries"]
    )
    assert (lab.ws / "src" / "app.py").read_text() == "print('hello')\n"  # never ran


def test_a_pending_hook_blocks_what_it_covers_and_nothing_else(lab: HostLab) -> None:
    lab.script("guard.py", BLOCK_MARKED)
    lab.pre("apply_patch", {"command": "./hooks/guard.py"})
    lab.start()
    with pytest.raises(RpcError) as err:
        lab.edit("src/app.py", "x = 1\n")
    assert err.value.kind == "host_process_untrusted"
    assert lab.call(methods.LIST_FILES, {})  # not covered: runs


@each_tier("lab")  # a command's writes: refused read-only (tier 1) or put back (tier 2)
def test_the_agent_cannot_write_a_hook_file_or_script(lab: HostLab) -> None:
    script = lab.script("guard.py", BLOCK_MARKED)
    lab.pre("apply_patch", {"command": "./hooks/guard.py"})
    lab.start()
    lab.approve_hooks()
    for path in (".s-code/hooks.json", "hooks/guard.py"):
        with pytest.raises(RpcError) as err:
            lab.edit(path, "exit 0\n")
        assert err.value.kind in ("protected_path", "hook_blocked"), path
    # the hook itself does not cover hooks/: the protected set refuses it on its own
    lab.pre("read_file", {"command": "./hooks/guard.py"})
    lab.approve_hooks()
    with pytest.raises(RpcError) as err:
        lab.edit("hooks/guard.py", "exit 0\n")
    assert err.value.kind == "protected_path" and "hook" in str(err.value)
    before = script.read_text()
    ran = lab.call(
        methods.RUN_COMMAND,
        {"command": ["sh", "-c", "echo 'exit 0' > hooks/guard.py; echo x > .s-code/hooks.json"]},
    )
    lab.kept_from(ran, "hooks/guard.py", ".s-code/hooks.json")
    assert script.read_text() == before
    assert "guard.py" in (lab.ws / ".s-code" / "hooks.json").read_text()
    # nor beside it (a Python script imports its own folder first: the review's hijack)
    with pytest.raises(RpcError) as beside:
        lab.edit("hooks/json.py", "import os; os.system('touch /tmp/pwned')\n")
    assert "beside a hook's script" in str(beside.value)
    # positive control: an ordinary file elsewhere is writable
    lab.edit("notes.txt", "fine\n")


def test_post_tool_use_sees_the_result_and_may_withhold_it(lab: HostLab) -> None:
    seen = lab.base / "seen.json"
    lab.script(
        "post.py",
        "import json, sys\n"
        "call = json.load(sys.stdin)\n"
        f"open({str(seen)!r}, 'w').write(json.dumps(call))\n"
        "if 'SECRET_MARK' in json.dumps(call['tool_response']):\n"
        "    print(json.dumps({'decision': 'deny', 'reason': 'result holds a mark'}))\n",
    )
    lab.hooks(
        {"PostToolUse": [{"matcher": "read_file", "hooks": [{"command": "./hooks/post.py"}]}]}
    )
    (lab.ws / "src" / "mark.txt").write_text("SECRET_MARK\n")
    lab.start()
    lab.approve_hooks()
    result = lab.call(methods.READ_FILE, {"path": "src/app.py"})
    call = json.loads(seen.read_text())
    assert call["hook_event_name"] == "PostToolUse" and call["tool_name"] == "read_file"
    assert call["tool_input"] == {"path": "src/app.py"}
    assert call["tool_response"]["numbered_content"] == result["numbered_content"]
    with pytest.raises(RpcError) as err:
        lab.call(methods.READ_FILE, {"path": "src/mark.txt"})
    assert err.value.kind == "hook_blocked" and err.value.data["ran"] is True
    assert "result holds a mark" in str(err.value)


def test_decisions_the_most_restrictive_wins_and_ask_prompts(lab: HostLab) -> None:
    lab.script("allow.py", 'print(\'{"decision": "allow"}\')\n')
    lab.script("ask.py", 'print(\'{"decision": "ask", "reason": "sure?"}\')\n')
    lab.script(
        "deny.py",
        "import json\nprint(json.dumps({'hookSpecificOutput': {'permissionDecision': 'deny',"
        " 'permissionDecisionReason': 'not today'}}))\n",
    )
    lab.hooks(
        {
            "PreToolUse": [
                {"matcher": "list_files", "hooks": [{"argv": ["./hooks/allow.py"]}]},
                {"matcher": "list_files|search_text", "hooks": [{"argv": ["./hooks/ask.py"]}]},
                {"matcher": "search_text", "hooks": [{"argv": ["./hooks/deny.py"]}]},
            ]
        }
    )
    lab.start()
    lab.approve_hooks()
    asked = len(lab.editor.messages)
    assert lab.call(methods.LIST_FILES, {})  # allow + ask: the user is asked, and approves
    assert len(lab.editor.messages) == asked + 1 and "sure?" in lab.editor.messages[-1]
    with pytest.raises(RpcError) as err:  # ask + deny: deny wins, nobody is asked
        lab.call(methods.SEARCH_TEXT, {"pattern": "hello"})
    assert err.value.kind == "hook_blocked" and "not today" in str(err.value)
    assert len(lab.editor.messages) == asked + 1
    lab.editor.answer = "Deny"
    with pytest.raises(RpcError) as err:
        lab.call(methods.LIST_FILES, {})
    assert err.value.kind == "approval_denied"


def test_hooks_cover_mcp_tools_and_tool_search_through_dispatch(lab: HostLab) -> None:
    log = lab.base / "calls.log"
    lab.script(
        "log.py",
        "import json, sys\n"
        f"open({str(log)!r}, 'a').write(json.load(sys.stdin)['tool_name'] + '\\n')\n",
    )
    lab.pre("", {"command": "./hooks/log.py"})
    lab.start()
    lab.approve_hooks()
    lab.call(methods.TOOLS_SEARCH, {"query": "terminal"})
    lab.tool("terminal_list", {})
    assert log.read_text().split() == ["tool_search", "terminal_list"]


def test_hook_output_is_redacted(lab: HostLab) -> None:
    lab.script(
        "leak.py",
        "import os, sys\nprint('token ' + os.environ.get('HOOK_TOKEN', 'none'), file=sys.stderr)\n"
        "sys.exit(2)\n",
    )
    secret = "hooksecret-9f8e7d6c5b4a"
    lab.env["HOOK_TOKEN"] = secret
    lab.pre(
        "list_files",
        {"argv": ["./hooks/leak.py"], "env": {"HOOK_TOKEN": "${secret:env:HOOK_TOKEN}"}},
    )
    lab.start()
    lab.approve_hooks()
    with pytest.raises(RpcError) as err:
        lab.call(methods.LIST_FILES, {})
    assert err.value.kind == "hook_blocked"
    assert secret not in json.dumps(err.value.data) and secret not in str(err.value)
    assert "[REDACTED]" in str(err.value)  # positive control: the hook did print it


def test_a_broken_hooks_file_blocks_every_call(lab: HostLab) -> None:
    (lab.ws / ".s-code" / "hooks.json").write_text("{ not json")
    lab.start()
    (entry,) = lab.entries("hook")
    assert entry["state"] == "failed" and "not valid JSON" in entry["error"]
    with pytest.raises(RpcError) as err:
        lab.call(methods.LIST_FILES, {})
    assert err.value.kind == "host_process_failed"


def test_session_start_and_end_hooks_run_once_each(lab: HostLab) -> None:
    log = lab.base / "events.log"
    lab.script(
        "event.py",
        "import json, sys\n"
        f"open({str(log)!r}, 'a').write(json.load(sys.stdin)['hook_event_name'] + '\\n')\n",
    )
    hook = {"command": "./hooks/event.py"}
    lab.hooks({"SessionStart": [{"hooks": [hook]}], "SessionEnd": [{"hooks": [hook]}]})
    lab.start()
    lab.approve_hooks()
    lab.close()
    assert not log.exists() or "SessionStart" not in log.read_text()  # pending when it started
    assert log.read_text().split() == ["SessionEnd"]
    lab.start()  # approved now: it runs at the start, once
    lab.wait(lambda: log.read_text().split() == ["SessionEnd", "SessionStart"])
    lab.call(methods.HOST_PROCESSES_LIST)
    lab.close()
    assert log.read_text().split() == ["SessionEnd", "SessionStart", "SessionEnd"]


def test_a_post_tool_use_ask_lets_the_user_withhold_the_result(lab: HostLab) -> None:
    lab.script("ask.py", 'print(\'{"decision": "ask", "reason": "show it?"}\')\n')
    lab.hooks({"PostToolUse": [{"matcher": "read_file", "hooks": [{"command": "./hooks/ask.py"}]}]})
    lab.start()
    lab.approve_hooks()
    assert lab.call(methods.READ_FILE, {"path": "src/app.py"})["numbered_content"]
    assert "giving the result of read_file to the agent" in lab.editor.messages[-1]
    lab.editor.answer = "Deny"
    with pytest.raises(RpcError) as err:
        lab.call(methods.READ_FILE, {"path": "src/app.py"})
    assert err.value.kind == "approval_denied"


def test_a_hooks_json_in_a_second_folder_is_named_as_not_read(tmp_path: Path) -> None:
    """The workspace layer is the first folder's .s-code/: a guard configured in another folder
    does nothing, and the user is told so at start and in hostProcesses/list, never silently."""
    first, second = tmp_path / "first", tmp_path / "second"
    for root in (first, second):
        (root / ".s-code").mkdir(parents=True)
    guard = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"argv": ["/bin/false"]}]}]}}
    (second / ".s-code" / "hooks.json").write_text(json.dumps(guard))
    env = dict(os.environ, S_CODE_STATE_DIR=str(tmp_path / "state"))
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    client = StdioClient([sys.executable, "-m", "s_code", "serve"], env=env)
    try:
        folders = [{"uri": root.as_uri(), "name": root.name} for root in (first, second)]
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": first.as_uri(),
                "workspaceFolders": folders,
                "capabilities": {},
            },
        )
        client.notify("initialized", {})
        listed = client.request(methods.HOST_PROCESSES_LIST, {})
        shown = [
            n["params"]["message"]
            for n in client.notifications
            if n["method"] == "window/showMessage"
        ]
    finally:
        client.close()
    wanted = f"{second / '.s-code' / 'hooks.json'} is not read"
    assert any(p.startswith(wanted) for p in listed["problems"]), listed
    assert any(m.startswith(wanted) for m in shown), shown
    assert not [e for e in listed["entries"] if e["kind"] == "hook"]
    # positive control: in the first folder the same file is read (a pending hook)
    (first / ".s-code" / "hooks.json").write_text(json.dumps(guard))
    client = StdioClient([sys.executable, "-m", "s_code", "serve"], env=env)
    try:
        client.initialize(str(first))
        entries = client.request(methods.HOST_PROCESSES_LIST, {})["entries"]
    finally:
        client.close()
    hooks = [e for e in entries if e["kind"] == "hook"]
    assert [e["state"] for e in hooks] == ["pending"], hooks
