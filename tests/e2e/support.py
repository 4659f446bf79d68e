"""Helpers for the end-to-end tests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

TIMEOUT = 20.0


def make_workspace(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (root / ".gitignore").write_text("*.log\n")
    (root / "run.log").write_text("beta in a log\n")
    return root


async def call(client: LanguageClient, method: str, params: Any) -> Any:
    """A request with a bound (pytest-lsp has none of its own)."""
    return await asyncio.wait_for(client.protocol.send_request_async(method, params), TIMEOUT)


async def call_error(client: LanguageClient, method: str, params: Any) -> Any:
    """The JSON-RPC error a request fails with (the test fails if it succeeds)."""
    from pygls.exceptions import JsonRpcException

    try:
        result = await call(client, method, params)
    except JsonRpcException as exc:
        return exc
    raise AssertionError(f"{method} {params!r} succeeded: {result!r}")
