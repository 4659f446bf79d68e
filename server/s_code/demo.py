"""``s-code demo``: an agent session against a scratch copy of ``samples/workspace``.

It starts ``s-code serve`` as a child process and drives it over real JSON-RPC, as an
editor-embedded agent would, printing each call and a readable summary of its answer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from s_code.client import RpcError, StdioClient
from s_code.demo_hosts import DEMO_KEY, DEMO_KEY_ENV, hook_and_terminal_steps, host_steps
from s_code.protocol import methods


def samples_dir() -> Path:
    here = Path(__file__).resolve()
    for base in (here.parents[2], Path.cwd()):
        candidate = base / "samples" / "workspace"
        if candidate.is_dir():
            return candidate
    raise SystemExit("s-code demo: samples/workspace not found (run it from the repository)")


class Demo:
    def __init__(self, client: StdioClient) -> None:
        self.client = client
        self.step = 0

    def call(
        self, title: str, method: str, params: Any, show: Callable[[Any], str] | None = None
    ) -> Any:
        self.step += 1
        print(f"\n── {self.step}. {title}")
        print(f"   → {method} {json.dumps(params)[:160]}")
        try:
            result = self.client.request(method, params)
        except RpcError as err:
            print(f"   ✗ error kind={err.kind}: {err}")
            return err
        summary = show(result) if show else json.dumps(result)[:300]
        for line in summary.splitlines():
            print(f"   ← {line}")
        return result


GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "s-code demo",
    "GIT_AUTHOR_EMAIL": "demo@s-code.invalid",
    "GIT_COMMITTER_NAME": "s-code demo",
    "GIT_COMMITTER_EMAIL": "demo@s-code.invalid",
    "GIT_AUTHOR_DATE": "2024-01-02T03:04:05+00:00",
    "GIT_COMMITTER_DATE": "2024-01-02T03:04:05+00:00",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git(cwd: Path, *args: str) -> None:
    """Plain git for setting up the demo's repositories (never run on untrusted ones)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(
        ["git", *args], cwd=cwd, env={**env, **GIT_IDENTITY}, check=True, capture_output=True
    )


def make_sample_repo(workspace: Path) -> None:
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "Import the calc sample")


def make_malicious_repo(path: Path, marker: Path) -> None:
    """A repository whose config runs a program on a plain `git status` (core.fsmonitor)."""
    path.mkdir()
    (path / "README.md").write_text("Nothing to see here.\n")
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "innocent")
    payload = path / ".git" / "fsmonitor-payload"
    payload.write_text(f'#!/bin/sh\ntouch "{marker}"\nexit 1\n')
    payload.chmod(0o755)
    _git(path, "config", "core.fsmonitor", str(payload))


def _status_lines(r: dict[str, Any]) -> str:
    head = f"on {r.get('branch')} at {str(r.get('head'))[:12]}"
    rows = [f"{e['index']}{e['worktree']} {e['kind']:<9} {e['path']}" for e in r["entries"]]
    return "\n".join([head, *rows])


def _diff_lines(r: dict[str, Any]) -> str:
    out = []
    for f in r["files"]:
        out.append(f"{f['path']} ({f['change']}, +{f['additions']} -{f['deletions']})")
        out += [ln for ln in f["patch"].splitlines() if ln[:1] in "+-" and ln[:3] not in "+++---"]
    return "\n".join(out)


