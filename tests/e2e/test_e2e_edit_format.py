"""``initializationOptions.editFormat`` and ``s-code/editFormat/set``: what tools/list shows."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from s_code.protocol import methods
from tests.e2e.conftest import CONFIG
from tests.e2e.support import TIMEOUT, call, call_error, make_workspace


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    root = make_workspace(tmp_path / "ws")
    await asyncio.wait_for(
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual_studio_code"),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                initialization_options={"editFormat": "patch", "permissionMode": "workspace"},
            )
        ),
        TIMEOUT,
    )
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


def apply_schema(listed: dict) -> dict:  # type: ignore[type-arg]
    (tool,) = [t for t in listed["tools"] if t["name"] == "apply_patch"]
    return tool["inputSchema"]  # type: ignore[no-any-return]


async def test_edit_format_selects_the_schema_and_instructions(client: LanguageClient) -> None:
    listed = await call(client, methods.TOOLS_LIST, {})
    assert listed["editFormat"] == "patch"
    assert set(apply_schema(listed)["properties"]) == {"patch", "revisions", "turn_id"}
    assert "*** Begin Patch" in listed["instructions"]
    assert await call(client, methods.EDIT_FORMAT_GET, {}) == {
        "format": "patch",
        "formats": ["lines", "text", "patch"],
    }

    assert await call(client, methods.EDIT_FORMAT_SET, {"format": "lines"}) == {"format": "lines"}
    listed = await call(client, methods.TOOLS_LIST, {})
    assert set(apply_schema(listed)["properties"]) == {"files", "turn_id"}
    assert "start_line" in listed["instructions"]
    # a patch is still accepted while the model is shown line edits
    read = await call(client, methods.READ_FILE, {"path": "notes.txt"})
    patch = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-beta\n+BETA\n*** End Patch"
    done = await call(
        client, methods.APPLY_PATCH, {"patch": patch, "revisions": {"notes.txt": read["revision"]}}
    )
    assert done["applied"][0]["path"] == "notes.txt"

    await call(client, methods.EDIT_FORMAT_SET, {"format": None})
    listed = await call(client, methods.TOOLS_LIST, {})
    assert {"files", "patch", "path"} <= set(apply_schema(listed)["properties"])
    err = await call_error(client, methods.EDIT_FORMAT_SET, {"format": "diff"})
    assert err.data["kind"] == "invalid_params" and err.data["field"] == "format"
