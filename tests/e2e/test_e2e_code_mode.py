"""code_mode end to end (pytest-lsp, both client presets): child calls through the one dispatch,
notified before and after with redacted arguments, write-capable tools refused, hostile scripts
stopped within their limits while the server answers other requests, the documented example."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from s_code.protocol import methods
from tests.e2e.mcp_support import Lab, lab
from tests.e2e.support import TIMEOUT, call, call_error
from tests.polling import until_async

DOC = Path(__file__).resolve().parents[2] / "docs" / "code-mode.md"
SECRET = "ghp_" + "Zq7Lx2Vb9Nc4Md8Kf3Hj6Gt1Rs5Wp0Ya2Ue7"  # a GitHub token the redactor's rules know


def listen(client: LanguageClient) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    @client.feature(methods.CODE_MODE_TOOL_CALL)
    def on_tool_call(params: Any) -> None:
        seen.append(params)

    return seen


async def run(client: LanguageClient, code: str, **extra: Any) -> Any:
    return await call(client, methods.CODE_MODE_RUN, {"code": code, **extra})


async def test_a_run_reads_three_files_and_searches(client: LanguageClient) -> None:
    root: Path = client.workspace_root  # type: ignore[attr-defined]
    (root / "src" / "util.py").write_text("def helper():\n    return 'beta'\n")
    code = """
        const paths = ["src/app.py", "notes.txt", "src/util.py"];
        const files = paths.map((path) => tools.read_file({ path }));
        const found = tools.search_text({ pattern: "beta" });
        return {
          lines: files.map((f) => f.line_count),
          revisions: files.every((f) => f.revision.length === 16),
          beta: found.matches.map((m) => m.path),
        };
    """
    result = await run(client, code)
    assert result["result"] == {
        "lines": [2, 3, 2],
        "revisions": True,
        "beta": ["notes.txt", "src/util.py"],
    }
    assert [c["name"] for c in result["calls"]] == ["read_file"] * 3 + ["search_text"]
    assert all(c["status"] == "ok" and c["duration_ms"] >= 0 for c in result["calls"])
    direct = await call(client, methods.READ_FILE, {"path": "notes.txt"})
    assert result["logs"] == "" and not result["truncated"]
    assert direct["revision"]  # the same dispatch: a direct call agrees
    again = await run(client, "return tools.read_file({path: 'notes.txt'}).revision")
    assert again["result"] == direct["revision"]


async def test_child_calls_are_notified_in_order_with_redacted_arguments(
    client: LanguageClient,
) -> None:
    seen = listen(client)
    code = f"""
        tools.read_file({{ path: "notes.txt" }});
        try {{ tools.read_file({{ path: "missing.txt" }}); }} catch (e) {{ console.log(e.kind); }}
        return tools.search_text({{ pattern: "{SECRET}" }}).matches.length;
    """
    result = await run(client, code)
    assert result["result"] == 0 and result["logs"] == "not_found\n"
    await until_async(lambda: len(seen) >= 6, what="six notifications")
    run_id = result["run_id"]
    assert [(n["runId"], n["callId"], n["status"]) for n in seen] == [
        (run_id, f"{run_id}.1", "running"),
        (run_id, f"{run_id}.1", "ok"),
        (run_id, f"{run_id}.2", "running"),
        (run_id, f"{run_id}.2", "error"),
        (run_id, f"{run_id}.3", "running"),
        (run_id, f"{run_id}.3", "ok"),
    ]
    assert "durationMs" not in seen[0] and seen[1]["durationMs"] >= 0
    assert seen[0]["arguments"] == {"path": "notes.txt"}
    assert SECRET not in json.dumps(seen) and SECRET not in json.dumps(result)
    assert seen[4]["arguments"]["pattern"] != SECRET  # redacted, not dropped
    assert [c["status"] for c in result["calls"]] == ["ok", "error", "ok"]
    assert result["calls"][2]["arguments"] == seen[4]["arguments"]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("apply_patch", {"path": "x.txt", "expected_revision": None, "content": "x\n"}),
        ("run_command", {"command": ["touch", "ran"]}),
        ("update_plan", {"plan": []}),
        ("code_mode", {"code": "return 1"}),
    ],
)
async def test_a_write_capable_tool_is_refused(
    client: LanguageClient, tool: str, arguments: dict[str, Any]
) -> None:
    root: Path = client.workspace_root  # type: ignore[attr-defined]
    code = f"try {{ tools.{tool}({json.dumps(arguments)}) }} catch (e) {{ return e.kind }}"
    err = await call_error(client, methods.CODE_MODE_RUN, {"code": code})
    assert err.data["kind"] == "tool_not_read_only"  # even though the script caught it
    assert err.data["name"] == tool
    assert [(c["name"], c["status"]) for c in err.data["calls"]] == [(tool, "refused")]
    assert not (root / "x.txt").exists() and not (root / "ran").exists()


async def _responsive_while(
    client: LanguageClient, code: str, *, lasts: bool = True, **extra: Any
) -> Any:
    """Start ``code``; while it runs, the server answers other requests. Its error (or result).

    Ordering, not timing: the reads are sent after the run, so a server that ran the script on
    its event loop would answer them after it. With ``lasts`` (a run that can only end at its
    deadline) every read is answered while the run is still pending."""
    from pygls.exceptions import JsonRpcException

    task = asyncio.wrap_future(
        client.protocol.send_request(methods.CODE_MODE_RUN, {"code": code, **extra})
    )
    reads = await asyncio.gather(
        *(call(client, methods.READ_FILE, {"path": "notes.txt"}) for _ in range(3))
    )
    assert [read["line_count"] for read in reads] == [3, 3, 3]
    if lasts:
        assert not task.done(), "the reads were answered only after the run"
    try:
        result = await asyncio.wait_for(task, TIMEOUT)
    except JsonRpcException as exc:
        return exc
    return result


HOSTILE = {
    "infinite loop": ("while (true) {}", "timeout", None),
    "memory bomb": (
        "const a = []; while (true) a.push('x'.repeat(1000) + a.length);",
        "limit_exceeded",
        "memory",
    ),
    "deep recursion": (
        "function f(n) { return f(n + 1) + 1; } return f(0);",
        "limit_exceeded",
        "stack",
    ),
    "a million child calls": (
        "for (let i = 0; i < 1e6; i++) tools.read_file({ path: 'notes.txt' });",
        "limit_exceeded",
        "calls",
    ),
    "while(true) in a child call's callback": (
        "tools.read_file({ path: 'notes.txt', get start_line() { while (true) {} } });",
        "timeout",
        None,
    ),
    "while(true) in toJSON of a child call's arguments": (
        "tools.list_files({ toJSON() { for (;;) {} } });",
        "timeout",
        None,
    ),
    "a slow spin after a child call": (
        "const r = tools.read_file({ path: 'notes.txt' }); [r].forEach(() => { while (true) {} });",
        "timeout",
        None,
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
async def test_a_hostile_script_is_stopped_while_the_server_answers(
    client: LanguageClient, name: str
) -> None:
    code, kind, limit = HOSTILE[name]
    # a run that should stop at its own limit gets time enough to reach it on a loaded machine;
    # one that spins ends only at its deadline, so the reads come while it is pending
    lasts = kind == "timeout"
    err = await _responsive_while(client, code, lasts=lasts, timeout_ms=3000 if lasts else 30_000)
    assert not isinstance(err, dict), err
    assert err.data["kind"] == kind, err.data
    assert err.data["run_id"].startswith("r-")
    if limit is not None:
        assert err.data["limit"] == limit
    if limit == "calls":
        assert len(err.data["calls"]) == 200  # recorded though the run was killed
    if "after a child call" in name:
        assert [c["status"] for c in err.data["calls"]] == ["ok"]


async def test_a_huge_string_returned_keeps_head_and_tail(client: LanguageClient) -> None:
    result = await _responsive_while(
        client, "return 'h' + 'x'.repeat(10_000_000) + 't';", lasts=False, timeout_ms=30_000
    )
    assert isinstance(result, dict), result
    text = result["result"]
    assert result["truncated"] is True
    assert text.startswith("hxxx") and text.endswith("xxxt")
    assert len(text) < 32_100
    assert "[... 9968002 characters omitted ...]" in text


async def test_a_javascript_error_names_its_line(client: LanguageClient) -> None:
    err = await call_error(client, methods.CODE_MODE_RUN, {"code": "const a = 1;\n\nnull.x;"})
    assert err.data["kind"] == "code_error"
    assert err.data["line"] == 3
    assert err.data["error"].startswith("TypeError")
    syntax = await call_error(client, methods.CODE_MODE_RUN, {"code": "let = = 2"})
    assert syntax.data["kind"] == "code_error" and syntax.data["line"] == 1


async def test_nothing_but_tools_and_console_is_there(client: LanguageClient) -> None:
    code = """
        const names = ["require", "process", "setTimeout", "setInterval", "fetch", "std", "os",
                       "XMLHttpRequest", "WebSocket", "Deno", "Bun", "print", "scriptArgs"];
        let imported = "no";
        try { await import("os"); imported = "yes"; } catch (e) { imported = String(e); }
        return { present: names.filter((n) => typeof globalThis[n] !== "undefined"), imported };
    """
    result = await run(client, code)
    assert result["result"]["present"] == []
    assert "could not load module" in result["result"]["imported"]


async def test_a_cancel_stops_the_run(client: LanguageClient) -> None:
    from pygls.exceptions import JsonRpcException

    # the run can only end by the cancel: its deadline is past the wait below (a cancel that
    # is not honoured ends it as a timeout, not -32800)
    params = {"code": "while (true) {}", "timeout_ms": 60_000}
    sent = client.protocol.send_request(methods.CODE_MODE_RUN, params, msg_id="cm-cancel")
    # requests start in the order they come: once this one is answered, the run is under way
    assert (await call(client, methods.READ_FILE, {"path": "notes.txt"}))["line_count"] == 3
    assert not sent.done()
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="cm-cancel"))
    with pytest.raises(JsonRpcException) as err:
        await asyncio.wait_for(asyncio.wrap_future(sent), 90)
    assert err.value.code == -32800
    assert (await call(client, methods.READ_FILE, {"path": "notes.txt"}))["line_count"] == 3


def _doc_blocks() -> tuple[str, Any, str]:
    text = DOC.read_text()
    js = re.search(r"```js\n(.*?)```", text, re.S)
    result = re.search(r"```json\n(.*?)```", text, re.S)
    logs = re.search(r"```text\n(.*?)```", text, re.S)
    assert js and result and logs
    return js.group(1), json.loads(result.group(1)), logs.group(1)


async def test_the_documented_example(client: LanguageClient) -> None:
    code, expected, logs = _doc_blocks()
    result = await run(client, code)
    assert result["result"] == expected
    assert result["logs"] == logs


# -- MCP tools: only an approved server's tools that declare readOnlyHint --------------------


@pytest.fixture
def notes(tmp_path: Path) -> Iterator[Lab]:
    yield from lab(tmp_path)


def test_mcp_read_only_tools_run_and_others_are_refused(notes: Lab) -> None:
    notes.start()
    notes.call(methods.HOST_PROCESSES_APPROVE, {"kind": "mcp", "name": "notes"})
    notes.wait_for(lambda e: e["state"] == "running" and e.get("tools"))
    code = "return tools.mcp__notes__search_notes({ query: 'groceries' })"
    ran = notes.call(methods.CODE_MODE_RUN, {"code": code})
    assert ran["calls"][0]["status"] == "ok"
    assert ran["result"]["is_error"] is False
    shown = len(notes.editor.messages)
    from s_code.client import RpcError

    code = "tools.mcp__notes__add_note({ name: 'n', text: 't' })"
    with pytest.raises(RpcError) as err:
        notes.call(methods.CODE_MODE_RUN, {"code": code})
    assert err.value.kind == "tool_not_read_only"
    assert err.value.data["calls"][0]["status"] == "refused"
    assert len(notes.editor.messages) == shown  # refused before any approval prompt
    assert notes.call(methods.PERMISSION_MODE_GET)["mode"] == "manual"
