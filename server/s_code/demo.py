"""``s-code demo``: an agent session against a scratch copy of ``samples/workspace``.

It starts ``s-code serve`` as a child process and drives it over real JSON-RPC, as an
editor-embedded agent would, printing each call and a readable summary of its answer.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from s_code.client import RpcError, StdioClient
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


def _first_lines(text: str, n: int = 8) -> str:
    lines = text.splitlines()
    more = f"\n… ({len(lines) - n} more lines)" if len(lines) > n else ""
    return "\n".join(lines[:n]) + more


def run_demo(keep: bool = False) -> int:
    scratch = Path(tempfile.mkdtemp(prefix="s-code-demo-"))
    workspace = scratch / "calc"
    shutil.copytree(samples_dir(), workspace)
    env = dict(os.environ, S_CODE_STATE_DIR=str(scratch / "state"))
    print(f"s-code demo: a scratch copy of samples/workspace at {workspace}")
    client = StdioClient([sys.executable, "-m", "s_code", "serve"], env=env)
    demo = Demo(client)
    try:
        init = client.initialize(str(workspace))
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