def git_steps(demo: Demo, workspace: Path, scratch: Path, env: dict[str, str]) -> None:
    ops = workspace / "src" / "calc" / "ops.py"
    ops.write_text(
        ops.read_text().replace(
            "    # TODO: raise a clear error for b == 0\n",
            '    if b == 0:\n        raise ZeroDivisionError("divide by zero")\n',
        )
    )
    print("\n   (the sample is a git repository; ops.py is now changed on disk)")
    demo.call("git status of the sample repository", methods.GIT_STATUS, {}, _status_lines)
    demo.call("git diff of the change", methods.GIT_DIFF, {}, _diff_lines)
    demo.call(
        "git log",
        methods.GIT_LOG,
        {"max_count": 5},
        lambda r: "\n".join(f"{c['commit'][:12]} {c['subject']}" for c in r["commits"]),
    )
    evil = scratch / "evil"
    marker = scratch / "PWNED"
    make_malicious_repo(evil, marker)
    print(
        f"\n── A second workspace: {evil}, a repository whose .git/config sets core.fsmonitor "
        "to a script (plain `git status` there would run it)"
    )
    second = StdioClient([sys.executable, "-m", "s_code", "serve"], env=env)
    try:
        second.initialize(str(evil))
        refused = Demo(second)
        refused.step = demo.step
        result = refused.call("git status of the malicious repository", methods.GIT_STATUS, {})
        demo.step = refused.step
        if isinstance(result, RpcError):
            print(
                f"   (refused: key={result.data.get('key')} scope={result.data.get('scope')} "
                f"origin={result.data.get('origin')})"
            )
    finally:
        second.close()
    written = "WRITTEN" if marker.exists() else "not written"
    print(f"   marker file {marker.name}: {written}")


TEST_PATCH = """*** Begin Patch
*** Update File: tests/test_ops.py
@@
-from calc import add, divide
+import pytest
+
+from calc import add, divide
@@
 def test_divide() -> None:
     assert divide(6, 3) == 2
+
+
+def test_divide_by_zero_is_refused() -> None:
+    with pytest.raises(ZeroDivisionError):
+        divide(1, 0)
*** End Patch
"""


class Editor:
    """The demo's editor: for each new approval prompt it asks for the details first (the server
    opens the rendered card as a document, which is printed), then approves once."""

    def __init__(self) -> None:
        self.detailed: set[str] = set()

    def __call__(self, method: str, params: Any) -> Any:
        if method == "window/showDocument":
            path = Path(params["uri"].removeprefix("file://"))
            print("   ⇐ the editor shows the card:")
            lines = [line for line in path.read_text().splitlines() if line.strip()]
            for line in lines[:12]:
                print(f"   │ {line[:150]}")
            if len(lines) > 12:
                print(f"   │ … ({len(lines) - 12} more lines)")
            return {"success": True}
        if method != "window/showMessageRequest":
            return None
        actions = " / ".join(a["title"] for a in params.get("actions", []))
        message = params["message"]
        answer = "Approve once" if message in self.detailed else "Show details"
        self.detailed.add(message)
        print(f"   ⇐ the editor asks: {message!r}  [{actions}] → {answer}")
        return {"title": answer}


def edit_steps(demo: Demo) -> None:
    read = demo.call(
        "Read tests/test_ops.py before editing it",
        methods.READ_FILE,
        {"path": "tests/test_ops.py"},
        lambda r: f"revision {r['revision']}, {r['line_count']} lines",
    )
    if not isinstance(read, dict):
        return
    turn = demo.call("Begin a turn", methods.TURN_BEGIN, {}, lambda r: f"turn {r['turnId']}")
    demo.call(
        "Apply a patch (manual mode: the editor asks first)",
        methods.APPLY_PATCH,
        {"patch": TEST_PATCH, "revisions": {"tests/test_ops.py": read["revision"]}},
        lambda r: "\n".join(
            f"{a['path']}: now revision {a['revision']} (via {a['via']})" for a in r["applied"]
        ),
    )
    demo.call(
        "Edit again with the revision read before the patch (refused: stale)",
        methods.APPLY_PATCH,
        {
            "files": [
                {
                    "path": "tests/test_ops.py",
                    "expected_revision": read["revision"],
                    "edits": [{"old_text": "add(2, 3) == 5", "new_text": "add(2, 2) == 4"}],
                }
            ]
        },
    )
    if isinstance(turn, dict):
        demo.call(
            "Undo the turn",
            methods.TURN_UNDO,
            {"turnId": turn["turnId"]},
            lambda r: f"restored {r['restored']}, refused {r['refused']}",
        )
    demo.call(
        "Read it again: back to the revision it had",
        methods.READ_FILE,
        {"path": "tests/test_ops.py"},
        lambda r: f"revision {r['revision']}, {r['line_count']} lines",
    )
    demo.call(
        "Switch to accept-edits: edits inside the workspace no longer ask",
        methods.PERMISSION_MODE_SET,
        {"mode": "accept-edits"},
        lambda r: f"mode {r['mode']}",
    )
    demo.call(
        "Create docs/changes.md (no prompt this time)",
        methods.APPLY_PATCH,
        {
            "files": [
                {
                    "path": "docs/changes.md",
                    "expected_revision": None,
                    "content": "# Changes\n\n- divide() refuses b == 0\n",
                }
            ]
        },
        lambda r: "\n".join(f"{a['path']}: created={a['created']}" for a in r["applied"]),
    )
    demo.call(
        "Back to manual mode for the commands",
        methods.PERMISSION_MODE_SET,
        {"mode": "manual"},
        lambda r: f"mode {r['mode']}",
    )


