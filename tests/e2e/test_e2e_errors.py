"""Every error kind this part of the protocol can produce, as a client receives it."""

from __future__ import annotations

import os

from pytest_lsp import LanguageClient

from s_code.protocol import methods
from s_code.protocol.errors import ERROR_CODES, ErrorKind
from tests.e2e.support import call_error


async def _kind(client: LanguageClient, method: str, params: object) -> dict[str, object]:
    err = await call_error(client, method, params)
    assert isinstance(err.data, dict), err
    assert err.code == ERROR_CODES[ErrorKind(err.data["kind"])]
    assert "Traceback" not in str(err.data) and "traceback" not in err.data
    return err.data


async def test_invalid_params_names_the_field(client: LanguageClient) -> None:
    data = await _kind(client, methods.READ_FILE, {"path": "notes.txt", "lines": "1-2"})
    assert data["kind"] == "invalid_params" and data["field"] == "lines"
    data = await _kind(client, methods.READ_FILE, {"path": 7})
    assert data["kind"] == "invalid_params" and data["field"] == "path"
    data = await _kind(client, methods.TOOLS_CALL, {"name": "read_file", "arguments": {}})
    assert data["kind"] == "invalid_params" and data["field"] == "arguments.path"
    data = await _kind(client, methods.UPDATE_PLAN, {"plan": [{"step": "a", "status": "done"}]})
    assert data["field"] == "plan.0.status"
    data = await _kind(client, methods.PERMISSION_MODE_SET, {"mode": "yolo"})
    assert data["kind"] == "invalid_params" and data["field"] == "mode"
    data = await _kind(client, methods.READ_FILE, ["notes.txt"])
    assert data["kind"] == "invalid_params"
    data = await _kind(client, methods.SEARCH_TEXT, {"pattern": "(unclosed"})
    assert data["kind"] == "invalid_params" and data["field"] == "pattern"
    data = await _kind(client, methods.READ_FILE, {"path": "notes.txt", "start_line": 9})
    assert data["field"] == "start_line"


async def test_unknown_tool(client: LanguageClient) -> None:
    data = await _kind(client, methods.TOOLS_CALL, {"name": "rm_rf", "arguments": {}})
    assert data == {"kind": "unknown_tool", "name": "rm_rf"}


async def test_not_found(client: LanguageClient) -> None:
    data = await _kind(client, methods.READ_FILE, {"path": "missing.txt"})
    assert data["kind"] == "not_found" and data["path"] == "missing.txt"
    data = await _kind(client, methods.LIST_FILES, {"path": "notes.txt"})
    assert data["kind"] == "not_found"


async def test_path_escape(client: LanguageClient) -> None:
    root = client.workspace_root  # type: ignore[attr-defined]
    outside = root.parent / "secret.txt"
    outside.write_text("secret\n")
    os.symlink(outside, root / "link.txt")
    os.symlink(root.parent, root / "up")
    for path in ("../secret.txt", "/etc/passwd", "link.txt", "up/secret.txt", "src/../../x"):
        data = await _kind(client, methods.READ_FILE, {"path": path})
        assert data["kind"] == "path_escape", path
    data = await _kind(client, methods.SEARCH_TEXT, {"pattern": "secret", "path": "up"})
    assert data["kind"] == "path_escape"


async def test_limit_exceeded(client: LanguageClient) -> None:
    root = client.workspace_root  # type: ignore[attr-defined]
    with open(root / "big.txt", "wb") as f:
        f.truncate(16 * 1024 * 1024 + 1)
    data = await _kind(client, methods.READ_FILE, {"path": "big.txt"})
    assert data["kind"] == "limit_exceeded" and data["limit"] == "file_size"


async def test_unsupported_encoding(client: LanguageClient) -> None:
    root = client.workspace_root  # type: ignore[attr-defined]
    (root / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    (root / "binary.bin").write_bytes(b"\x7fELF\x00\x01")
    for path in ("latin1.txt", "binary.bin"):
        data = await _kind(client, methods.READ_FILE, {"path": path})
        assert data["kind"] == "unsupported_encoding", path
