"""tools/list, tools/search, tools/call and the typed methods, through both client presets."""

from __future__ import annotations

import asyncio

from pytest_lsp import LanguageClient

from s_code.protocol import methods
from s_code.tools.builtin import default_registry
from tests.e2e.support import TIMEOUT, call

CORE = {t.name for t in default_registry() if t.profile == "core"}


async def test_tools_list_is_the_core_profile_with_schemas(client: LanguageClient) -> None:
    tools = (await call(client, methods.TOOLS_LIST, {}))["tools"]
    assert {t["name"] for t in tools} == CORE
    for tool in tools:
        assert tool["description"]
        schema = tool["inputSchema"]
        assert schema["type"] == "object"
        assert schema.get("additionalProperties") is False
    read = next(t for t in tools if t["name"] == "read_file")
    assert set(read["inputSchema"]["properties"]) == {"path", "start_line", "end_line"}
    assert read["inputSchema"]["required"] == ["path"]


async def test_tools_search_finds_by_keyword_and_argument(client: LanguageClient) -> None:
    found = (await call(client, methods.TOOLS_SEARCH, {"query": "regular expression"}))["tools"]
    assert found[0]["name"] == "search_text"
    assert "inputSchema" in found[0]
    by_arg = (await call(client, methods.TOOLS_SEARCH, {"query": "include_ignored", "limit": 1}))[
        "tools"
    ]
    assert [t["name"] for t in by_arg] == ["list_files"]  # found by an argument's name alone
    nothing = await call(client, methods.TOOLS_SEARCH, {"query": "zzzqqq"})
    assert nothing == {"tools": []}


async def test_tools_found_by_search_join_tools_list(client: LanguageClient) -> None:
    found = await call(client, methods.TOOLS_SEARCH, {"query": "git blame", "limit": 1})
    assert [t["name"] for t in found["tools"]] == ["git_blame"]
    tools = (await call(client, methods.TOOLS_LIST, {}))["tools"]
    assert [t["name"] for t in tools[:-1]] == [t.name for t in default_registry().core()]
    assert tools[-1] == found["tools"][0]


CALLS = [
    ("read_file", {"path": "notes.txt", "start_line": 2}),
    ("list_files", {"path": "."}),
    ("search_text", {"pattern": "beta"}),
    ("tool_search", {"query": "plan"}),
    ("update_plan", {"plan": [{"step": "one", "status": "in_progress"}]}),
]


async def test_tools_call_and_typed_method_give_identical_results(
    client: LanguageClient,
) -> None:
    registry = default_registry()
    for name, arguments in CALLS:
        typed = await call(client, registry.get(name).method, arguments)
        generic = await call(client, methods.TOOLS_CALL, {"name": name, "arguments": arguments})
        assert typed == generic, name


async def test_read_list_search_results(client: LanguageClient) -> None:
    read = await call(client, methods.READ_FILE, {"path": "notes.txt", "start_line": 2})
    assert read["numbered_content"] == "     2\tbeta\n     3\tgamma\n"
    assert read["line_count"] == 3 and read["source"] == "disk"
    assert read["revision"] == read["sha256"][:16]
    listed = await call(client, methods.LIST_FILES, {})
    paths = [e["path"] for e in listed["entries"]]
    assert paths == [".gitignore", "notes.txt", "src", "src/app.py"]  # run.log is ignored
    found = await call(client, methods.SEARCH_TEXT, {"pattern": "bet."})
    assert found == {
        "matches": [{"path": "notes.txt", "line_number": 2, "text": "beta"}],
        "truncated": False,
    }


async def test_update_plan_notifies_the_editor(client: LanguageClient) -> None:
    waiting = client.protocol.wait_for_notification_async(methods.PLAN_UPDATED)
    plan = [{"step": "read", "status": "completed"}, {"step": "edit", "status": "in_progress"}]
    result = await call(client, methods.UPDATE_PLAN, {"plan": plan, "explanation": "go"})
    assert result["completed"] == 1 and result["total"] == 2
    note = await asyncio.wait_for(waiting, TIMEOUT)
    assert note["plan"] == plan and note["explanation"] == "go"
