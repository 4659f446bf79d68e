"""Save-before-run: an agent edit that went to an open buffer reaches the disk before a command or
a git call reads it (a client that offers ``s-code/documents/save``), or the result says which
buffers the command did not see (any other client)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from s_code.protocol import methods
from tests.e2e.support import TIMEOUT, call
from tests.e2e.test_e2e_edits import STATE, Editor, make_client, rev, server_config


def saving_client() -> LanguageClient:
    """An editor that saves the buffers it is asked to, as the VS Code and Neovim ones do."""
    client = make_client()
    editor: Editor = client.editor  # type: ignore[attr-defined]
    client.saves = []  # type: ignore[attr-defined]

    def save(params: Any) -> dict[str, Any]:
        uris = params["uris"] if isinstance(params, dict) else params.uris
        client.saves.append(list(uris))  # type: ignore[attr-defined]
        for uri in uris:
            _, text = editor.buffers[uri]
            Path(uri.removeprefix("file://")).write_text(text)
            client.text_document_did_save(
                types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
            )
        return {}

    client.feature(methods.DOCUMENTS_SAVE)(save)
    return client


async def _start(client: LanguageClient, root: Path, saves: bool) -> None:
    caps = client_capabilities("visual_studio_code")
    if saves:
        caps.experimental = {"sCode": {"saveDocuments": True}}
    await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                initialization_options={"permissionMode": "workspace"},
            )
        ),
        TIMEOUT,
    )


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a"],
        check=True,
    )
    return root


@pytest_lsp.fixture(config=server_config(STATE, saving_client))
async def saving(lsp_client: LanguageClient, tmp_path: Path):
    lsp_client.root = _workspace(tmp_path)  # type: ignore[attr-defined]
    await _start(lsp_client, lsp_client.root, saves=True)  # type: ignore[attr-defined]
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


@pytest_lsp.fixture(config=server_config(STATE, saving_client))
async def plain(lsp_client: LanguageClient, tmp_path: Path):
    lsp_client.root = _workspace(tmp_path)  # type: ignore[attr-defined]
    await _start(lsp_client, lsp_client.root, saves=False)  # type: ignore[attr-defined]
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


FIXED = "def add(a, b):\n    return a + b\n"


async def _fix_in_buffer(client: LanguageClient) -> Path:
    """The agent fixes the bug in the open buffer (workspace/applyEdit), unsaved."""
    editor: Editor = client.editor  # type: ignore[attr-defined]
    root: Path = client.root  # type: ignore[attr-defined]
    editor.open(root / "calc.py", (root / "calc.py").read_text())
    before = (root / "calc.py").read_bytes()
    fix = {"start_line": 2, "end_line": 2, "new_text": "    return a + b"}
    done = await call(
        client,
        methods.APPLY_PATCH,
        {"files": [{"path": "calc.py", "expected_revision": rev(before), "edits": [fix]}]},
    )
    assert done["applied"][0]["via"] == "editor"
    assert (root / "calc.py").read_bytes() == before  # in the buffer only
    return root


TEST = [
    "python3",
    "-B",
    "-c",
    "import calc; assert calc.add(2, 2) == 4, 'add is wrong'; print('ok')",
]


async def test_a_command_after_an_agent_edit_sees_it(saving: LanguageClient) -> None:
    root = await _fix_in_buffer(saving)
    result = await call(saving, methods.RUN_COMMAND, {"command": TEST})
    assert result["exit_code"] == 0 and "ok" in result["output"], result
    assert saving.saves == [[(root / "calc.py").as_uri()]]  # type: ignore[attr-defined]
    assert "unsaved_buffers" not in result
    assert (root / "calc.py").read_text() == FIXED
    # saved once: the next command does not ask again
    await call(saving, methods.RUN_COMMAND, {"command": ["true"]})
    assert len(saving.saves) == 1  # type: ignore[attr-defined]


async def test_git_sees_the_saved_edit(saving: LanguageClient) -> None:
    await _fix_in_buffer(saving)
    diff = await call(saving, methods.GIT_DIFF, {})
    assert "+    return a + b" in diff["files"][0]["patch"], diff
    assert "unsaved_buffers" not in diff


async def test_without_save_the_result_names_what_the_command_did_not_see(
    plain: LanguageClient,
) -> None:
    """Positive control: without the save, the command runs against the old file, and says so."""
    root = await _fix_in_buffer(plain)
    result = await call(plain, methods.RUN_COMMAND, {"command": TEST})
    assert result["exit_code"] != 0 and "add is wrong" in result["output"]
    assert result["unsaved_buffers"] == ["calc.py"]
    assert plain.saves == []  # type: ignore[attr-defined]
    status = await call(plain, methods.GIT_STATUS, {})
    assert status["unsaved_buffers"] == ["calc.py"] and status["entries"] == []
    log = await call(plain, methods.GIT_LOG, {})
    assert "unsaved_buffers" not in log  # history does not read the working tree
    # the user saves: nothing is unsaved any more
    (root / "calc.py").write_text(FIXED)
    result = await call(plain, methods.RUN_COMMAND, {"command": TEST})
    assert result["exit_code"] == 0 and "unsaved_buffers" not in result


async def test_a_closed_buffer_is_forgotten(plain: LanguageClient) -> None:
    root = await _fix_in_buffer(plain)
    plain.text_document_did_close(
        types.DidCloseTextDocumentParams(
            types.TextDocumentIdentifier(uri=(root / "calc.py").as_uri())
        )
    )
    result = await call(plain, methods.RUN_COMMAND, {"command": ["true"]})
    assert "unsaved_buffers" not in result
