"""pytest-lsp fixtures: the real server in a child process, driven by the Neovim 0.11 and VS Code
client presets, with custom ``s-code/*`` params and results kept as plain JSON."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from s_code.lsp.converter import raw_converter
from tests.e2e.support import TIMEOUT, make_workspace

PRESETS = ["neovim@v0.11", "visual_studio_code"]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=raw_converter)
    register_lsp_features(client)
    return client


CONFIG = ClientServerConfig(
    server_command=[sys.executable, "-m", "s_code", "serve"],
    client_factory=make_client,
    server_env=dict(os.environ),
)


@pytest_lsp.fixture(config=CONFIG, params=PRESETS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    lsp_client.workspace_root = workspace  # type: ignore[attr-defined]
    lsp_client.init_result = await asyncio.wait_for(  # type: ignore[attr-defined]
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities(request.param),
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            )
        ),
        TIMEOUT,
    )
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)
