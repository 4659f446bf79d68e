"""Tools that arrive at run time with only a JSON Schema: found by tool_search (and then listed
by ``s-code/tools/list``), called through ``s-code/tools/call`` (bad arguments refused by field
path), and removed while serving."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from s_code.protocol import methods
from tests.e2e.conftest import make_client
from tests.e2e.support import TIMEOUT, call, call_error, make_workspace

CONFIG = ClientServerConfig(
    server_command=[sys.executable, str(Path(__file__).with_name("runtime_tool_server.py"))],
    client_factory=make_client,
    server_env=dict(os.environ),
)


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    await asyncio.wait_for(
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("neovim@v0.11"),
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            )
        ),
        TIMEOUT,
    )
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


async def tools_call(client: LanguageClient, name: str, arguments: object) -> object:
    return await call(client, methods.TOOLS_CALL, {"name": name, "arguments": arguments})


async def listed(client: LanguageClient) -> list[str]:
    return [t["name"] for t in (await call(client, methods.TOOLS_LIST, {}))["tools"]]


async def test_runtime_tool_is_searched_called_and_removed(client: LanguageClient) -> None:
    assert "mcp__fake__widgets" not in await listed(client)
    found = await call(client, methods.TOOLS_SEARCH, {"query": "widgets warehouse bin"})
    tool = found["tools"][0]
    assert tool["name"] == "mcp__fake__widgets"
    assert tool["inputSchema"]["required"] == ["count", "bin"]
    assert tool["profile"] == "specialized" and tool["source"] == "mcp:fake"
    assert "method" not in tool  # reached through tools/call only
    # found, so loaded: tools/list shows it from now on, with the same definition
    entry = (await call(client, methods.TOOLS_LIST, {}))["tools"][-1]
    assert entry == tool

    result = await tools_call(client, "mcp__fake__widgets", {"count": 3, "bin": "A7"})
    assert result == {"bin": "A7", "count": 3, "tags": []}

    bad = {
        "arguments.count": {"count": "three", "bin": "A7"},
        "arguments.bin": {"count": 3},
        "arguments.extra": {"count": 3, "bin": "A7", "extra": True},
        "arguments.tags.1": {"count": 3, "bin": "A7", "tags": ["ok", 5]},
        "arguments.count ": {"count": -1, "bin": "A7"},
    }
    for field, arguments in bad.items():
        err = await call_error(
            client, methods.TOOLS_CALL, {"name": "mcp__fake__widgets", "arguments": arguments}
        )
        assert err.data["kind"] == "invalid_params", arguments
        assert err.data["field"] == field.strip(), (arguments, err.data)

    assert await tools_call(client, "mcp__fake__forget", {"name": "mcp__fake__widgets"}) == {
        "removed": True
    }
    gone = await call_error(
        client, methods.TOOLS_CALL, {"name": "mcp__fake__widgets", "arguments": {}}
    )
    assert gone.data == {"kind": "unknown_tool", "name": "mcp__fake__widgets"}
    after = await call(client, methods.TOOLS_SEARCH, {"query": "widgets warehouse bin"})
    assert "mcp__fake__widgets" not in [t["name"] for t in after["tools"]]
    assert "mcp__fake__widgets" not in await listed(client)
    # built-in tools stay: the runtime removal cannot take them away
    assert await tools_call(client, "mcp__fake__forget", {"name": "read_file"}) == {
        "removed": False
    }
    read = await tools_call(client, "read_file", {"path": "notes.txt"})
    assert read["line_count"] == 3


async def test_select_loads_tools_into_tools_list(client: LanguageClient) -> None:
    core = await listed(client)
    assert "git_blame" not in core and "mcp__fake__forget" not in core
    # words found nowhere: nothing, and nothing loaded
    assert await call(client, methods.TOOLS_SEARCH, {"query": "zzzqqq xyzzy"}) == {"tools": []}
    assert await listed(client) == core

    unknown = await call_error(
        client, methods.TOOLS_SEARCH, {"query": "select:git_blame,mcp__fake__nope"}
    )
    assert unknown.data == {"kind": "unknown_tool", "name": "mcp__fake__nope"}
    assert await listed(client) == core

    found = await call(
        client, methods.TOOLS_SEARCH, {"query": "select:mcp__fake__forget,git_blame"}
    )
    assert [t["name"] for t in found["tools"]] == ["mcp__fake__forget", "git_blame"]
    # loaded tools follow the core profile, in registry order (built-ins before runtime tools)
    assert await listed(client) == [*core, "git_blame", "mcp__fake__forget"]

    # a keyword search loads what it returns, through tools/call as through the typed method
    await tools_call(client, "tool_search", {"query": "widgets warehouse", "limit": 1})
    assert await listed(client) == [*core, "git_blame", "mcp__fake__widgets", "mcp__fake__forget"]

    assert await tools_call(client, "mcp__fake__forget", {"name": "mcp__fake__widgets"}) == {
        "removed": True
    }
    assert await listed(client) == [*core, "git_blame", "mcp__fake__forget"]