def _command_lines(r: dict[str, Any]) -> str:
    box = r["sandbox"]
    head = f"exit {r['exit_code']} in {r['duration_ms']} ms"
    head += f", sandbox tier {box['tier']} ({box['label']})"
    return head + "\n" + _first_lines(r["output"].rstrip(), 6)


PYTEST = [
    sys.executable,
    "-m",
    "pytest",
    "-q",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:asyncio",
    "-o",
    "pythonpath=src",
    "tests",
]


def command_steps(demo: Demo, workspace: Path) -> None:
    outside = Path("/etc/s-code-demo-outside.txt")
    preview = demo.call(
        "Preview the sandbox a command would get",
        methods.SANDBOX_PREVIEW,
        {"command": PYTEST},
        lambda r: (
            f"tier {r['tier']['tier']} ({r['tier']['label']}), network "
            f"{'on' if r['sandbox']['network'] else 'off'}, decision {r['decision']}\n"
            f"writable: {', '.join(r['sandbox']['writable'])}"
        ),
    )
    demo.call(
        "Run the tests in the sandbox (manual mode: the editor asks first)",
        methods.RUN_COMMAND,
        {
            "command": PYTEST,
            "cwd": ".",
            "timeout_ms": 60000,
        },
        _command_lines,
    )
    if not isinstance(preview, dict) or preview["tier"]["tier"] == 3:
        print("\n   (no sandbox on this machine: the demo does not run the escaping command)")
        return
    demo.call(
        "Run a command that writes outside the workspace and into .git (both blocked)",
        methods.RUN_COMMAND,
        {
            "command": [
                "sh",
                "-c",
                f"echo pwned > {outside}; echo '[core] fsmonitor = x' >> .git/config; "
                "echo still running",
            ]
        },
        _command_lines,
    )
    print(f"   (on the host: {outside} {'EXISTS' if outside.exists() else 'was not written'})")


def _first_lines(text: str, n: int = 8) -> str:
    lines = text.splitlines()
    more = f"\n… ({len(lines) - n} more lines)" if len(lines) > n else ""
    return "\n".join(lines[:n]) + more


