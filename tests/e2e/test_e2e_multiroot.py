"""A multi-root workspace: paths are ``<folder name>/<relative path>``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from s_code.protocol import methods
from tests.e2e.conftest import make_client
from tests.e2e.support import TIMEOUT, call, call_error


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "s_code", "serve"], client_factory=make_client
    )
)
async def multi(lsp_client: LanguageClient, tmp_path: Path):
    front, back = tmp_path / "web", tmp_path / "api"
    for folder, text in ((front, "front\n"), (back, "back\n")):
        folder.mkdir()
        (folder / "README").write_text(text)
    await asyncio.wait_for(
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual_studio_code"),
                workspace_folders=[
                    types.WorkspaceFolder(uri=front.as_uri(), name="web"),
                    types.WorkspaceFolder(uri=back.as_uri(), name="api"),
                ],
            )
        ),
        TIMEOUT,
    )
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


async def test_folders_are_addressed_by_name(multi: LanguageClient) -> None:
    read = await call(multi, methods.READ_FILE, {"path": "api/README"})
    assert read["path"] == "api/README" and read["numbered_content"] == "     1\tback\n"
    listed = await call(multi, methods.LIST_FILES, {"path": "web"})
    assert [e["path"] for e in listed["entries"]] == ["web/README"]
    found = await call(multi, methods.SEARCH_TEXT, {"pattern": "front", "path": "web"})
    assert [m["path"] for m in found["matches"]] == ["web/README"]
    err = await call_error(multi, methods.READ_FILE, {"path": "README"})
    assert err.data["kind"] == "not_found" and "web" in err.message and "api" in err.message


async def test_errors_name_paths_as_the_agent_spelled_them(multi: LanguageClient) -> None:
    """Below a folder, an error's path keeps the folder's name (the agent must be able to tell
    api/missing from web/missing)."""
    err = await call_error(multi, methods.READ_FILE, {"path": "api/missing.txt"})
    assert err.data["kind"] == "not_found" and err.data["path"] == "api/missing.txt", err.data
    assert "'api/missing.txt'" in err.message
    err = await call_error(multi, methods.READ_FILE, {"path": "web"})
    assert err.data["kind"] == "invalid_params" and err.data["path"] == "web", err.data
    err = await call_error(multi, methods.LIST_FILES, {"path": "web/nowhere"})
    assert err.data["path"] == "web/nowhere", err.data