def run_demo(keep: bool = False) -> int:
    scratch = Path(tempfile.mkdtemp(prefix="s-code-demo-"))
    workspace = scratch / "calc"
    shutil.copytree(samples_dir(), workspace)
    make_sample_repo(workspace)
    env = dict(
        os.environ,
        S_CODE_STATE_DIR=str(scratch / "state"),
        XDG_CONFIG_HOME=str(scratch / "config"),  # the demo's own (empty) user layer
        **{DEMO_KEY_ENV: DEMO_KEY},
    )
    print(f"s-code demo: a scratch copy of samples/workspace at {workspace}")
    client = StdioClient([sys.executable, "-m", "s_code", "serve"], env=env, on_request=Editor())
    demo = Demo(client)
    try:
        init = client.initialize(
            str(workspace),
            capabilities={"window": {"showMessage": {}, "showDocument": {"support": True}}},
        )
        sc = init["capabilities"]["experimental"]["sCode"]
        print(
            f"\n── initialize: {init['serverInfo']['name']} {init['serverInfo']['version']}, "
            f"protocol {sc['protocolVersion']}, {len(sc['methods'])} s-code methods"
        )
        demo.call(
            "What tools are there?",
            methods.TOOLS_LIST,
            {},
            lambda r: ", ".join(t["name"] for t in r["tools"]),
        )
        demo.call(
            "Plan the work",
            methods.UPDATE_PLAN,
            {
                "plan": [
                    {"step": "Find the TODOs", "status": "in_progress"},
                    {"step": "Read the code around them", "status": "pending"},
                    {"step": "Propose a fix", "status": "pending"},
                ],
                "explanation": "Start by surveying the workspace.",
            },
            lambda r: f"{r['completed']}/{r['total']} steps done",
        )
        shown = [n for n in client.notifications if n["method"] == methods.PLAN_UPDATED]
        if shown:
            print(
                f"   ⇐ the editor was notified: {methods.PLAN_UPDATED} "
                f"({len(shown[-1]['params']['plan'])} steps)"
            )
        demo.call(
            "List the workspace (.gitignore honoured: debug.log is hidden)",
            methods.LIST_FILES,
            {},
            lambda r: "\n".join(f"{e['type']:<4} {e['path']}" for e in r["entries"]),
        )
        demo.call(
            "Search for TODO",
            methods.SEARCH_TEXT,
            {"pattern": "TODO"},
            lambda r: "\n".join(
                f"{m['path']}:{m['line_number']}: {m['text'].strip()}" for m in r["matches"]
            ),
        )
        read = demo.call(
            "Read src/calc/ops.py, lines 16-18",
            methods.READ_FILE,
            {"path": "src/calc/ops.py", "start_line": 16, "end_line": 18},
            lambda r: (
                f"{r['numbered_content'].rstrip()}\nrevision {r['revision']}, "
                f"{r['line_count']} lines, from {r['source']}"
            ),
        )
        ops = workspace / "src" / "calc" / "ops.py"
        unsaved = ops.read_text() + "\n\ndef power(a: float, b: float) -> float:\n    return a**b\n"
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": ops.as_uri(),
                    "languageId": "python",
                    "version": 1,
                    "text": unsaved,
                }
            },
        )
        print("\n   (the user opens ops.py in the editor and types a new function, unsaved)")
        buffer = demo.call(
            "Read it again: the open buffer wins over the disk",
            methods.TOOLS_CALL,
            {"name": "read_file", "arguments": {"path": "src/calc/ops.py", "start_line": 19}},
            lambda r: (
                f"{_first_lines(r['numbered_content'])}\nrevision "
                f"{r['revision']} from {r['source']}"
            ),
        )
        if isinstance(read, dict) and isinstance(buffer, dict):
            print(f"   (revision {read['revision']} on disk, {buffer['revision']} in the buffer)")
        demo.call(
            "Find a tool by keyword",
            methods.TOOLS_SEARCH,
            {"query": "plan steps"},
            lambda r: ", ".join(t["name"] for t in r["tools"]) or "(none yet)",
        )
        demo.call(
            "Try to read outside the workspace (refused)",
            methods.READ_FILE,
            {"path": "../../etc/passwd"},
        )
        demo.call(
            "Send an unknown argument (refused, naming the field)",
            methods.READ_FILE,
            {"path": "README.md", "lines": "1-3"},
        )
        git_steps(demo, workspace, scratch, env)
        edit_steps(demo)
        command_steps(demo, workspace)
        host_steps(demo, workspace)
        hook_and_terminal_steps(demo, workspace, scratch / "config")
        demo.call(
            "Finish the plan",
            methods.UPDATE_PLAN,
            {
                "plan": [
                    {"step": "Find the TODOs", "status": "completed"},
                    {"step": "Read the code around them", "status": "completed"},
                    {"step": "Propose a fix", "status": "in_progress"},
                ]
            },
            lambda r: f"{r['completed']}/{r['total']} steps done",
        )
    finally:
        code = client.close()
        print(f"\nshutdown + exit: the server exited with code {code}")
        if keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0 if code == 0 else 1
